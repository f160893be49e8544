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
#include "nvml_abi.h"

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
#undef cuMemAllocHost
#undef cuArrayCreate
#undef cuArray3DCreate
#undef cuCtxCreate
#undef cuCtxDestroy
#undef cuDevicePrimaryCtxRelease
#undef cuDevicePrimaryCtxReset
#undef cuDeviceGetUuid
#undef cuIpcOpenMemHandle

/* Each wrapper has exactly the type of NVIDIA's typedef for its variant,
 * named cmg__pfn_<elf> here.  Some variants (the 4-argument
 * cuGetProcAddress, the _ptsz ones) are only declared by cuda.h under
 * internal macros, so all are declared from the typedefs, never by hand. */
#define DRV(elf, base, version, suffix)                                      \
  typedef PFN_##base##_v##version##suffix cmg__pfn_##elf;
#define DRVAS(elf, base, version, pfn) typedef pfn cmg__pfn_##elf;
#define AUX(name, base, version) typedef PFN_##base##_v##version cmg__pfn_##name;
#include "hooks.def"

#define DRV(elf, base, version, suffix)                                      \
  extern __typeof__(*(cmg__pfn_##elf)0) elf                                  \
      __attribute__((visibility("default")));
#define DRVAS(elf, base, version, pfn)                                       \
  extern __typeof__(*(cmg__pfn_##elf)0) elf                                  \
      __attribute__((visibility("default")));
#include "hooks.def"

extern __typeof__(cudaMallocAsync) cudaMallocAsync_ptsz;
extern __typeof__(cudaFreeAsync) cudaFreeAsync_ptsz;
extern __typeof__(cudaMallocFromPoolAsync) cudaMallocFromPoolAsync_ptsz;
/* cudaGetDriverEntryPoint is deprecated in CUDA 13; we still wrap it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
extern __typeof__(cudaGetDriverEntryPoint) cudaGetDriverEntryPoint_ptsz;
extern __typeof__(cudaGetDriverEntryPointByVersion)
    cudaGetDriverEntryPointByVersion_ptsz;

#define RT(name)                                                             \
  extern __typeof__(name) name __attribute__((visibility("default")));
#include "hooks.def"
#pragma GCC diagnostic pop

/* The real function behind `elf` (a wrapper or an AUX entry), typed. */
#define REAL(elf) ((cmg__pfn_##elf)cmg__real(CMG__FN_##elf))

/* Logs once per function that the real one is missing. */
void cmg__missing(enum cmg__fn fn);

/* The device of the calling thread's current context; -1 without one. */
int cmg__current_device(void);

/* The device of the calling thread's current context, or -1 without one,
 * and that context's id in *id (0 without one): a small number the ledger
 * keeps per allocation (hooks_context.c). */
int cmg__context_device(uint16_t *id);

/* Sets up `device` (physical size, limits, identity) the first time it is
 * seen. */
void cmg__device_setup(int device);

/* The device's UUID as "GPU-xxxxxxxx-...", or "" and -ENOENT. */
int cmg__device_uuid(int device, char *out, size_t len);

/* Lowers *free and *total to what the device's limit leaves. */
void cmg__virtual_meminfo(int device, uint64_t *free, uint64_t *total);

/* dump.c: the exit report and the dump thread (once per process, and the
 * thread again in a forked child); a snapshot report from the dump thread. */
void cmg__dump_setup(void);
void cmg__dump_start_thread(void);
void cmg__dump_request(enum cmg__reason reason);

/* ---- the allocation and free machinery (hooks_driver.c) --------------- */

#define CMG__CURRENT (-1)  /* the device of the current context */

struct cmg__call {
  int device;
  uint8_t fn;
  uint8_t kind;
  bool tracked;
  uint16_t ctx;
  uint32_t stack;
  struct cmg__reservation r;
};

/* Before a real allocation of `bytes` of `kind` on `device` (or
 * CMG__CURRENT): CUDA_SUCCESS to go ahead, or the error to return. */
CUresult cmg__alloc_begin(struct cmg__call *c, enum cmg__fn fn, unsigned kind,
                          int device, uint64_t bytes);

/* After it: records the allocation under `key` (its address or handle) or
 * gives the reservation back; returns rc. */
CUresult cmg__alloc_end(struct cmg__call *c, CUresult rc, uint64_t key);

/* Before a real free: takes (key, kind) out of the ledger into *a. */
bool cmg__free_begin(uint64_t key, unsigned kind, struct cmg__alloc *a);

/* After it: counts the free, or puts the entry back if it failed. */
CUresult cmg__free_end(bool tracked, const struct cmg__alloc *a, CUresult rc,
                       uint64_t key);

/* Counts an entry that left the ledger as freed or released. */
void cmg__uncount(const struct cmg__alloc *a, bool released);

/* Declares `real` as the real function behind wrapper `elf`, or returns
 * CUDA_ERROR_NOT_INITIALIZED (logged once) when there is none. */
#define CMG__REAL_OR_FAIL(real, elf)                                         \
  cmg__pfn_##elf real = REAL(elf);                                           \
  if (real == NULL) {                                                        \
    cmg__missing(CMG__FN_##elf);                                             \
    return CUDA_ERROR_NOT_INITIALIZED;                                       \
  }

/* An allocation wrapper whose size is known up front; `key` is read after
 * a successful call. */
#define CMG__ALLOC_HOOK(elf, params, kind, device, size, args, key)          \
  CUresult CUDAAPI CMG__ENTRY elf params                                     \
  {                                                                          \
    CMG__REAL_OR_FAIL(real, elf)                                             \
    struct cmg__call c;                                                      \
    CUresult rc = cmg__alloc_begin(&c, CMG__FN_##elf, kind, device, size);   \
    if (rc != CUDA_SUCCESS)                                                  \
      return rc;                                                             \
    rc = real args;                                                          \
    return cmg__alloc_end(&c, rc, rc == CUDA_SUCCESS ? (uint64_t)(key) : 0); \
  }

/* A free wrapper of the entry (key, kind). */
#define CMG__FREE_HOOK(elf, params, kind, key, args)                         \
  CUresult CUDAAPI CMG__ENTRY elf params                                     \
  {                                                                          \
    CMG__REAL_OR_FAIL(real, elf)                                             \
    struct cmg__alloc a;                                                     \
    bool tracked = cmg__free_begin((uint64_t)(key), kind, &a);               \
    return cmg__free_end(tracked, &a, real args, (uint64_t)(key));           \
  }

#endif /* CMG_HOOKS_H */
