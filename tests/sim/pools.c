/*
 * Memory pools of the simulated driver (stream-ordered allocation).
 *
 * Each device has a default pool and a current pool (the default one
 * until cuDeviceSetMemPool); cuMemAllocAsync allocates from the current
 * pool of the current context's device, cuMemAllocFromPoolAsync from the
 * pool it names, counted against that pool's device whatever the current
 * context.  Pools cache nothing: memory is taken from the device at
 * allocation and given back at free, so a device's free memory is always
 * its size minus its live allocations, and a pool's reserved and used
 * memory are the same number.  A pool destroyed with allocations still
 * outstanding stays behind them, as NVIDIA documents, and is freed with
 * the last of them (by cuMemFreeAsync, cuMemFree or context teardown).
 *
 * The list of live pools is under sim_obj_lock; a pool's counters are
 * under its device's lock, like the allocations they count.
 */
#include "libcuda.h"

#include <stdlib.h>
#include <string.h>

#define POOL_ALIVE 0x4c4f4f50u /* "POOL" */

struct CUmemPoolHandle_st {
  uint32_t magic;
  struct sim_device *dev;
  bool is_default;
  bool destroyed;
  /* Under dev->lock. */
  uint64_t used;
  uint64_t high;
  long nallocs;
  /* Under sim_obj_lock. */
  cuuint64_t release_threshold;
  int reuse[3];
  struct CUmemPoolHandle_st *next;
};

static struct CUmemPoolHandle_st defaults[SIM_MAX_DEVICES];
static struct CUmemPoolHandle_st *current_pool[SIM_MAX_DEVICES];
static struct CUmemPoolHandle_st *created;

/* ---- helpers (sim_obj_lock held) ----------------------------------- */

static void
setup(struct CUmemPoolHandle_st *p, struct sim_device *d)
{
  p->magic = POOL_ALIVE;
  p->dev = d;
  p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
}

static struct CUmemPoolHandle_st *
default_of(struct sim_device *d)
{
  struct CUmemPoolHandle_st *p = &defaults[d->phys];
  if (p->magic != POOL_ALIVE) {
    setup(p, d);
    p->is_default = true;
  }
  return p;
}

static struct CUmemPoolHandle_st *
current_of(struct sim_device *d)
{
  if (current_pool[d->phys] == NULL)
    current_pool[d->phys] = default_of(d);
  return current_pool[d->phys];
}

/* A pool that may be used: a default one, or one created and not yet
 * destroyed. */
static bool
is_pool(const struct CUmemPoolHandle_st *p)
{
  if (p == NULL)
    return false;
  for (int i = 0; i < sim_nphys; i++)
    if (p == &defaults[i])
      return p->magic == POOL_ALIVE;
  for (struct CUmemPoolHandle_st *c = created; c != NULL; c = c->next)
    if (c == p)
      return true;
  return false;
}

void
sim_pool_account(void *pool, uint64_t bytes, bool add)
{
  struct CUmemPoolHandle_st *p = pool;
  if (add) {
    p->used += bytes;
    if (p->used > p->high)
      p->high = p->used;
    p->nallocs++;
    return;
  }
  p->used -= bytes;
  p->nallocs--;
  if (p->destroyed && p->nallocs == 0) {
    p->magic = 0;
    free(p);
  }
}

/* ---- devices' pools -------------------------------------------------- */

static CUresult
device_pool(CUmemoryPool *pool_out, CUdevice dev, bool current)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (pool_out == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_device *d = sim_device(dev);
  if (d == NULL)
    return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&sim_obj_lock);
  *pool_out = current ? current_of(d) : default_of(d);
  pthread_mutex_unlock(&sim_obj_lock);
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
  return device_pool(pool_out, dev, false);
}

SIM_EXPORT CUresult
cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
  return device_pool(pool, dev, true);
}

SIM_EXPORT CUresult
cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  struct sim_device *d = sim_device(dev);
  if (d == NULL)
    return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&sim_obj_lock);
  if (!is_pool(pool) || pool->dev != d)
    rc = CUDA_ERROR_INVALID_VALUE;
  else
    current_pool[d->phys] = pool;
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* ---- pools ----------------------------------------------------------- */

/* Device pools only (pinned, on a visible device). */
SIM_EXPORT CUresult
cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (pool == NULL || poolProps == NULL ||
      poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
    return CUDA_ERROR_INVALID_VALUE;
  if (poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return CUDA_ERROR_NOT_SUPPORTED;
  struct sim_device *d = sim_device(poolProps->location.id);
  if (d == NULL)
    return CUDA_ERROR_INVALID_DEVICE;
  struct CUmemPoolHandle_st *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  setup(p, d);
  pthread_mutex_lock(&sim_obj_lock);
  p->next = created;
  created = p;
  pthread_mutex_unlock(&sim_obj_lock);
  *pool = p;
  return CUDA_SUCCESS;
}

/* Destroying a device's current pool makes its default pool current
 * again; the default pools cannot be destroyed. */
SIM_EXPORT CUresult
cuMemPoolDestroy(CUmemoryPool pool)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  pthread_mutex_lock(&sim_obj_lock);
  struct CUmemPoolHandle_st **pp = &created;
  while (*pp != NULL && *pp != pool)
    pp = &(*pp)->next;
  if (*pp == NULL) {
    pthread_mutex_unlock(&sim_obj_lock);
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pp = pool->next;
  struct sim_device *d = pool->dev;
  if (current_pool[d->phys] == pool)
    current_pool[d->phys] = default_of(d);
  pthread_mutex_lock(&d->lock);
  pool->destroyed = true;
  bool empty = pool->nallocs == 0;
  pthread_mutex_unlock(&d->lock);
  if (empty) {
    pool->magic = 0;
    free(pool);
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return CUDA_SUCCESS;
}

/* Nothing is cached, so there is nothing to trim. */
SIM_EXPORT CUresult
cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  pthread_mutex_lock(&sim_obj_lock);
  if (!is_pool(pool))
    rc = CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

SIM_EXPORT CUresult
cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                      void *value)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (value == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&sim_obj_lock);
  if (!is_pool(pool)) {
    pthread_mutex_unlock(&sim_obj_lock);
    return CUDA_ERROR_INVALID_VALUE;
  }
  pthread_mutex_lock(&pool->dev->lock);
  switch (attr) {
  case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
    *(int *)value = pool->reuse[attr - 1];
    break;
  case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
    *(cuuint64_t *)value = pool->release_threshold;
    break;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
  case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
    *(cuuint64_t *)value = pool->used;
    break;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
  case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
    *(cuuint64_t *)value = pool->high;
    break;
  default:
    rc = CUDA_ERROR_INVALID_VALUE;
    break;
  }
  pthread_mutex_unlock(&pool->dev->lock);
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* The high-water marks can only be reset (to the current value), with 0,
 * as NVIDIA documents. */
SIM_EXPORT CUresult
cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                      void *value)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (value == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&sim_obj_lock);
  if (!is_pool(pool)) {
    pthread_mutex_unlock(&sim_obj_lock);
    return CUDA_ERROR_INVALID_VALUE;
  }
  pthread_mutex_lock(&pool->dev->lock);
  switch (attr) {
  case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
    pool->reuse[attr - 1] = *(int *)value != 0;
    break;
  case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
    pool->release_threshold = *(cuuint64_t *)value;
    break;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
  case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
    if (*(cuuint64_t *)value != 0)
      rc = CUDA_ERROR_INVALID_VALUE;
    else
      pool->high = pool->used;
    break;
  default:
    rc = CUDA_ERROR_INVALID_VALUE;
    break;
  }
  pthread_mutex_unlock(&pool->dev->lock);
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* ---- allocation ------------------------------------------------------ */

CUresult
sim_pool_alloc_current(struct sim_device *d, uint64_t bytes, uint64_t *addr)
{
  return sim_dev_alloc(d, bytes, SIM_KIND_POOL, current_of(d), addr);
}

/* Needs a current context, which owns the allocation (its teardown frees
 * it); the memory counts against the pool's device.  On a capturing
 * stream nothing is allocated: the capture graph gets an allocation node
 * on the pool's device (streams.c). */
static CUresult
alloc_from_pool(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                CUstream hStream)
{
  CUresult rc = sim_current(NULL, NULL);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (dptr == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t addr;
  CUgraph g = NULL;
  pthread_mutex_lock(&sim_obj_lock);
  if (!is_pool(pool))
    rc = CUDA_ERROR_INVALID_VALUE;
  else
    rc = sim_stream_target(hStream, &g);
  if (rc == CUDA_SUCCESS && g != NULL)
    rc = sim_graph_capture_alloc(g, pool->dev, bytesize, &addr);
  else if (rc == CUDA_SUCCESS)
    rc = sim_dev_alloc(pool->dev, bytesize, SIM_KIND_POOL, pool, &addr);
  pthread_mutex_unlock(&sim_obj_lock);
  if (rc == CUDA_SUCCESS)
    *dptr = addr;
  return rc;
}

SIM_EXPORT CUresult
cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
                        CUmemoryPool pool, CUstream hStream)
{
  return alloc_from_pool(dptr, bytesize, pool, hStream);
}

SIM_EXPORT CUresult
cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
                             CUmemoryPool pool, CUstream hStream)
{
  return alloc_from_pool(dptr, bytesize, pool, hStream);
}

/* ---- hidden aliases ------------------------------------------------- */

SIM_POOL_FUNCTIONS(SIM_DEFINE_ALIAS)
