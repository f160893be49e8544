/*
 * cuGetProcAddress of the simulated driver.
 *
 * It answers from a static table of this library's own functions (their
 * hidden aliases, see libcuda.h), never through dlsym, and the library is
 * linked -Bsymbolic: an LD_PRELOAD library exporting the same names must
 * never be handed out, or an interposer that forgot to hook
 * cuGetProcAddress would look as if it worked.  Rows follow cuda.h: the
 * caller asks by base name and CUDA version and gets the newest variant
 * introduced at or before that version, the _ptsz one only when it asks
 * for per-thread default stream semantics.  The table is read-only, so
 * lookups take no lock.
 */
#include "libcuda.h"

#include <stdio.h>
#include <string.h>

static CUresult lookup(const char *symbol, void **pfn, int cudaVersion,
                       cuuint64_t flags,
                       CUdriverProcAddressQueryResult *symbolStatus,
                       const char *via);

SIM_EXPORT CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                    cuuint64_t flags,
                    CUdriverProcAddressQueryResult *symbolStatus)
{
  return lookup(symbol, pfn, cudaVersion, flags, symbolStatus,
                "cuGetProcAddress_v2");
}

SIM_EXPORT CUresult
cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                 cuuint64_t flags)
{
  return lookup(symbol, pfn, cudaVersion, flags, NULL, "cuGetProcAddress");
}

/* The trampolines and the table need these, as they do the others. */
extern __typeof__(cuGetProcAddress) hid_cuGetProcAddress
    __attribute__((alias("cuGetProcAddress"), visibility("hidden")));
extern __typeof__(cuGetProcAddress_v2) hid_cuGetProcAddress_v2
    __attribute__((alias("cuGetProcAddress_v2"), visibility("hidden")));

/* With CMG_SIM_GETPROC_TRAMPOLINE=1 the table hands out these instead: a
 * real driver need not return its exported addresses, and an interposer
 * that matches returned pointers against dlsym results has to cope. */
#define TRAMP(fn, params, args) \
  static CUresult tramp_##fn params { return hid_##fn args; }

TRAMP(cuInit, (unsigned int f), (f))
TRAMP(cuDriverGetVersion, (int *v), (v))
TRAMP(cuDeviceGet, (CUdevice *d, int o), (d, o))
TRAMP(cuDeviceGetCount, (int *n), (n))
TRAMP(cuDeviceGetName, (char *s, int n, CUdevice d), (s, n, d))
TRAMP(cuDeviceGetUuid, (CUuuid *u, CUdevice d), (u, d))
TRAMP(cuDeviceGetUuid_v2, (CUuuid *u, CUdevice d), (u, d))
TRAMP(cuDeviceTotalMem_v2, (size_t *b, CUdevice d), (b, d))
TRAMP(cuDevicePrimaryCtxRetain, (CUcontext *c, CUdevice d), (c, d))
TRAMP(cuDevicePrimaryCtxRelease, (CUdevice d), (d))
TRAMP(cuDevicePrimaryCtxRelease_v2, (CUdevice d), (d))
TRAMP(cuDevicePrimaryCtxReset, (CUdevice d), (d))
TRAMP(cuDevicePrimaryCtxReset_v2, (CUdevice d), (d))
TRAMP(cuCtxCreate, (CUcontext *c, unsigned int f, CUdevice d), (c, f, d))
TRAMP(cuCtxCreate_v2, (CUcontext *c, unsigned int f, CUdevice d), (c, f, d))
TRAMP(cuCtxCreate_v3,
      (CUcontext *c, CUexecAffinityParam *p, int n, unsigned int f,
       CUdevice d),
      (c, p, n, f, d))
TRAMP(cuCtxCreate_v4,
      (CUcontext *c, CUctxCreateParams *p, unsigned int f, CUdevice d),
      (c, p, f, d))
TRAMP(cuCtxDestroy, (CUcontext c), (c))
TRAMP(cuCtxDestroy_v2, (CUcontext c), (c))
TRAMP(cuCtxSetCurrent, (CUcontext c), (c))
TRAMP(cuCtxGetCurrent, (CUcontext *c), (c))
TRAMP(cuCtxGetDevice, (CUdevice *d), (d))
TRAMP(cuCtxSynchronize, (void), ())
TRAMP(cuMemAlloc, (CUdeviceptr_v1 *p, unsigned int n), (p, n))
TRAMP(cuMemAlloc_v2, (CUdeviceptr *p, size_t n), (p, n))
TRAMP(cuMemFree, (CUdeviceptr_v1 p), (p))
TRAMP(cuMemFree_v2, (CUdeviceptr p), (p))
TRAMP(cuMemAllocPitch_v2,
      (CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned int e),
      (p, pitch, w, h, e))
TRAMP(cuMemAllocManaged, (CUdeviceptr *p, size_t n, unsigned int f),
      (p, n, f))
TRAMP(cuMemAllocAsync, (CUdeviceptr *p, size_t n, CUstream s), (p, n, s))
TRAMP(cuMemAllocAsync_ptsz, (CUdeviceptr *p, size_t n, CUstream s),
      (p, n, s))
TRAMP(cuMemFreeAsync, (CUdeviceptr p, CUstream s), (p, s))
TRAMP(cuMemFreeAsync_ptsz, (CUdeviceptr p, CUstream s), (p, s))
TRAMP(cuMemGetInfo, (unsigned int *f, unsigned int *t), (f, t))
TRAMP(cuMemGetInfo_v2, (size_t *f, size_t *t), (f, t))
TRAMP(cuGetErrorName, (CUresult e, const char **s), (e, s))
TRAMP(cuGetErrorString, (CUresult e, const char **s), (e, s))
TRAMP(cuGetProcAddress,
      (const char *s, void **p, int v, cuuint64_t f), (s, p, v, f))
TRAMP(cuGetProcAddress_v2,
      (const char *s, void **p, int v, cuuint64_t f,
       CUdriverProcAddressQueryResult *st),
      (s, p, v, f, st))

/* Virtual memory management (vmm.c). */
TRAMP(cuMemCreate,
      (CUmemGenericAllocationHandle *h, size_t s,
       const CUmemAllocationProp *p, unsigned long long f),
      (h, s, p, f))
TRAMP(cuMemRelease, (CUmemGenericAllocationHandle h), (h))
TRAMP(cuMemRetainAllocationHandle,
      (CUmemGenericAllocationHandle *h, void *a), (h, a))
TRAMP(cuMemAddressReserve,
      (CUdeviceptr *p, size_t s, size_t al, CUdeviceptr a,
       unsigned long long f),
      (p, s, al, a, f))
TRAMP(cuMemAddressFree, (CUdeviceptr p, size_t s), (p, s))
TRAMP(cuMemMap,
      (CUdeviceptr p, size_t s, size_t o, CUmemGenericAllocationHandle h,
       unsigned long long f),
      (p, s, o, h, f))
TRAMP(cuMemUnmap, (CUdeviceptr p, size_t s), (p, s))
TRAMP(cuMemSetAccess,
      (CUdeviceptr p, size_t s, const CUmemAccessDesc *d, size_t n),
      (p, s, d, n))
TRAMP(cuMemGetAllocationGranularity,
      (size_t *g, const CUmemAllocationProp *p,
       CUmemAllocationGranularity_flags o),
      (g, p, o))
TRAMP(cuMemGetAllocationPropertiesFromHandle,
      (CUmemAllocationProp *p, CUmemGenericAllocationHandle h), (p, h))
TRAMP(cuMemExportToShareableHandle,
      (void *sh, CUmemGenericAllocationHandle h, CUmemAllocationHandleType t,
       unsigned long long f),
      (sh, h, t, f))
TRAMP(cuMemImportFromShareableHandle,
      (CUmemGenericAllocationHandle *h, void *os,
       CUmemAllocationHandleType t),
      (h, os, t))

/* Memory pools (pools.c). */
TRAMP(cuDeviceGetDefaultMemPool, (CUmemoryPool *p, CUdevice d), (p, d))
TRAMP(cuDeviceGetMemPool, (CUmemoryPool *p, CUdevice d), (p, d))
TRAMP(cuDeviceSetMemPool, (CUdevice d, CUmemoryPool p), (d, p))
TRAMP(cuMemPoolCreate, (CUmemoryPool *p, const CUmemPoolProps *pr), (p, pr))
TRAMP(cuMemPoolDestroy, (CUmemoryPool p), (p))
TRAMP(cuMemPoolTrimTo, (CUmemoryPool p, size_t k), (p, k))
TRAMP(cuMemPoolGetAttribute,
      (CUmemoryPool p, CUmemPool_attribute a, void *v), (p, a, v))
TRAMP(cuMemPoolSetAttribute,
      (CUmemoryPool p, CUmemPool_attribute a, void *v), (p, a, v))
TRAMP(cuMemAllocFromPoolAsync,
      (CUdeviceptr *d, size_t s, CUmemoryPool p, CUstream st),
      (d, s, p, st))
TRAMP(cuMemAllocFromPoolAsync_ptsz,
      (CUdeviceptr *d, size_t s, CUmemoryPool p, CUstream st),
      (d, s, p, st))

/* Arrays (arrays.c). */
TRAMP(cuArrayCreate, (CUarray *h, const CUDA_ARRAY_DESCRIPTOR_v1 *d), (h, d))
TRAMP(cuArrayCreate_v2, (CUarray *h, const CUDA_ARRAY_DESCRIPTOR *d), (h, d))
TRAMP(cuArray3DCreate, (CUarray *h, const CUDA_ARRAY3D_DESCRIPTOR_v1 *d),
      (h, d))
TRAMP(cuArray3DCreate_v2, (CUarray *h, const CUDA_ARRAY3D_DESCRIPTOR *d),
      (h, d))
TRAMP(cuArrayDestroy, (CUarray a), (a))
TRAMP(cuArrayGetDescriptor_v2, (CUDA_ARRAY_DESCRIPTOR *d, CUarray a), (d, a))
TRAMP(cuArray3DGetDescriptor_v2, (CUDA_ARRAY3D_DESCRIPTOR *d, CUarray a),
      (d, a))
TRAMP(cuArrayGetMemoryRequirements,
      (CUDA_ARRAY_MEMORY_REQUIREMENTS *r, CUarray a, CUdevice d), (r, a, d))
TRAMP(cuMipmappedArrayCreate,
      (CUmipmappedArray *h, const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned int n),
      (h, d, n))
TRAMP(cuMipmappedArrayDestroy, (CUmipmappedArray m), (m))
TRAMP(cuMipmappedArrayGetMemoryRequirements,
      (CUDA_ARRAY_MEMORY_REQUIREMENTS *r, CUmipmappedArray m, CUdevice d),
      (r, m, d))

/* Page-locked host memory (hostmem.c). */
TRAMP(cuMemAllocHost, (void **p, unsigned int n), (p, n))
TRAMP(cuMemAllocHost_v2, (void **p, size_t n), (p, n))
TRAMP(cuMemHostAlloc, (void **p, size_t n, unsigned int f), (p, n, f))
TRAMP(cuMemFreeHost, (void *p), (p))

/* IPC and external memory (ipc.c). */
TRAMP(cuIpcGetMemHandle, (CUipcMemHandle *h, CUdeviceptr p), (h, p))
TRAMP(cuIpcOpenMemHandle, (CUdeviceptr *p, CUipcMemHandle h, unsigned int f),
      (p, h, f))
TRAMP(cuIpcOpenMemHandle_v2,
      (CUdeviceptr *p, CUipcMemHandle h, unsigned int f), (p, h, f))
TRAMP(cuIpcCloseMemHandle, (CUdeviceptr p), (p))
TRAMP(cuImportExternalMemory,
      (CUexternalMemory *e, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *d),
      (e, d))
TRAMP(cuExternalMemoryGetMappedBuffer,
      (CUdeviceptr *p, CUexternalMemory e,
       const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *d),
      (p, e, d))
TRAMP(cuDestroyExternalMemory, (CUexternalMemory e), (e))

/* Streams, capture and stream-ordered allocation (streams.c). */
TRAMP(cuStreamCreate, (CUstream *s, unsigned int f), (s, f))
TRAMP(cuStreamCreateWithPriority, (CUstream *s, unsigned int f, int p),
      (s, f, p))
TRAMP(cuStreamDestroy, (CUstream s), (s))
TRAMP(cuStreamDestroy_v2, (CUstream s), (s))
TRAMP(cuStreamSynchronize, (CUstream s), (s))
TRAMP(cuStreamSynchronize_ptsz, (CUstream s), (s))
TRAMP(cuStreamIsCapturing, (CUstream s, CUstreamCaptureStatus *st), (s, st))
TRAMP(cuStreamIsCapturing_ptsz, (CUstream s, CUstreamCaptureStatus *st),
      (s, st))
TRAMP(cuStreamGetCaptureInfo,
      (CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id), (s, st, id))
TRAMP(cuStreamGetCaptureInfo_ptsz,
      (CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id), (s, st, id))
TRAMP(cuStreamGetCaptureInfo_v2,
      (CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
       const CUgraphNode **d, size_t *n),
      (s, st, id, g, d, n))
TRAMP(cuStreamGetCaptureInfo_v2_ptsz,
      (CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
       const CUgraphNode **d, size_t *n),
      (s, st, id, g, d, n))
TRAMP(cuStreamGetCaptureInfo_v3,
      (CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
       const CUgraphNode **d, const CUgraphEdgeData **e, size_t *n),
      (s, st, id, g, d, e, n))
TRAMP(cuStreamGetCaptureInfo_v3_ptsz,
      (CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
       const CUgraphNode **d, const CUgraphEdgeData **e, size_t *n),
      (s, st, id, g, d, e, n))
TRAMP(cuStreamBeginCapture, (CUstream s), (s))
TRAMP(cuStreamBeginCapture_ptsz, (CUstream s), (s))
TRAMP(cuStreamBeginCapture_v2, (CUstream s, CUstreamCaptureMode m), (s, m))
TRAMP(cuStreamBeginCapture_v2_ptsz, (CUstream s, CUstreamCaptureMode m),
      (s, m))
TRAMP(cuStreamEndCapture, (CUstream s, CUgraph *g), (s, g))
TRAMP(cuStreamEndCapture_ptsz, (CUstream s, CUgraph *g), (s, g))

/* Graphs (graphs.c). */
TRAMP(cuGraphCreate, (CUgraph *g, unsigned int f), (g, f))
TRAMP(cuGraphDestroy, (CUgraph g), (g))
TRAMP(cuGraphAddEmptyNode,
      (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd),
      (n, g, d, nd))
TRAMP(cuGraphAddMemAllocNode,
      (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd,
       CUDA_MEM_ALLOC_NODE_PARAMS *p),
      (n, g, d, nd, p))
TRAMP(cuGraphAddMemFreeNode,
      (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd,
       CUdeviceptr p),
      (n, g, d, nd, p))
TRAMP(cuGraphAddNode,
      (CUgraphNode *n, CUgraph g, const CUgraphNode *d, size_t nd,
       CUgraphNodeParams *p),
      (n, g, d, nd, p))
TRAMP(cuGraphAddNode_v2,
      (CUgraphNode *n, CUgraph g, const CUgraphNode *d,
       const CUgraphEdgeData *e, size_t nd, CUgraphNodeParams *p),
      (n, g, d, e, nd, p))
TRAMP(cuGraphGetNodes, (CUgraph g, CUgraphNode *n, size_t *c), (g, n, c))
TRAMP(cuGraphNodeGetType, (CUgraphNode n, CUgraphNodeType *t), (n, t))
TRAMP(cuGraphMemAllocNodeGetParams,
      (CUgraphNode n, CUDA_MEM_ALLOC_NODE_PARAMS *p), (n, p))
TRAMP(cuGraphMemFreeNodeGetParams, (CUgraphNode n, CUdeviceptr *p), (n, p))

/* Executable graphs and the graph memory pools (graphexec.c). */
TRAMP(cuGraphInstantiate,
      (CUgraphExec *e, CUgraph g, CUgraphNode *n, char *l, size_t s),
      (e, g, n, l, s))
TRAMP(cuGraphInstantiate_v2,
      (CUgraphExec *e, CUgraph g, CUgraphNode *n, char *l, size_t s),
      (e, g, n, l, s))
TRAMP(cuGraphInstantiateWithFlags,
      (CUgraphExec *e, CUgraph g, unsigned long long f), (e, g, f))
TRAMP(cuGraphInstantiateWithParams,
      (CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p),
      (e, g, p))
TRAMP(cuGraphInstantiateWithParams_ptsz,
      (CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p),
      (e, g, p))
TRAMP(cuGraphExecGetFlags, (CUgraphExec e, cuuint64_t *f), (e, f))
TRAMP(cuGraphUpload, (CUgraphExec e, CUstream s), (e, s))
TRAMP(cuGraphUpload_ptsz, (CUgraphExec e, CUstream s), (e, s))
TRAMP(cuGraphLaunch, (CUgraphExec e, CUstream s), (e, s))
TRAMP(cuGraphLaunch_ptsz, (CUgraphExec e, CUstream s), (e, s))
TRAMP(cuGraphExecDestroy, (CUgraphExec e), (e))
TRAMP(cuDeviceGraphMemTrim, (CUdevice d), (d))
TRAMP(cuDeviceGetGraphMemAttribute,
      (CUdevice d, CUgraphMem_attribute a, void *v), (d, a, v))
TRAMP(cuDeviceSetGraphMemAttribute,
      (CUdevice d, CUgraphMem_attribute a, void *v), (d, a, v))

struct proc_row {
  const char *name; /* base name, as callers ask for it */
  int version;      /* CUDA version that introduced this variant */
  bool ptsz;        /* per-thread default stream variant */
  const char *elf;  /* ELF name, for the trace */
  void *fn;
  void *tramp;
};

/* Every row: base name, the CUDA version that introduced the variant and
 * the function.  R rows are legacy-stream (or stream-less) variants, P
 * rows the per-thread default stream ones.  Each is checked at compile
 * time against NVIDIA's typedef for it, PFN_<base>_v<version>[_ptsz] in
 * cudaTypedefs.h, so a row cannot name the wrong ABI. */
#define PROC_ROWS(R, P) \
  R(cuGetErrorString, 6000, cuGetErrorString) \
  R(cuGetErrorName, 6000, cuGetErrorName) \
  R(cuInit, 2000, cuInit) \
  R(cuDriverGetVersion, 2020, cuDriverGetVersion) \
  R(cuDeviceGet, 2000, cuDeviceGet) \
  R(cuDeviceGetCount, 2000, cuDeviceGetCount) \
  R(cuDeviceGetName, 2000, cuDeviceGetName) \
  R(cuDeviceGetUuid, 9020, cuDeviceGetUuid) \
  R(cuDeviceGetUuid, 11040, cuDeviceGetUuid_v2) \
  R(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2) \
  R(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain) \
  R(cuDevicePrimaryCtxRelease, 7000, cuDevicePrimaryCtxRelease) \
  R(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2) \
  R(cuDevicePrimaryCtxReset, 7000, cuDevicePrimaryCtxReset) \
  R(cuDevicePrimaryCtxReset, 11000, cuDevicePrimaryCtxReset_v2) \
  R(cuCtxCreate, 2000, cuCtxCreate) \
  R(cuCtxCreate, 3020, cuCtxCreate_v2) \
  R(cuCtxCreate, 11040, cuCtxCreate_v3) \
  R(cuCtxCreate, 12050, cuCtxCreate_v4) \
  R(cuCtxDestroy, 2000, cuCtxDestroy) \
  R(cuCtxDestroy, 4000, cuCtxDestroy_v2) \
  R(cuCtxSetCurrent, 4000, cuCtxSetCurrent) \
  R(cuCtxGetCurrent, 4000, cuCtxGetCurrent) \
  R(cuCtxGetDevice, 2000, cuCtxGetDevice) \
  R(cuCtxSynchronize, 2000, cuCtxSynchronize) \
  R(cuMemGetInfo, 2000, cuMemGetInfo) \
  R(cuMemGetInfo, 3020, cuMemGetInfo_v2) \
  R(cuMemAlloc, 2000, cuMemAlloc) \
  R(cuMemAlloc, 3020, cuMemAlloc_v2) \
  R(cuMemFree, 2000, cuMemFree) \
  R(cuMemFree, 3020, cuMemFree_v2) \
  R(cuMemAllocPitch, 3020, cuMemAllocPitch_v2) \
  R(cuMemAllocManaged, 6000, cuMemAllocManaged) \
  R(cuMemAllocAsync, 11020, cuMemAllocAsync) \
  P(cuMemAllocAsync, 11020, cuMemAllocAsync_ptsz) \
  R(cuMemFreeAsync, 11020, cuMemFreeAsync) \
  P(cuMemFreeAsync, 11020, cuMemFreeAsync_ptsz) \
  R(cuMemCreate, 10020, cuMemCreate) \
  R(cuMemRelease, 10020, cuMemRelease) \
  R(cuMemRetainAllocationHandle, 11000, cuMemRetainAllocationHandle) \
  R(cuMemAddressReserve, 10020, cuMemAddressReserve) \
  R(cuMemAddressFree, 10020, cuMemAddressFree) \
  R(cuMemMap, 10020, cuMemMap) \
  R(cuMemUnmap, 10020, cuMemUnmap) \
  R(cuMemSetAccess, 10020, cuMemSetAccess) \
  R(cuMemGetAllocationGranularity, 10020, cuMemGetAllocationGranularity) \
  R(cuMemGetAllocationPropertiesFromHandle, 10020, \
      cuMemGetAllocationPropertiesFromHandle) \
  R(cuMemExportToShareableHandle, 10020, cuMemExportToShareableHandle) \
  R(cuMemImportFromShareableHandle, 10020, cuMemImportFromShareableHandle) \
  R(cuDeviceGetDefaultMemPool, 11020, cuDeviceGetDefaultMemPool) \
  R(cuDeviceGetMemPool, 11020, cuDeviceGetMemPool) \
  R(cuDeviceSetMemPool, 11020, cuDeviceSetMemPool) \
  R(cuMemPoolCreate, 11020, cuMemPoolCreate) \
  R(cuMemPoolDestroy, 11020, cuMemPoolDestroy) \
  R(cuMemPoolTrimTo, 11020, cuMemPoolTrimTo) \
  R(cuMemPoolGetAttribute, 11020, cuMemPoolGetAttribute) \
  R(cuMemPoolSetAttribute, 11020, cuMemPoolSetAttribute) \
  R(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync) \
  P(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync_ptsz) \
  R(cuArrayCreate, 2000, cuArrayCreate) \
  R(cuArrayCreate, 3020, cuArrayCreate_v2) \
  R(cuArray3DCreate, 2000, cuArray3DCreate) \
  R(cuArray3DCreate, 3020, cuArray3DCreate_v2) \
  R(cuArrayDestroy, 2000, cuArrayDestroy) \
  R(cuArrayGetDescriptor, 3020, cuArrayGetDescriptor_v2) \
  R(cuArray3DGetDescriptor, 3020, cuArray3DGetDescriptor_v2) \
  R(cuArrayGetMemoryRequirements, 11060, cuArrayGetMemoryRequirements) \
  R(cuMipmappedArrayCreate, 5000, cuMipmappedArrayCreate) \
  R(cuMipmappedArrayDestroy, 5000, cuMipmappedArrayDestroy) \
  R(cuMipmappedArrayGetMemoryRequirements, 11060, \
      cuMipmappedArrayGetMemoryRequirements) \
  R(cuMemAllocHost, 2000, cuMemAllocHost) \
  R(cuMemAllocHost, 3020, cuMemAllocHost_v2) \
  R(cuMemHostAlloc, 2020, cuMemHostAlloc) \
  R(cuMemFreeHost, 2000, cuMemFreeHost) \
  R(cuIpcGetMemHandle, 4010, cuIpcGetMemHandle) \
  R(cuIpcOpenMemHandle, 4010, cuIpcOpenMemHandle) \
  R(cuIpcOpenMemHandle, 11000, cuIpcOpenMemHandle_v2) \
  R(cuIpcCloseMemHandle, 4010, cuIpcCloseMemHandle) \
  R(cuImportExternalMemory, 10000, cuImportExternalMemory) \
  R(cuExternalMemoryGetMappedBuffer, 10000, cuExternalMemoryGetMappedBuffer) \
  R(cuDestroyExternalMemory, 10000, cuDestroyExternalMemory) \
  R(cuStreamCreate, 2000, cuStreamCreate) \
  R(cuStreamCreateWithPriority, 5050, cuStreamCreateWithPriority) \
  R(cuStreamDestroy, 2000, cuStreamDestroy) \
  R(cuStreamDestroy, 4000, cuStreamDestroy_v2) \
  R(cuStreamSynchronize, 2000, cuStreamSynchronize) \
  P(cuStreamSynchronize, 7000, cuStreamSynchronize_ptsz) \
  R(cuStreamIsCapturing, 10000, cuStreamIsCapturing) \
  P(cuStreamIsCapturing, 10000, cuStreamIsCapturing_ptsz) \
  R(cuStreamGetCaptureInfo, 10010, cuStreamGetCaptureInfo) \
  P(cuStreamGetCaptureInfo, 10010, cuStreamGetCaptureInfo_ptsz) \
  R(cuStreamGetCaptureInfo, 11030, cuStreamGetCaptureInfo_v2) \
  P(cuStreamGetCaptureInfo, 11030, cuStreamGetCaptureInfo_v2_ptsz) \
  R(cuStreamGetCaptureInfo, 12030, cuStreamGetCaptureInfo_v3) \
  P(cuStreamGetCaptureInfo, 12030, cuStreamGetCaptureInfo_v3_ptsz) \
  R(cuStreamBeginCapture, 10000, cuStreamBeginCapture) \
  P(cuStreamBeginCapture, 10000, cuStreamBeginCapture_ptsz) \
  R(cuStreamBeginCapture, 10010, cuStreamBeginCapture_v2) \
  P(cuStreamBeginCapture, 10010, cuStreamBeginCapture_v2_ptsz) \
  R(cuStreamEndCapture, 10000, cuStreamEndCapture) \
  P(cuStreamEndCapture, 10000, cuStreamEndCapture_ptsz) \
  R(cuGraphCreate, 10000, cuGraphCreate) \
  R(cuGraphDestroy, 10000, cuGraphDestroy) \
  R(cuGraphAddEmptyNode, 10000, cuGraphAddEmptyNode) \
  R(cuGraphAddMemAllocNode, 11040, cuGraphAddMemAllocNode) \
  R(cuGraphAddMemFreeNode, 11040, cuGraphAddMemFreeNode) \
  R(cuGraphAddNode, 12020, cuGraphAddNode) \
  R(cuGraphAddNode, 12030, cuGraphAddNode_v2) \
  R(cuGraphGetNodes, 10000, cuGraphGetNodes) \
  R(cuGraphNodeGetType, 10000, cuGraphNodeGetType) \
  R(cuGraphMemAllocNodeGetParams, 11040, cuGraphMemAllocNodeGetParams) \
  R(cuGraphMemFreeNodeGetParams, 11040, cuGraphMemFreeNodeGetParams) \
  R(cuGraphInstantiate, 10000, cuGraphInstantiate) \
  R(cuGraphInstantiate, 11000, cuGraphInstantiate_v2) \
  R(cuGraphInstantiateWithFlags, 11040, cuGraphInstantiateWithFlags) \
  R(cuGraphInstantiateWithParams, 12000, cuGraphInstantiateWithParams) \
  P(cuGraphInstantiateWithParams, 12000, cuGraphInstantiateWithParams_ptsz) \
  R(cuGraphExecGetFlags, 12000, cuGraphExecGetFlags) \
  R(cuGraphUpload, 11010, cuGraphUpload) \
  P(cuGraphUpload, 11010, cuGraphUpload_ptsz) \
  R(cuGraphLaunch, 10000, cuGraphLaunch) \
  P(cuGraphLaunch, 10000, cuGraphLaunch_ptsz) \
  R(cuGraphExecDestroy, 10000, cuGraphExecDestroy) \
  R(cuDeviceGraphMemTrim, 11040, cuDeviceGraphMemTrim) \
  R(cuDeviceGetGraphMemAttribute, 11040, cuDeviceGetGraphMemAttribute) \
  R(cuDeviceSetGraphMemAttribute, 11040, cuDeviceSetGraphMemAttribute) \
  R(cuGetProcAddress, 11030, cuGetProcAddress) \
  R(cuGetProcAddress, 12000, cuGetProcAddress_v2)

#define ROW(name, ver, fn) \
  { #name, ver, false, #fn, (void *)hid_##fn, (void *)tramp_##fn },
#define ROW_PTSZ(name, ver, fn) \
  { #name, ver, true, #fn, (void *)hid_##fn, (void *)tramp_##fn },
#define CHECK(name, ver, fn) \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&hid_##fn), \
                                              PFN_##name##_v##ver), \
                 #fn " is PFN_" #name "_v" #ver);
#define CHECK_PTSZ(name, ver, fn) \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&hid_##fn), \
                                              PFN_##name##_v##ver##_ptsz), \
                 #fn " is PFN_" #name "_v" #ver "_ptsz");

PROC_ROWS(CHECK, CHECK_PTSZ)

static const struct proc_row table[] = {
  PROC_ROWS(ROW, ROW_PTSZ)
};

static CUresult
lookup(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
       CUdriverProcAddressQueryResult *symbolStatus, const char *via)
{
  sim_configure_once();
  if (symbol == NULL || pfn == NULL || cudaVersion > SIM_DRIVER_VERSION ||
      (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                             CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))) {
    if (sim_opt_trace)
      fprintf(stderr, "[cmgsim] %s(\"%s\", %d, %llu) -> invalid value\n", via,
              symbol ? symbol : "(null)", cudaVersion,
              (unsigned long long)flags);
    return CUDA_ERROR_INVALID_VALUE;
  }

  bool ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const struct proc_row *legacy = NULL, *perthread = NULL;
  bool known = false;
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
    const struct proc_row *r = &table[i];
    if (strcmp(r->name, symbol) != 0)
      continue;
    known = true;
    if (r->version > cudaVersion)
      continue;
    const struct proc_row **best = r->ptsz ? &perthread : &legacy;
    if (r->ptsz && !ptds)
      continue;
    if (*best == NULL || r->version > (*best)->version)
      *best = r;
  }
  /* Per-thread lookups fall back to the legacy variant when there is no
   * per-thread one, as cuda.h documents. */
  const struct proc_row *r = perthread ? perthread : legacy;

  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
  *pfn = NULL;
  if (r != NULL)
    *pfn = sim_opt_trampoline ? r->tramp : r->fn;
  else
    st = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
               : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (symbolStatus != NULL)
    *symbolStatus = st;
  if (sim_opt_trace)
    fprintf(stderr, "[cmgsim] %s(\"%s\", %d, %llu) -> %s%s\n", via, symbol,
            cudaVersion, (unsigned long long)flags,
            r ? (sim_opt_trampoline ? "trampoline of " : "") : "",
            r ? r->elf : (known ? "version not sufficient" : "not found"));
  return CUDA_SUCCESS;
}
