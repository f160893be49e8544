/*
 * The driver-API backend shared by app_dlsym and app_getproc: both call
 * the driver only through function pointers, and differ in how they get
 * them (dlsym of ELF names, or cuGetProcAddress with base names).
 */
#ifndef CMGSIM_APP_DRV_H
#define CMGSIM_APP_DRV_H

#include <cuda.h>
#include <cudaTypedefs.h>

#include "app.h"

struct app_drv {
  PFN_cuInit_v2000 init;
  PFN_cuDeviceGet_v2000 device_get;
  PFN_cuDeviceTotalMem_v3020 device_total;
  PFN_cuDevicePrimaryCtxRetain_v7000 primary_retain;
  PFN_cuDevicePrimaryCtxReset_v11000 primary_reset;
  PFN_cuCtxSetCurrent_v4000 ctx_set;
  PFN_cuMemGetInfo_v3020 mem_info;
  PFN_cuMemAlloc_v3020 mem_alloc;
  PFN_cuMemFree_v3020 mem_free;
  PFN_cuMemAllocPitch_v3020 mem_alloc_pitch;
  PFN_cuMemAllocManaged_v6000 mem_alloc_managed;
  PFN_cuMemAllocAsync_v11020 mem_alloc_async;
  PFN_cuMemAllocAsync_v11020_ptsz mem_alloc_async_ptsz;
  PFN_cuMemFreeAsync_v11020 mem_free_async;
  PFN_cuMemFreeAsync_v11020_ptsz mem_free_async_ptsz;
};

/* Fills every field of *d; returns 0 or a CUresult (CUDA_ERROR_NOT_FOUND
 * when an entry point is missing, after saying which on stderr). */
typedef int app_drv_resolver(struct app_drv *d);

/* Runs the script in argv with a backend named `name` that calls the
 * driver through the pointers `resolve` provides on first use; `getproc`
 * may be NULL.  Returns the exit code. */
int app_drv_main(const char *name, app_drv_resolver *resolve,
                 int (*getproc)(const char *symbol, int version,
                                unsigned long long flags, void **fn,
                                int *status),
                 int argc, char **argv);

#endif /* CMGSIM_APP_DRV_H */
