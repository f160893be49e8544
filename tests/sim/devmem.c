/*
 * The simulated driver's device memory: the accounting every allocation
 * family shares (the charge against a device's size with the failure
 * injection, an address from the device's arena, the record in its table
 * of live addresses) and the plain allocation calls, cuMemAlloc and its
 * relatives, cuMemFree and cuMemGetInfo.  The devices, their arenas'
 * layout and the configuration are libcuda.c's.
 *
 * Nothing here may call dlsym: the driver must not see an interposer.
 */
#include "libcuda.h"

#include <limits.h>

/* Counted only while failure injection wants them: a counter every
 * allocating thread writes would make threads on different devices
 * contend, which a real driver does not. */
static atomic_llong alloc_successes;
static atomic_llong free_successes;

/* The device of the calling thread's current context, if it is usable. */
static CUresult
current_device(struct sim_device **out)
{
  return sim_current(NULL, out);
}

/* ---- allocation core ------------------------------------------------ */

static bool
is_counted(enum sim_kind kind)
{
  return kind == SIM_KIND_PLAIN || kind == SIM_KIND_POOL;
}

static void
count_success(atomic_llong *successes, long long fail_after)
{
  if (fail_after >= 0)
    atomic_fetch_add(successes, 1);
}

/* The failure injection and the OOM check; d->lock held. */
static CUresult
charge_locked(struct sim_device *d, uint64_t bytes)
{
  if (sim_fail_alloc_after >= 0 &&
      atomic_load(&alloc_successes) >= sim_fail_alloc_after)
    return sim_fail_alloc_code;
  if (bytes > d->total - d->used)
    return CUDA_ERROR_OUT_OF_MEMORY;
  d->used += bytes;
  if (d->used > d->peak)
    d->peak = d->used;
  d->allocs++;
  return CUDA_SUCCESS;
}

static void
uncharge_locked(struct sim_device *d, uint64_t bytes)
{
  d->used -= bytes;
  d->frees++;
}

CUresult
sim_charge(struct sim_device *d, uint64_t bytes)
{
  pthread_mutex_lock(&d->lock);
  CUresult rc = charge_locked(d, bytes);
  pthread_mutex_unlock(&d->lock);
  if (rc == CUDA_SUCCESS)
    count_success(&alloc_successes, sim_fail_alloc_after);
  return rc;
}

void
sim_uncharge(struct sim_device *d, uint64_t bytes)
{
  pthread_mutex_lock(&d->lock);
  uncharge_locked(d, bytes);
  pthread_mutex_unlock(&d->lock);
}

static CUresult
dev_alloc(struct sim_device *d, uint64_t bytes, bool legacy,
          enum sim_kind kind, void *obj, uint64_t *addr)
{
  if (bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (bytes > UINT64_MAX - SIM_ALIGN)
    return CUDA_ERROR_OUT_OF_MEMORY;
  bool counted = is_counted(kind);
  uint64_t span = (bytes + SIM_ALIGN - 1) & ~(uint64_t)(SIM_ALIGN - 1);
  struct sim_live rec = { .bytes = counted ? bytes : 0, .span = span,
                          .owner = sim_current_ctx, .obj = obj,
                          .kind = (unsigned char)kind, .legacy = legacy };
  struct sim_arena *arena = legacy ? &d->arena32 : &d->arena;

  pthread_mutex_lock(&d->lock);
  CUresult rc = counted ? charge_locked(d, bytes) : CUDA_SUCCESS;
  if (rc == CUDA_SUCCESS) {
    if (sim_arena_take(arena, span, &rec.addr) != 0) {
      rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else if (sim_table_insert(&d->live, &rec) != 0) {
      sim_arena_give(arena, rec.addr, span);
      rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (rc != CUDA_SUCCESS && counted) {
      d->used -= bytes;
      d->allocs--;
    }
  }
  if (rc == CUDA_SUCCESS) {
    if (kind == SIM_KIND_POOL)
      sim_pool_account(obj, bytes, true);
    *addr = rec.addr;
  }
  pthread_mutex_unlock(&d->lock);
  if (rc == CUDA_SUCCESS && counted)
    count_success(&alloc_successes, sim_fail_alloc_after);
  return rc;
}

CUresult
sim_dev_alloc(struct sim_device *d, uint64_t bytes, enum sim_kind kind,
              void *obj, uint64_t *addr)
{
  return dev_alloc(d, bytes, false, kind, obj, addr);
}

bool
sim_dev_release_locked(struct sim_device *d, uint64_t addr)
{
  struct sim_live rec;
  if (!sim_table_remove(&d->live, addr, &rec))
    return false;
  sim_arena_give(rec.legacy ? &d->arena32 : &d->arena, rec.addr, rec.span);
  if (is_counted((enum sim_kind)rec.kind))
    uncharge_locked(d, rec.bytes);
  if (rec.kind == SIM_KIND_POOL)
    sim_pool_account(rec.obj, rec.bytes, false);
  return true;
}

/* cuMemFree and cuMemFreeAsync: any allocation the driver made at an
 * address, and the buffers mapped from external memory (which NVIDIA's
 * documentation says to free with cuMemFree); not IPC mappings, which
 * only cuIpcCloseMemHandle closes. */
CUresult
sim_free(uint64_t addr)
{
  struct sim_device *cur;
  CUresult rc = current_device(&cur);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (addr == 0)
    return CUDA_SUCCESS;
  /* Unified addressing: any live allocation may be freed from any
   * context, as on a real driver. */
  struct sim_device *d = sim_device_of_address(addr);
  if (d == NULL)
    return sim_graph_free(addr);
  if (sim_fail_free_after >= 0 && atomic_load(&free_successes) >= sim_fail_free_after)
    return sim_fail_free_code;
  pthread_mutex_lock(&d->lock);
  struct sim_live *rec = sim_table_get(&d->live, addr);
  bool ok = rec != NULL && rec->kind != SIM_KIND_IPC &&
            sim_dev_release_locked(d, addr);
  pthread_mutex_unlock(&d->lock);
  if (!ok)
    return CUDA_ERROR_INVALID_VALUE;
  count_success(&free_successes, sim_fail_free_after);
  return CUDA_SUCCESS;
}

/* ---- memory --------------------------------------------------------- */

static CUresult
alloc_current(CUdeviceptr *dptr, size_t bytesize)
{
  struct sim_device *d;
  CUresult rc = current_device(&d);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (dptr == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if ((rc = sim_capture_forbids()) != CUDA_SUCCESS)
    return rc;
  uint64_t addr;
  rc = dev_alloc(d, bytesize, false, SIM_KIND_PLAIN, NULL, &addr);
  if (rc == CUDA_SUCCESS)
    *dptr = addr;
  return rc;
}

SIM_EXPORT CUresult
cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
  return alloc_current(dptr, bytesize);
}

SIM_EXPORT CUresult
cuMemFree_v2(CUdeviceptr dptr)
{
  return sim_free(dptr);
}

SIM_EXPORT CUresult
cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                   size_t Height, unsigned int ElementSizeBytes)
{
  struct sim_device *d;
  CUresult rc = current_device(&d);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (dptr == NULL || pPitch == NULL || WidthInBytes == 0 || Height == 0 ||
      (ElementSizeBytes != 4 && ElementSizeBytes != 8 &&
       ElementSizeBytes != 16))
    return CUDA_ERROR_INVALID_VALUE;
  if ((rc = sim_capture_forbids()) != CUDA_SUCCESS)
    return rc;
  if (WidthInBytes > SIZE_MAX - SIM_ALIGN)
    return CUDA_ERROR_OUT_OF_MEMORY;
  size_t pitch = (WidthInBytes + SIM_ALIGN - 1) & ~(size_t)(SIM_ALIGN - 1);
  if (Height > SIZE_MAX / pitch)
    return CUDA_ERROR_OUT_OF_MEMORY;
  uint64_t addr;
  rc = dev_alloc(d, (uint64_t)pitch * Height, false, SIM_KIND_PLAIN, NULL,
                 &addr);
  if (rc == CUDA_SUCCESS) {
    *dptr = addr;
    *pPitch = pitch;
  }
  return rc;
}

SIM_EXPORT CUresult
cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
  struct sim_device *d;
  CUresult rc = current_device(&d);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (dptr == NULL ||
      (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
    return CUDA_ERROR_INVALID_VALUE;
  if ((rc = sim_capture_forbids()) != CUDA_SUCCESS)
    return rc;
  uint64_t addr;
  rc = dev_alloc(d, bytesize, false, SIM_KIND_PLAIN, NULL, &addr);
  if (rc == CUDA_SUCCESS)
    *dptr = addr;
  return rc;
}

static CUresult
get_info(size_t *free, size_t *total)
{
  struct sim_device *d;
  CUresult rc = current_device(&d);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (free == NULL || total == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&d->lock);
  *free = d->total - d->used;
  *total = d->total;
  pthread_mutex_unlock(&d->lock);
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuMemGetInfo_v2(size_t *free, size_t *total)
{
  return get_info(free, total);
}

/* The CUDA 2.0 entry points with 32-bit sizes and pointers.  Nothing
 * current calls them; they exist so that cuGetProcAddress has an older
 * variant to choose for versions below 3020. */
SIM_EXPORT CUresult
cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
  struct sim_device *d;
  CUresult rc = current_device(&d);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (dptr == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if ((rc = sim_capture_forbids()) != CUDA_SUCCESS)
    return rc;
  uint64_t addr;
  rc = dev_alloc(d, bytesize, true, SIM_KIND_PLAIN, NULL, &addr);
  if (rc == CUDA_SUCCESS)
    *dptr = (CUdeviceptr_v1)addr;
  return rc;
}

SIM_EXPORT CUresult
cuMemFree(CUdeviceptr_v1 dptr)
{
  return sim_free(dptr);
}

SIM_EXPORT CUresult
cuMemGetInfo(unsigned int *free, unsigned int *total)
{
  size_t f, t;
  CUresult rc = get_info(free ? &f : NULL, total ? &t : NULL);
  if (rc != CUDA_SUCCESS)
    return rc;
  /* Saturate rather than wrap, so 32-bit callers see "plenty". */
  *free = f > UINT_MAX ? UINT_MAX : (unsigned int)f;
  *total = t > UINT_MAX ? UINT_MAX : (unsigned int)t;
  return CUDA_SUCCESS;
}

/* ---- hidden aliases ------------------------------------------------- */

SIM_MEMORY_FUNCTIONS(SIM_DEFINE_ALIAS)
