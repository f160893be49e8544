/*
 * The simulated CUDA runtime: libcudart.so.13 and libcudart_static.a.
 *
 * It reaches the driver exactly the way NVIDIA's runtime does (see the
 * bootstrap trace in the research notes): once, on first use, it does
 * dlopen("libcuda.so.1", RTLD_NOW) and dlsym(handle, "cuGetProcAddress_v2")
 * -- its only dlsym of a driver symbol -- then asks that function for
 * "cuGetProcAddress" itself and resolves every other entry point through
 * the pointer it got back, with base names and the versions cudart 13
 * uses.  It never links against libcuda, so an LD_PRELOAD library
 * exporting driver symbols is not called unless it hooks dlsym and
 * cuGetProcAddress.
 *
 * Runtime state: the driver pointer table (written once under
 * pthread_once), one retained primary context per device (under a mutex),
 * and per thread the current device, whether its primary context has been
 * made current, and the last error.  The same sources build the shared
 * library and the static archive, so both behave alike; arrays, pools,
 * host memory, IPC, copies and kernel launches are in cudart_mem.c;
 * streams, capture and graphs in cudart_graph.c.
 */
#include "cudart.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define SIM_RUNTIME_VERSION 13000
#define SIM_MAX_DEVICES 16

/* Not in cuda_runtime_api.h unless CUDA_API_PER_THREAD_DEFAULT_STREAM is
 * defined, which would rename every stream call in this file. */
SIM_EXPORT extern __typeof__(cudaMallocAsync) cudaMallocAsync_ptsz;
SIM_EXPORT extern __typeof__(cudaFreeAsync) cudaFreeAsync_ptsz;
SIM_EXPORT extern __typeof__(cudaMallocFromPoolAsync)
    cudaMallocFromPoolAsync_ptsz;
/* cudaGetDriverEntryPoint is deprecated; its _ptsz twin has its type. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
SIM_EXPORT extern __typeof__(cudaGetDriverEntryPoint)
    cudaGetDriverEntryPoint_ptsz;
#pragma GCC diagnostic pop
SIM_EXPORT extern __typeof__(cudaGetDriverEntryPointByVersion)
    cudaGetDriverEntryPointByVersion_ptsz;

struct rt_driver rt_drv;

static pthread_once_t boot_once = PTHREAD_ONCE_INIT;
static cudaError_t boot_error;
int rt_ndevices;

static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primary[SIM_MAX_DEVICES];

static __thread int tls_device;
static __thread bool tls_bound;
static __thread cudaError_t tls_last_error;

/* ---- bootstrap ------------------------------------------------------ */

static bool
resolve(void **slot, const char *name, int version, cuuint64_t flags)
{
  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult rc = rt_drv.getproc(name, slot, version, flags, &st);
  if (rc == CUDA_SUCCESS && *slot != NULL)
    return true;
  fprintf(stderr, "cudart(sim): cuGetProcAddress(\"%s\", %d, %llu) failed: "
          "rc=%d status=%d\n", name, version, (unsigned long long)flags,
          (int)rc, (int)st);
  return false;
}

#define RESOLVE(field, name, version, flags) \
  resolve((void **)&rt_drv.field, name, version, flags)

static void
boot(void)
{
  void *h = dlopen("libcuda.so.1", RTLD_NOW);
  if (h == NULL) {
    boot_error = cudaErrorInsufficientDriver;
    return;
  }
  PFN_cuGetProcAddress_v12000 first =
      (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
  if (first == NULL) {
    boot_error = cudaErrorInsufficientDriver;
    return;
  }

  /* The shape of cudart 13's bootstrap: an empty-name probe, cuInit, then
   * both cuGetProcAddress ABIs through the dlsym'd pointer; after that
   * only the returned 5-argument one is used. */
  void *p = NULL;
  CUdriverProcAddressQueryResult st;
  first("", &p, 0, 0, &st);
  rt_drv.getproc = first;
  bool ok = RESOLVE(init, "cuInit", 2000, 0) &&
            RESOLVE(getproc_v1, "cuGetProcAddress", 11030, 0) &&
            RESOLVE(getproc, "cuGetProcAddress", 12000, 0);
  ok = ok && RESOLVE(device_get, "cuDeviceGet", 2000, 0) &&
       RESOLVE(device_count, "cuDeviceGetCount", 2000, 0) &&
       RESOLVE(device_name, "cuDeviceGetName", 2000, 0) &&
       RESOLVE(device_total, "cuDeviceTotalMem", 3020, 0) &&
       RESOLVE(driver_version, "cuDriverGetVersion", 2020, 0) &&
       RESOLVE(device_uuid, "cuDeviceGetUuid", 11040, 0) &&
       RESOLVE(primary_retain, "cuDevicePrimaryCtxRetain", 7000, 0) &&
       RESOLVE(primary_release, "cuDevicePrimaryCtxRelease", 7000, 0) &&
       RESOLVE(primary_reset, "cuDevicePrimaryCtxReset", 7000, 0) &&
       RESOLVE(ctx_set, "cuCtxSetCurrent", 4000, 0) &&
       RESOLVE(ctx_device, "cuCtxGetDevice", 2000, 0) &&
       RESOLVE(ctx_sync, "cuCtxSynchronize", 2000, 0) &&
       RESOLVE(mem_info, "cuMemGetInfo", 3020, 0) &&
       RESOLVE(mem_alloc_managed, "cuMemAllocManaged", 6000, 0) &&
       RESOLVE(mem_alloc, "cuMemAlloc", 3020, 0) &&
       RESOLVE(mem_alloc_pitch, "cuMemAllocPitch", 3020, 0) &&
       RESOLVE(mem_free, "cuMemFree", 3020, 0) &&
       RESOLVE(mem_alloc_async, "cuMemAllocAsync", 11020, 0) &&
       RESOLVE(mem_alloc_async_ptsz, "cuMemAllocAsync", 11020,
               CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) &&
       RESOLVE(mem_free_async, "cuMemFreeAsync", 11020, 0) &&
       RESOLVE(mem_free_async_ptsz, "cuMemFreeAsync", 11020,
               CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  ok = ok && RESOLVE(alloc_from_pool, "cuMemAllocFromPoolAsync", 11020, 0) &&
       RESOLVE(alloc_from_pool_ptsz, "cuMemAllocFromPoolAsync", 11020,
               CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) &&
       RESOLVE(default_pool, "cuDeviceGetDefaultMemPool", 11020, 0) &&
       RESOLVE(pool_create, "cuMemPoolCreate", 11020, 0) &&
       RESOLVE(pool_destroy, "cuMemPoolDestroy", 11020, 0) &&
       RESOLVE(pool_trim, "cuMemPoolTrimTo", 11020, 0) &&
       RESOLVE(pool_get_attribute, "cuMemPoolGetAttribute", 11020, 0) &&
       RESOLVE(array_create, "cuArrayCreate", 3020, 0) &&
       RESOLVE(array3d_create, "cuArray3DCreate", 3020, 0) &&
       RESOLVE(array_destroy, "cuArrayDestroy", 2000, 0) &&
       RESOLVE(mipmap_create, "cuMipmappedArrayCreate", 5000, 0) &&
       RESOLVE(mipmap_destroy, "cuMipmappedArrayDestroy", 5000, 0) &&
       RESOLVE(mem_alloc_host, "cuMemAllocHost", 3020, 0) &&
       RESOLVE(mem_host_alloc, "cuMemHostAlloc", 2020, 0) &&
       RESOLVE(mem_free_host, "cuMemFreeHost", 2000, 0) &&
       RESOLVE(ipc_get, "cuIpcGetMemHandle", 4010, 0) &&
       RESOLVE(ipc_open, "cuIpcOpenMemHandle", 11000, 0) &&
       RESOLVE(ipc_close, "cuIpcCloseMemHandle", 4010, 0);
  ok = ok && RESOLVE(stream_create, "cuStreamCreate", 2000, 0) &&
       RESOLVE(stream_destroy, "cuStreamDestroy", 4000, 0) &&
       RESOLVE(stream_sync, "cuStreamSynchronize", 2000, 0) &&
       RESOLVE(capture_begin, "cuStreamBeginCapture", 10010, 0) &&
       RESOLVE(capture_end, "cuStreamEndCapture", 10000, 0) &&
       RESOLVE(capture_status, "cuStreamIsCapturing", 10000, 0) &&
       RESOLVE(graph_create, "cuGraphCreate", 10000, 0) &&
       RESOLVE(graph_destroy, "cuGraphDestroy", 10000, 0) &&
       RESOLVE(graph_add_alloc, "cuGraphAddMemAllocNode", 11040, 0) &&
       RESOLVE(graph_add_free, "cuGraphAddMemFreeNode", 11040, 0) &&
       RESOLVE(instantiate, "cuGraphInstantiateWithFlags", 11040, 0) &&
       RESOLVE(instantiate_params, "cuGraphInstantiateWithParams", 12000, 0) &&
       RESOLVE(graph_upload, "cuGraphUpload", 11010, 0) &&
       RESOLVE(graph_launch, "cuGraphLaunch", 10000, 0) &&
       RESOLVE(exec_destroy, "cuGraphExecDestroy", 10000, 0) &&
       RESOLVE(graph_trim, "cuDeviceGraphMemTrim", 11040, 0) &&
       RESOLVE(graph_mem_get, "cuDeviceGetGraphMemAttribute", 11040, 0) &&
       RESOLVE(graph_mem_set, "cuDeviceSetGraphMemAttribute", 11040, 0);
  if (!ok) {
    boot_error = cudaErrorInitializationError;
    return;
  }

  int version = 0;
  if (rt_drv.driver_version(&version) != CUDA_SUCCESS ||
      version < SIM_RUNTIME_VERSION) {
    boot_error = cudaErrorInsufficientDriver;
    return;
  }
  CUresult rc = rt_drv.init(0);
  if (rc == CUDA_SUCCESS)
    rc = rt_drv.device_count(&rt_ndevices);
  if (rc == CUDA_ERROR_NO_DEVICE || (rc == CUDA_SUCCESS && rt_ndevices == 0))
    boot_error = cudaErrorNoDevice;
  else if (rc != CUDA_SUCCESS)
    boot_error = cudaErrorInitializationError;
  else if (rt_ndevices > SIM_MAX_DEVICES)
    rt_ndevices = SIM_MAX_DEVICES;
}

/* ---- errors --------------------------------------------------------- */

cudaError_t
rt_from_driver(CUresult rc)
{
  switch (rc) {
  case CUDA_SUCCESS: return cudaSuccess;
  case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
  case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
  case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
  case CUDA_ERROR_DEINITIALIZED: return cudaErrorCudartUnloading;
  case CUDA_ERROR_NO_DEVICE: return cudaErrorNoDevice;
  case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
  case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
  case CUDA_ERROR_CONTEXT_IS_DESTROYED: return cudaErrorContextIsDestroyed;
  case CUDA_ERROR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
  case CUDA_ERROR_ILLEGAL_STATE: return cudaErrorIllegalState;
  case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
    return cudaErrorStreamCaptureUnsupported;
  case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
    return cudaErrorStreamCaptureInvalidated;
  case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD:
    return cudaErrorStreamCaptureWrongThread;
  case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
  case CUDA_ERROR_OPERATING_SYSTEM: return cudaErrorOperatingSystem;
  case CUDA_ERROR_NOT_SUPPORTED: return cudaErrorNotSupported;
  default: return cudaErrorUnknown;
  }
}

cudaError_t
rt_ret(cudaError_t err)
{
  if (err != cudaSuccess)
    tls_last_error = err;
  return err;
}

/* ---- contexts ------------------------------------------------------- */

/* Makes `dev`'s primary context current on this thread, retaining it once
 * per process: the runtime's "each thread's first call" rule. */
static cudaError_t
bind(int dev)
{
  CUcontext ctx;
  pthread_mutex_lock(&primary_lock);
  CUresult rc = CUDA_SUCCESS;
  if (primary[dev] == NULL)
    rc = rt_drv.primary_retain(&primary[dev], dev);
  ctx = primary[dev];
  pthread_mutex_unlock(&primary_lock);
  if (rc == CUDA_SUCCESS)
    rc = rt_drv.ctx_set(ctx);
  if (rc != CUDA_SUCCESS)
    return rt_from_driver(rc);
  tls_device = dev;
  tls_bound = true;
  return cudaSuccess;
}

cudaError_t
rt_enter(void)
{
  pthread_once(&boot_once, boot);
  if (boot_error != cudaSuccess)
    return boot_error;
  if (!tls_bound)
    return bind(tls_device);
  return cudaSuccess;
}

int
rt_device(void)
{
  return tls_device;
}

/* ---- devices -------------------------------------------------------- */

SIM_EXPORT cudaError_t
cudaGetDeviceCount(int *count)
{
  pthread_once(&boot_once, boot);
  if (count == NULL)
    return rt_ret(cudaErrorInvalidValue);
  if (boot_error != cudaSuccess) {
    *count = 0;
    return rt_ret(boot_error);
  }
  *count = rt_ndevices;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t
cudaSetDevice(int device)
{
  pthread_once(&boot_once, boot);
  if (boot_error != cudaSuccess)
    return rt_ret(boot_error);
  if (device < 0 || device >= rt_ndevices)
    return rt_ret(cudaErrorInvalidDevice);
  return rt_ret(bind(device));
}

SIM_EXPORT cudaError_t
cudaGetDevice(int *device)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (device == NULL)
    return rt_ret(cudaErrorInvalidValue);
  *device = tls_device;
  return cudaSuccess;
}

/* Fills the fields the simulated driver knows; the rest are zero. */
SIM_EXPORT cudaError_t
cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (prop == NULL)
    return rt_ret(cudaErrorInvalidValue);
  if (device < 0 || device >= rt_ndevices)
    return rt_ret(cudaErrorInvalidDevice);
  memset(prop, 0, sizeof(*prop));
  CUresult rc = rt_drv.device_name(prop->name, (int)sizeof(prop->name), device);
  if (rc == CUDA_SUCCESS)
    rc = rt_drv.device_total(&prop->totalGlobalMem, device);
  if (rc == CUDA_SUCCESS)
    rc = rt_drv.device_uuid((CUuuid *)&prop->uuid, device);
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaDeviceSynchronize(void)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(rt_drv.ctx_sync()));
}

/* Resets the current device's primary context, which frees every
 * allocation made on it -- through the unversioned 7000 variant, as
 * cudart 13 does. */
SIM_EXPORT cudaError_t
cudaDeviceReset(void)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(rt_drv.primary_reset(tls_device)));
}

SIM_EXPORT cudaError_t
cudaDriverGetVersion(int *driverVersion)
{
  if (driverVersion == NULL)
    return rt_ret(cudaErrorInvalidValue);
  pthread_once(&boot_once, boot);
  *driverVersion = 0;
  if (rt_drv.driver_version != NULL)
    rt_drv.driver_version(driverVersion);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t
cudaRuntimeGetVersion(int *runtimeVersion)
{
  if (runtimeVersion == NULL)
    return rt_ret(cudaErrorInvalidValue);
  *runtimeVersion = SIM_RUNTIME_VERSION;
  return cudaSuccess;
}

/* ---- memory --------------------------------------------------------- */

SIM_EXPORT cudaError_t
cudaMalloc(void **devPtr, size_t size)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (devPtr == NULL)
    return rt_ret(cudaErrorInvalidValue);
  /* The real runtime answers a zero-byte request itself. */
  if (size == 0) {
    *devPtr = NULL;
    return cudaSuccess;
  }
  CUdeviceptr p = 0;
  CUresult rc = rt_drv.mem_alloc(&p, size);
  if (rc == CUDA_SUCCESS)
    *devPtr = (void *)(uintptr_t)p;
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaFree(void *devPtr)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (devPtr == NULL)
    return cudaSuccess;
  return rt_ret(
      rt_from_driver(rt_drv.mem_free((CUdeviceptr)(uintptr_t)devPtr)));
}

/* Element size 4: the driver only checks it is 4, 8 or 16. */
SIM_EXPORT cudaError_t
cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (devPtr == NULL || pitch == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUdeviceptr p = 0;
  CUresult rc = rt_drv.mem_alloc_pitch(&p, pitch, width, height, 4);
  if (rc == CUDA_SUCCESS)
    *devPtr = (void *)(uintptr_t)p;
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (devPtr == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUdeviceptr p = 0;
  CUresult rc = rt_drv.mem_alloc_managed(&p, size, flags);
  if (rc == CUDA_SUCCESS)
    *devPtr = (void *)(uintptr_t)p;
  return rt_ret(rt_from_driver(rc));
}

static cudaError_t
malloc_async(void **devPtr, size_t size, cudaStream_t stream, bool ptsz)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (devPtr == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUdeviceptr p = 0;
  CUresult rc = ptsz
      ? rt_drv.mem_alloc_async_ptsz(&p, size, (CUstream)stream)
      : rt_drv.mem_alloc_async(&p, size, (CUstream)stream);
  if (rc == CUDA_SUCCESS)
    *devPtr = (void *)(uintptr_t)p;
  return rt_ret(rt_from_driver(rc));
}

static cudaError_t
free_async(void *devPtr, cudaStream_t stream, bool ptsz)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)devPtr;
  CUresult rc = ptsz ? rt_drv.mem_free_async_ptsz(p, (CUstream)stream)
                     : rt_drv.mem_free_async(p, (CUstream)stream);
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
  return malloc_async(devPtr, size, hStream, false);
}

SIM_EXPORT cudaError_t
cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
  return malloc_async(devPtr, size, hStream, true);
}

SIM_EXPORT cudaError_t
cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
  return free_async(devPtr, hStream, false);
}

SIM_EXPORT cudaError_t
cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
  return free_async(devPtr, hStream, true);
}

SIM_EXPORT cudaError_t
cudaMemGetInfo(size_t *free, size_t *total)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(rt_drv.mem_info(free, total)));
}

/* ---- driver entry points -------------------------------------------- */

/* Goes through the runtime's cached cuGetProcAddress, as the real one
 * does, so an interposer that replaced that pointer sees these too.  The
 * _ptsz forms are what a per-thread-default-stream build calls: there
 * cudaEnableDefault (0) means the per-thread variants. */
static cudaError_t
entry_point(const char *symbol, void **funcPtr, unsigned int cudaVersion,
            unsigned long long flags,
            enum cudaDriverEntryPointQueryResult *status, bool ptsz)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (symbol == NULL || funcPtr == NULL)
    return rt_ret(cudaErrorInvalidValue);
  if (ptsz && flags == cudaEnableDefault)
    flags = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
  CUresult rc = rt_drv.getproc(symbol, funcPtr, (int)cudaVersion, flags, &st);
  if (status != NULL && rc == CUDA_SUCCESS)
    *status = (enum cudaDriverEntryPointQueryResult)st;
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
                                 unsigned int cudaVersion,
                                 unsigned long long flags,
                                 enum cudaDriverEntryPointQueryResult *status)
{
  return entry_point(symbol, funcPtr, cudaVersion, flags, status, false);
}

SIM_EXPORT cudaError_t
cudaGetDriverEntryPointByVersion_ptsz(
    const char *symbol, void **funcPtr, unsigned int cudaVersion,
    unsigned long long flags, enum cudaDriverEntryPointQueryResult *status)
{
  return entry_point(symbol, funcPtr, cudaVersion, flags, status, true);
}

/* The unversioned form asks at the runtime's own version, 13000. */
SIM_EXPORT cudaError_t
cudaGetDriverEntryPoint(const char *symbol, void **funcPtr,
                        unsigned long long flags,
                        enum cudaDriverEntryPointQueryResult *status)
{
  return entry_point(symbol, funcPtr, SIM_RUNTIME_VERSION, flags, status,
                     false);
}

SIM_EXPORT cudaError_t
cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
                             unsigned long long flags,
                             enum cudaDriverEntryPointQueryResult *status)
{
  return entry_point(symbol, funcPtr, SIM_RUNTIME_VERSION, flags, status,
                     true);
}

/* ---- last error ----------------------------------------------------- */

SIM_EXPORT cudaError_t
cudaGetLastError(void)
{
  cudaError_t err = tls_last_error;
  tls_last_error = cudaSuccess;
  return err;
}

SIM_EXPORT cudaError_t
cudaPeekAtLastError(void)
{
  return tls_last_error;
}

static const struct {
  cudaError_t code;
  const char *name;
  const char *text;
} errors[] = {
  { cudaSuccess, "cudaSuccess", "no error" },
  { cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument" },
  { cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation",
    "out of memory" },
  { cudaErrorInitializationError, "cudaErrorInitializationError",
    "initialization error" },
  { cudaErrorCudartUnloading, "cudaErrorCudartUnloading",
    "driver shutting down" },
  { cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
    "CUDA driver version is insufficient for CUDA runtime version" },
  { cudaErrorNoDevice, "cudaErrorNoDevice",
    "no CUDA-capable device is detected" },
  { cudaErrorInvalidDevice, "cudaErrorInvalidDevice",
    "invalid device ordinal" },
  { cudaErrorDeviceUninitialized, "cudaErrorDeviceUninitialized",
    "invalid device context" },
  { cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
    "invalid configuration argument" },
  { cudaErrorInvalidChannelDescriptor, "cudaErrorInvalidChannelDescriptor",
    "invalid channel descriptor" },
  { cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
    "invalid copy direction for memcpy" },
  { cudaErrorMissingConfiguration, "cudaErrorMissingConfiguration",
    "__global__ function call is not configured" },
  { cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction",
    "invalid device function" },
  { cudaErrorNoKernelImageForDevice, "cudaErrorNoKernelImageForDevice",
    "no kernel image is available for execution on the device" },
  { cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle",
    "invalid resource handle" },
  { cudaErrorOperatingSystem, "cudaErrorOperatingSystem",
    "OS call failed or operation not supported on this OS" },
  { cudaErrorSymbolNotFound, "cudaErrorSymbolNotFound",
    "named symbol not found" },
  { cudaErrorContextIsDestroyed, "cudaErrorContextIsDestroyed",
    "context is destroyed" },
  { cudaErrorNotSupported, "cudaErrorNotSupported",
    "operation not supported" },
  { cudaErrorIllegalState, "cudaErrorIllegalState",
    "the operation is not permitted in the current state" },
  { cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
    "operation not permitted when stream is capturing" },
  { cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
    "operation failed due to a previous error during capture" },
  { cudaErrorStreamCaptureWrongThread, "cudaErrorStreamCaptureWrongThread",
    "attempt to terminate a thread-local capture sequence from another "
    "thread" },
  { cudaErrorUnknown, "cudaErrorUnknown", "unknown error" },
};

static const char *
error_text(cudaError_t error, bool name)
{
  for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
    if (errors[i].code == error)
      return name ? errors[i].name : errors[i].text;
  return name ? "cudaErrorUnknown" : "unrecognized error code";
}

SIM_EXPORT const char *
cudaGetErrorName(cudaError_t error)
{
  return error_text(error, true);
}

SIM_EXPORT const char *
cudaGetErrorString(cudaError_t error)
{
  return error_text(error, false);
}
