/*
 * Finding the real functions.
 *
 * One slot per entry point of hooks.def holds the real function: for a
 * wrapped driver variant, the pointer the driver last handed out for it
 * (the resolvers, preload/hooks/resolvers.c, store it), or, for a program
 * linked directly, the driver's export; for a runtime function, the next
 * object's definition.  Slots are atomics written with the same value by
 * racing threads; readers take no lock.  Nothing here may call the dlsym
 * override: every internal lookup uses the real dlsym.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "core/log.h"
#include "runtime/linker/dynlink.h"
#include "preload/real.h"

enum layer { NONE, DRIVER, RUNTIME, NVML_LIB };

static const struct {
  const char *name;
  enum layer layer;
} fns[CMG__FN_COUNT] = {
  [CMG__FN_NONE] = { "unknown", NONE },
#define DRV(elf, base, version, suffix) [CMG__FN_##elf] = { #elf, DRIVER },
#define DRVAS(elf, base, version, pfn) [CMG__FN_##elf] = { #elf, DRIVER },
#define RT(name) [CMG__FN_##name] = { #name, RUNTIME },
#define AUX(name, base, version) [CMG__FN_##name] = { #name, DRIVER },
#define RTAUX(name) [CMG__FN_##name] = { #name, RUNTIME },
#define NVML(name) [CMG__FN_##name] = { #name, NVML_LIB },
#define NVMLAUX(name) [CMG__FN_##name] = { #name, NVML_LIB },
#include "preload/hooks/hooks.def"
};

_Atomic(void *) cmg__reals[CMG__FN_COUNT];
static _Atomic bool missing_told[CMG__FN_COUNT];
static _Atomic(void *) libcuda_handle;
static _Atomic(void *) libnvml_handle;

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

CMG__NO_ASAN struct link_map *
cmg__object_of(const void *addr)
{
  Dl_info info;
  struct link_map *map = NULL;
  if (!dladdr1(addr, &info, (void **)&map, RTLD_DL_LINKMAP))
    return NULL;
  return map;
}

/* Our wrappers are the only functions of ours a lookup can meet: whatever
 * lies in our own object is one.  Called from the dlsym override, which a
 * sanitizer runtime may call while it starts. */
CMG__NO_ASAN bool
cmg__is_ours(const void *p)
{
  static _Atomic(struct link_map *) self;
  struct link_map *me = atomic_load_explicit(&self, memory_order_relaxed);
  if (me == NULL) {
    me = cmg__object_of((const void *)&cmg__is_ours);
    atomic_store_explicit(&self, me, memory_order_relaxed);
  }
  return me != NULL && cmg__object_of(p) == me;
}

CMG__NO_ASAN void
cmg__real_set(enum cmg__fn fn, void *p)
{
  if (p == NULL || cmg__is_ours(p))
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
  void *p = cmg__dynlink_dlsym(h, io[0]);
  if (p != NULL && !cmg__is_ours(p)) {
    io[1] = p;
    return 1; /* keep the reference: the pointer must stay valid */
  }
  dlclose(h);
  return 0;
}

static void *
lookup(enum cmg__fn fn)
{
  if (fns[fn].layer == DRIVER || fns[fn].layer == NVML_LIB) {
    void *h = fns[fn].layer == DRIVER ? libcuda() : libnvml();
    return h ? cmg__dynlink_dlsym(h, fns[fn].name) : NULL;
  }
  if (fns[fn].layer == NONE)
    return NULL;
  void *p = cmg__dynlink_dlsym(RTLD_NEXT, fns[fn].name);
  if (p == NULL || cmg__is_ours(p)) {
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
  if (p == NULL || cmg__is_ours(p))
    return NULL;
  atomic_store_explicit(&cmg__reals[fn], p, memory_order_release);
  return p;
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

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static _Atomic(sigaction_fn) real_sigaction_fn;

int
cmg__real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
  sigaction_fn f =
      atomic_load_explicit(&real_sigaction_fn, memory_order_acquire);
  if (f == NULL) {
    f = (sigaction_fn)cmg__dynlink_dlsym(RTLD_NEXT, "sigaction");
    atomic_store_explicit(&real_sigaction_fn, f, memory_order_release);
  }
  if (f == NULL) {
    errno = ENOSYS;
    return -1;
  }
  return f(sig, act, old);
}
