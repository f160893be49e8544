/*
 * app_dlsym: the script interpreter over a driver reached the way
 * TensorFlow and XLA reach it (xla/tsl/cuda/cuda_stub.cc):
 * dlopen("libcuda.so.1") and dlsym of each versioned ELF name.  The
 * program does not link libcuda, so only a dlsym hook sees these calls.
 */
#include "app_drv.h"

#include <dlfcn.h>
#include <stdio.h>

static int
lookup(void *h, void **slot, const char *name)
{
  *slot = dlsym(h, name);
  if (*slot != NULL)
    return 0;
  fprintf(stderr, "app_dlsym: dlsym(\"%s\"): %s\n", name, dlerror());
  return CUDA_ERROR_NOT_FOUND;
}

#define LOOKUP(field, name) lookup(h, (void **)&d->field, name)

static int
resolve(struct app_drv *d)
{
  void *h = dlopen("libcuda.so.1", RTLD_NOW);
  if (h == NULL) {
    fprintf(stderr, "app_dlsym: %s\n", dlerror());
    return CUDA_ERROR_NOT_FOUND;
  }
  int rc = 0;
  rc = rc ? rc : LOOKUP(init, "cuInit");
  rc = rc ? rc : LOOKUP(device_get, "cuDeviceGet");
  rc = rc ? rc : LOOKUP(device_total, "cuDeviceTotalMem_v2");
  rc = rc ? rc : LOOKUP(primary_retain, "cuDevicePrimaryCtxRetain");
  rc = rc ? rc : LOOKUP(primary_reset, "cuDevicePrimaryCtxReset_v2");
  rc = rc ? rc : LOOKUP(ctx_set, "cuCtxSetCurrent");
  rc = rc ? rc : LOOKUP(mem_info, "cuMemGetInfo_v2");
  rc = rc ? rc : LOOKUP(mem_alloc, "cuMemAlloc_v2");
  rc = rc ? rc : LOOKUP(mem_free, "cuMemFree_v2");
  rc = rc ? rc : LOOKUP(mem_alloc_pitch, "cuMemAllocPitch_v2");
  rc = rc ? rc : LOOKUP(mem_alloc_managed, "cuMemAllocManaged");
  rc = rc ? rc : LOOKUP(mem_alloc_async, "cuMemAllocAsync");
  rc = rc ? rc : LOOKUP(mem_alloc_async_ptsz, "cuMemAllocAsync_ptsz");
  rc = rc ? rc : LOOKUP(mem_free_async, "cuMemFreeAsync");
  rc = rc ? rc : LOOKUP(mem_free_async_ptsz, "cuMemFreeAsync_ptsz");
  return rc;
}

int
main(int argc, char **argv)
{
  return app_drv_main("dlsym", resolve, NULL, argc, argv);
}
