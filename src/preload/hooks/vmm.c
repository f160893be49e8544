/*
 * Virtual memory management and memory owned elsewhere.
 *
 * cuMemCreate is the physical allocation (NCCL, PyTorch's expandable
 * segments, XLA): it counts at its size on the device its properties name,
 * never the current context's, which a thread pool's worker may not even
 * have (HAMi-core#172).  Other locations (host, host NUMA) are recorded, not
 * counted.  The ledger keys it by its handle, with a reference count:
 * cuMemRetainAllocationHandle adds one, cuMemRelease drops one, and the
 * bytes stop counting when the last goes.  Reserving and mapping address
 * space costs no memory and passes through unwrapped.
 *
 * Memory another process owns (IPC handles, imported shareable handles,
 * external memory) is recorded with its API, so a report shows it, and never
 * counted against the limit.
 */
#include "config.h"

#include <errno.h>

#include "core/base.h"
#include "runtime/ledger/ledger.h"
#include "preload/account.h"
#include "preload/fn.h"
#include "preload/hooks/hooks.h"

#include "preload/start.h"

CUresult CUDAAPI
cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
            const CUmemAllocationProp *prop, unsigned long long flags)
{
  CMG__REAL_OR_FAIL(real, cuMemCreate)
  bool on_device =
      prop != NULL && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
  struct cmg__call c;
  CUresult rc = cmg__alloc_begin(
      &c, CMG__FN_cuMemCreate, on_device ? CMG__KIND_VMM : CMG__KIND_VMM_OTHER,
      on_device ? prop->location.id : CMG__HOST, size);
  if (rc != CUDA_SUCCESS)
    return rc;
  rc = real(handle, size, prop, flags);
  return cmg__alloc_end(&c, rc, rc == CUDA_SUCCESS ? *handle : 0);
}

static const unsigned handle_kinds[] = { CMG__KIND_VMM, CMG__KIND_VMM_OTHER,
                                         CMG__KIND_IMPORT };

CUresult CUDAAPI
cuMemRelease(CUmemGenericAllocationHandle handle)
{
  CMG__REAL_OR_FAIL(real, cuMemRelease)
  cmg__init();
  struct cmg__alloc a;
  unsigned kind = 0;
  int state = -1; /* -1 untracked, 0 a reference dropped, 1 the last */
  for (size_t i = 0; i < 3 && state < 0; i++) {
    kind = handle_kinds[i];
    int rc = cmg__ledger_unref(handle, kind, &a);
    state = rc == -ENOENT ? -1 : rc;
  }
  CUresult rc = real(handle);
  if (rc != CUDA_SUCCESS && state == 0)
    cmg__ledger_addref(handle, kind);
  else if (rc != CUDA_SUCCESS && state == 1)
    cmg__ledger_restore(&a);
  else if (rc == CUDA_SUCCESS && state == 1)
    cmg__uncount(&a, false);
  else if (rc == CUDA_SUCCESS && state < 0)
    cmg__ledger_count_untracked_free();
  return rc;
}

CUresult CUDAAPI
cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
  CMG__REAL_OR_FAIL(real, cuMemRetainAllocationHandle)
  CUresult rc = real(handle, addr);
  if (rc == CUDA_SUCCESS) {
    cmg__init();
    for (size_t i = 0; i < 3; i++)
      if (cmg__ledger_addref(*handle, handle_kinds[i]) == 0)
        break;
  }
  return rc;
}

/* The size of an imported allocation is the exporter's business; the
 * record carries none. */
CMG__ALLOC_HOOK(cuMemImportFromShareableHandle,
                (CUmemGenericAllocationHandle * handle, void *osHandle,
                 CUmemAllocationHandleType shHandleType),
                CMG__KIND_IMPORT, CMG__CURRENT, 0,
                (handle, osHandle, shHandleType), *handle)

CMG__ALLOC_HOOK(cuIpcOpenMemHandle,
                (CUdeviceptr * pdptr, CUipcMemHandle handle,
                 unsigned int Flags),
                CMG__KIND_IMPORT, CMG__CURRENT, 0, (pdptr, handle, Flags),
                *pdptr)
CMG__ALLOC_HOOK(cuIpcOpenMemHandle_v2,
                (CUdeviceptr * pdptr, CUipcMemHandle handle,
                 unsigned int Flags),
                CMG__KIND_IMPORT, CMG__CURRENT, 0, (pdptr, handle, Flags),
                *pdptr)
CMG__FREE_HOOK(cuIpcCloseMemHandle, (CUdeviceptr dptr), CMG__KIND_IMPORT, dptr,
               (dptr))

CMG__ALLOC_HOOK(cuImportExternalMemory,
                (CUexternalMemory * extMem_out,
                 const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *memHandleDesc),
                CMG__KIND_IMPORT, CMG__CURRENT,
                memHandleDesc ? memHandleDesc->size : 0,
                (extMem_out, memHandleDesc), (uintptr_t)*extMem_out)
CMG__FREE_HOOK(cuDestroyExternalMemory, (CUexternalMemory extMem),
               CMG__KIND_IMPORT, (uintptr_t)extMem, (extMem))
