/*
 * The plain device-memory entry points, and the driver's memory queries,
 * which frameworks size their pools from: under a cap they see the cap,
 * not the card.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>

#include "preload/context.h"
#include "preload/hooks/hooks.h"

#include "preload/start.h"

CMG__ALLOC_HOOK(cuMemAlloc_v2, (CUdeviceptr * dptr, size_t bytesize),
                CMG__KIND_DEVICE, CMG__CURRENT, bytesize, (dptr, bytesize),
                *dptr)
CMG__ALLOC_HOOK(cuMemAllocManaged,
                (CUdeviceptr * dptr, size_t bytesize, unsigned int flags),
                CMG__KIND_DEVICE, CMG__CURRENT, bytesize,
                (dptr, bytesize, flags), *dptr)
CUresult CUDAAPI CMG__ENTRY
cuMemFree_v2(CUdeviceptr dptr){ CMG__REAL_OR_FAIL(real, cuMemFree_v2)
                                    CMG__DEVICE_FREE_BODY(dptr, (dptr)) }

/* The pitch, and so the real size, is known only after the call: reserve
 * width x height, then reserve the padding too or undo the allocation. */
CUresult CUDAAPI
    cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                       size_t Height, unsigned int ElementSizeBytes)
{
  CMG__REAL_OR_FAIL(real, cuMemAllocPitch_v2)
  struct cmg__call c;
  uint64_t bytes = (uint64_t)WidthInBytes * Height;
  CUresult rc = cmg__alloc_begin(&c, CMG__FN_cuMemAllocPitch_v2,
                                 CMG__KIND_DEVICE, CMG__CURRENT, bytes);
  if (rc != CUDA_SUCCESS)
    return rc;
  rc = real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
  if (rc == CUDA_SUCCESS && c.tracked && *pPitch > WidthInBytes &&
      cmg__alloc_grow(&c, (uint64_t)(*pPitch - WidthInBytes) * Height) !=
          CUDA_SUCCESS) {
    cmg__pfn_cuMemFree_v2 release = REAL(cuMemFree_v2);
    if (release != NULL)
      release(*dptr);
    rc = CUDA_ERROR_OUT_OF_MEMORY;
  }
  return cmg__alloc_end(&c, rc, rc == CUDA_SUCCESS ? *dptr : 0);
}

CUresult CUDAAPI
cuMemGetInfo_v2(size_t *free, size_t *total)
{
  CMG__REAL_OR_FAIL(real, cuMemGetInfo_v2)
  CUresult rc = real(free, total);
  if (rc != CUDA_SUCCESS)
    return rc;
  cmg__init();
  int dev = cmg__current_device();
  if (dev < 0 || dev >= CMG__MAX_DEVICES)
    return rc;
  uint64_t f = free ? *free : UINT64_MAX, t = total ? *total : 0;
  cmg__virtual_meminfo(dev, &f, &t);
  if (free != NULL)
    *free = f;
  if (total != NULL)
    *total = t;
  return rc;
}

CUresult CUDAAPI
cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
  CMG__REAL_OR_FAIL(real, cuDeviceTotalMem_v2)
  CUresult rc = real(bytes, dev);
  if (rc != CUDA_SUCCESS || bytes == NULL || dev < 0 || dev >= CMG__MAX_DEVICES)
    return rc;
  cmg__init();
  uint64_t free = UINT64_MAX, total = *bytes;
  cmg__virtual_meminfo(dev, &free, &total);
  *bytes = total;
  return rc;
}
