/*
 * The simulated runtime's other allocation families: 3D pitched memory,
 * CUDA arrays, memory pools, page-locked host memory and IPC; then
 * copies, and the registration and launch of the kernels of a program
 * built with nvcc.
 *
 * Each family is a thin layer over the driver entry points cudart.c
 * resolved at boot, as in NVIDIA's runtime: cudaMallocArray becomes
 * cuArrayCreate, cudaMalloc3D becomes cuMemAllocPitch, and so on, and a
 * driver result becomes the cudaError_t the real runtime returns (out of
 * memory is cudaErrorMemoryAllocation).  Every call boots the runtime and
 * binds the thread's context first (rt_enter).  The only state here is
 * the table of registered kernels and each thread's launch configurations.
 */
#include "cudart.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Not declared unless CUDA_API_PER_THREAD_DEFAULT_STREAM is defined. */
SIM_EXPORT extern __typeof__(cudaMallocFromPoolAsync)
    cudaMallocFromPoolAsync_ptsz;
SIM_EXPORT extern __typeof__(cudaLaunchKernel) cudaLaunchKernel_ptsz;

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

/* ---- copies ------------------------------------------------------------ */

/* The simulated device has addresses but no memory behind them, so only a
 * copy between host buffers can be made; one that may touch the device is
 * not supported, cudaMemcpyDefault (the pointers decide) included. */
SIM_EXPORT cudaError_t
cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if ((unsigned)kind > cudaMemcpyDefault)
    return rt_ret(cudaErrorInvalidMemcpyDirection);
  if (count == 0)
    return cudaSuccess;
  if (kind != cudaMemcpyHostToHost)
    return rt_ret(cudaErrorNotSupported);
  if (dst == NULL || src == NULL)
    return rt_ret(cudaErrorInvalidValue);
  memmove(dst, src, count);
  return cudaSuccess;
}

/* ---- modules and kernels ---------------------------------------------- */

/* A fat binary as registered: its handle is a pointer to the first field,
 * the `void **` nvcc's code keeps and passes back. */
struct rt_module {
  void *fatbin;
};

/* A registered kernel; its address is the cudaKernel_t handed out. */
struct rt_kernel {
  struct rt_kernel *next;
  const void *host_fun;    /* the host stub a launch names */
  struct rt_module *module;
};

static pthread_mutex_t kernels_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rt_kernel *kernels;

/* Registration runs in constructors before main and never reaches the
 * driver, as in NVIDIA's runtime, which loads modules lazily. */
SIM_EXPORT void **
__cudaRegisterFatBinary(void *fatCubin)
{
  struct rt_module *m = calloc(1, sizeof(*m));
  if (m == NULL)
    return NULL;
  m->fatbin = fatCubin;
  return &m->fatbin;
}

SIM_EXPORT void
__cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
}

SIM_EXPORT void
__cudaRegisterFunction(void **fatCubinHandle, const char *hostFun,
                       char *deviceFun, const char *deviceName,
                       int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim,
                       dim3 *gDim, int *wSize)
{
  struct rt_kernel *k = calloc(1, sizeof(*k));
  if (fatCubinHandle == NULL || hostFun == NULL || k == NULL) {
    free(k);
    return;
  }
  k->host_fun = hostFun;
  k->module = (struct rt_module *)fatCubinHandle;
  pthread_mutex_lock(&kernels_lock);
  k->next = kernels;
  kernels = k;
  pthread_mutex_unlock(&kernels_lock);
}

/* At exit (nvcc's code registers it with atexit): the module's kernels
 * can no longer be found. */
SIM_EXPORT void
__cudaUnregisterFatBinary(void **fatCubinHandle)
{
  struct rt_module *m = (struct rt_module *)fatCubinHandle;
  if (m == NULL)
    return;
  pthread_mutex_lock(&kernels_lock);
  for (struct rt_kernel **p = &kernels; *p != NULL;) {
    struct rt_kernel *k = *p;
    if (k->module == m) {
      *p = k->next;
      free(k);
    } else {
      p = &k->next;
    }
  }
  pthread_mutex_unlock(&kernels_lock);
  free(m);
}

/* The registered kernel whose host stub is `fun` or whose handle is
 * `handle` (neither is ever NULL), or NULL: none, or no longer. */
static struct rt_kernel *
find_kernel(const void *fun, cudaKernel_t handle)
{
  pthread_mutex_lock(&kernels_lock);
  struct rt_kernel *k = kernels;
  while (k != NULL && k->host_fun != fun && (cudaKernel_t)k != handle)
    k = k->next;
  pthread_mutex_unlock(&kernels_lock);
  return k;
}

SIM_EXPORT cudaError_t
__cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
  if (kernel == NULL)
    return rt_ret(cudaErrorInvalidValue);
  struct rt_kernel *k = find_kernel(hostFun, NULL);
  if (k == NULL)
    return rt_ret(cudaErrorInvalidDeviceFunction);
  *kernel = (cudaKernel_t)k;
  return cudaSuccess;
}

/* <<<grid, block, shared, stream>>> pushes a configuration that the
 * kernel's host stub pops right away; a launch in an argument of another
 * nests them, hence a small stack per thread. */
#define RT_MAX_CONFIGS 8

static __thread struct rt_config {
  dim3 grid, block;
  size_t shared;
  cudaStream_t stream;
} tls_configs[RT_MAX_CONFIGS];
static __thread int tls_nconfigs;

/* 0 lets the launch go on; anything else skips the kernel's stub. */
SIM_EXPORT unsigned
__cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                            struct CUstream_st *stream)
{
  if (tls_nconfigs == RT_MAX_CONFIGS) {
    rt_ret(cudaErrorInvalidConfiguration);
    return 1;
  }
  tls_configs[tls_nconfigs++] = (struct rt_config){ gridDim, blockDim,
                                                    sharedMem, stream };
  return 0;
}

SIM_EXPORT cudaError_t
__cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                           void *stream)
{
  if (tls_nconfigs == 0)
    return rt_ret(cudaErrorMissingConfiguration);
  struct rt_config *c = &tls_configs[--tls_nconfigs];
  *gridDim = c->grid;
  *blockDim = c->block;
  *sharedMem = c->shared;
  *(cudaStream_t *)stream = c->stream;
  return cudaSuccess;
}

/* A launch that reaches the device fails the way NVIDIA's runtime fails
 * where a program carries no code the device can run: the simulated
 * device runs none.  The checks before that are the ones a real launch
 * makes first: a usable device, a registered kernel, a valid shape. */
static cudaError_t
launch(bool registered, dim3 grid, dim3 block)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (!registered)
    return rt_ret(cudaErrorInvalidDeviceFunction);
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 ||
      block.y == 0 || block.z == 0 ||
      (uint64_t)block.x * block.y * block.z > 1024)
    return rt_ret(cudaErrorInvalidConfiguration);
  return rt_ret(cudaErrorNoKernelImageForDevice);
}

SIM_EXPORT cudaError_t
__cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                   void **args, size_t sharedMem, cudaStream_t stream)
{
  if (kernel == NULL)
    return rt_ret(cudaErrorInvalidResourceHandle);
  return launch(find_kernel(NULL, kernel) != NULL, gridDim, blockDim);
}

SIM_EXPORT cudaError_t
__cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                        void **args, size_t sharedMem, cudaStream_t stream)
{
  return __cudaLaunchKernel(kernel, gridDim, blockDim, args, sharedMem,
                            stream);
}

/* What nvcc's code calls for <<<...>>> when built with __NV_LEGACY_LAUNCH
 * (and earlier nvcc always): the host stub itself names the kernel. */
SIM_EXPORT cudaError_t
cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                 size_t sharedMem, cudaStream_t stream)
{
  return launch(find_kernel(func, NULL) != NULL, gridDim, blockDim);
}

SIM_EXPORT cudaError_t
cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                      void **args, size_t sharedMem, cudaStream_t stream)
{
  return cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem, stream);
}
