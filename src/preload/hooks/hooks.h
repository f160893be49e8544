/*
 * What the wrappers share: a declaration of every wrapper, exported, with
 * exactly NVIDIA's type for it, and the macros most of them are made of.
 * The core never sees CUDA; only preload/ and its hooks include cuda.h.
 */
#ifndef CMG_PRELOAD_HOOKS_HOOKS_H
#define CMG_PRELOAD_HOOKS_HOOKS_H

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "preload/account.h"
#include "preload/graph.h"
#include "preload/hooks/nvml_abi.h"
#include "preload/real.h"
#include "preload/start.h"

#define DRV(elf, base, version, suffix)                                        \
  extern __typeof__(*(cmg__pfn_##elf)0) elf                                    \
      __attribute__((visibility("default")));
#define DRVAS(elf, base, version, pfn)                                         \
  extern __typeof__(*(cmg__pfn_##elf)0) elf                                    \
      __attribute__((visibility("default")));
#include "preload/hooks/hooks.def"

extern __typeof__(cudaMallocAsync) cudaMallocAsync_ptsz;
extern __typeof__(cudaFreeAsync) cudaFreeAsync_ptsz;
extern __typeof__(cudaMallocFromPoolAsync) cudaMallocFromPoolAsync_ptsz;
extern __typeof__(cudaGraphUpload) cudaGraphUpload_ptsz;
extern __typeof__(cudaGraphLaunch) cudaGraphLaunch_ptsz;
/* cudaGetDriverEntryPoint is deprecated in CUDA 13; we still wrap it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
extern __typeof__(cudaGetDriverEntryPoint) cudaGetDriverEntryPoint_ptsz;
extern __typeof__(cudaGetDriverEntryPointByVersion)
    cudaGetDriverEntryPointByVersion_ptsz;

#define RT(name)                                                               \
  extern __typeof__(name) name __attribute__((visibility("default")));
#include "preload/hooks/hooks.def"
#pragma GCC diagnostic pop

/* Starts the library if it has not started (every wrapper begins here, so
 * nothing below needs to), and declares `real` as the real function behind
 * wrapper `elf`, or returns CUDA_ERROR_NOT_INITIALIZED (logged once) when
 * there is none. */
#define CMG__REAL_OR_FAIL(real, elf)                                           \
  cmg__init();                                                                 \
  cmg__pfn_##elf real = REAL(elf);                                             \
  if (real == NULL) {                                                          \
    cmg__missing(CMG__FN_##elf);                                               \
    return CUDA_ERROR_NOT_INITIALIZED;                                         \
  }

/* The runtime's twin, for a wrapper of a cudart function: without the real
 * one it fails as cudart fails when it cannot start.  The file using it
 * includes cuda_runtime_api.h. */
#define CMG__RT_REAL_OR_FAIL(real, name)                                       \
  cmg__init();                                                                 \
  __typeof__(name) *real = cmg__real(CMG__FN_##name);                          \
  if (real == NULL) {                                                          \
    cmg__missing(CMG__FN_##name);                                              \
    return cudaErrorInitializationError;                                       \
  }

/* The body of an allocation wrapper whose size is known up front; `key` is
 * read after a successful call. */
#define CMG__ALLOC_BODY(elf, kind, device, size, args, key)                    \
  struct cmg__call c;                                                          \
  CUresult rc = cmg__alloc_begin(&c, CMG__FN_##elf, kind, device, size);       \
  if (rc != CUDA_SUCCESS)                                                      \
    return rc;                                                                 \
  rc = real args;                                                              \
  return cmg__alloc_end(&c, rc, rc == CUDA_SUCCESS ? (uint64_t)(key) : 0);

#define CMG__ALLOC_HOOK(elf, params, kind, device, size, args, key)            \
  CUresult CUDAAPI CMG__ENTRY elf params                                       \
  {                                                                            \
    CMG__REAL_OR_FAIL(real, elf)                                               \
    CMG__ALLOC_BODY(elf, kind, device, size, args, key)                        \
  }

/* A stream-ordered allocation: on a capturing stream it is a graph node,
 * which takes memory only when its graph does. */
#define CMG__ASYNC_ALLOC_HOOK(elf, params, device, size, args, stream, ptsz)   \
  CUresult CUDAAPI CMG__ENTRY elf params                                       \
  {                                                                            \
    CMG__REAL_OR_FAIL(real, elf)                                               \
    if (cmg__graph_capturing(stream, ptsz))                                    \
      return real args;                                                        \
    CMG__ALLOC_BODY(elf, CMG__KIND_DEVICE, device, size, args, *dptr)          \
  }

/* A free wrapper of the entry (key, kind). */
#define CMG__FREE_HOOK(elf, params, kind, key, args)                           \
  CUresult CUDAAPI CMG__ENTRY elf params                                       \
  {                                                                            \
    CMG__REAL_OR_FAIL(real, elf)                                               \
    struct cmg__alloc a;                                                       \
    bool tracked = cmg__free_begin((uint64_t)(key), kind, &a);                 \
    return cmg__free_end(tracked, &a, real args, (uint64_t)(key));             \
  }

/* The body of a device-memory free, which may also free a graph's
 * allocation (its memory stays in the graph memory pool). */
#define CMG__DEVICE_FREE_BODY(key, args)                                       \
  struct cmg__alloc a;                                                         \
  bool tracked = cmg__free_begin((uint64_t)(key), CMG__KIND_DEVICE, &a);       \
  CUresult rc = real args;                                                     \
  if (!tracked && rc == CUDA_SUCCESS && cmg__graph_freed((uint64_t)(key)))     \
    return rc;                                                                 \
  return cmg__free_end(tracked, &a, rc, (uint64_t)(key));

/* A stream-ordered free: on a capturing stream it is a graph node, which
 * frees nothing now. */
#define CMG__ASYNC_FREE_HOOK(elf, params, key, args, stream, ptsz)             \
  CUresult CUDAAPI CMG__ENTRY elf params                                       \
  {                                                                            \
    CMG__REAL_OR_FAIL(real, elf)                                               \
    if (cmg__graph_capturing(stream, ptsz))                                    \
      return real args;                                                        \
    CMG__DEVICE_FREE_BODY(key, args)                                           \
  }

#endif /* CMG_PRELOAD_HOOKS_HOOKS_H */
