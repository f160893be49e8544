/*
 * The driver-API backend shared by app_dlsym and app_getproc: both call
 * the driver only through function pointers, and differ in how they get
 * them (dlsym of ELF names, or cuGetProcAddress with base names).  The
 * optional operations over that table (app_drvops.c) also serve app_driver
 * and, through cudaGetDriverEntryPoint, the runtime programs.
 */
#ifndef CMGSIM_APP_DRV_H
#define CMGSIM_APP_DRV_H

#include <cuda.h>
#include <cudaTypedefs.h>

#include "app.h"

#define APP_PTDS CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM

/*
 * Every driver function the programs call through a pointer:
 * X(field, type, base name, version, cuGetProcAddress flags, ELF name).
 * The type is NVIDIA's typedef of that variant, or of a later one of the
 * same shape where cudaTypedefs.h keeps the old one internal (the 7000
 * primary-context calls, the 4010 cuIpcOpenMemHandle).
 */
#define APP_DRV_FUNCTIONS(X) \
  X(init, PFN_cuInit_v2000, "cuInit", 2000, 0, "cuInit") \
  X(device_get, PFN_cuDeviceGet_v2000, "cuDeviceGet", 2000, 0, \
    "cuDeviceGet") \
  X(device_count, PFN_cuDeviceGetCount_v2000, "cuDeviceGetCount", 2000, 0, \
    "cuDeviceGetCount") \
  X(device_uuid, PFN_cuDeviceGetUuid_v11040, "cuDeviceGetUuid", 11040, 0, \
    "cuDeviceGetUuid_v2") \
  X(device_total, PFN_cuDeviceTotalMem_v3020, "cuDeviceTotalMem", 3020, 0, \
    "cuDeviceTotalMem_v2") \
  X(primary_retain, PFN_cuDevicePrimaryCtxRetain_v7000, \
    "cuDevicePrimaryCtxRetain", 7000, 0, "cuDevicePrimaryCtxRetain") \
  X(primary_release, PFN_cuDevicePrimaryCtxRelease_v11000, \
    "cuDevicePrimaryCtxRelease", 11000, 0, "cuDevicePrimaryCtxRelease_v2") \
  X(primary_release_legacy, PFN_cuDevicePrimaryCtxRelease_v11000, \
    "cuDevicePrimaryCtxRelease", 7000, 0, "cuDevicePrimaryCtxRelease") \
  X(primary_reset, PFN_cuDevicePrimaryCtxReset_v11000, \
    "cuDevicePrimaryCtxReset", 11000, 0, "cuDevicePrimaryCtxReset_v2") \
  X(primary_reset_legacy, PFN_cuDevicePrimaryCtxReset_v11000, \
    "cuDevicePrimaryCtxReset", 7000, 0, "cuDevicePrimaryCtxReset") \
  X(ctx_create, PFN_cuCtxCreate_v12050, "cuCtxCreate", 12050, 0, \
    "cuCtxCreate_v4") \
  X(ctx_destroy, PFN_cuCtxDestroy_v4000, "cuCtxDestroy", 4000, 0, \
    "cuCtxDestroy_v2") \
  X(ctx_set, PFN_cuCtxSetCurrent_v4000, "cuCtxSetCurrent", 4000, 0, \
    "cuCtxSetCurrent") \
  X(mem_info, PFN_cuMemGetInfo_v3020, "cuMemGetInfo", 3020, 0, \
    "cuMemGetInfo_v2") \
  X(mem_alloc, PFN_cuMemAlloc_v3020, "cuMemAlloc", 3020, 0, "cuMemAlloc_v2") \
  X(mem_free, PFN_cuMemFree_v3020, "cuMemFree", 3020, 0, "cuMemFree_v2") \
  X(mem_alloc_pitch, PFN_cuMemAllocPitch_v3020, "cuMemAllocPitch", 3020, 0, \
    "cuMemAllocPitch_v2") \
  X(mem_alloc_managed, PFN_cuMemAllocManaged_v6000, "cuMemAllocManaged", \
    6000, 0, "cuMemAllocManaged") \
  X(mem_alloc_async, PFN_cuMemAllocAsync_v11020, "cuMemAllocAsync", 11020, \
    0, "cuMemAllocAsync") \
  X(mem_alloc_async_ptsz, PFN_cuMemAllocAsync_v11020_ptsz, \
    "cuMemAllocAsync", 11020, APP_PTDS, "cuMemAllocAsync_ptsz") \
  X(mem_free_async, PFN_cuMemFreeAsync_v11020, "cuMemFreeAsync", 11020, 0, \
    "cuMemFreeAsync") \
  X(mem_free_async_ptsz, PFN_cuMemFreeAsync_v11020_ptsz, "cuMemFreeAsync", \
    11020, APP_PTDS, "cuMemFreeAsync_ptsz") \
  X(mem_create, PFN_cuMemCreate_v10020, "cuMemCreate", 10020, 0, \
    "cuMemCreate") \
  X(mem_release, PFN_cuMemRelease_v10020, "cuMemRelease", 10020, 0, \
    "cuMemRelease") \
  X(mem_retain, PFN_cuMemRetainAllocationHandle_v11000, \
    "cuMemRetainAllocationHandle", 11000, 0, "cuMemRetainAllocationHandle") \
  X(addr_reserve, PFN_cuMemAddressReserve_v10020, "cuMemAddressReserve", \
    10020, 0, "cuMemAddressReserve") \
  X(addr_free, PFN_cuMemAddressFree_v10020, "cuMemAddressFree", 10020, 0, \
    "cuMemAddressFree") \
  X(mem_map, PFN_cuMemMap_v10020, "cuMemMap", 10020, 0, "cuMemMap") \
  X(mem_unmap, PFN_cuMemUnmap_v10020, "cuMemUnmap", 10020, 0, "cuMemUnmap") \
  X(mem_set_access, PFN_cuMemSetAccess_v10020, "cuMemSetAccess", 10020, 0, \
    "cuMemSetAccess") \
  X(mem_export, PFN_cuMemExportToShareableHandle_v10020, \
    "cuMemExportToShareableHandle", 10020, 0, \
    "cuMemExportToShareableHandle") \
  X(mem_import, PFN_cuMemImportFromShareableHandle_v10020, \
    "cuMemImportFromShareableHandle", 10020, 0, \
    "cuMemImportFromShareableHandle") \
  X(default_pool, PFN_cuDeviceGetDefaultMemPool_v11020, \
    "cuDeviceGetDefaultMemPool", 11020, 0, "cuDeviceGetDefaultMemPool") \
  X(pool_create, PFN_cuMemPoolCreate_v11020, "cuMemPoolCreate", 11020, 0, \
    "cuMemPoolCreate") \
  X(pool_destroy, PFN_cuMemPoolDestroy_v11020, "cuMemPoolDestroy", 11020, 0, \
    "cuMemPoolDestroy") \
  X(pool_trim, PFN_cuMemPoolTrimTo_v11020, "cuMemPoolTrimTo", 11020, 0, \
    "cuMemPoolTrimTo") \
  X(pool_get_attribute, PFN_cuMemPoolGetAttribute_v11020, \
    "cuMemPoolGetAttribute", 11020, 0, "cuMemPoolGetAttribute") \
  X(alloc_from_pool, PFN_cuMemAllocFromPoolAsync_v11020, \
    "cuMemAllocFromPoolAsync", 11020, 0, "cuMemAllocFromPoolAsync") \
  X(alloc_from_pool_ptsz, PFN_cuMemAllocFromPoolAsync_v11020_ptsz, \
    "cuMemAllocFromPoolAsync", 11020, APP_PTDS, \
    "cuMemAllocFromPoolAsync_ptsz") \
  X(array_create, PFN_cuArrayCreate_v3020, "cuArrayCreate", 3020, 0, \
    "cuArrayCreate_v2") \
  X(array3d_create, PFN_cuArray3DCreate_v3020, "cuArray3DCreate", 3020, 0, \
    "cuArray3DCreate_v2") \
  X(array_destroy, PFN_cuArrayDestroy_v2000, "cuArrayDestroy", 2000, 0, \
    "cuArrayDestroy") \
  X(mipmap_create, PFN_cuMipmappedArrayCreate_v5000, \
    "cuMipmappedArrayCreate", 5000, 0, "cuMipmappedArrayCreate") \
  X(mipmap_destroy, PFN_cuMipmappedArrayDestroy_v5000, \
    "cuMipmappedArrayDestroy", 5000, 0, "cuMipmappedArrayDestroy") \
  X(mem_alloc_host, PFN_cuMemAllocHost_v3020, "cuMemAllocHost", 3020, 0, \
    "cuMemAllocHost_v2") \
  X(mem_host_alloc, PFN_cuMemHostAlloc_v2020, "cuMemHostAlloc", 2020, 0, \
    "cuMemHostAlloc") \
  X(mem_free_host, PFN_cuMemFreeHost_v2000, "cuMemFreeHost", 2000, 0, \
    "cuMemFreeHost") \
  X(ipc_get, PFN_cuIpcGetMemHandle_v4010, "cuIpcGetMemHandle", 4010, 0, \
    "cuIpcGetMemHandle") \
  X(ipc_open, PFN_cuIpcOpenMemHandle_v11000, "cuIpcOpenMemHandle", 11000, \
    0, "cuIpcOpenMemHandle_v2") \
  X(ipc_open_legacy, PFN_cuIpcOpenMemHandle_v11000, "cuIpcOpenMemHandle", \
    4010, 0, "cuIpcOpenMemHandle") \
  X(ipc_close, PFN_cuIpcCloseMemHandle_v4010, "cuIpcCloseMemHandle", 4010, \
    0, "cuIpcCloseMemHandle") \
  X(ext_import, PFN_cuImportExternalMemory_v10000, "cuImportExternalMemory", \
    10000, 0, "cuImportExternalMemory") \
  X(ext_map, PFN_cuExternalMemoryGetMappedBuffer_v10000, \
    "cuExternalMemoryGetMappedBuffer", 10000, 0, \
    "cuExternalMemoryGetMappedBuffer") \
  X(ext_destroy, PFN_cuDestroyExternalMemory_v10000, \
    "cuDestroyExternalMemory", 10000, 0, "cuDestroyExternalMemory") \
  X(stream_create, PFN_cuStreamCreate_v2000, "cuStreamCreate", 2000, 0, \
    "cuStreamCreate") \
  X(stream_destroy, PFN_cuStreamDestroy_v4000, "cuStreamDestroy", 4000, 0, \
    "cuStreamDestroy_v2") \
  X(stream_sync, PFN_cuStreamSynchronize_v2000, "cuStreamSynchronize", 2000, \
    0, "cuStreamSynchronize") \
  X(capture_begin, PFN_cuStreamBeginCapture_v10010, "cuStreamBeginCapture", \
    10010, 0, "cuStreamBeginCapture_v2") \
  X(capture_end, PFN_cuStreamEndCapture_v10000, "cuStreamEndCapture", \
    10000, 0, "cuStreamEndCapture") \
  X(capture_info, PFN_cuStreamGetCaptureInfo_v12030, \
    "cuStreamGetCaptureInfo", 12030, 0, "cuStreamGetCaptureInfo_v3") \
  X(graph_create, PFN_cuGraphCreate_v10000, "cuGraphCreate", 10000, 0, \
    "cuGraphCreate") \
  X(graph_destroy, PFN_cuGraphDestroy_v10000, "cuGraphDestroy", 10000, 0, \
    "cuGraphDestroy") \
  X(graph_add_alloc, PFN_cuGraphAddMemAllocNode_v11040, \
    "cuGraphAddMemAllocNode", 11040, 0, "cuGraphAddMemAllocNode") \
  X(graph_add_free, PFN_cuGraphAddMemFreeNode_v11040, \
    "cuGraphAddMemFreeNode", 11040, 0, "cuGraphAddMemFreeNode") \
  X(graph_get_nodes, PFN_cuGraphGetNodes_v10000, "cuGraphGetNodes", 10000, \
    0, "cuGraphGetNodes") \
  X(node_type, PFN_cuGraphNodeGetType_v10000, "cuGraphNodeGetType", 10000, \
    0, "cuGraphNodeGetType") \
  X(alloc_node_params, PFN_cuGraphMemAllocNodeGetParams_v11040, \
    "cuGraphMemAllocNodeGetParams", 11040, 0, \
    "cuGraphMemAllocNodeGetParams") \
  X(free_node_params, PFN_cuGraphMemFreeNodeGetParams_v11040, \
    "cuGraphMemFreeNodeGetParams", 11040, 0, "cuGraphMemFreeNodeGetParams") \
  X(instantiate, PFN_cuGraphInstantiateWithFlags_v11040, \
    "cuGraphInstantiateWithFlags", 11040, 0, "cuGraphInstantiateWithFlags") \
  X(instantiate_params, PFN_cuGraphInstantiateWithParams_v12000, \
    "cuGraphInstantiateWithParams", 12000, 0, \
    "cuGraphInstantiateWithParams") \
  X(graph_upload, PFN_cuGraphUpload_v11010, "cuGraphUpload", 11010, 0, \
    "cuGraphUpload") \
  X(graph_launch, PFN_cuGraphLaunch_v10000, "cuGraphLaunch", 10000, 0, \
    "cuGraphLaunch") \
  X(exec_destroy, PFN_cuGraphExecDestroy_v10000, "cuGraphExecDestroy", \
    10000, 0, "cuGraphExecDestroy") \
  X(graph_trim, PFN_cuDeviceGraphMemTrim_v11040, "cuDeviceGraphMemTrim", \
    11040, 0, "cuDeviceGraphMemTrim") \
  X(graph_mem_get, PFN_cuDeviceGetGraphMemAttribute_v11040, \
    "cuDeviceGetGraphMemAttribute", 11040, 0, \
    "cuDeviceGetGraphMemAttribute") \
  X(graph_mem_set, PFN_cuDeviceSetGraphMemAttribute_v11040, \
    "cuDeviceSetGraphMemAttribute", 11040, 0, \
    "cuDeviceSetGraphMemAttribute")

#define APP_DRV_FIELD(field, type, base, version, flags, elf) type field;
struct app_drv {
  APP_DRV_FUNCTIONS(APP_DRV_FIELD)
};

/* Fills every field of *d; returns 0 or a CUresult (CUDA_ERROR_NOT_FOUND
 * when an entry point is missing, after saying which on stderr). */
typedef int app_drv_resolver(struct app_drv *d);

/* Runs the script in argv with a backend named `name` that calls the
 * driver through the pointers `resolve` provides on first use; `getproc`
 * may be NULL.  Returns the exit code. */
int app_drv_main(const char *name, app_drv_resolver *resolve,
                 int (*getproc)(const char *symbol, int version,
                                unsigned long long flags, void **fn,
                                int *status),
                 int argc, char **argv);

/* The table the optional operations use: a complete one, or NULL with
 * *rc set to the CUresult to report. */
typedef struct app_drv *app_drv_table(int *rc);

/* Points every optional operation of `b` at its driver-API version in
 * app_drvops.c, calling through the table `table` returns. */
void app_drv_fill_ops(struct app_backend *b, app_drv_table *table);

/* Points the stream, capture and graph operations of `b` at their
 * driver-API versions in app_drvgraph.c (app_drv_fill_ops does). */
void app_drv_fill_graph_ops(struct app_backend *b, app_drv_table *table);

/* The ipc_open operation of app_drvops.c, for a backend that keeps it for
 * one variant only. */
int app_drv_ipc_open(uint64_t ptr, bool legacy, uint64_t *alias);

#endif /* CMGSIM_APP_DRV_H */
