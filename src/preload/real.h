/*
 * The real functions behind the wrappers, typed: one slot per entry point of
 * hooks.def, filled by the resolvers (preload/hooks/resolvers.c) with what
 * the driver handed out, or looked up in libcuda, libnvidia-ml or the next
 * object on first use (real.c).
 */
#ifndef CMG_PRELOAD_REAL_H
#define CMG_PRELOAD_REAL_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "core/base.h"
#include "preload/fn.h"

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

/* Each driver entry point has exactly the type of NVIDIA's typedef for its
 * variant, named cmg__pfn_<elf> here.  Some variants (the 4-argument
 * cuGetProcAddress, the _ptsz ones) are only declared by cuda.h under
 * internal macros, so all are declared from the typedefs, never by hand. */
#define DRV(elf, base, version, suffix)                                        \
  typedef PFN_##base##_v##version##suffix cmg__pfn_##elf;
#define DRVAS(elf, base, version, pfn) typedef pfn cmg__pfn_##elf;
#define AUX(name, base, version)                                               \
  typedef PFN_##base##_v##version cmg__pfn_##name;
#include "preload/hooks/hooks.def"

/* The real function for fn, resolved once; NULL when it does not exist. */
extern _Atomic(void *) cmg__reals[CMG__FN_COUNT];
void *cmg__real_lookup(enum cmg__fn fn);

static inline void *
cmg__real(enum cmg__fn fn)
{
  void *p = atomic_load_explicit(&cmg__reals[fn], memory_order_acquire);
  return cmg__likely(p != NULL) ? p : cmg__real_lookup(fn);
}

/* The real driver function behind `elf` (a wrapper or an AUX entry),
 * typed. */
#define REAL(elf) ((cmg__pfn_##elf)cmg__real(CMG__FN_##elf))

/* Records p as the real function of fn (what the driver handed out for
 * it), unless p is one of our own wrappers: a driver linked without
 * -Bsymbolic can hand back our export, and storing it would make the
 * wrapper call itself. */
void cmg__real_set(enum cmg__fn fn, void *p);

/* The loaded object holding addr, or NULL. */
struct link_map;
struct link_map *cmg__object_of(const void *addr);

/* Whether p lies in libcumemguard itself. */
bool cmg__is_ours(const void *p);

/* The C library's sigaction, never the library's own (hooks/signal.c),
 * which answers the program from its own view of the actions. */
struct sigaction;
int cmg__real_sigaction(int sig, const struct sigaction *act,
                        struct sigaction *old);

/* Logs once per function that the real one is missing. */
void cmg__missing(enum cmg__fn fn);

#endif /* CMG_PRELOAD_REAL_H */
