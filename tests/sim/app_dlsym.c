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

#define LOOKUP(field, type, base, version, flags, elf) \
  rc = rc ? rc : lookup(h, (void **)&d->field, elf);

static int
resolve(struct app_drv *d)
{
  void *h = dlopen("libcuda.so.1", RTLD_NOW);
  if (h == NULL) {
    fprintf(stderr, "app_dlsym: %s\n", dlerror());
    return CUDA_ERROR_NOT_FOUND;
  }
  int rc = 0;
  APP_DRV_FUNCTIONS(LOOKUP)
  return rc;
}

int
main(int argc, char **argv)
{
  return app_drv_main("dlsym", resolve, NULL, argc, argv);
}
