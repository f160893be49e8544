/*
 * A library's own allocations (lib_alloc, lib_free), as cuBLAS, cuDNN and
 * NCCL make their workspaces in a process whose framework allocates
 * through the shared runtime: each library embeds a static runtime that
 * opens libcuda.so.1 itself, finds cuGetProcAddress_v2 with dlsym, asks it
 * for itself ("cuGetProcAddress", 12000), and through the answer for
 * "cuMemAlloc" and "cuMemFree" (3020, which give the _v2 functions).  So
 * in any program these operations reach the driver by that path, whatever
 * path the program's own operations take.  Like the library's runtime they
 * call cuInit and use the context current on the calling thread, or the
 * current device's primary context where none is (as the program's own
 * `device` step makes it current).
 */
#include "app_int.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdio.h>

static PFN_cuInit_v2000 lib_init;
static PFN_cuCtxGetCurrent_v4000 lib_current;
static PFN_cuMemAlloc_v3020 lib_mem_alloc;
static PFN_cuMemFree_v3020 lib_mem_free;

/* 0, or the lookup's error after saying why on stderr. */
static int
lib_start(void)
{
  if (lib_mem_alloc != NULL && lib_mem_free != NULL)
    return 0;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  PFN_cuGetProcAddress_v12000 getproc =
      h != NULL ? (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2")
                : NULL;
  void *self = NULL, *init = NULL, *current = NULL, *alloc = NULL;
  void *release = NULL;
  CUresult rc = getproc != NULL ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
  if (rc == CUDA_SUCCESS)
    rc = getproc("cuGetProcAddress", &self, 12000, 0, NULL);
  if (rc == CUDA_SUCCESS && self != NULL) {
    getproc = (PFN_cuGetProcAddress_v12000)self;
    rc = getproc("cuInit", &init, 2000, 0, NULL);
  }
  if (rc == CUDA_SUCCESS)
    rc = getproc("cuCtxGetCurrent", &current, 4000, 0, NULL);
  if (rc == CUDA_SUCCESS)
    rc = getproc("cuMemAlloc", &alloc, 3020, 0, NULL);
  if (rc == CUDA_SUCCESS)
    rc = getproc("cuMemFree", &release, 3020, 0, NULL);
  if (rc != CUDA_SUCCESS || init == NULL || current == NULL || alloc == NULL ||
      release == NULL) {
    fprintf(stderr, "lib_alloc: no cuMemAlloc through cuGetProcAddress: "
            "rc=%d\n", (int)rc);
    return rc != CUDA_SUCCESS ? (int)rc : CUDA_ERROR_NOT_FOUND;
  }
  lib_init = (PFN_cuInit_v2000)init;
  lib_current = (PFN_cuCtxGetCurrent_v4000)current;
  lib_mem_alloc = (PFN_cuMemAlloc_v3020)alloc;
  lib_mem_free = (PFN_cuMemFree_v3020)release;
  return 0;
}

/* cuInit, and a context current on this thread. */
static int
lib_bind(void)
{
  CUcontext ctx = NULL;
  int rc = (int)lib_init(0);
  if (rc == 0)
    rc = (int)lib_current(&ctx);
  if (rc == 0 && ctx == NULL)
    rc = app_be->set_device(app_cur_dev);
  return rc;
}

void
app_run_lib(const struct op *op)
{
  int rc = app_ensure_started();
  if (rc == 0)
    rc = lib_start();
  if (rc == 0)
    rc = lib_bind();
  if (op->spec->kind == OP_LIB_FREE) {
    int i = (int)op->arg[0];
    if (rc == 0)
      rc = (int)lib_mem_free((CUdeviceptr)app_ptrs[i]);
    if (rc == 0)
      app_ptrs[i] = 0;
    app_line("lib_free i=%d rc=%d", i, rc);
    return;
  }
  CUdeviceptr p = 0;
  unsigned long long size = op->arg[0];
  if (rc == 0)
    rc = (int)lib_mem_alloc(&p, (size_t)size);
  app_ptrs[op->index] = rc == 0 ? (uint64_t)p : 0;
  if (rc == 0)
    app_line("lib_alloc i=%d size=%llu rc=0 ptr=0x%llx", op->index, size,
             (unsigned long long)p);
  else
    app_line("lib_alloc i=%d size=%llu rc=%d", op->index, size, rc);
}
