/*
 * CUDA arrays and mipmapped arrays (textures, surfaces): device memory held
 * by a handle, counted against the device and kept in the ledger under that
 * handle.  Their size is estimated from the descriptor as width x height x
 * depth x channels x bytes per element (summed over the levels of a
 * mipmap); the driver's layout adds alignment and tiling this does not see,
 * so docs/coverage.md calls it an estimate.
 */
#include "config.h"

#include "runtime/ledger/ledger.h"
#include "preload/account.h"
#include "preload/hooks/hooks.h"

/* Bytes of one channel of one element; 4 for a format this does not know. */
static uint64_t
element_bytes(CUarray_format format)
{
  switch (format) {
  case CU_AD_FORMAT_UNSIGNED_INT8:
  case CU_AD_FORMAT_SIGNED_INT8:
    return 1;
  case CU_AD_FORMAT_UNSIGNED_INT16:
  case CU_AD_FORMAT_SIGNED_INT16:
  case CU_AD_FORMAT_HALF:
    return 2;
  default:
    return 4;
  }
}

static uint64_t
extent(size_t n)
{
  return n ? n : 1;
}

static uint64_t
array_bytes(size_t w, size_t h, size_t d, unsigned ch, CUarray_format f)
{
  return extent(w) * extent(h) * extent(d) * extent(ch) * element_bytes(f);
}

static uint64_t
mipmap_bytes(const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned levels)
{
  uint64_t total = 0;
  size_t w = desc->Width, h = desc->Height, d = desc->Depth;
  for (unsigned i = 0; i < extent(levels); i++) {
    total += array_bytes(w, h, d, desc->NumChannels, desc->Format);
    w = w > 1 ? w / 2 : w;
    h = h > 1 ? h / 2 : h;
    d = d > 1 ? d / 2 : d;
  }
  return total;
}

CMG__ALLOC_HOOK(cuArrayCreate_v2,
                (CUarray * pHandle, const CUDA_ARRAY_DESCRIPTOR *desc),
                CMG__KIND_ARRAY, CMG__CURRENT,
                desc ? array_bytes(desc->Width, desc->Height, 1,
                                   desc->NumChannels, desc->Format)
                     : 0,
                (pHandle, desc), (uintptr_t)*pHandle)
CMG__ALLOC_HOOK(cuArray3DCreate_v2,
                (CUarray * pHandle, const CUDA_ARRAY3D_DESCRIPTOR *desc),
                CMG__KIND_ARRAY, CMG__CURRENT,
                desc ? array_bytes(desc->Width, desc->Height, desc->Depth,
                                   desc->NumChannels, desc->Format)
                     : 0,
                (pHandle, desc), (uintptr_t)*pHandle)
CMG__ALLOC_HOOK(cuMipmappedArrayCreate,
                (CUmipmappedArray * pHandle,
                 const CUDA_ARRAY3D_DESCRIPTOR *desc,
                 unsigned int numMipmapLevels),
                CMG__KIND_ARRAY, CMG__CURRENT,
                desc ? mipmap_bytes(desc, numMipmapLevels) : 0,
                (pHandle, desc, numMipmapLevels), (uintptr_t)*pHandle)
CMG__FREE_HOOK(cuArrayDestroy, (CUarray hArray), CMG__KIND_ARRAY,
               (uintptr_t)hArray, (hArray))
CMG__FREE_HOOK(cuMipmappedArrayDestroy, (CUmipmappedArray hMipmappedArray),
               CMG__KIND_ARRAY, (uintptr_t)hMipmappedArray, (hMipmappedArray))
