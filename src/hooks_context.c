/*
 * Contexts, and the memory their teardown frees all at once.
 *
 * Each allocation records the id of the context current when it was made
 * (a small number from the table below, so a ledger entry stays small).
 * When a context dies, its device memory and arrays go with it: the
 * entries leave the ledger, their bytes stop counting, and the report lists
 * them as released by context teardown, apart from leaks.
 *
 * A context dies through cuCtxDestroy, through cuDevicePrimaryCtxReset
 * (which cudaDeviceReset calls, in its 7000 variant), or through the
 * cuDevicePrimaryCtxRelease that drops the last reference to a primary
 * context.  References are counted from the retains and releases we see;
 * a release we cannot match with a retain ends nothing, so a miscount can
 * only keep memory counted, never let it escape the limit.  A context is a
 * primary one unless it came from cuCtxCreate.
 *
 * The id table is append-only and read without a lock; a thread remembers
 * the last context it looked up and that context's device, so the common
 * case is one driver call (cuCtxGetCurrent) and a compare.  The memory is
 * dropped when any context is created or destroyed (a generation count),
 * since a destroyed context's address may come back as another device's.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>

#include "hooks.h"

#define MAX_CONTEXTS CMG__MAX_CONTEXTS

static _Atomic(CUcontext) contexts[MAX_CONTEXTS];  /* by id; 0 unused */
static _Atomic bool created[MAX_CONTEXTS];         /* by cuCtxCreate */
static _Atomic unsigned n_contexts = 1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int retains[CMG__MAX_DEVICES];

static CMG__TLS CUcontext last_ctx;
static CMG__TLS uint16_t last_id;
static CMG__TLS int last_device;
static CMG__TLS unsigned last_generation;
static _Atomic unsigned generation = 1;

/* The id of ctx, given on first sight; 0 for NULL or a full table. */
static uint16_t
id_of(CUcontext ctx)
{
  if (ctx == NULL)
    return 0;
  if (ctx == last_ctx)
    return last_id;
  unsigned n = atomic_load_explicit(&n_contexts, memory_order_acquire);
  unsigned id = 1;
  while (id < n && atomic_load_explicit(&contexts[id],
                                        memory_order_relaxed) != ctx)
    id++;
  if (id == n) {
    pthread_mutex_lock(&lock);
    n = atomic_load(&n_contexts);
    for (id = 1; id < n && atomic_load(&contexts[id]) != ctx; id++)
      ;
    if (id == n && n < MAX_CONTEXTS) {
      atomic_store(&contexts[id], ctx);
      atomic_store_explicit(&n_contexts, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&lock);
    if (id >= MAX_CONTEXTS)
      return 0;
  }
  last_ctx = ctx;
  last_id = (uint16_t)id;
  return (uint16_t)id;
}

/* The thread's context changed since its last allocation. */
static CMG__COLD int
context_changed(CUcontext ctx, unsigned gen, uint16_t *id)
{
  int device = cmg__current_device();
  *id = id_of(ctx);  /* sets last_ctx and last_id */
  last_device = device;
  last_generation = gen;
  return device;
}

int CMG__HOT
cmg__context_device(uint16_t *id)
{
  cmg__pfn_cuCtxGetCurrent get = REAL(cuCtxGetCurrent);
  CUcontext ctx = NULL;
  *id = 0;
  if (get == NULL || get(&ctx) != CUDA_SUCCESS || ctx == NULL)
    return -1;
  unsigned gen = atomic_load_explicit(&generation, memory_order_acquire);
  if (ctx != last_ctx || gen != last_generation)
    return context_changed(ctx, gen, id);
  *id = last_id;
  return last_device;
}

struct teardown {
  uint16_t ctx;   /* this context, or */
  int device;     /* the primary context of this device */
};

static bool
survives(const struct cmg__alloc *a, void *arg)
{
  const struct teardown *t = arg;
  if (a->ctx == 0)
    return true;
  if (t->ctx != 0)
    return a->ctx != t->ctx;
  return a->device != t->device || atomic_load(&created[a->ctx]);
}

static void
released(const struct cmg__alloc *a, void *arg)
{
  cmg__uncount(a, true);
  cmg__history_released(a);
}

static void
teardown(uint16_t ctx, int device)
{
  struct teardown t = { ctx, device };
  atomic_fetch_add(&generation, 1);
  if (ctx == 0 && (device < 0 || device >= CMG__MAX_DEVICES))
    return;
  cmg__ledger_remove_if(survives, released, &t);
}

static void
mark_created(CUresult rc, CUcontext *pctx)
{
  atomic_fetch_add(&generation, 1);
  if (rc == CUDA_SUCCESS && pctx != NULL) {
    uint16_t id = id_of(*pctx);
    if (id != 0)
      atomic_store(&created[id], true);
  }
}

#define CREATE_HOOK(elf, params, args)                                       \
  CUresult CUDAAPI elf params                                                \
  {                                                                          \
    CMG__REAL_OR_FAIL(real, elf)                                             \
    cmg__init();                                                             \
    CUresult rc = real args;                                                 \
    mark_created(rc, pctx);                                                  \
    return rc;                                                               \
  }

CREATE_HOOK(cuCtxCreate, (CUcontext *pctx, unsigned int flags, CUdevice dev),
            (pctx, flags, dev))
CREATE_HOOK(cuCtxCreate_v2,
            (CUcontext *pctx, unsigned int flags, CUdevice dev),
            (pctx, flags, dev))
CREATE_HOOK(cuCtxCreate_v3,
            (CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
             unsigned int flags, CUdevice dev),
            (pctx, paramsArray, numParams, flags, dev))
CREATE_HOOK(cuCtxCreate_v4,
            (CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
             unsigned int flags, CUdevice dev),
            (pctx, ctxCreateParams, flags, dev))

/* A destroyed context's id is retired with its memory; a new context at
 * the same address later is a new context with the same id, which is
 * harmless since nothing of the old one is left in the ledger. */
#define DESTROY_HOOK(elf)                                                    \
  CUresult CUDAAPI elf(CUcontext ctx)                                        \
  {                                                                          \
    CMG__REAL_OR_FAIL(real, elf)                                             \
    cmg__init();                                                             \
    uint16_t id = id_of(ctx);                                                \
    CUresult rc = real(ctx);                                                 \
    if (rc == CUDA_SUCCESS && id != 0) {                                     \
      teardown(id, -1);                                                      \
      atomic_store(&created[id], false);                                     \
    }                                                                        \
    return rc;                                                               \
  }

DESTROY_HOOK(cuCtxDestroy)
DESTROY_HOOK(cuCtxDestroy_v2)

CUresult CUDAAPI
cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
  CMG__REAL_OR_FAIL(real, cuDevicePrimaryCtxRetain)
  cmg__init();
  CUresult rc = real(pctx, dev);
  if (rc == CUDA_SUCCESS && dev >= 0 && dev < CMG__MAX_DEVICES)
    atomic_fetch_add(&retains[dev], 1);
  return rc;
}

#define RELEASE_HOOK(elf)                                                    \
  CUresult CUDAAPI elf(CUdevice dev)                                         \
  {                                                                          \
    CMG__REAL_OR_FAIL(real, elf)                                             \
    cmg__init();                                                             \
    CUresult rc = real(dev);                                                 \
    if (rc != CUDA_SUCCESS || dev < 0 || dev >= CMG__MAX_DEVICES)            \
      return rc;                                                             \
    int n = atomic_load(&retains[dev]);                                      \
    while (n > 0 && !atomic_compare_exchange_weak(&retains[dev], &n, n - 1)) \
      ;                                                                      \
    if (n == 1)                                                              \
      teardown(0, dev);                                                      \
    return rc;                                                               \
  }

RELEASE_HOOK(cuDevicePrimaryCtxRelease)
RELEASE_HOOK(cuDevicePrimaryCtxRelease_v2)

/* A reset frees everything of the primary context, which stays retained. */
#define RESET_HOOK(elf)                                                      \
  CUresult CUDAAPI elf(CUdevice dev)                                         \
  {                                                                          \
    CMG__REAL_OR_FAIL(real, elf)                                             \
    cmg__init();                                                             \
    CUresult rc = real(dev);                                                 \
    if (rc == CUDA_SUCCESS)                                                  \
      teardown(0, dev);                                                      \
    return rc;                                                               \
  }

RESET_HOOK(cuDevicePrimaryCtxReset)
RESET_HOOK(cuDevicePrimaryCtxReset_v2)
