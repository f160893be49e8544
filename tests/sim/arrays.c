/*
 * CUDA arrays and mipmapped arrays of the simulated driver.
 *
 * An array is a driver object (CUarray and CUmipmappedArray point at
 * one), kept in a list under sim_obj_lock together with the context that
 * made it.  Its size is the estimate the tests rely on: width x
 * max(height, 1) x max(depth, 1) x channels x bytes of the format, and
 * for a mipmapped array the sum of that over its levels (each level
 * halves every dimension, to no less than 1), rounded up to 512 bytes.
 * It counts against the device of the context current at creation, and
 * that context's teardown destroys it.  Only the eight plain formats
 * (8/16/32-bit integers, half and float) with 1, 2 or 4 channels are
 * simulated; flags are accepted and ignored.
 */
#include "libcuda.h"

#include <stdlib.h>

#define ARRAY_ALIVE 0x59525241u  /* "ARRY" */
#define MIPMAP_ALIVE 0x5050494du /* "MIPP" */

struct CUarray_st {
  uint32_t magic;
  CUDA_ARRAY3D_DESCRIPTOR desc;
  unsigned int levels;
  uint64_t bytes;
  struct sim_device *dev;
  const struct CUctx_st *owner;
  struct CUarray_st *next;
};

/* A mipmapped array is an array with levels; the two handle types only
 * differ in name. */
struct CUmipmappedArray_st {
  struct CUarray_st a;
};

static struct CUarray_st *arrays;

static unsigned int
format_bytes(CUarray_format f)
{
  switch (f) {
  case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8:
    return 1;
  case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16:
  case CU_AD_FORMAT_HALF:
    return 2;
  case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32:
  case CU_AD_FORMAT_FLOAT:
    return 4;
  default:
    return 0;
  }
}

static uint64_t
at_least_1(uint64_t v)
{
  return v ? v : 1;
}

/* The bytes of `levels` levels of `d` rounded up to 512; 0 when the
 * descriptor is invalid or the size overflows. */
static uint64_t
array_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned int levels)
{
  unsigned int fb = format_bytes(d->Format);
  if (fb == 0 || d->Width == 0 || levels == 0 ||
      (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4))
    return 0;
  uint64_t w = d->Width, h = at_least_1(d->Height), z = at_least_1(d->Depth);
  uint64_t largest = w > h ? (w > z ? w : z) : (h > z ? h : z);
  unsigned int possible = 1;
  while (largest >>= 1)
    possible++;
  if (levels > possible)
    return 0;
  unsigned __int128 sum = 0;
  for (unsigned int l = 0; l < levels; l++) {
    sum += (unsigned __int128)w * h * z * fb * d->NumChannels;
    w = at_least_1(w / 2);
    h = at_least_1(h / 2);
    z = at_least_1(z / 2);
  }
  sum = (sum + SIM_ALIGN - 1) & ~(unsigned __int128)(SIM_ALIGN - 1);
  return sum > UINT64_MAX / 2 ? 0 : (uint64_t)sum;
}

static CUresult
create(struct CUarray_st **out, const CUDA_ARRAY3D_DESCRIPTOR *desc,
       unsigned int levels, uint32_t magic)
{
  struct CUctx_st *ctx;
  struct sim_device *d;
  CUresult rc = sim_current(&ctx, &d);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (out == NULL || desc == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t bytes = array_bytes(desc, levels);
  if (bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  struct CUarray_st *a = calloc(1, magic == MIPMAP_ALIVE
                                       ? sizeof(struct CUmipmappedArray_st)
                                       : sizeof(*a));
  if (a == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  a->magic = magic;
  a->desc = *desc;
  a->levels = levels;
  a->bytes = bytes;
  a->dev = d;
  a->owner = ctx;
  pthread_mutex_lock(&sim_obj_lock);
  rc = sim_charge(d, bytes);
  if (rc == CUDA_SUCCESS) {
    a->next = arrays;
    arrays = a;
  }
  pthread_mutex_unlock(&sim_obj_lock);
  if (rc != CUDA_SUCCESS) {
    free(a);
    return rc;
  }
  *out = a;
  return CUDA_SUCCESS;
}

/* Unlinks `a` if it is a live object of the `magic` kind; sim_obj_lock
 * held.  False if it is not. */
static bool
unlink_array(const struct CUarray_st *a, uint32_t magic)
{
  for (struct CUarray_st **pp = &arrays; *pp != NULL; pp = &(*pp)->next) {
    if (*pp == a) {
      if (a->magic != magic)
        return false;
      *pp = a->next;
      return true;
    }
  }
  return false;
}

static void
destroy_unlinked(struct CUarray_st *a)
{
  sim_uncharge(a->dev, a->bytes);
  a->magic = 0;
  free(a);
}

static CUresult
destroy(struct CUarray_st *a, uint32_t magic)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  pthread_mutex_lock(&sim_obj_lock);
  if (a == NULL || !unlink_array(a, magic))
    rc = CUDA_ERROR_INVALID_HANDLE;
  else
    destroy_unlinked(a);
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* A live object of the `magic` kind, or NULL; sim_obj_lock held. */
static struct CUarray_st *
find(const void *handle, uint32_t magic)
{
  for (struct CUarray_st *a = arrays; a != NULL; a = a->next)
    if (a == handle)
      return a->magic == magic ? a : NULL;
  return NULL;
}

void
sim_arrays_teardown(const struct CUctx_st *ctx)
{
  for (struct CUarray_st **pp = &arrays; *pp != NULL;) {
    struct CUarray_st *a = *pp;
    if (a->owner != ctx) {
      pp = &a->next;
      continue;
    }
    *pp = a->next;
    destroy_unlinked(a);
  }
}

/* ---- arrays ---------------------------------------------------------- */

static CUDA_ARRAY3D_DESCRIPTOR
from_2d(size_t width, size_t height, CUarray_format format,
        unsigned int channels)
{
  CUDA_ARRAY3D_DESCRIPTOR d = { .Width = width, .Height = height,
                                .Depth = 0, .Format = format,
                                .NumChannels = channels, .Flags = 0 };
  return d;
}

SIM_EXPORT CUresult
cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
  if (pAllocateArray == NULL)
    return create(pHandle, NULL, 1, ARRAY_ALIVE);
  CUDA_ARRAY3D_DESCRIPTOR d =
      from_2d(pAllocateArray->Width, pAllocateArray->Height,
              pAllocateArray->Format, pAllocateArray->NumChannels);
  return create(pHandle, &d, 1, ARRAY_ALIVE);
}

/* The CUDA 2.0 ABI, with 32-bit extents. */
SIM_EXPORT CUresult
cuArrayCreate(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR_v1 *pAllocateArray)
{
  if (pAllocateArray == NULL)
    return create(pHandle, NULL, 1, ARRAY_ALIVE);
  CUDA_ARRAY3D_DESCRIPTOR d =
      from_2d(pAllocateArray->Width, pAllocateArray->Height,
              pAllocateArray->Format, pAllocateArray->NumChannels);
  return create(pHandle, &d, 1, ARRAY_ALIVE);
}

SIM_EXPORT CUresult
cuArray3DCreate_v2(CUarray *pHandle,
                   const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
  return create(pHandle, pAllocateArray, 1, ARRAY_ALIVE);
}

SIM_EXPORT CUresult
cuArray3DCreate(CUarray *pHandle,
                const CUDA_ARRAY3D_DESCRIPTOR_v1 *pAllocateArray)
{
  if (pAllocateArray == NULL)
    return create(pHandle, NULL, 1, ARRAY_ALIVE);
  CUDA_ARRAY3D_DESCRIPTOR d = {
    .Width = pAllocateArray->Width, .Height = pAllocateArray->Height,
    .Depth = pAllocateArray->Depth, .Format = pAllocateArray->Format,
    .NumChannels = pAllocateArray->NumChannels,
    .Flags = pAllocateArray->Flags,
  };
  return create(pHandle, &d, 1, ARRAY_ALIVE);
}

SIM_EXPORT CUresult
cuArrayDestroy(CUarray hArray)
{
  return destroy(hArray, ARRAY_ALIVE);
}

static CUresult
get_descriptor(CUDA_ARRAY3D_DESCRIPTOR *out, CUarray hArray)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (out == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&sim_obj_lock);
  struct CUarray_st *a = find(hArray, ARRAY_ALIVE);
  if (a == NULL)
    rc = CUDA_ERROR_INVALID_HANDLE;
  else
    *out = a->desc;
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

SIM_EXPORT CUresult
cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *pArrayDescriptor,
                        CUarray hArray)
{
  CUDA_ARRAY3D_DESCRIPTOR d;
  CUresult rc = get_descriptor(pArrayDescriptor ? &d : NULL, hArray);
  if (rc == CUDA_SUCCESS) {
    pArrayDescriptor->Width = d.Width;
    pArrayDescriptor->Height = d.Height;
    pArrayDescriptor->Format = d.Format;
    pArrayDescriptor->NumChannels = d.NumChannels;
  }
  return rc;
}

SIM_EXPORT CUresult
cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor,
                          CUarray hArray)
{
  return get_descriptor(pArrayDescriptor, hArray);
}

/* The counted size, aligned to 512 bytes. */
static CUresult
requirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req, const void *handle,
             uint32_t magic, CUdevice device)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (req == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (sim_device(device) == NULL)
    return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&sim_obj_lock);
  struct CUarray_st *a = find(handle, magic);
  if (a == NULL) {
    rc = CUDA_ERROR_INVALID_HANDLE;
  } else {
    req->size = a->bytes;
    req->alignment = SIM_ALIGN;
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

SIM_EXPORT CUresult
cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *memoryRequirements,
                             CUarray array, CUdevice device)
{
  return requirements(memoryRequirements, array, ARRAY_ALIVE, device);
}

/* ---- mipmapped arrays ------------------------------------------------ */

SIM_EXPORT CUresult
cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
                       const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
                       unsigned int numMipmapLevels)
{
  struct CUarray_st *a;
  CUresult rc = create(pHandle ? &a : NULL, pMipmappedArrayDesc,
                       numMipmapLevels, MIPMAP_ALIVE);
  if (rc == CUDA_SUCCESS)
    *pHandle = (CUmipmappedArray)a;
  return rc;
}

SIM_EXPORT CUresult
cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
  return destroy((struct CUarray_st *)hMipmappedArray, MIPMAP_ALIVE);
}

SIM_EXPORT CUresult
cuMipmappedArrayGetMemoryRequirements(
    CUDA_ARRAY_MEMORY_REQUIREMENTS *memoryRequirements,
    CUmipmappedArray mipmap, CUdevice device)
{
  return requirements(memoryRequirements, mipmap, MIPMAP_ALIVE, device);
}

/* ---- hidden aliases ------------------------------------------------- */

SIM_ARRAY_FUNCTIONS(SIM_DEFINE_ALIAS)
