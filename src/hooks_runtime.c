/*
 * The runtime's memory entry points, reached only by programs that link the
 * shared libcudart (PyTorch does; nvcc's default static runtime and every
 * library embedding one never come here).  They count nothing: the driver
 * wrapper under them does.  They only tell it which API the program called,
 * so a report says cudaMalloc rather than cuMemAlloc_v2.
 *
 * The label is thread-local and the outermost runtime call keeps it.
 */
#include "config.h"

#include "hooks.h"

static inline uint16_t
label_push(enum cmg__fn fn)
{
  uint16_t saved = cmg__self.label;
  if (saved == 0)
    cmg__self.label = (uint16_t)fn;
  return saved;
}

#define LABEL_HOOK(name, params, args)                                       \
  cudaError_t CUDARTAPI name params                                          \
  {                                                                          \
    __typeof__(name) *real = cmg__real(CMG__FN_##name);                      \
    if (real == NULL) {                                                      \
      cmg__missing(CMG__FN_##name);                                          \
      return cudaErrorInitializationError;                                   \
    }                                                                        \
    uint16_t saved = label_push(CMG__FN_##name);                             \
    cudaError_t rc = real args;                                              \
    cmg__self.label = saved;                                                 \
    return rc;                                                               \
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
LABEL_HOOK(cudaMemGetInfo, (size_t *free, size_t *total), (free, total))
