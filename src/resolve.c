/*
 * Finding the real functions, and handing out wrappers wherever a program
 * looks a driver function up.
 *
 * A program reaches the driver in three ways, and each needs its own catch:
 * a direct link binds to our exported ELF names; dlopen + dlsym of a
 * versioned name (TensorFlow, XLA) goes through our dlsym override; NVIDIA's
 * runtime, static or shared, and every library embedding it, calls dlsym
 * only for "cuGetProcAddress_v2" and then asks that function for everything
 * by base name and version, including for "cuGetProcAddress" itself.
 *
 * One slot per wrapped variant holds the real function: the pointer the
 * driver last handed out for that variant (through dlsym or
 * cuGetProcAddress), or, for a program linked directly, the driver's export.
 * The variant is decided from the name, version and flags of the request,
 * never by comparing the returned pointer with an export: a real driver need
 * not return its exported addresses.
 *
 * Slots are atomics written with the same value by racing threads; readers
 * take no lock.  Nothing here may call the dlsym override: every internal
 * lookup uses the real dlsym.
 */
#include "config.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include "hooks.h"

struct variant {
  const char *base;
  int version;
  bool ptsz;
  int fn;  /* enum cmg__fn, or -1 for a variant we do not wrap */
};

static const struct variant variants[] = {
#define DRV(elf, base, version, suffix)                                      \
  { #base, version, sizeof(#suffix) > 1, CMG__FN_##elf },
#define DRVAS(elf, base, version, pfn) { #base, version, false, CMG__FN_##elf },
#define OLD(base, version) { #base, version, false, -1 },
#include "hooks.def"
};

enum layer { NONE, DRIVER, RUNTIME, NVML_LIB };

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static const struct {
  const char *name;
  enum layer layer;
  void *hook;
} fns[CMG__FN_COUNT] = {
  [CMG__FN_NONE] = { "unknown", NONE, NULL },
#define DRV(elf, base, version, suffix)                                      \
  [CMG__FN_##elf] = { #elf, DRIVER, (void *)&elf },
#define DRVAS(elf, base, version, pfn)                                       \
  [CMG__FN_##elf] = { #elf, DRIVER, (void *)&elf },
#define RT(name) [CMG__FN_##name] = { #name, RUNTIME, (void *)&name },
#define AUX(name, base, version) [CMG__FN_##name] = { #name, DRIVER, NULL },
#define RTAUX(name) [CMG__FN_##name] = { #name, RUNTIME, NULL },
#define NVML(name) [CMG__FN_##name] = { #name, NVML_LIB, (void *)&name },
#define NVMLAUX(name) [CMG__FN_##name] = { #name, NVML_LIB, NULL },
#include "hooks.def"
};
#pragma GCC diagnostic pop

_Atomic(void *) cmg__reals[CMG__FN_COUNT];
static _Atomic bool missing_told[CMG__FN_COUNT];
static _Atomic(void *) libcuda_handle;
static _Atomic(void *) libnvml_handle;

typedef void *(*dlsym_fn)(void *, const char *);
static _Atomic(dlsym_fn) real_dlsym;

/* Binding to a versioned dlvsym of libc finds the real dlsym whatever
 * version a program's own references were bound to. */
CMG__NO_ASAN static dlsym_fn
get_real_dlsym(void)
{
  dlsym_fn f = atomic_load_explicit(&real_dlsym, memory_order_acquire);
  if (cmg__likely(f != NULL))
    return f;
  static const char *const versions[] = { "GLIBC_2.34", "GLIBC_2.2.5",
                                          "GLIBC_2.17" };
  for (size_t i = 0; f == NULL && i < sizeof(versions) / sizeof(*versions); i++)
    f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
  if (f != NULL)
    atomic_store_explicit(&real_dlsym, f, memory_order_release);
  return f;
}

CMG__NO_ASAN void *
cmg__real_dlsym(void *handle, const char *name)
{
  dlsym_fn f = get_real_dlsym();
  return f ? f(handle, name) : NULL;
}

/* A loaded library, pinned: we keep pointers into it, so it must not be
 * unloaded under them.  NULL while it is not loaded. */
static void *
pinned(_Atomic(void *) *slot, const char *soname, const char *devname)
{
  void *h = atomic_load_explicit(slot, memory_order_acquire);
  if (h != NULL)
    return h;
  h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
  if (h == NULL)
    h = dlopen(devname, RTLD_LAZY | RTLD_NOLOAD);
  if (h == NULL)
    return NULL;
  void *expected = NULL;
  if (!atomic_compare_exchange_strong(slot, &expected, h)) {
    dlclose(h);
    h = expected;
  }
  return h;
}

static void *
libcuda(void)
{
  return pinned(&libcuda_handle, "libcuda.so.1", "libcuda.so");
}

static void *
libnvml(void)
{
  return pinned(&libnvml_handle, "libnvidia-ml.so.1", "libnvidia-ml.so");
}

static bool
is_ours(const void *p)
{
  for (int i = 0; i < CMG__FN_COUNT; i++)
    if (fns[i].hook == p)
      return true;
  return false;
}

/* Stores the real function of `fn`, unless it is one of our own wrappers (a
 * driver linked without -Bsymbolic can hand back our export, and storing it
 * would make the wrapper call itself). */
static void
set_real(enum cmg__fn fn, void *p)
{
  if (p == NULL || is_ours(p))
    return;
  if (fns[fn].layer == NVML_LIB)
    libnvml();
  else
    libcuda();
  atomic_store_explicit(&cmg__reals[fn], p, memory_order_release);
}

/* The runtime may be loaded RTLD_LOCAL (Python extension modules are),
 * where RTLD_NEXT does not see it; then look in each loaded libcudart. */
static int
find_in_cudart(struct dl_phdr_info *info, size_t size, void *arg)
{
  void **io = arg;
  const char *base = strrchr(info->dlpi_name, '/');
  base = base ? base + 1 : info->dlpi_name;
  if (strncmp(base, "libcudart.so", 12) != 0)
    return 0;
  void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (h == NULL)
    return 0;
  void *p = cmg__real_dlsym(h, io[0]);
  if (p != NULL && !is_ours(p)) {
    io[1] = p;
    return 1;  /* keep the reference: the pointer must stay valid */
  }
  dlclose(h);
  return 0;
}

static void *
lookup(enum cmg__fn fn)
{
  if (fns[fn].layer == DRIVER || fns[fn].layer == NVML_LIB) {
    void *h = fns[fn].layer == DRIVER ? libcuda() : libnvml();
    return h ? cmg__real_dlsym(h, fns[fn].name) : NULL;
  }
  if (fns[fn].layer == NONE)
    return NULL;
  void *p = cmg__real_dlsym(RTLD_NEXT, fns[fn].name);
  if (p == NULL || is_ours(p)) {
    void *io[2] = { (void *)fns[fn].name, NULL };
    dl_iterate_phdr(find_in_cudart, io);
    p = io[1];
  }
  return p;
}

void *
cmg__real_lookup(enum cmg__fn fn)
{
  void *p = lookup(fn);
  if (p == NULL || is_ours(p))
    return NULL;
  atomic_store_explicit(&cmg__reals[fn], p, memory_order_release);
  return p;
}

void *
cmg__hook_address(enum cmg__fn fn)
{
  return fns[fn].hook;
}

const char *
cmg__fn_name(enum cmg__fn fn)
{
  return (unsigned)fn < CMG__FN_COUNT ? fns[fn].name : "unknown";
}

void CMG__COLD
cmg__missing(enum cmg__fn fn)
{
  if (!atomic_exchange(&missing_told[fn], true))
    cmg__log("cannot find the real %s; is the CUDA driver installed?",
             fns[fn].name);
}

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

void *
cmg__resolve_proc(const char *symbol, int version, unsigned long long flags,
                  void *p)
{
  if (p == NULL || symbol == NULL)
    return p;
  bool ptsz = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const struct variant *v = choose(symbol, version, ptsz);
  if (v == NULL || v->fn < 0)
    return p;
  set_real(v->fn, p);
  return fns[v->fn].hook;
}

/* ---- the dlsym override ------------------------------------------------ */

CMG__NO_ASAN static struct link_map *
object_of(const void *addr)
{
  Dl_info info;
  struct link_map *map = NULL;
  if (!dladdr1(addr, &info, (void **)&map, RTLD_DL_LINKMAP))
    return NULL;
  return map;
}

/* A thread-local variable's address comes only from glibc, through a
 * handle; never asked for while a sanitizer starts. */
static void *
object_tls(const struct link_map *l, const char *name)
{
  void *h = dlopen(l->l_name, RTLD_LAZY | RTLD_NOLOAD);
  if (h == NULL)
    return NULL;
  void *p = cmg__real_dlsym(h, name);
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
 * object after the caller's that defines the name (elfsym.c says why not
 * through dlopen). */
CMG__NO_ASAN static void *
next_symbol(const char *name, const void *caller)
{
  struct link_map *self = object_of(caller);
  struct link_map *l = self ? self->l_next : _r_debug.r_map;
  for (; l != NULL; l = l->l_next) {
    if (l->l_name == NULL || l->l_name[0] == '\0' || is_vdso(l))
      continue;
    bool tls;
    void *p = cmg__object_symbol(l, name, &tls);
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
  for (int i = 0; i < CMG__FN_COUNT; i++) {
    if ((fns[i].layer != DRIVER && fns[i].layer != NVML_LIB) ||
        fns[i].hook == NULL || strcmp(fns[i].name, name) != 0)
      continue;
    const char *lib = fns[i].layer == DRIVER ? "libcuda.so" : "libnvidia-ml.so";
    if (p == fns[i].hook || !is_in(p, lib))
      return p;
    set_real(i, p);
    return fns[i].hook;
  }
  return p;
}

CMG__NO_ASAN CMG__EXPORT void *
dlsym(void *restrict handle, const char *restrict name)
{
  const void *caller = __builtin_return_address(0);
  void *p = handle == RTLD_NEXT ? next_symbol(name, caller)
                                : cmg__real_dlsym(handle, name);
  if (p != NULL &&
      (cmg__has_prefix(name, "cu") || cmg__has_prefix(name, "nvml")))
    p = wrap_symbol(name, p);
  return p;
}
