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
 * made current, and the last error.  The same source builds the shared
 * library and the static archive, so both behave alike.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define SIM_EXPORT __attribute__((visibility("default")))
#define SIM_RUNTIME_VERSION 13000
#define SIM_MAX_DEVICES 16

/* Not in cuda_runtime_api.h unless CUDA_API_PER_THREAD_DEFAULT_STREAM is
 * defined, which would rename every stream call in this file. */
SIM_EXPORT extern __typeof__(cudaMallocAsync) cudaMallocAsync_ptsz;
SIM_EXPORT extern __typeof__(cudaFreeAsync) cudaFreeAsync_ptsz;

static struct {
  PFN_cuGetProcAddress_v11030 getproc_v1;  /* fetched, as cudart does */
  PFN_cuGetProcAddress_v12000 getproc;     /* the one every lookup uses */
  PFN_cuInit_v2000 init;
  PFN_cuDriverGetVersion_v2020 driver_version;
  PFN_cuDeviceGetCount_v2000 device_count;
  PFN_cuDeviceGet_v2000 device_get;
  PFN_cuDeviceGetName_v2000 device_name;
  PFN_cuDeviceGetUuid_v11040 device_uuid;
  PFN_cuDeviceTotalMem_v3020 device_total;
  PFN_cuDevicePrimaryCtxRetain_v7000 primary_retain;
  void *primary_release;                   /* 7000: legacy, unused */
  PFN_cuDevicePrimaryCtxReset_v11000 primary_reset; /* 7000, same shape */
  PFN_cuCtxSetCurrent_v4000 ctx_set;
  PFN_cuCtxGetDevice_v2000 ctx_device;
  PFN_cuCtxSynchronize_v2000 ctx_sync;
  PFN_cuMemGetInfo_v3020 mem_info;
  PFN_cuMemAlloc_v3020 mem_alloc;
  PFN_cuMemFree_v3020 mem_free;
  PFN_cuMemAllocPitch_v3020 mem_alloc_pitch;
  PFN_cuMemAllocManaged_v6000 mem_alloc_managed;
  PFN_cuMemAllocAsync_v11020 mem_alloc_async;
  PFN_cuMemAllocAsync_v11020_ptsz mem_alloc_async_ptsz;
  PFN_cuMemFreeAsync_v11020 mem_free_async;
  PFN_cuMemFreeAsync_v11020_ptsz mem_free_async_ptsz;
} drv;

static pthread_once_t boot_once = PTHREAD_ONCE_INIT;
static cudaError_t boot_error;
static int ndevices;

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
  CUresult rc = drv.getproc(name, slot, version, flags, &st);
  if (rc == CUDA_SUCCESS && *slot != NULL)
    return true;
  fprintf(stderr, "cudart(sim): cuGetProcAddress(\"%s\", %d, %llu) failed: "
          "rc=%d status=%d\n", name, version, (unsigned long long)flags,
          (int)rc, (int)st);
  return false;
}

#define RESOLVE(field, name, version, flags) \
  resolve((void **)&drv.field, name, version, flags)

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
  drv.getproc = first;
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
  if (!ok) {
    boot_error = cudaErrorInitializationError;
    return;
  }

  int version = 0;
  if (drv.driver_version(&version) != CUDA_SUCCESS ||
      version < SIM_RUNTIME_VERSION) {
    boot_error = cudaErrorInsufficientDriver;
    return;
  }
  CUresult rc = drv.init(0);
  if (rc == CUDA_SUCCESS)
    rc = drv.device_count(&ndevices);
  if (rc == CUDA_ERROR_NO_DEVICE || (rc == CUDA_SUCCESS && ndevices == 0))
    boot_error = cudaErrorNoDevice;
  else if (rc != CUDA_SUCCESS)
    boot_error = cudaErrorInitializationError;
  else if (ndevices > SIM_MAX_DEVICES)
    ndevices = SIM_MAX_DEVICES;
}

/* ---- errors --------------------------------------------------------- */

static cudaError_t
from_driver(CUresult rc)
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
  case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
  case CUDA_ERROR_NOT_SUPPORTED: return cudaErrorNotSupported;
  default: return cudaErrorUnknown;
  }
}

/* Records a failure for cudaGetLastError and passes the code on. */
static cudaError_t
ret(cudaError_t err)
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
    rc = drv.primary_retain(&primary[dev], dev);
  ctx = primary[dev];
  pthread_mutex_unlock(&primary_lock);
  if (rc == CUDA_SUCCESS)
    rc = drv.ctx_set(ctx);
  if (rc != CUDA_SUCCESS)
    return from_driver(rc);
  tls_device = dev;
  tls_bound = true;
  return cudaSuccess;
}

/* Every API entry: boot once, then bind this thread's context. */
static cudaError_t
enter(void)
{
  pthread_once(&boot_once, boot);
  if (boot_error != cudaSuccess)
    return boot_error;
  if (!tls_bound)
    return bind(tls_device);
  return cudaSuccess;
}

/* ---- devices -------------------------------------------------------- */

SIM_EXPORT cudaError_t
cudaGetDeviceCount(int *count)
{
  pthread_once(&boot_once, boot);
  if (count == NULL)
    return ret(cudaErrorInvalidValue);
  if (boot_error != cudaSuccess) {
    *count = 0;
    return ret(boot_error);
  }
  *count = ndevices;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t
cudaSetDevice(int device)
{
  pthread_once(&boot_once, boot);
  if (boot_error != cudaSuccess)
    return ret(boot_error);
  if (device < 0 || device >= ndevices)
    return ret(cudaErrorInvalidDevice);
  return ret(bind(device));
}

SIM_EXPORT cudaError_t
cudaGetDevice(int *device)
{
  cudaError_t err = enter();
  if (err != cudaSuccess)
    return ret(err);
  if (device == NULL)
    return ret(cudaErrorInvalidValue);
  *device = tls_device;
  return cudaSuccess;
}

/* Fills the fields the simulated driver knows; the rest are zero. */
SIM_EXPORT cudaError_t
cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
  cudaError_t err = enter();
  if (err != cudaSuccess)
    return ret(err);
  if (prop == NULL)
    return ret(cudaErrorInvalidValue);
  if (device < 0 || device >= ndevices)
    return ret(cudaErrorInvalidDevice);
  memset(prop, 0, sizeof(*prop));
  CUresult rc = drv.device_name(prop->name, (int)sizeof(prop->name), device);
  if (rc == CUDA_SUCCESS)
    rc = drv.device_total(&prop->totalGlobalMem, device);
  if (rc == CUDA_SUCCESS)
    rc = drv.device_uuid((CUuuid *)&prop->uuid, device);
  return ret(from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaDeviceSynchronize(void)
{
  cudaError_t err = enter();
  if (err != cudaSuccess)
    return ret(err);
  return ret(from_driver(drv.ctx_sync()));
}

/* Resets the current device's primary context, which frees every
 * allocation made on it -- through the unversioned 7000 variant, as
 * cudart 13 does. */
SIM_EXPORT cudaError_t
cudaDeviceReset(void)
{
  cudaError_t err = enter();
  if (err != cudaSuccess)
    return ret(err);
  return ret(from_driver(drv.primary_reset(tls_device)));
}

SIM_EXPORT cudaError_t
cudaDriverGetVersion(int *driverVersion)
{
  if (driverVersion == NULL)
    return ret(cudaErrorInvalidValue);
  pthread_once(&boot_once, boot);
  *driverVersion = 0;
  if (drv.driver_version != NULL)
    drv.driver_version(driverVersion);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t
cudaRuntimeGetVersion(int *runtimeVersion)
{
  if (runtimeVersion == NULL)
    return ret(cudaErrorInvalidValue);
  *runtimeVersion = SIM_RUNTIME_VERSION;
  return cudaSuccess;
}

/* ---- memory --------------------------------------------------------- */

SIM_EXPORT cudaError_t
cudaMalloc(void **devPtr, size_t size)
{
  cudaError_t err = enter();
  if (err != cudaSuccess)
    return ret(err);
  if (devPtr == NULL)
    return ret(cudaErrorInvalidValue);
  /* The real runtime answers a zero-byte request itself. */
  if (size == 0) {
    *devPtr = NULL;
    return cudaSuccess;
  }
  CUdeviceptr p = 0;
  CUresult rc = drv.mem_alloc(&p, size);
  if (rc == CUDA_SUCCESS)
    *devPtr = (void *)(uintptr_t)p;
  return ret(from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaFree(void *devPtr)
{
  cudaError_t err = enter();
  if (err != cudaSuccess)
    return ret(err);
  if (devPtr == NULL)
    return cudaSuccess;
  return ret(from_driver(drv.mem_free((CUdeviceptr)(uintptr_t)devPtr)));
}

/* Element size 4: the driver only checks it is 4, 8 or 16. */
SIM_EXPORT cudaError_t
cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
  cudaError_t err = enter();
  if (err != cudaSuccess)
    return ret(err);
  if (devPtr == NULL || pitch == NULL)
    return ret(cudaErrorInvalidValue);
  CUdeviceptr p = 0;
  CUresult rc = drv.mem_alloc_pitch(&p, pitch, width, height, 4);
  if (rc == CUDA_SUCCESS)
    *devPtr = (void *)(uintptr_t)p;
  return ret(from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
  cudaError_t err = enter();
  if (err != cudaSuccess)
    return ret(err);
  if (devPtr == NULL)
    return ret(cudaErrorInvalidValue);
  CUdeviceptr p = 0;
  CUresult rc = drv.mem_alloc_managed(&p, size, flags);
  if (rc == CUDA_SUCCESS)
    *devPtr = (void *)(uintptr_t)p;
  return ret(from_driver(rc));
}

static cudaError_t
malloc_async(void **devPtr, size_t size, cudaStream_t stream, bool ptsz)
{
  cudaError_t err = enter();
  if (err != cudaSuccess)
    return ret(err);
  if (devPtr == NULL)
    return ret(cudaErrorInvalidValue);
  CUdeviceptr p = 0;
  CUresult rc = ptsz
      ? drv.mem_alloc_async_ptsz(&p, size, (CUstream)stream)
      : drv.mem_alloc_async(&p, size, (CUstream)stream);
  if (rc == CUDA_SUCCESS)
    *devPtr = (void *)(uintptr_t)p;
  return ret(from_driver(rc));
}

static cudaError_t
free_async(void *devPtr, cudaStream_t stream, bool ptsz)
{
  cudaError_t err = enter();
  if (err != cudaSuccess)
    return ret(err);
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)devPtr;
  CUresult rc = ptsz ? drv.mem_free_async_ptsz(p, (CUstream)stream)
                     : drv.mem_free_async(p, (CUstream)stream);
  return ret(from_driver(rc));
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
  cudaError_t err = enter();
  if (err != cudaSuccess)
    return ret(err);
  return ret(from_driver(drv.mem_info(free, total)));
}

/* ---- driver entry points -------------------------------------------- */

/* Goes through the runtime's cached cuGetProcAddress, as the real one
 * does, so an interposer that replaced that pointer sees these too. */
SIM_EXPORT cudaError_t
cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
                                 unsigned int cudaVersion,
                                 unsigned long long flags,
                                 enum cudaDriverEntryPointQueryResult *status)
{
  cudaError_t err = enter();
  if (err != cudaSuccess)
    return ret(err);
  if (symbol == NULL || funcPtr == NULL)
    return ret(cudaErrorInvalidValue);
  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
  CUresult rc = drv.getproc(symbol, funcPtr, (int)cudaVersion, flags, &st);
  if (status != NULL && rc == CUDA_SUCCESS)
    *status = (enum cudaDriverEntryPointQueryResult)st;
  return ret(from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaGetDriverEntryPoint(const char *symbol, void **funcPtr,
                        unsigned long long flags,
                        enum cudaDriverEntryPointQueryResult *status)
{
  return cudaGetDriverEntryPointByVersion(symbol, funcPtr,
                                          SIM_RUNTIME_VERSION, flags, status);
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
  { cudaErrorSymbolNotFound, "cudaErrorSymbolNotFound",
    "named symbol not found" },
  { cudaErrorContextIsDestroyed, "cudaErrorContextIsDestroyed",
    "context is destroyed" },
  { cudaErrorNotSupported, "cudaErrorNotSupported",
    "operation not supported" },
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
