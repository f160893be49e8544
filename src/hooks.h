/*
 * What the files of the preload library share on top of internal.h: NVIDIA's
 * headers, a declaration of every wrapper, and the typed access to the real
 * functions.  Only init.c, resolve.c, api.c and the hooks_*.c files include
 * it; the core never sees CUDA.
 */
#ifndef CMG_HOOKS_H
#define CMG_HOOKS_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "internal.h"

/* cuda.h maps source names to ELF names (cuMemAlloc to cuMemAlloc_v2,
 * cuGetProcAddress to cuGetProcAddress_v2).  Here the base names are
 * cuGetProcAddress's keys and parts of NVIDIA's typedef names, and the
 * 4-argument cuGetProcAddress is ours to define: undo the mapping. */
#undef cuGetProcAddress
#undef cuMemAlloc
#undef cuMemFree
#undef cuMemAllocPitch
#undef cuMemGetInfo
#undef cuDeviceTotalMem

/* Each wrapper has exactly the type of NVIDIA's typedef for its variant.
 * Some variants (the 4-argument cuGetProcAddress, the _ptsz ones) are only
 * declared by cuda.h under internal macros, so declare them all from the
 * typedefs rather than by hand. */
#define DRV(elf, base, version, suffix)                                      \
  extern __typeof__(*(PFN_##base##_v##version##suffix)0) elf                 \
      __attribute__((visibility("default")));
#include "hooks.def"

extern __typeof__(cudaMallocAsync) cudaMallocAsync_ptsz;
extern __typeof__(cudaFreeAsync) cudaFreeAsync_ptsz;

#define RT(name)                                                             \
  extern __typeof__(name) name __attribute__((visibility("default")));
#include "hooks.def"

/* The real function behind wrapper `elf`, with its exact type. */
#define REAL_DRV(elf, base, version, suffix)                                 \
  ((PFN_##base##_v##version##suffix)cmg__real(CMG__FN_##elf))

/* Logs once per function that the real one is missing. */
void cmg__missing(enum cmg__fn fn);

/* The device of the calling thread's current context; -1 without one. */
int cmg__current_device(void);

/* Sets up `device` (physical size, limit, identity) the first time it is
 * seen. */
void cmg__device_setup(int device);

/* dump.c: the exit report and the dump signal's thread (once per process,
 * and the thread again in a forked child). */
void cmg__dump_setup(void);
void cmg__dump_start_thread(void);

#endif /* CMG_HOOKS_H */
