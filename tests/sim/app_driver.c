/*
 * app_driver: the script interpreter over the driver API, linked against
 * libcuda and calling it by name the way an ordinary program does: cuda.h
 * turns cuMemAlloc into cuMemAlloc_v2 and so on, and the dynamic linker
 * binds the calls, so an LD_PRELOAD library that exports the ELF names
 * sees them.  The optional operations (app_drvops.c) call through a table
 * of the same linked functions' addresses, which the dynamic linker binds
 * the same way.  It also links the simulated NVML and calls it by name.
 */
#include "app_drv.h"

#include <pthread.h>

/* Declared by cuda.h only for per-thread-default-stream builds. */
extern __typeof__(*(PFN_cuMemAllocAsync_v11020_ptsz)0) cuMemAllocAsync_ptsz;
extern __typeof__(*(PFN_cuMemFreeAsync_v11020_ptsz)0) cuMemFreeAsync_ptsz;
extern __typeof__(*(PFN_cuMemAllocFromPoolAsync_v11020_ptsz)0)
    cuMemAllocFromPoolAsync_ptsz;

/* The older variants, which cuda.h's macros rename to the newest: the
 * same shapes, bound by their own ELF names. */
extern __typeof__(*(PFN_cuDevicePrimaryCtxRelease_v11000)0)
    legacy_cuDevicePrimaryCtxRelease __asm__("cuDevicePrimaryCtxRelease");
extern __typeof__(*(PFN_cuDevicePrimaryCtxReset_v11000)0)
    legacy_cuDevicePrimaryCtxReset __asm__("cuDevicePrimaryCtxReset");
extern __typeof__(*(PFN_cuIpcOpenMemHandle_v11000)0)
    legacy_cuIpcOpenMemHandle __asm__("cuIpcOpenMemHandle");

#define MAX_DEVICES 16

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext ctxs[MAX_DEVICES];

/* Retains each device's primary context once and makes it current on the
 * calling thread. */
static int
set_device(int ordinal)
{
  CUdevice dev;
  CUresult rc = cuDeviceGet(&dev, ordinal);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (ordinal >= MAX_DEVICES)
    return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&ctx_lock);
  if (ctxs[ordinal] == NULL)
    rc = cuDevicePrimaryCtxRetain(&ctxs[ordinal], dev);
  CUcontext ctx = ctxs[ordinal];
  pthread_mutex_unlock(&ctx_lock);
  if (rc != CUDA_SUCCESS)
    return rc;
  return cuCtxSetCurrent(ctx);
}

static int
start(int dev)
{
  CUresult rc = cuInit(0);
  if (rc != CUDA_SUCCESS)
    return rc;
  return set_device(dev);
}

static int
alloc(uint64_t *ptr, size_t size)
{
  CUdeviceptr p;
  CUresult rc = cuMemAlloc(&p, size);
  *ptr = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
alloc_pitch(uint64_t *ptr, size_t *pitch, size_t width, size_t height,
            unsigned int elem)
{
  CUdeviceptr p;
  CUresult rc = cuMemAllocPitch(&p, pitch, width, height, elem);
  *ptr = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
alloc_managed(uint64_t *ptr, size_t size)
{
  CUdeviceptr p;
  CUresult rc = cuMemAllocManaged(&p, size, CU_MEM_ATTACH_GLOBAL);
  *ptr = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
alloc_async(uint64_t *ptr, size_t size, bool ptsz)
{
  CUdeviceptr p;
  CUresult rc = ptsz ? cuMemAllocAsync_ptsz(&p, size, NULL)
                     : cuMemAllocAsync(&p, size, NULL);
  *ptr = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
free_(uint64_t ptr)
{
  return cuMemFree(ptr);
}

static int
free_async(uint64_t ptr, bool ptsz)
{
  return ptsz ? cuMemFreeAsync_ptsz(ptr, NULL) : cuMemFreeAsync(ptr, NULL);
}

static int
meminfo(size_t *free, size_t *total)
{
  return cuMemGetInfo(free, total);
}

static int
totalmem(int ordinal, size_t *bytes)
{
  CUdevice dev;
  CUresult rc = cuDeviceGet(&dev, ordinal);
  if (rc != CUDA_SUCCESS)
    return rc;
  return cuDeviceTotalMem(bytes, dev);
}

static int
reset(int ordinal)
{
  CUdevice dev;
  CUresult rc = cuDeviceGet(&dev, ordinal);
  if (rc != CUDA_SUCCESS)
    return rc;
  return cuDevicePrimaryCtxReset(dev);
}

/* Linked addresses, the names as a program writes them (cuda.h maps
 * cuMemAllocHost to cuMemAllocHost_v2 and so on). */
static struct app_drv linked = {
  .init = cuInit,
  .device_get = cuDeviceGet,
  .device_count = cuDeviceGetCount,
  .device_uuid = cuDeviceGetUuid,
  .device_total = cuDeviceTotalMem,
  .primary_retain = cuDevicePrimaryCtxRetain,
  .primary_release = cuDevicePrimaryCtxRelease,
  .primary_release_legacy = legacy_cuDevicePrimaryCtxRelease,
  .primary_reset = cuDevicePrimaryCtxReset,
  .primary_reset_legacy = legacy_cuDevicePrimaryCtxReset,
  .ctx_create = cuCtxCreate,
  .ctx_destroy = cuCtxDestroy,
  .ctx_set = cuCtxSetCurrent,
  .mem_info = cuMemGetInfo,
  .mem_alloc = cuMemAlloc,
  .mem_free = cuMemFree,
  .mem_alloc_pitch = cuMemAllocPitch,
  .mem_alloc_managed = cuMemAllocManaged,
  .mem_alloc_async = cuMemAllocAsync,
  .mem_alloc_async_ptsz = cuMemAllocAsync_ptsz,
  .mem_free_async = cuMemFreeAsync,
  .mem_free_async_ptsz = cuMemFreeAsync_ptsz,
  .mem_create = cuMemCreate,
  .mem_release = cuMemRelease,
  .mem_retain = cuMemRetainAllocationHandle,
  .addr_reserve = cuMemAddressReserve,
  .addr_free = cuMemAddressFree,
  .mem_map = cuMemMap,
  .mem_unmap = cuMemUnmap,
  .mem_set_access = cuMemSetAccess,
  .mem_export = cuMemExportToShareableHandle,
  .mem_import = cuMemImportFromShareableHandle,
  .default_pool = cuDeviceGetDefaultMemPool,
  .pool_create = cuMemPoolCreate,
  .pool_destroy = cuMemPoolDestroy,
  .pool_trim = cuMemPoolTrimTo,
  .pool_get_attribute = cuMemPoolGetAttribute,
  .alloc_from_pool = cuMemAllocFromPoolAsync,
  .alloc_from_pool_ptsz = cuMemAllocFromPoolAsync_ptsz,
  .array_create = cuArrayCreate,
  .array3d_create = cuArray3DCreate,
  .array_destroy = cuArrayDestroy,
  .mipmap_create = cuMipmappedArrayCreate,
  .mipmap_destroy = cuMipmappedArrayDestroy,
  .mem_alloc_host = cuMemAllocHost,
  .mem_host_alloc = cuMemHostAlloc,
  .mem_free_host = cuMemFreeHost,
  .ipc_get = cuIpcGetMemHandle,
  .ipc_open = cuIpcOpenMemHandle,
  .ipc_open_legacy = legacy_cuIpcOpenMemHandle,
  .ipc_close = cuIpcCloseMemHandle,
  .ext_import = cuImportExternalMemory,
  .ext_map = cuExternalMemoryGetMappedBuffer,
  .ext_destroy = cuDestroyExternalMemory,
  .stream_create = cuStreamCreate,
  .stream_destroy = cuStreamDestroy,
  .stream_sync = cuStreamSynchronize,
  .capture_begin = cuStreamBeginCapture,
  .capture_end = cuStreamEndCapture,
  .capture_info = cuStreamGetCaptureInfo,
  .graph_create = cuGraphCreate,
  .graph_destroy = cuGraphDestroy,
  .graph_add_alloc = cuGraphAddMemAllocNode,
  .graph_add_free = cuGraphAddMemFreeNode,
  .graph_get_nodes = cuGraphGetNodes,
  .node_type = cuGraphNodeGetType,
  .alloc_node_params = cuGraphMemAllocNodeGetParams,
  .free_node_params = cuGraphMemFreeNodeGetParams,
  .instantiate = cuGraphInstantiate,
  .instantiate_params = cuGraphInstantiateWithParams,
  .graph_upload = cuGraphUpload,
  .graph_launch = cuGraphLaunch,
  .exec_destroy = cuGraphExecDestroy,
  .graph_trim = cuDeviceGraphMemTrim,
  .graph_mem_get = cuDeviceGetGraphMemAttribute,
  .graph_mem_set = cuDeviceSetGraphMemAttribute,
};

static struct app_drv *
table(int *rc)
{
  *rc = 0;
  return &linked;
}

static const struct app_nvml nvml_linked = {
  .init = nvmlInit_v2,
  .count = nvmlDeviceGetCount_v2,
  .handle = nvmlDeviceGetHandleByIndex_v2,
  .uuid = nvmlDeviceGetUUID,
  .memory = nvmlDeviceGetMemoryInfo,
  .memory_v2 = nvmlDeviceGetMemoryInfo_v2,
  .procs = nvmlDeviceGetComputeRunningProcesses_v3,
};

static const struct app_nvml *
nvml(void)
{
  return &nvml_linked;
}

static struct app_backend backend = {
  .name = "driver",
  .start = start,
  .set_device = set_device,
  .alloc = alloc,
  .alloc_pitch = alloc_pitch,
  .alloc_managed = alloc_managed,
  .alloc_async = alloc_async,
  .free = free_,
  .free_async = free_async,
  .meminfo = meminfo,
  .totalmem = totalmem,
  .reset = reset,
  .nvml = nvml,
};

int
main(int argc, char **argv)
{
  app_drv_fill_ops(&backend, table);
  return app_main(&backend, argc, argv);
}
