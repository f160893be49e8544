/*
 * Contexts, and the memory their teardown frees all at once.
 *
 * A context dies through cuCtxDestroy, through cuDevicePrimaryCtxReset
 * (which cudaDeviceReset calls, in its 7000 variant), or through the
 * cuDevicePrimaryCtxRelease that drops the last reference to a primary
 * context.  References are counted from the retains and releases we see;
 * a release we cannot match with a retain ends nothing, so a miscount can
 * only keep memory counted, never let it escape the limit.
 */
#include "config.h"

#include <stdatomic.h>

#include "preload/context.h"
#include "preload/footprint.h"
#include "preload/hooks/hooks.h"

#include "preload/start.h"

static _Atomic int retains[CMG__MAX_DEVICES];

/* A context died (id ctx, or with ctx 0 device's primary context): its
 * allocations, the graph memory pool's growths it made and its own cost
 * leave the accounts. */
static void
died(uint16_t ctx, int device)
{
  cmg__release_context(ctx, device);
  cmg__graph_context_gone();
  cmg__footprint_gone(ctx, device);
}

/* A context the caps refuse is destroyed again, as the driver refuses one
 * on a full card: the thread's stack of contexts is as it was. */
static CUresult
refused(CUcontext *pctx)
{
  cmg__pfn_cuCtxDestroy_v2 destroy = REAL(cuCtxDestroy_v2);
  uint16_t id = cmg__context_id(*pctx);
  if (destroy != NULL && destroy(*pctx) == CUDA_SUCCESS)
    cmg__context_destroyed(id);
  *pctx = NULL;
  return CUDA_ERROR_OUT_OF_MEMORY;
}

#define CREATE_HOOK(elf, params, args)                                         \
  CUresult CUDAAPI elf params                                                  \
  {                                                                            \
    CMG__REAL_OR_FAIL(real, elf)                                               \
    cmg__init();                                                               \
    struct cmg__ctx_probe p;                                                   \
    cmg__footprint_before(&p, dev, false);                                     \
    CUresult rc = real args;                                                   \
    cmg__context_created(rc, pctx);                                            \
    if (cmg__footprint_after(&p, rc, pctx, CMG__FN_##elf) != rc)               \
      return refused(pctx);                                                    \
    return rc;                                                                 \
  }

CREATE_HOOK(cuCtxCreate, (CUcontext * pctx, unsigned int flags, CUdevice dev),
            (pctx, flags, dev))
CREATE_HOOK(cuCtxCreate_v2,
            (CUcontext * pctx, unsigned int flags, CUdevice dev),
            (pctx, flags, dev))
CREATE_HOOK(cuCtxCreate_v3,
            (CUcontext * pctx, CUexecAffinityParam *paramsArray, int numParams,
             unsigned int flags, CUdevice dev),
            (pctx, paramsArray, numParams, flags, dev))
CREATE_HOOK(cuCtxCreate_v4,
            (CUcontext * pctx, CUctxCreateParams *ctxCreateParams,
             unsigned int flags, CUdevice dev),
            (pctx, ctxCreateParams, flags, dev))

/* A destroyed context's id is retired with its memory; a new context at
 * the same address later is a new context with the same id, which is
 * harmless since nothing of the old one is left in the ledger. */
#define DESTROY_HOOK(elf)                                                      \
  CUresult CUDAAPI elf(CUcontext ctx)                                          \
  {                                                                            \
    CMG__REAL_OR_FAIL(real, elf)                                               \
    cmg__init();                                                               \
    uint16_t id = cmg__context_id(ctx);                                        \
    CUresult rc = real(ctx);                                                   \
    if (rc == CUDA_SUCCESS && id != 0) {                                       \
      died(id, -1);                                                            \
      cmg__context_destroyed(id);                                              \
    }                                                                          \
    return rc;                                                                 \
  }

DESTROY_HOOK(cuCtxDestroy)
DESTROY_HOOK(cuCtxDestroy_v2)

/* The first retain makes the primary context: its cost is measured. */
CUresult CUDAAPI
cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
  CMG__REAL_OR_FAIL(real, cuDevicePrimaryCtxRetain)
  cmg__init();
  bool ours = dev >= 0 && dev < CMG__MAX_DEVICES;
  bool first = ours && atomic_load(&retains[dev]) == 0;
  struct cmg__ctx_probe p;
  if (first)
    cmg__footprint_before(&p, dev, true);
  CUresult rc = real(pctx, dev);
  if (rc == CUDA_SUCCESS && ours)
    atomic_fetch_add(&retains[dev], 1);
  if (!first || cmg__footprint_after(&p, rc, pctx,
                                     CMG__FN_cuDevicePrimaryCtxRetain) == rc)
    return rc;
  /* Refused: the retain is given back, which ends the context. */
  cmg__pfn_cuDevicePrimaryCtxRelease_v2 release =
      REAL(cuDevicePrimaryCtxRelease_v2);
  if (release != NULL && release(dev) == CUDA_SUCCESS)
    atomic_fetch_sub(&retains[dev], 1);
  *pctx = NULL;
  return CUDA_ERROR_OUT_OF_MEMORY;
}

#define RELEASE_HOOK(elf)                                                      \
  CUresult CUDAAPI elf(CUdevice dev)                                           \
  {                                                                            \
    CMG__REAL_OR_FAIL(real, elf)                                               \
    cmg__init();                                                               \
    CUresult rc = real(dev);                                                   \
    if (rc != CUDA_SUCCESS || dev < 0 || dev >= CMG__MAX_DEVICES)              \
      return rc;                                                               \
    int n = atomic_load(&retains[dev]);                                        \
    while (n > 0 && !atomic_compare_exchange_weak(&retains[dev], &n, n - 1))   \
      ;                                                                        \
    if (n == 1)                                                                \
      died(0, dev);                                                            \
    return rc;                                                                 \
  }

RELEASE_HOOK(cuDevicePrimaryCtxRelease)
RELEASE_HOOK(cuDevicePrimaryCtxRelease_v2)

/* A reset frees everything of the primary context, which stays retained. */
#define RESET_HOOK(elf)                                                        \
  CUresult CUDAAPI elf(CUdevice dev)                                           \
  {                                                                            \
    CMG__REAL_OR_FAIL(real, elf)                                               \
    cmg__init();                                                               \
    CUresult rc = real(dev);                                                   \
    if (rc == CUDA_SUCCESS)                                                    \
      died(0, dev);                                                            \
    return rc;                                                                 \
  }

RESET_HOOK(cuDevicePrimaryCtxReset)
RESET_HOOK(cuDevicePrimaryCtxReset_v2)
