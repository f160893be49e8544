/*
 * app_driver: the script interpreter over the driver API, linked against
 * libcuda and calling it by name the way an ordinary program does: cuda.h
 * turns cuMemAlloc into cuMemAlloc_v2 and so on, and the dynamic linker
 * binds the calls, so an LD_PRELOAD library that exports the ELF names
 * sees them.
 */
#include "app.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <pthread.h>

/* Declared by cuda.h only for per-thread-default-stream builds. */
extern __typeof__(*(PFN_cuMemAllocAsync_v11020_ptsz)0) cuMemAllocAsync_ptsz;
extern __typeof__(*(PFN_cuMemFreeAsync_v11020_ptsz)0) cuMemFreeAsync_ptsz;

#define MAX_DEVICES 16

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext ctxs[MAX_DEVICES];

/* Retains each device's primary context once and makes it current on the
 * calling thread. */
static int
set_device(int ordinal)
{
  CUdevice dev;
  CUresult rc = cuDeviceGet(&dev, ordinal);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (ordinal >= MAX_DEVICES)
    return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&ctx_lock);
  if (ctxs[ordinal] == NULL)
    rc = cuDevicePrimaryCtxRetain(&ctxs[ordinal], dev);
  CUcontext ctx = ctxs[ordinal];
  pthread_mutex_unlock(&ctx_lock);
  if (rc != CUDA_SUCCESS)
    return rc;
  return cuCtxSetCurrent(ctx);
}

static int
start(int dev)
{
  CUresult rc = cuInit(0);
  if (rc != CUDA_SUCCESS)
    return rc;
  return set_device(dev);
}

static int
alloc(uint64_t *ptr, size_t size)
{
  CUdeviceptr p;
  CUresult rc = cuMemAlloc(&p, size);
  *ptr = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
alloc_pitch(uint64_t *ptr, size_t *pitch, size_t width, size_t height,
            unsigned int elem)
{
  CUdeviceptr p;
  CUresult rc = cuMemAllocPitch(&p, pitch, width, height, elem);
  *ptr = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
alloc_managed(uint64_t *ptr, size_t size)
{
  CUdeviceptr p;
  CUresult rc = cuMemAllocManaged(&p, size, CU_MEM_ATTACH_GLOBAL);
  *ptr = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
alloc_async(uint64_t *ptr, size_t size, bool ptsz)
{
  CUdeviceptr p;
  CUresult rc = ptsz ? cuMemAllocAsync_ptsz(&p, size, NULL)
                     : cuMemAllocAsync(&p, size, NULL);
  *ptr = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
free_(uint64_t ptr)
{
  return cuMemFree(ptr);
}

static int
free_async(uint64_t ptr, bool ptsz)
{
  return ptsz ? cuMemFreeAsync_ptsz(ptr, NULL) : cuMemFreeAsync(ptr, NULL);
}

static int
meminfo(size_t *free, size_t *total)
{
  return cuMemGetInfo(free, total);
}

static int
totalmem(int ordinal, size_t *bytes)
{
  CUdevice dev;
  CUresult rc = cuDeviceGet(&dev, ordinal);
  if (rc != CUDA_SUCCESS)
    return rc;
  return cuDeviceTotalMem(bytes, dev);
}

static int
reset(int ordinal)
{
  CUdevice dev;
  CUresult rc = cuDeviceGet(&dev, ordinal);
  if (rc != CUDA_SUCCESS)
    return rc;
  return cuDevicePrimaryCtxReset(dev);
}

static const struct app_backend backend = {
  .name = "driver",
  .start = start,
  .set_device = set_device,
  .alloc = alloc,
  .alloc_pitch = alloc_pitch,
  .alloc_managed = alloc_managed,
  .alloc_async = alloc_async,
  .free = free_,
  .free_async = free_async,
  .meminfo = meminfo,
  .totalmem = totalmem,
  .reset = reset,
};

int
main(int argc, char **argv)
{
  return app_main(&backend, argc, argv);
}
