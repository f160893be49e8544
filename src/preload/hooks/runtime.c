/*
 * The runtime's memory entry points, reached only by programs that link the
 * shared libcudart (PyTorch does; nvcc's default static runtime and every
 * library embedding one never come here).  They count nothing: the driver
 * wrapper under them does.  They only tell it which API the program called,
 * so a report says cudaMalloc rather than cuMemAlloc_v2.
 *
 * The label is thread-local and the outermost runtime call keeps it.
 *
 * cudaGetDriverEntryPoint and its kin, which hand out driver functions, are
 * resolvers (resolvers.c).
 */
#include "config.h"

#include "preload/hooks/hooks.h"
#include "preload/state.h"

static inline uint16_t
label_push(enum cmg__fn fn)
{
  uint16_t saved = cmg__self.label;
  if (saved == 0)
    cmg__self.label = (uint16_t)fn;
  return saved;
}

#define LABEL_HOOK(name, params, args)                                         \
  cudaError_t CUDARTAPI CMG__HOT name params                                   \
  {                                                                            \
    CMG__RT_REAL_OR_FAIL(real, name)                                           \
    uint16_t saved = label_push(CMG__FN_##name);                               \
    cudaError_t rc = real args;                                                \
    cmg__self.label = saved;                                                   \
    return rc;                                                                 \
  }

LABEL_HOOK(cudaMalloc, (void **devPtr, size_t size), (devPtr, size))
LABEL_HOOK(cudaFree, (void *devPtr), (devPtr))
LABEL_HOOK(cudaMallocPitch,
           (void **devPtr, size_t *pitch, size_t width, size_t height),
           (devPtr, pitch, width, height))
LABEL_HOOK(cudaMallocManaged, (void **devPtr, size_t size, unsigned int flags),
           (devPtr, size, flags))
LABEL_HOOK(cudaMallocAsync, (void **devPtr, size_t size, cudaStream_t stream),
           (devPtr, size, stream))
LABEL_HOOK(cudaMallocAsync_ptsz,
           (void **devPtr, size_t size, cudaStream_t stream),
           (devPtr, size, stream))
LABEL_HOOK(cudaFreeAsync, (void *devPtr, cudaStream_t stream), (devPtr, stream))
LABEL_HOOK(cudaFreeAsync_ptsz, (void *devPtr, cudaStream_t stream),
           (devPtr, stream))
LABEL_HOOK(cudaMemGetInfo, (size_t * free, size_t *total), (free, total))
LABEL_HOOK(cudaMalloc3D,
           (struct cudaPitchedPtr * pitchedDevPtr, struct cudaExtent extent),
           (pitchedDevPtr, extent))
LABEL_HOOK(cudaMallocFromPoolAsync,
           (void **ptr, size_t size, cudaMemPool_t memPool,
            cudaStream_t stream),
           (ptr, size, memPool, stream))
LABEL_HOOK(cudaMallocFromPoolAsync_ptsz,
           (void **ptr, size_t size, cudaMemPool_t memPool,
            cudaStream_t stream),
           (ptr, size, memPool, stream))
LABEL_HOOK(cudaMallocArray,
           (cudaArray_t * array, const struct cudaChannelFormatDesc *desc,
            size_t width, size_t height, unsigned int flags),
           (array, desc, width, height, flags))
LABEL_HOOK(cudaMalloc3DArray,
           (cudaArray_t * array, const struct cudaChannelFormatDesc *desc,
            struct cudaExtent extent, unsigned int flags),
           (array, desc, extent, flags))
LABEL_HOOK(cudaMallocMipmappedArray,
           (cudaMipmappedArray_t * mipmappedArray,
            const struct cudaChannelFormatDesc *desc, struct cudaExtent extent,
            unsigned int numLevels, unsigned int flags),
           (mipmappedArray, desc, extent, numLevels, flags))
LABEL_HOOK(cudaFreeArray, (cudaArray_t array), (array))
LABEL_HOOK(cudaFreeMipmappedArray, (cudaMipmappedArray_t mipmappedArray),
           (mipmappedArray))
LABEL_HOOK(cudaMallocHost, (void **ptr, size_t size), (ptr, size))
LABEL_HOOK(cudaHostAlloc, (void **pHost, size_t size, unsigned int flags),
           (pHost, size, flags))
LABEL_HOOK(cudaFreeHost, (void *ptr), (ptr))
LABEL_HOOK(cudaIpcOpenMemHandle,
           (void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags),
           (devPtr, handle, flags))
LABEL_HOOK(cudaDeviceReset, (void), ())
LABEL_HOOK(cudaGraphUpload, (cudaGraphExec_t graphExec, cudaStream_t stream),
           (graphExec, stream))
LABEL_HOOK(cudaGraphUpload_ptsz,
           (cudaGraphExec_t graphExec, cudaStream_t stream),
           (graphExec, stream))
LABEL_HOOK(cudaGraphLaunch, (cudaGraphExec_t graphExec, cudaStream_t stream),
           (graphExec, stream))
LABEL_HOOK(cudaGraphLaunch_ptsz,
           (cudaGraphExec_t graphExec, cudaStream_t stream),
           (graphExec, stream))
