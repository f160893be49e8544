/*
 * Shared by the files of the simulated CUDA runtime: cudart.c
 * (bootstrap, devices, plain memory, entry points, errors), cudart_mem.c
 * (arrays, pools, host memory, IPC, copies, kernels) and cudart_graph.c
 * (streams, stream capture, graphs).  All go into libcudart.so.13 and
 * into libcudart_static.a; the names here are hidden and prefixed, since
 * the archive is linked into programs.
 */
#ifndef CMGSIM_CUDART_H
#define CMGSIM_CUDART_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <stdbool.h>

#define SIM_EXPORT __attribute__((visibility("default")))
#define RT_HIDDEN __attribute__((visibility("hidden")))

/* The driver entry points, resolved once through cuGetProcAddress with
 * the base names and versions cudart 13 asks for. */
struct rt_driver {
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
  PFN_cuMemAllocFromPoolAsync_v11020 alloc_from_pool;
  PFN_cuMemAllocFromPoolAsync_v11020_ptsz alloc_from_pool_ptsz;
  PFN_cuDeviceGetDefaultMemPool_v11020 default_pool;
  PFN_cuMemPoolCreate_v11020 pool_create;
  PFN_cuMemPoolDestroy_v11020 pool_destroy;
  PFN_cuMemPoolTrimTo_v11020 pool_trim;
  PFN_cuMemPoolGetAttribute_v11020 pool_get_attribute;
  PFN_cuArrayCreate_v3020 array_create;
  PFN_cuArray3DCreate_v3020 array3d_create;
  PFN_cuArrayDestroy_v2000 array_destroy;
  PFN_cuMipmappedArrayCreate_v5000 mipmap_create;
  PFN_cuMipmappedArrayDestroy_v5000 mipmap_destroy;
  PFN_cuMemAllocHost_v3020 mem_alloc_host;
  PFN_cuMemHostAlloc_v2020 mem_host_alloc;
  PFN_cuMemFreeHost_v2000 mem_free_host;
  PFN_cuIpcGetMemHandle_v4010 ipc_get;
  PFN_cuIpcOpenMemHandle_v11000 ipc_open;
  PFN_cuIpcCloseMemHandle_v4010 ipc_close;
  PFN_cuStreamCreate_v2000 stream_create;
  PFN_cuStreamDestroy_v4000 stream_destroy;
  PFN_cuStreamSynchronize_v2000 stream_sync;
  PFN_cuStreamBeginCapture_v10010 capture_begin;
  PFN_cuStreamEndCapture_v10000 capture_end;
  PFN_cuStreamIsCapturing_v10000 capture_status;
  PFN_cuGraphCreate_v10000 graph_create;
  PFN_cuGraphDestroy_v10000 graph_destroy;
  PFN_cuGraphAddMemAllocNode_v11040 graph_add_alloc;
  PFN_cuGraphAddMemFreeNode_v11040 graph_add_free;
  PFN_cuGraphInstantiateWithFlags_v11040 instantiate;
  PFN_cuGraphInstantiateWithParams_v12000 instantiate_params;
  PFN_cuGraphUpload_v11010 graph_upload;
  PFN_cuGraphLaunch_v10000 graph_launch;
  PFN_cuGraphExecDestroy_v10000 exec_destroy;
  PFN_cuDeviceGraphMemTrim_v11040 graph_trim;
  PFN_cuDeviceGetGraphMemAttribute_v11040 graph_mem_get;
  PFN_cuDeviceSetGraphMemAttribute_v11040 graph_mem_set;
};

RT_HIDDEN extern struct rt_driver rt_drv;

/* The number of devices the driver reported at boot. */
RT_HIDDEN extern int rt_ndevices;

/* Every API entry: boots the runtime once, then makes this thread's
 * device's primary context current; cudaSuccess or the error. */
RT_HIDDEN cudaError_t rt_enter(void);

/* The calling thread's device (cudaSetDevice). */
RT_HIDDEN int rt_device(void);

/* The cudaError_t the real runtime returns for a driver result. */
RT_HIDDEN cudaError_t rt_from_driver(CUresult rc);

/* Records a failure for cudaGetLastError and passes the code on. */
RT_HIDDEN cudaError_t rt_ret(cudaError_t err);

/* The entry points nvcc's host code calls to register a program's device
 * code and kernels (from a constructor, before main) and to launch them.
 * NVIDIA declares them only in nvcc's internal C++ headers
 * (crt/host_runtime.h, crt/device_functions.h), which C cannot include,
 * so they are spelled out here.  make check builds tests/gpu/cmg_alloc.cu
 * against the simulated runtime with this header forced into the compile
 * (tests/gpu/build.sh --sim), where the C++ compiler holds them to
 * NVIDIA's declarations. */
#ifdef __cplusplus
extern "C" {
#endif
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun,
                            char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bDim, dim3 *gDim, int *wSize);
#ifdef __CUDACC__
__host__ __device__
#endif
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim,
                                     size_t sharedMem,
                                     struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
                                       size_t *sharedMem, void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim,
                               dim3 blockDim, void **args, size_t sharedMem,
                               cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
                                    dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream);
#ifdef __cplusplus
}
#endif

#endif /* CMGSIM_CUDART_H */
