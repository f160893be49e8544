/*
 * app_reload: the driver loaded late, unloaded and loaded again, as a
 * program that probes for a GPU (or a Python process that imports and
 * drops a framework) does.  Nothing is linked: every round dlopen()s the
 * driver by NAME, resolves what it needs with dlsym() (and, with
 * `getproc`, everything but cuGetProcAddress_v2 through that), allocates a
 * block it keeps and one it frees, prints what the driver and the
 * interposer count, and dlclose()s the driver.
 *
 *   app_reload ROUNDS [NAME] [getproc]
 *
 * One line per round:
 *   round=R alloc=RC free=RC used=BYTES live=BYTES|absent loaded=0|1
 * used: the driver's own count (cmgsim_stats), live: the interposer's
 * (cmg_device_stats), loaded: whether the driver is still mapped after
 * dlclose().  Without the interposer the driver really goes away and comes
 * back empty; with it, it stays (the interposer pins it, since it keeps
 * pointers into it), and the counts must still agree.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cumemguard.h"

struct drv {
  CUresult (*init)(unsigned);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*retain)(CUcontext *, CUdevice);
  CUresult (*set_current)(CUcontext);
  CUresult (*alloc)(CUdeviceptr *, size_t);
  CUresult (*free)(CUdeviceptr);
};

static void *
need(void *h, const char *name)
{
  void *p = dlsym(h, name);
  if (p == NULL) {
    fprintf(stderr, "app_reload: no %s: %s\n", name, dlerror());
    exit(70);
  }
  return p;
}

/* Through cuGetProcAddress_v2, as NVIDIA's runtime does. */
static void *
proc(void *h, const char *base, int version)
{
  typedef CUresult (*getproc_fn)(const char *, void **, int, cuuint64_t,
                                 CUdriverProcAddressQueryResult *);
  getproc_fn get = (getproc_fn)need(h, "cuGetProcAddress_v2");
  void *p = NULL;
  CUdriverProcAddressQueryResult st;
  if (get(base, &p, version, 0, &st) != CUDA_SUCCESS || p == NULL) {
    fprintf(stderr, "app_reload: cuGetProcAddress(%s) failed\n", base);
    exit(70);
  }
  return p;
}

static void
resolve(void *h, bool getproc, struct drv *d)
{
  if (getproc) {
    d->init = proc(h, "cuInit", 2000);
    d->device_get = proc(h, "cuDeviceGet", 2000);
    d->retain = proc(h, "cuDevicePrimaryCtxRetain", 7000);
    d->set_current = proc(h, "cuCtxSetCurrent", 4000);
    d->alloc = proc(h, "cuMemAlloc", 3020);
    d->free = proc(h, "cuMemFree", 3020);
  } else {
    d->init = need(h, "cuInit");
    d->device_get = need(h, "cuDeviceGet");
    d->retain = need(h, "cuDevicePrimaryCtxRetain");
    d->set_current = need(h, "cuCtxSetCurrent");
    d->alloc = need(h, "cuMemAlloc_v2");
    d->free = need(h, "cuMemFree_v2");
  }
}

int
main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  const char *name = argc > 2 ? argv[2] : "libcuda.so.1";
  bool getproc = argc > 3 && strcmp(argv[3], "getproc") == 0;
  int (*stats)(int, struct cmg_device_stats *, size_t) =
      (int (*)(int, struct cmg_device_stats *, size_t))dlsym(
          RTLD_DEFAULT, "cmg_device_stats");
  setvbuf(stdout, NULL, _IOLBF, 0);

  for (int r = 1; r <= rounds; r++) {
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
      fprintf(stderr, "app_reload: %s\n", dlerror());
      return 70;
    }
    struct drv d;
    resolve(h, getproc, &d);
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr kept = 0, gone = 0;
    CUresult rc = d.init(0);
    if (rc == CUDA_SUCCESS)
      rc = d.device_get(&dev, 0);
    if (rc == CUDA_SUCCESS)
      rc = d.retain(&ctx, dev);
    if (rc == CUDA_SUCCESS)
      rc = d.set_current(ctx);
    if (rc != CUDA_SUCCESS) {
      fprintf(stderr, "app_reload: cannot start CUDA: %d\n", rc);
      return 70;
    }
    CUresult arc = d.alloc(&kept, (size_t)r << 20);
    CUresult frc = d.alloc(&gone, 4096);
    if (frc == CUDA_SUCCESS)
      frc = d.free(gone);

    int (*sim)(int, unsigned long long *, unsigned long long *,
               unsigned long long *, unsigned long long *) =
        (int (*)(int, unsigned long long *, unsigned long long *,
                 unsigned long long *, unsigned long long *))need(
            h, "cmgsim_stats");
    unsigned long long used = 0;
    sim(0, &used, NULL, NULL, NULL);
    printf("round=%d alloc=%d free=%d used=%llu ", r, arc, frc, used);
    struct cmg_device_stats s;
    if (stats != NULL && stats(0, &s, sizeof(s)) == 0)
      printf("live=%llu ", (unsigned long long)s.live_bytes);
    else
      printf("live=absent ");

    dlclose(h);
    void *still = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
    printf("loaded=%d\n", still != NULL);
    if (still != NULL)
      dlclose(still);
  }
  return 0;
}
