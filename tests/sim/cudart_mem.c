/*
 * The simulated runtime's other allocation families: 3D pitched memory,
 * CUDA arrays, memory pools, page-locked host memory and IPC.
 *
 * Each is a thin layer over the driver entry points cudart.c resolved at
 * boot, as in NVIDIA's runtime: cudaMallocArray becomes cuArrayCreate,
 * cudaMalloc3D becomes cuMemAllocPitch, and so on, and a driver result
 * becomes the cudaError_t the real runtime returns (out of memory is
 * cudaErrorMemoryAllocation).  Every call boots the runtime and binds the
 * thread's context first (rt_enter).  No state of its own.
 */
#include "cudart.h"

#include <stdint.h>
#include <string.h>

/* Not declared unless CUDA_API_PER_THREAD_DEFAULT_STREAM is defined. */
SIM_EXPORT extern __typeof__(cudaMallocFromPoolAsync)
    cudaMallocFromPoolAsync_ptsz;

/* ---- pitched 3D memory ------------------------------------------------ */

/* Rows of extent.width bytes, height x depth of them, pitched like
 * cudaMallocPitch (element size 4). */
SIM_EXPORT cudaError_t
cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (pitchedDevPtr == NULL)
    return rt_ret(cudaErrorInvalidValue);
  if (extent.depth != 0 && extent.height > SIZE_MAX / extent.depth)
    return rt_ret(cudaErrorMemoryAllocation);
  CUdeviceptr p = 0;
  size_t pitch = 0;
  CUresult rc = rt_drv.mem_alloc_pitch(&p, &pitch, extent.width,
                                       extent.height * extent.depth, 4);
  if (rc == CUDA_SUCCESS) {
    pitchedDevPtr->ptr = (void *)(uintptr_t)p;
    pitchedDevPtr->pitch = pitch;
    pitchedDevPtr->xsize = extent.width;
    pitchedDevPtr->ysize = extent.height;
  }
  return rt_ret(rt_from_driver(rc));
}

/* ---- arrays ----------------------------------------------------------- */

/* The driver's format and channel count for a channel descriptor: every
 * used channel the same width, 8, 16 or 32 bits (16-bit floats are
 * halves). */
static bool
array_format(const struct cudaChannelFormatDesc *d, CUarray_format *fmt,
             unsigned int *channels)
{
  int bits[4] = { d->x, d->y, d->z, d->w };
  unsigned int n = 0;
  for (int i = 0; i < 4; i++) {
    if (bits[i] == 0)
      break;
    if (bits[i] != d->x)
      return false;
    n++;
  }
  if (n == 0 || n == 3)
    return false;
  *channels = n;
  switch (d->f) {
  case cudaChannelFormatKindSigned:
    *fmt = d->x == 8 ? CU_AD_FORMAT_SIGNED_INT8
         : d->x == 16 ? CU_AD_FORMAT_SIGNED_INT16
         : CU_AD_FORMAT_SIGNED_INT32;
    return d->x == 8 || d->x == 16 || d->x == 32;
  case cudaChannelFormatKindUnsigned:
    *fmt = d->x == 8 ? CU_AD_FORMAT_UNSIGNED_INT8
         : d->x == 16 ? CU_AD_FORMAT_UNSIGNED_INT16
         : CU_AD_FORMAT_UNSIGNED_INT32;
    return d->x == 8 || d->x == 16 || d->x == 32;
  case cudaChannelFormatKindFloat:
    *fmt = d->x == 16 ? CU_AD_FORMAT_HALF : CU_AD_FORMAT_FLOAT;
    return d->x == 16 || d->x == 32;
  default:
    return false;
  }
}

static cudaError_t
array3d_desc(const struct cudaChannelFormatDesc *desc,
             struct cudaExtent extent, unsigned int flags,
             CUDA_ARRAY3D_DESCRIPTOR *out)
{
  if (desc == NULL)
    return cudaErrorInvalidValue;
  memset(out, 0, sizeof(*out));
  if (!array_format(desc, &out->Format, &out->NumChannels))
    return cudaErrorInvalidChannelDescriptor;
  out->Width = extent.width;
  out->Height = extent.height;
  out->Depth = extent.depth;
  out->Flags = flags;
  return cudaSuccess;
}

/* Flags are the driver's to ignore; a 2D array needs no 3D descriptor. */
SIM_EXPORT cudaError_t
cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                size_t width, size_t height, unsigned int flags)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (array == NULL || desc == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUDA_ARRAY_DESCRIPTOR ad;
  memset(&ad, 0, sizeof(ad));
  if (!array_format(desc, &ad.Format, &ad.NumChannels))
    return rt_ret(cudaErrorInvalidChannelDescriptor);
  ad.Width = width;
  ad.Height = height;
  CUarray a = NULL;
  CUresult rc = rt_drv.array_create(&a, &ad);
  if (rc == CUDA_SUCCESS)
    *array = (cudaArray_t)a;
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                  struct cudaExtent extent, unsigned int flags)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  CUDA_ARRAY3D_DESCRIPTOR ad;
  if (array == NULL)
    return rt_ret(cudaErrorInvalidValue);
  if ((err = array3d_desc(desc, extent, flags, &ad)) != cudaSuccess)
    return rt_ret(err);
  CUarray a = NULL;
  CUresult rc = rt_drv.array3d_create(&a, &ad);
  if (rc == CUDA_SUCCESS)
    *array = (cudaArray_t)a;
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmappedArray,
                         const struct cudaChannelFormatDesc *desc,
                         struct cudaExtent extent, unsigned int numLevels,
                         unsigned int flags)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  CUDA_ARRAY3D_DESCRIPTOR ad;
  if (mipmappedArray == NULL)
    return rt_ret(cudaErrorInvalidValue);
  if ((err = array3d_desc(desc, extent, flags, &ad)) != cudaSuccess)
    return rt_ret(err);
  CUmipmappedArray m = NULL;
  CUresult rc = rt_drv.mipmap_create(&m, &ad, numLevels);
  if (rc == CUDA_SUCCESS)
    *mipmappedArray = (cudaMipmappedArray_t)m;
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaFreeArray(cudaArray_t array)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (array == NULL)
    return cudaSuccess;
  return rt_ret(rt_from_driver(rt_drv.array_destroy((CUarray)array)));
}

SIM_EXPORT cudaError_t
cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (mipmappedArray == NULL)
    return cudaSuccess;
  return rt_ret(rt_from_driver(
      rt_drv.mipmap_destroy((CUmipmappedArray)mipmappedArray)));
}

/* ---- memory pools ------------------------------------------------------ */

SIM_EXPORT cudaError_t
cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (memPool == NULL)
    return rt_ret(cudaErrorInvalidValue);
  if (device < 0 || device >= rt_ndevices)
    return rt_ret(cudaErrorInvalidDevice);
  CUmemoryPool p = NULL;
  CUresult rc = rt_drv.default_pool(&p, device);
  if (rc == CUDA_SUCCESS)
    *memPool = (cudaMemPool_t)p;
  return rt_ret(rt_from_driver(rc));
}

/* The runtime's properties, field by field into the driver's. */
SIM_EXPORT cudaError_t
cudaMemPoolCreate(cudaMemPool_t *memPool,
                  const struct cudaMemPoolProps *poolProps)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (memPool == NULL || poolProps == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUmemPoolProps cp;
  memset(&cp, 0, sizeof(cp));
  cp.allocType = (CUmemAllocationType)poolProps->allocType;
  cp.handleTypes = (CUmemAllocationHandleType)poolProps->handleTypes;
  cp.location.type = (CUmemLocationType)poolProps->location.type;
  cp.location.id = poolProps->location.id;
  cp.maxSize = poolProps->maxSize;
  cp.usage = poolProps->usage;
  CUmemoryPool p = NULL;
  CUresult rc = rt_drv.pool_create(&p, &cp);
  if (rc == CUDA_SUCCESS)
    *memPool = (cudaMemPool_t)p;
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaMemPoolDestroy(cudaMemPool_t memPool)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(rt_drv.pool_destroy((CUmemoryPool)memPool)));
}

SIM_EXPORT cudaError_t
cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(
      rt_drv.pool_trim((CUmemoryPool)memPool, minBytesToKeep)));
}

/* cudaMemPoolAttr has the driver's values. */
SIM_EXPORT cudaError_t
cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr,
                        void *value)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(rt_drv.pool_get_attribute(
      (CUmemoryPool)memPool, (CUmemPool_attribute)attr, value)));
}

static cudaError_t
malloc_from_pool(void **ptr, size_t size, cudaMemPool_t memPool,
                 cudaStream_t stream, bool ptsz)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (ptr == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUdeviceptr p = 0;
  CUresult rc = ptsz
      ? rt_drv.alloc_from_pool_ptsz(&p, size, (CUmemoryPool)memPool,
                                    (CUstream)stream)
      : rt_drv.alloc_from_pool(&p, size, (CUmemoryPool)memPool,
                               (CUstream)stream);
  if (rc == CUDA_SUCCESS)
    *ptr = (void *)(uintptr_t)p;
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool,
                        cudaStream_t stream)
{
  return malloc_from_pool(ptr, size, memPool, stream, false);
}

SIM_EXPORT cudaError_t
cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
                             cudaStream_t stream)
{
  return malloc_from_pool(ptr, size, memPool, stream, true);
}

/* ---- page-locked host memory ----------------------------------------- */

SIM_EXPORT cudaError_t
cudaMallocHost(void **ptr, size_t size)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (ptr == NULL)
    return rt_ret(cudaErrorInvalidValue);
  return rt_ret(rt_from_driver(rt_drv.mem_alloc_host(ptr, size)));
}

/* cudaHostAlloc's flags have the driver's values. */
SIM_EXPORT cudaError_t
cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (pHost == NULL)
    return rt_ret(cudaErrorInvalidValue);
  return rt_ret(rt_from_driver(rt_drv.mem_host_alloc(pHost, size, flags)));
}

SIM_EXPORT cudaError_t
cudaFreeHost(void *ptr)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(rt_drv.mem_free_host(ptr)));
}

/* ---- IPC ---------------------------------------------------------------- */

SIM_EXPORT cudaError_t
cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (handle == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUipcMemHandle h;
  CUresult rc = rt_drv.ipc_get(&h, (CUdeviceptr)(uintptr_t)devPtr);
  if (rc == CUDA_SUCCESS)
    memcpy(handle, &h, sizeof(*handle));
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle,
                     unsigned int flags)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (devPtr == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUipcMemHandle h;
  memcpy(&h, &handle, sizeof(h));
  CUdeviceptr p = 0;
  CUresult rc = rt_drv.ipc_open(&p, h, flags);
  if (rc == CUDA_SUCCESS)
    *devPtr = (void *)(uintptr_t)p;
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaIpcCloseMemHandle(void *devPtr)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(
      rt_drv.ipc_close((CUdeviceptr)(uintptr_t)devPtr)));
}
