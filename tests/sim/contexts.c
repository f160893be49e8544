/*
 * Contexts of the simulated driver: the primary context of each device
 * (retained, released and reset), contexts made by cuCtxCreate, and the
 * calling thread's current context (sim_current_ctx, thread-local, as in
 * the real driver), the top of the thread's stack of contexts: cuCtxCreate
 * pushes the new one, destroying the current one pops it, and
 * cuCtxSetCurrent replaces the top (NULL pops it), as NVIDIA documents.
 *
 * Destroying a context, releasing a primary context for the last time and
 * resetting one free every allocation the context made, on every device
 * (sim_free_owned_by): the records of device addresses (plain, pool, IPC
 * and external-buffer ones), the arrays, the streams and the chunks of
 * graph memory pools its launches grew.  VMM and host allocations belong
 * to no context and stay.  A primary context keeps its handle
 * through all this, so a later retain starts a fresh one behind the same
 * pointer.
 *
 * Every context also costs its device sim_context_bytes
 * (CMG_SIM_CONTEXT_BYTES) while it exists, in the device's `used` but not
 * as an allocation, and sim_context_driver_bytes more that the driver
 * keeps for itself (CMG_SIM_CONTEXT_DRIVER_BYTES): in `used` and
 * `driver_own`, so out of the device's free memory but not in NVML's
 * count of the process.  A primary context exists from the retain that finds
 * it missing (refcount 0 -> 1) to its last release.  A reset destroys it
 * even while retained; the retains then name a context that is made
 * again, and charged again, by the next call that needs it current or
 * retains it (sim_current), which is what the next API call on a reset
 * device does on a real driver.
 *
 * Created contexts are in a fixed list under created_lock, never freed,
 * only marked dead, so a stale handle is detected instead of read after
 * free.
 */
#include "libcuda.h"

#include <errno.h>
#include <stdlib.h>

#define SIM_MAX_CONTEXTS 64

/* The calling thread's contexts under its current one, innermost last. */
#define SIM_STACK 16
static __thread struct CUctx_st *below[SIM_STACK];
static __thread int depth;

/* The current context goes; the one under it, if still alive, is current. */
static void
pop_current(void)
{
  sim_current_ctx = NULL;
  while (depth > 0 && sim_current_ctx == NULL) {
    struct CUctx_st *c = below[--depth];
    if (c->magic == SIM_CTX_ALIVE || c->primary)
      sim_current_ctx = c;
  }
}

/* Contexts made by cuCtxCreate. */
static struct CUctx_st *created[SIM_MAX_CONTEXTS];
static int ncreated;
static pthread_mutex_t created_lock = PTHREAD_MUTEX_INITIALIZER;

void
sim_contexts_lock(bool lock)
{
  if (lock)
    pthread_mutex_lock(&created_lock);
  else
    pthread_mutex_unlock(&created_lock);
}

static bool
is_known_context(struct CUctx_st *c)
{
  for (int i = 0; i < sim_nphys; i++)
    if (c == &sim_devices[i].primary)
      return true;
  bool found = false;
  pthread_mutex_lock(&created_lock);
  for (int i = 0; i < ncreated && !found; i++)
    found = created[i] == c;
  pthread_mutex_unlock(&created_lock);
  return found;
}

/* Frees what a context owned, on every device (a pool allocation counts
 * on its pool's device, whatever the current context's): what destroying
 * or resetting it does to a real device, and what an interposer's ledger
 * must follow.  VMM and host allocations belong to no context. */
void
sim_free_owned_by(struct CUctx_st *c)
{
  pthread_mutex_lock(&sim_obj_lock);
  for (int i = 0; i < sim_nphys; i++) {
    struct sim_device *d = &sim_devices[i];
    pthread_mutex_lock(&d->lock);
    uint64_t *addrs;
    long n = sim_table_owned(&d->live, c, &addrs);
    for (long k = 0; k < n; k++)
      sim_dev_release_locked(d, addrs[k]);
    pthread_mutex_unlock(&d->lock);
    free(addrs);
  }
  sim_arrays_teardown(c);
  sim_streams_teardown(c);
  sim_graph_mem_teardown(c);
  pthread_mutex_unlock(&sim_obj_lock);
}

CUresult
sim_context_charge(struct CUctx_st *c)
{
  struct sim_device *d = &sim_devices[c->phys];
  CUresult rc = CUDA_SUCCESS;
  pthread_mutex_lock(&d->lock);
  if (!atomic_load(&c->charged)) {
    uint64_t cost = sim_context_bytes + sim_context_driver_bytes;
    if (cost > d->total - d->used) {
      rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      d->used += cost;
      d->contexts += cost;
      d->driver_own += sim_context_driver_bytes;
      if (d->used > d->peak)
        d->peak = d->used;
      atomic_store(&c->charged, true);
    }
  }
  pthread_mutex_unlock(&d->lock);
  return rc;
}

/* Gives back the cost of `c` if it still holds it; once only, however
 * many threads destroy or reset it at the same time. */
static void
context_uncharge(struct CUctx_st *c)
{
  struct sim_device *d = &sim_devices[c->phys];
  pthread_mutex_lock(&d->lock);
  if (atomic_load(&c->charged)) {
    d->used -= sim_context_bytes + sim_context_driver_bytes;
    d->contexts -= sim_context_bytes + sim_context_driver_bytes;
    d->driver_own -= sim_context_driver_bytes;
    atomic_store(&c->charged, false);
  }
  pthread_mutex_unlock(&d->lock);
}

/* ---- contexts ------------------------------------------------------- */

SIM_EXPORT CUresult
cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (pctx == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!sim_is_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  struct CUctx_st *c = &sim_device(dev)->primary;
  /* The retain that finds it missing makes it; with no room for it,
   * nothing is retained.  A release racing this charge can leave it
   * retained but missing, which its next use repairs (sim_current). */
  if ((rc = sim_context_charge(c)) != CUDA_SUCCESS)
    return rc;
  atomic_fetch_add(&c->refs, 1);
  *pctx = c;
  return CUDA_SUCCESS;
}

/* The last release destroys the primary context and, with it, every
 * allocation it made; a later retain starts a fresh one (the same
 * handle, as on a real driver). */
static CUresult
primary_release(CUdevice dev)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (!sim_is_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  struct CUctx_st *c = &sim_device(dev)->primary;
  int refs = atomic_load(&c->refs);
  do {
    if (refs <= 0)
      return CUDA_ERROR_INVALID_CONTEXT;
  } while (!atomic_compare_exchange_weak(&c->refs, &refs, refs - 1));
  if (refs == 1) {
    sim_free_owned_by(c);
    context_uncharge(c);
  }
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
  return primary_release(dev);
}

/* cudart 13 asks for the 7000 (unversioned) variant. */
SIM_EXPORT CUresult
cuDevicePrimaryCtxRelease(CUdevice dev)
{
  return primary_release(dev);
}

/* Destroys the primary context and every allocation it made: what
 * cudaDeviceReset does to memory.  Its retains stay, and the next use
 * makes it again (sim_current). */
static CUresult
primary_reset(CUdevice dev)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (!sim_is_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  sim_free_owned_by(&sim_device(dev)->primary);
  context_uncharge(&sim_device(dev)->primary);
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
  return primary_reset(dev);
}

/* cudart 13's cudaDeviceReset asks for this (7000) variant. */
SIM_EXPORT CUresult
cuDevicePrimaryCtxReset(CUdevice dev)
{
  return primary_reset(dev);
}

/* Every cuCtxCreate variant: a new context on `dev`, made sim_current_ctx.  The
 * affinity and CIG parameters of the later variants are accepted and
 * ignored. */
static CUresult
ctx_create(CUcontext *pctx, CUdevice dev)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (pctx == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!sim_is_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  struct CUctx_st *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  c->magic = SIM_CTX_ALIVE;
  c->ordinal = dev;
  c->phys = sim_device(dev)->phys;
  if ((rc = sim_context_charge(c)) != CUDA_SUCCESS) {
    free(c);
    return rc;
  }
  pthread_mutex_lock(&created_lock);
  bool full = ncreated == SIM_MAX_CONTEXTS;
  if (!full)
    created[ncreated++] = c;
  pthread_mutex_unlock(&created_lock);
  if (full) {
    context_uncharge(c);
    free(c);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (sim_current_ctx != NULL && depth < SIM_STACK)
    below[depth++] = sim_current_ctx;
  sim_current_ctx = c;
  *pctx = c;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
               unsigned int flags, CUdevice dev)
{
  return ctx_create(pctx, dev);
}

SIM_EXPORT CUresult
cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
               int numParams, unsigned int flags, CUdevice dev)
{
  return ctx_create(pctx, dev);
}

SIM_EXPORT CUresult
cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
  return ctx_create(pctx, dev);
}

/* The CUDA 2.0 ABI, the same shape as _v2. */
SIM_EXPORT CUresult
cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
  return ctx_create(pctx, dev);
}

/* Frees everything the context allocated (device memory, pool
 * allocations, arrays) and leaves no context sim_current_ctx if it was. */
static CUresult
ctx_destroy(CUcontext ctx)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (ctx == NULL || !is_known_context(ctx) || ctx->primary)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx->magic != SIM_CTX_ALIVE)
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  sim_free_owned_by(ctx);
  ctx->magic = SIM_CTX_DEAD;
  context_uncharge(ctx);
  if (sim_current_ctx == ctx)
    pop_current();
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuCtxDestroy_v2(CUcontext ctx)
{
  return ctx_destroy(ctx);
}

SIM_EXPORT CUresult
cuCtxDestroy(CUcontext ctx)
{
  return ctx_destroy(ctx);
}

SIM_EXPORT CUresult
cuCtxSetCurrent(CUcontext ctx)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (ctx != NULL && !is_known_context(ctx))
    return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx != NULL && ctx->magic != SIM_CTX_ALIVE)
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (ctx == NULL)
    pop_current();
  else
    sim_current_ctx = ctx;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuCtxGetCurrent(CUcontext *pctx)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (pctx == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *pctx = sim_current_ctx;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuCtxGetDevice(CUdevice *device)
{
  struct CUctx_st *c;
  CUresult rc = sim_current(&c, NULL);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (device == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *device = c->ordinal;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuCtxSynchronize(void)
{
  return sim_current(NULL, NULL);
}

/* ---- test-only introspection ---------------------------------------- */

/* The bytes the contexts that exist on CUDA ordinal `dev` cost it (part
 * of cmgsim_stats's `used`), so a test can tell them from allocations.
 * `bytes` may be NULL.  0 or -EINVAL. */
SIM_EXPORT int
cmgsim_context_bytes(int dev, unsigned long long *bytes)
{
  sim_configure_once();
  if (!sim_is_device(dev))
    return -EINVAL;
  struct sim_device *d = sim_device(dev);
  pthread_mutex_lock(&d->lock);
  if (bytes != NULL)
    *bytes = d->contexts;
  pthread_mutex_unlock(&d->lock);
  return 0;
}

/* ---- hidden aliases ------------------------------------------------- */

SIM_CONTEXT_FUNCTIONS(SIM_DEFINE_ALIAS)
