/*
 * Handing out wrappers wherever a program looks a driver function up.
 *
 * A program reaches the driver in three ways, and each needs its own catch:
 * a direct link binds to our exported ELF names; dlopen + dlsym of a
 * versioned name (TensorFlow, XLA) goes through our dlsym override; NVIDIA's
 * runtime, static or shared, and every library embedding it, calls dlsym
 * only for "cuGetProcAddress_v2" and then asks that function for everything
 * by base name and version, including for "cuGetProcAddress" itself; the
 * runtime's cudaGetDriverEntryPoint hands driver functions out too.
 *
 * Each answer is the driver's, with the wrapper of the variant asked for
 * swapped in and the driver's pointer kept as that variant's real function
 * (preload/real.c).  The variant is decided from the name, version and
 * flags of the request, never by comparing the returned pointer with an
 * export: a real driver need not return its exported addresses.
 *
 * This file knows every wrapper's address; no wrapper calls into it.
 */
#include "config.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <string.h>

#include "core/base.h"
#include "runtime/linker/dynlink.h"
#include "preload/hooks/hooks.h"
#include "preload/real.h"

struct variant {
  const char *base;
  int version;
  bool ptsz;
  int fn; /* enum cmg__fn, or -1 for a variant we do not wrap */
};

static const struct variant variants[] = {
#define DRV(elf, base, version, suffix)                                        \
  { #base, version, sizeof(#suffix) > 1, CMG__FN_##elf },
#define DRVAS(elf, base, version, pfn) { #base, version, false, CMG__FN_##elf },
#define OLD(base, version) { #base, version, false, -1 },
#include "preload/hooks/hooks.def"
};

/* Our wrapper of each entry point (NULL for those we only call), and the
 * library a dlsym answer for it must come from to be swapped. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static const struct {
  const char *name;
  const char *lib;
  void *hook;
} hooks[CMG__FN_COUNT] = {
#define DRV(elf, base, version, suffix)                                        \
  [CMG__FN_##elf] = { #elf, "libcuda.so", (void *)&elf },
#define DRVAS(elf, base, version, pfn)                                         \
  [CMG__FN_##elf] = { #elf, "libcuda.so", (void *)&elf },
#define RT(name) [CMG__FN_##name] = { #name, NULL, (void *)&name },
#define NVML(name)                                                             \
  [CMG__FN_##name] = { #name, "libnvidia-ml.so", (void *)&name },
#include "preload/hooks/hooks.def"
};
#pragma GCC diagnostic pop

/* The variant cuGetProcAddress returns for (symbol, version, flags): the
 * newest introduced at or before `version`, per-thread-stream if asked and
 * one exists at that version. */
static const struct variant *
choose(const char *symbol, int version, bool ptsz)
{
  const struct variant *best = NULL;
  for (size_t i = 0; i < sizeof(variants) / sizeof(*variants); i++) {
    const struct variant *v = &variants[i];
    if (v->version > version || strcmp(v->base, symbol) != 0)
      continue;
    if (v->ptsz && !ptsz)
      continue;
    if (best == NULL || v->version > best->version ||
        (v->version == best->version && v->ptsz))
      best = v;
  }
  return best;
}

static void *
resolve_proc(const char *symbol, int version, unsigned long long flags, void *p)
{
  if (p == NULL || symbol == NULL)
    return p;
  bool ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const struct variant *v = choose(symbol, version, ptsz);
  if (v == NULL || v->fn < 0)
    return p;
  cmg__real_set(v->fn, p);
  return hooks[v->fn].hook;
}

/* ---- cuGetProcAddress ------------------------------------------------- */

/* Ask the driver, then swap in the wrapper of the variant asked for.  The
 * runtime also asks for "cuGetProcAddress" and uses what it gets for every
 * later lookup, which lands here again. */
CUresult CUDAAPI
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                    cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
  CMG__REAL_OR_FAIL(real, cuGetProcAddress_v2)
  CUresult rc = real(symbol, pfn, cudaVersion, flags, status);
  if (rc == CUDA_SUCCESS && pfn != NULL)
    *pfn = resolve_proc(symbol, cudaVersion, flags, *pfn);
  return rc;
}

CUresult CUDAAPI
cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                 cuuint64_t flags)
{
  CMG__REAL_OR_FAIL(real, cuGetProcAddress)
  CUresult rc = real(symbol, pfn, cudaVersion, flags);
  if (rc == CUDA_SUCCESS && pfn != NULL)
    *pfn = resolve_proc(symbol, cudaVersion, flags, *pfn);
  return rc;
}

/* ---- cudaGetDriverEntryPoint ------------------------------------------ */

/* cudaGetDriverEntryPoint and its kin get the same treatment as
 * cuGetProcAddress, a wrapper for each variant we wrap, even when the
 * runtime did not reach the driver through ours. */

/* The unversioned forms answer for the runtime's own version. */
static int
runtime_version(void)
{
  cudaError_t (*get)(int *) = cmg__real(CMG__FN_cudaRuntimeGetVersion);
  int v = 0;
  if (get == NULL || get(&v) != cudaSuccess || v <= 0)
    v = CUDART_VERSION;
  return v;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* The _ptsz forms are what a per-thread-default-stream build calls: there
 * cudaEnableDefault means the per-thread variants. */
static unsigned long long
stream_flags(unsigned long long flags, bool ptsz)
{
  return ptsz && flags == cudaEnableDefault ? cudaEnablePerThreadDefaultStream
                                            : flags;
}

#define ENTRY_HOOK(name, ptsz)                                                 \
  cudaError_t CUDARTAPI name(const char *symbol, void **funcPtr,               \
                             unsigned long long flags,                         \
                             enum cudaDriverEntryPointQueryResult *status)     \
  {                                                                            \
    CMG__RT_REAL_OR_FAIL(real, name)                                           \
    cudaError_t rc = real(symbol, funcPtr, flags, status);                     \
    if (rc == cudaSuccess && funcPtr != NULL)                                  \
      *funcPtr = resolve_proc(symbol, runtime_version(),                       \
                              stream_flags(flags, ptsz), *funcPtr);            \
    return rc;                                                                 \
  }

#define ENTRY_BY_VERSION_HOOK(name, ptsz)                                      \
  cudaError_t CUDARTAPI name(                                                  \
      const char *symbol, void **funcPtr, unsigned int cudaVersion,            \
      unsigned long long flags, enum cudaDriverEntryPointQueryResult *status)  \
  {                                                                            \
    CMG__RT_REAL_OR_FAIL(real, name)                                           \
    cudaError_t rc = real(symbol, funcPtr, cudaVersion, flags, status);        \
    if (rc == cudaSuccess && funcPtr != NULL)                                  \
      *funcPtr = resolve_proc(symbol, (int)cudaVersion,                        \
                              stream_flags(flags, ptsz), *funcPtr);            \
    return rc;                                                                 \
  }

ENTRY_HOOK(cudaGetDriverEntryPoint, false)
ENTRY_HOOK(cudaGetDriverEntryPoint_ptsz, true)
ENTRY_BY_VERSION_HOOK(cudaGetDriverEntryPointByVersion, false)
ENTRY_BY_VERSION_HOOK(cudaGetDriverEntryPointByVersion_ptsz, true)

#pragma GCC diagnostic pop

/* ---- the dlsym override ------------------------------------------------ */

/* A thread-local variable's address comes only from glibc, through a
 * handle; never asked for while a sanitizer starts. */
static void *
object_tls(const struct link_map *l, const char *name)
{
  void *h = dlopen(l->l_name, RTLD_LAZY | RTLD_NOLOAD);
  if (h == NULL)
    return NULL;
  void *p = cmg__dynlink_dlsym(h, name);
  dlclose(h);
  return p;
}

/* The vDSO is on the list of objects but not in the scope RTLD_NEXT
 * searches. */
CMG__NO_ASAN static bool
is_vdso(const struct link_map *l)
{
  return cmg__has_prefix(l->l_name, "linux-vdso") ||
         cmg__has_prefix(l->l_name, "linux-gate");
}

/* RTLD_NEXT means "after the object that called dlsym".  Forwarding it to
 * the real dlsym from here would search after libcumemguard instead (glibc
 * looks at the return address), so search on the caller's behalf: the first
 * object after the caller's that defines the name (dynlink.c says why not
 * through dlopen). */
CMG__NO_ASAN static void *
next_symbol(const char *name, const void *caller)
{
  struct link_map *self = cmg__object_of(caller);
  struct link_map *l = self ? self->l_next : _r_debug.r_map;
  for (; l != NULL; l = l->l_next) {
    if (l->l_name == NULL || l->l_name[0] == '\0' || is_vdso(l))
      continue;
    bool tls;
    void *p = cmg__dynlink_object_symbol(l, name, &tls);
    if (p == NULL && tls)
      p = object_tls(l, name);
    if (p != NULL)
      return p;
  }
  return NULL;
}

/* Whether p lies in the library `soname` names (any version suffix). */
static bool
is_in(const void *p, const char *soname)
{
  Dl_info info;
  if (!dladdr(p, &info) || info.dli_fname == NULL)
    return false;
  const char *base = strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  return strncmp(base, soname, strlen(soname)) == 0;
}

/* A wrapped driver or NVML name found in its library is answered with the
 * wrapper; anything else, including a name the library lacks, is left as
 * found. */
static void *
wrap_symbol(const char *name, void *p)
{
  for (size_t i = 0; i < sizeof(hooks) / sizeof(*hooks); i++) {
    if (hooks[i].hook == NULL || hooks[i].lib == NULL ||
        strcmp(hooks[i].name, name) != 0)
      continue;
    if (p == hooks[i].hook || !is_in(p, hooks[i].lib))
      return p;
    cmg__real_set((enum cmg__fn)i, p);
    return hooks[i].hook;
  }
  return p;
}

CMG__NO_ASAN CMG__EXPORT void *
dlsym(void *restrict handle, const char *restrict name)
{
  const void *caller = __builtin_return_address(0);
  void *p = handle == RTLD_NEXT ? next_symbol(name, caller)
                                : cmg__dynlink_dlsym(handle, name);
  if (p != NULL &&
      (cmg__has_prefix(name, "cu") || cmg__has_prefix(name, "nvml")))
    p = wrap_symbol(name, p);
  return p;
}
