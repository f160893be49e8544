/*
 * The ways a program reaches the driver's allocator, each found twice in
 * one process: as the program sees it under the LD_PRELOADed interposer
 * ("with"), and as the driver or the runtime itself provides it ("bare").
 *
 * The bare driver functions come from libc's own dlsym, which the
 * interposer's dlsym override does not see: dlvsym(RTLD_DEFAULT, "dlsym",
 * "GLIBC_2.34") only matches a definition of that version, which the
 * override (unversioned) is not.  The bare runtime is a copy of the loaded
 * libcudart.so.13 opened with RTLD_DEEPBIND: its own references, dlsym
 * included, bind to its dependencies before the global scope, so it
 * bootstraps from the real cuGetProcAddress_v2 of the same, already loaded
 * driver.  Both variants of a path therefore run the same driver code on
 * the same simulated device; only the interposer differs.
 *
 * The loops call through pointers held in locals (or, for the directly
 * linked path under the interposer, by name through the PLT, as a program
 * linked with -lcuda does), so the compiler can neither inline nor hoist
 * anything out of them.
 */
#include "config.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cumemguard.h"
#include "cmgbench.h"

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef cudaError_t (*rt_alloc_fn)(void **, size_t);
typedef cudaError_t (*rt_free_fn)(void *);
typedef void *(*dlsym_fn)(void *, const char *);

const char *const cmgb_path_names[CMGB_NPATHS] = {
  "floor", "direct", "dlsym", "getproc", "runtime",
};

struct drv {
  alloc_fn alloc;
  free_fn free;
};

/* [0] bare, [1] with the interposer. */
static struct drv drv[CMGB_NPATHS][2];
static rt_alloc_fn rt_alloc[2];
static rt_free_fn rt_free[2];
static dlsym_fn real_dlsym;
static void *driver, *bare_rt; /* libcuda.so.1; the runtime's bare copy */
static CUcontext contexts[16];

static int
fail(const char *what)
{
  fprintf(stderr, "cmgbench: %s\n", what);
  return -1;
}

/* The object holding p, by its file's base name. */
static const char *
object_of(const void *p)
{
  Dl_info info;
  if (p == NULL || !dladdr(p, &info) || info.dli_fname == NULL)
    return "";
  const char *base = strrchr(info.dli_fname, '/');
  return base ? base + 1 : info.dli_fname;
}

static bool
is_interposer(const void *p)
{
  return strncmp(object_of(p), "libcumemguard", 13) == 0;
}

static int
find_cudart(struct dl_phdr_info *info, size_t size, void *arg)
{
  const char *base = strrchr(info->dlpi_name, '/');
  base = base ? base + 1 : info->dlpi_name;
  if (strncmp(base, "libcudart.so", 12) != 0)
    return 0;
  snprintf(arg, 4096, "%s", info->dlpi_name);
  return 1;
}

static int
copy_file(const char *from, const char *to)
{
  char buf[65536];
  int in = open(from, O_RDONLY | O_CLOEXEC);
  int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  ssize_t n = 0;
  while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
    if (write(out, buf, (size_t)n) != n) {
      n = -1;
      break;
    }
  int rc = in >= 0 && out >= 0 && n == 0 ? 0 : -1;
  if (in >= 0)
    close(in);
  if (out >= 0 && close(out) != 0)
    rc = -1;
  return rc;
}

/* A runtime of its own, wired to the real driver (see the top comment). */
static int
bare_runtime(const char *tmpdir)
{
  char from[4096] = "", to[4096];
  if (dl_iterate_phdr(find_cudart, from) == 0)
    return fail("libcudart.so.13 is not loaded");
  snprintf(to, sizeof(to), "%s/cmgbench-bare-cudart.so", tmpdir);
  if (copy_file(from, to) != 0)
    return fail("cannot copy libcudart.so.13 to the temporary directory");
  void *h = dlopen(to, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (h == NULL)
    return fail(dlerror());
  bare_rt = h;
  rt_alloc[0] = (rt_alloc_fn)real_dlsym(h, "cudaMalloc");
  rt_free[0] = (rt_free_fn)real_dlsym(h, "cudaFree");
  rt_alloc[1] = cudaMalloc;
  rt_free[1] = cudaFree;
  if (rt_alloc[0] == NULL || rt_free[0] == NULL)
    return fail("the copy of libcudart lacks cudaMalloc or cudaFree");
  return 0;
}

static int
getproc_pair(PFN_cuGetProcAddress_v12000 gp, struct drv *out)
{
  CUdriverProcAddressQueryResult st;
  void *a = NULL, *f = NULL;
  if (gp == NULL || gp("cuMemAlloc", &a, 12000, 0, &st) != CUDA_SUCCESS ||
      gp("cuMemFree", &f, 12000, 0, &st) != CUDA_SUCCESS || !a || !f)
    return fail("cuGetProcAddress_v2 did not return cuMemAlloc/cuMemFree");
  out->alloc = (alloc_fn)a;
  out->free = (free_fn)f;
  return 0;
}

int
cmgb_paths_init(const char *tmpdir)
{
  real_dlsym = (dlsym_fn)dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34");
  if (real_dlsym == NULL)
    real_dlsym = (dlsym_fn)dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5");
  void *h = dlopen("libcuda.so.1", RTLD_NOW);
  if (real_dlsym == NULL || h == NULL)
    return fail("cannot find libc's dlsym or libcuda.so.1");
  driver = h;

  drv[CMGB_FLOOR][0] = drv[CMGB_FLOOR][1] =
      (struct drv){ (alloc_fn)cmgb_empty_alloc, (free_fn)cmgb_empty_free };

  drv[CMGB_DIRECT][0].alloc = (alloc_fn)real_dlsym(h, "cuMemAlloc_v2");
  drv[CMGB_DIRECT][0].free = (free_fn)real_dlsym(h, "cuMemFree_v2");
  drv[CMGB_DIRECT][1] = (struct drv){ cuMemAlloc, cuMemFree };

  drv[CMGB_DLSYM][0] = drv[CMGB_DIRECT][0];
  drv[CMGB_DLSYM][1].alloc = (alloc_fn)dlsym(h, "cuMemAlloc_v2");
  drv[CMGB_DLSYM][1].free = (free_fn)dlsym(h, "cuMemFree_v2");

  if (getproc_pair(
          (PFN_cuGetProcAddress_v12000)real_dlsym(h, "cuGetProcAddress_v2"),
          &drv[CMGB_GETPROC][0]) != 0 ||
      getproc_pair((PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2"),
                   &drv[CMGB_GETPROC][1]) != 0)
    return -1;
  if (bare_runtime(tmpdir) != 0)
    return -1;

  /* Every "with" function must be the interposer's and no "bare" one may
   * be: otherwise the comparison would measure nothing. */
  for (int p = CMGB_DIRECT; p < CMGB_NPATHS; p++) {
    const void *b =
        p == CMGB_RUNTIME ? (void *)rt_alloc[0] : (void *)drv[p][0].alloc;
    const void *w =
        p == CMGB_RUNTIME ? (void *)rt_alloc[1] : (void *)drv[p][1].alloc;
    if (b == NULL || w == NULL || is_interposer(b) || !is_interposer(w)) {
      fprintf(stderr,
              "cmgbench: path %s: without %p (%s), with %p (%s); "
              "is libcumemguard.so in LD_PRELOAD?\n",
              cmgb_path_names[p], b, object_of(b), w, object_of(w));
      return -1;
    }
  }
  return 0;
}

void *
cmgb_bare_sym(bool runtime, const char *name)
{
  void *h = runtime ? bare_rt : driver;
  return h != NULL ? real_dlsym(h, name) : NULL;
}

bool
cmgb_is_interposer(const void *fn)
{
  return fn != NULL && is_interposer(fn);
}

int
cmgb_use_device(int dev)
{
  static bool initialized;
  if (dev < 0 || dev >= 16)
    return fail("bad device");
  if (!initialized && cuInit(0) != CUDA_SUCCESS)
    return fail("cuInit failed");
  initialized = true;
  if (contexts[dev] == NULL) {
    CUdevice d;
    if (cuDeviceGet(&d, dev) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&contexts[dev], d) != CUDA_SUCCESS)
      return fail("cannot retain the device's primary context "
                  "(CMG_SIM_DEVICES?)");
  }
  if (cuCtxSetCurrent(contexts[dev]) != CUDA_SUCCESS)
    return fail("cuCtxSetCurrent failed");
  return 0;
}

static int
call_failed(const char *path, int rc)
{
  fprintf(stderr, "cmgbench: a call through path %s failed: %d\n", path, rc);
  return -1;
}

__attribute__((noinline)) static int
ptr_pairs(alloc_fn alloc, free_fn release, long n, size_t bytes,
          const char *name)
{
  for (long i = 0; i < n; i++) {
    CUdeviceptr p = 0;
    CUresult rc = alloc(&p, bytes);
    if (rc == CUDA_SUCCESS)
      rc = release(p);
    if (rc != CUDA_SUCCESS)
      return call_failed(name, rc);
  }
  return 0;
}

/* A program linked with -lcuda: calls by name, bound through the PLT. */
__attribute__((noinline)) static int
direct_pairs(long n, size_t bytes)
{
  for (long i = 0; i < n; i++) {
    CUdeviceptr p = 0;
    CUresult rc = cuMemAlloc(&p, bytes);
    if (rc == CUDA_SUCCESS)
      rc = cuMemFree(p);
    if (rc != CUDA_SUCCESS)
      return call_failed("direct", rc);
  }
  return 0;
}

__attribute__((noinline)) static int
runtime_pairs(rt_alloc_fn alloc, rt_free_fn release, long n, size_t bytes)
{
  for (long i = 0; i < n; i++) {
    void *p = NULL;
    cudaError_t rc = alloc(&p, bytes);
    if (rc == cudaSuccess)
      rc = release(p);
    if (rc != cudaSuccess)
      return call_failed("runtime", rc);
  }
  return 0;
}

int
cmgb_pairs(enum cmgb_path path, bool with, long n, size_t bytes)
{
  if (path == CMGB_RUNTIME)
    return runtime_pairs(rt_alloc[with], rt_free[with], n, bytes);
  if (path == CMGB_DIRECT && with)
    return direct_pairs(n, bytes);
  return ptr_pairs(drv[path][with].alloc, drv[path][with].free, n, bytes,
                   cmgb_path_names[path]);
}

int
cmgb_alloc(enum cmgb_path path, bool with, uint64_t *dptr, size_t bytes)
{
  int rc;
  if (path == CMGB_RUNTIME) {
    void *p = NULL;
    rc = rt_alloc[with](&p, bytes);
    *dptr = (uintptr_t)p;
  } else {
    CUdeviceptr p = 0;
    rc = path == CMGB_DIRECT && with ? cuMemAlloc(&p, bytes)
                                     : drv[path][with].alloc(&p, bytes);
    *dptr = p;
  }
  return rc == 0 ? 0 : call_failed(cmgb_path_names[path], rc);
}

int
cmgb_free(enum cmgb_path path, bool with, uint64_t dptr)
{
  int rc;
  if (path == CMGB_RUNTIME)
    rc = rt_free[with]((void *)(uintptr_t)dptr);
  else
    rc = path == CMGB_DIRECT && with ? cuMemFree(dptr)
                                     : drv[path][with].free(dptr);
  return rc == 0 ? 0 : call_failed(cmgb_path_names[path], rc);
}

/* Typed from include/cumemguard.h, so that a change of the public API
 * breaks this build rather than the figures. */
int
cmgb_stats(int dev, struct cmg_device_stats *out)
{
  __typeof__(cmg_device_stats) *f =
      (__typeof__(cmg_device_stats) *)dlsym(RTLD_DEFAULT, "cmg_device_stats");
  return f ? f(dev, out, sizeof(*out)) : -ENOSYS;
}

int
cmgb_dump(const char *path)
{
  __typeof__(cmg_dump) *f =
      (__typeof__(cmg_dump) *)dlsym(RTLD_DEFAULT, "cmg_dump");
  return f ? f(path) : -ENOSYS;
}
