/*
 * app_getproc: the script interpreter over a driver reached only through
 * cuGetProcAddress, as PyTorch, NCCL and CCCL reach it: dlopen, one dlsym
 * of the resolver, then base names and versions ("cuMemAlloc", 3020).  The
 * _ptsz operations use CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.
 *
 * CMG_APP_GETPROC picks the resolver:
 *   v2 (default)  dlsym(h, "cuGetProcAddress_v2"), 5 arguments;
 *   v1            dlsym(h, "cuGetProcAddress"), the 4-argument CUDA 11.3 ABI;
 *   self          v2, then ask it for "cuGetProcAddress" (12000) and use
 *                 the answer, as cudart does.
 * The getproc operation makes one lookup and prints what came back.
 */
#include "app_drv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static PFN_cuGetProcAddress_v12000 getproc_v2;
static PFN_cuGetProcAddress_v11030 getproc_v1;

/* 0, or CUDA_ERROR_NOT_FOUND after saying why on stderr. */
static int
load(void)
{
  if (getproc_v1 != NULL || getproc_v2 != NULL)
    return 0;
  const char *mode = getenv("CMG_APP_GETPROC");
  if (mode == NULL || *mode == '\0')
    mode = "v2";
  if (strcmp(mode, "v1") != 0 && strcmp(mode, "v2") != 0 &&
      strcmp(mode, "self") != 0) {
    fprintf(stderr, "app_getproc: CMG_APP_GETPROC=%s: expected v1, v2 or "
            "self\n", mode);
    exit(64);
  }
  void *h = dlopen("libcuda.so.1", RTLD_NOW);
  if (h == NULL) {
    fprintf(stderr, "app_getproc: %s\n", dlerror());
    return CUDA_ERROR_NOT_FOUND;
  }
  const char *sym = strcmp(mode, "v1") == 0 ? "cuGetProcAddress"
                                            : "cuGetProcAddress_v2";
  void *p = dlsym(h, sym);
  if (p == NULL) {
    fprintf(stderr, "app_getproc: dlsym(\"%s\"): %s\n", sym, dlerror());
    return CUDA_ERROR_NOT_FOUND;
  }
  if (strcmp(mode, "v1") == 0) {
    getproc_v1 = (PFN_cuGetProcAddress_v11030)p;
    return 0;
  }
  getproc_v2 = (PFN_cuGetProcAddress_v12000)p;
  if (strcmp(mode, "self") == 0) {
    void *self = NULL;
    CUresult rc = getproc_v2("cuGetProcAddress", &self, 12000, 0, NULL);
    if (rc != CUDA_SUCCESS || self == NULL) {
      fprintf(stderr, "app_getproc: cuGetProcAddress(\"cuGetProcAddress\", "
              "12000) failed: rc=%d\n", (int)rc);
      return CUDA_ERROR_NOT_FOUND;
    }
    getproc_v2 = (PFN_cuGetProcAddress_v12000)self;
  }
  return 0;
}

/* One lookup through whichever resolver was chosen; the 4-argument one
 * reports no status, shown as -1. */
static int
getproc(const char *symbol, int version, unsigned long long flags, void **fn,
        int *status)
{
  int rc = load();
  *fn = NULL;
  *status = -1;
  if (rc != 0)
    return rc;
  if (getproc_v1 != NULL)
    return getproc_v1(symbol, fn, version, flags);
  CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
  rc = getproc_v2(symbol, fn, version, flags, &st);
  *status = (int)st;
  return rc;
}

static int
lookup(void **slot, const char *name, int version, unsigned long long flags)
{
  int status;
  int rc = getproc(name, version, flags, slot, &status);
  if (rc == 0 && *slot != NULL)
    return 0;
  fprintf(stderr, "app_getproc: cuGetProcAddress(\"%s\", %d, %llu): rc=%d "
          "status=%d\n", name, version, flags, rc, status);
  return rc != 0 ? rc : CUDA_ERROR_NOT_FOUND;
}

#define LOOKUP(field, type, base, version, flags, elf) \
  rc = rc ? rc : lookup((void **)&d->field, base, version, flags);

/* Base names and versions, as in the X list; the _ptsz operations ask
 * with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM. */
static int
resolve(struct app_drv *d)
{
  int rc = load();
  APP_DRV_FUNCTIONS(LOOKUP)
  return rc;
}

int
main(int argc, char **argv)
{
  return app_drv_main("getproc", resolve, getproc, argc, argv);
}
