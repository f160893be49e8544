/*
 * Stream-ordered allocation and memory pools.  An allocation from an
 * explicit pool counts on the pool's device, which may not be the current
 * context's: the device is learned when the program creates or looks up the
 * pool, and kept in a small table.  A pool the program got some other way
 * counts on the current device.  A pool's destruction leaves its
 * outstanding allocations valid (the driver frees them with their later
 * cuMemFreeAsync), and they stay in the ledger until then.  On a capturing
 * stream, allocations and frees are graph nodes (preload/graph.c).
 *
 * The table is tiny (programs have a handful of pools) and guarded by one
 * mutex, taken only by pool-level calls and by allocations from explicit
 * pools.
 */
#include "config.h"

#include <pthread.h>

#include "runtime/ledger/ledger.h"
#include "preload/account.h"
#include "preload/hooks/hooks.h"

#define MAX_POOLS 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  CUmemoryPool pool;
  int device;
} pools[MAX_POOLS];
static size_t n_pools;

static void
remember(CUmemoryPool pool, int device)
{
  pthread_mutex_lock(&lock);
  size_t i = 0;
  while (i < n_pools && pools[i].pool != pool)
    i++;
  if (i == n_pools && n_pools < MAX_POOLS)
    n_pools++;
  if (i < n_pools)
    pools[i] = (__typeof__(pools[0])){ pool, device };
  pthread_mutex_unlock(&lock);
}

static void
forget(CUmemoryPool pool)
{
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < n_pools; i++)
    if (pools[i].pool == pool) {
      pools[i] = pools[--n_pools];
      break;
    }
  pthread_mutex_unlock(&lock);
}

static int
device_of(CUmemoryPool pool)
{
  int device = CMG__CURRENT;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < n_pools; i++)
    if (pools[i].pool == pool)
      device = pools[i].device;
  pthread_mutex_unlock(&lock);
  return device;
}

CMG__ASYNC_ALLOC_HOOK(cuMemAllocAsync,
                      (CUdeviceptr * dptr, size_t bytesize, CUstream hStream),
                      CMG__CURRENT, bytesize, (dptr, bytesize, hStream),
                      hStream, false)
CMG__ASYNC_ALLOC_HOOK(cuMemAllocAsync_ptsz,
                      (CUdeviceptr * dptr, size_t bytesize, CUstream hStream),
                      CMG__CURRENT, bytesize, (dptr, bytesize, hStream),
                      hStream, true)
CMG__ASYNC_ALLOC_HOOK(cuMemAllocFromPoolAsync,
                      (CUdeviceptr * dptr, size_t bytesize, CUmemoryPool pool,
                       CUstream hStream),
                      device_of(pool), bytesize,
                      (dptr, bytesize, pool, hStream), hStream, false)
CMG__ASYNC_ALLOC_HOOK(cuMemAllocFromPoolAsync_ptsz,
                      (CUdeviceptr * dptr, size_t bytesize, CUmemoryPool pool,
                       CUstream hStream),
                      device_of(pool), bytesize,
                      (dptr, bytesize, pool, hStream), hStream, true)
CMG__ASYNC_FREE_HOOK(cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream), dptr,
                     (dptr, hStream), hStream, false)
CMG__ASYNC_FREE_HOOK(cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream hStream),
                     dptr, (dptr, hStream), hStream, true)

CUresult CUDAAPI
cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
  CMG__REAL_OR_FAIL(real, cuMemPoolCreate)
  CUresult rc = real(pool, poolProps);
  if (rc == CUDA_SUCCESS && poolProps != NULL &&
      poolProps->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
    remember(*pool, poolProps->location.id);
  return rc;
}

CUresult CUDAAPI
cuMemPoolDestroy(CUmemoryPool pool)
{
  CMG__REAL_OR_FAIL(real, cuMemPoolDestroy)
  CUresult rc = real(pool);
  if (rc == CUDA_SUCCESS)
    forget(pool);
  return rc;
}

CUresult CUDAAPI
cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
  CMG__REAL_OR_FAIL(real, cuDeviceGetDefaultMemPool)
  CUresult rc = real(pool, dev);
  if (rc == CUDA_SUCCESS)
    remember(*pool, dev);
  return rc;
}

CUresult CUDAAPI
cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
  CMG__REAL_OR_FAIL(real, cuDeviceGetMemPool)
  CUresult rc = real(pool, dev);
  if (rc == CUDA_SUCCESS)
    remember(*pool, dev);
  return rc;
}

CUresult CUDAAPI
cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
  CMG__REAL_OR_FAIL(real, cuDeviceSetMemPool)
  CUresult rc = real(dev, pool);
  if (rc == CUDA_SUCCESS)
    remember(pool, dev);
  return rc;
}
