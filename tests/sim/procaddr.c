/*
 * cuGetProcAddress of the simulated driver.
 *
 * It answers from a static table of this library's own functions (their
 * hidden aliases, see libcuda.h), never through dlsym, and the library is
 * linked -Bsymbolic: an LD_PRELOAD library exporting the same names must
 * never be handed out, or an interposer that forgot to hook
 * cuGetProcAddress would look as if it worked.  Rows follow cuda.h: the
 * caller asks by base name and CUDA version and gets the newest variant
 * introduced at or before that version, the _ptsz one only when it asks
 * for per-thread default stream semantics.  The table is read-only, so
 * lookups take no lock.
 */
#include "libcuda.h"

#include <stdio.h>
#include <string.h>

static CUresult lookup(const char *symbol, void **pfn, int cudaVersion,
                       cuuint64_t flags,
                       CUdriverProcAddressQueryResult *symbolStatus,
                       const char *via);

SIM_EXPORT CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                    cuuint64_t flags,
                    CUdriverProcAddressQueryResult *symbolStatus)
{
  return lookup(symbol, pfn, cudaVersion, flags, symbolStatus,
                "cuGetProcAddress_v2");
}

SIM_EXPORT CUresult
cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                 cuuint64_t flags)
{
  return lookup(symbol, pfn, cudaVersion, flags, NULL, "cuGetProcAddress");
}

/* The trampolines and the table need these, as they do the others. */
extern __typeof__(cuGetProcAddress) hid_cuGetProcAddress
    __attribute__((alias("cuGetProcAddress"), visibility("hidden")));
extern __typeof__(cuGetProcAddress_v2) hid_cuGetProcAddress_v2
    __attribute__((alias("cuGetProcAddress_v2"), visibility("hidden")));

/* With CMG_SIM_GETPROC_TRAMPOLINE=1 the table hands out these instead: a
 * real driver need not return its exported addresses, and an interposer
 * that matches returned pointers against dlsym results has to cope. */
#define TRAMP(fn, params, args) \
  static CUresult tramp_##fn params { return hid_##fn args; }

TRAMP(cuInit, (unsigned int f), (f))
TRAMP(cuDriverGetVersion, (int *v), (v))
TRAMP(cuDeviceGet, (CUdevice *d, int o), (d, o))
TRAMP(cuDeviceGetCount, (int *n), (n))
TRAMP(cuDeviceGetName, (char *s, int n, CUdevice d), (s, n, d))
TRAMP(cuDeviceGetUuid, (CUuuid *u, CUdevice d), (u, d))
TRAMP(cuDeviceGetUuid_v2, (CUuuid *u, CUdevice d), (u, d))
TRAMP(cuDeviceTotalMem_v2, (size_t *b, CUdevice d), (b, d))
TRAMP(cuDevicePrimaryCtxRetain, (CUcontext *c, CUdevice d), (c, d))
TRAMP(cuDevicePrimaryCtxRelease, (CUdevice d), (d))
TRAMP(cuDevicePrimaryCtxRelease_v2, (CUdevice d), (d))
TRAMP(cuDevicePrimaryCtxReset, (CUdevice d), (d))
TRAMP(cuDevicePrimaryCtxReset_v2, (CUdevice d), (d))
TRAMP(cuCtxCreate_v4,
      (CUcontext *c, CUctxCreateParams *p, unsigned int f, CUdevice d),
      (c, p, f, d))
TRAMP(cuCtxDestroy_v2, (CUcontext c), (c))
TRAMP(cuCtxSetCurrent, (CUcontext c), (c))
TRAMP(cuCtxGetCurrent, (CUcontext *c), (c))
TRAMP(cuCtxGetDevice, (CUdevice *d), (d))
TRAMP(cuCtxSynchronize, (void), ())
TRAMP(cuMemAlloc, (CUdeviceptr_v1 *p, unsigned int n), (p, n))
TRAMP(cuMemAlloc_v2, (CUdeviceptr *p, size_t n), (p, n))
TRAMP(cuMemFree, (CUdeviceptr_v1 p), (p))
TRAMP(cuMemFree_v2, (CUdeviceptr p), (p))
TRAMP(cuMemAllocPitch_v2,
      (CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned int e),
      (p, pitch, w, h, e))
TRAMP(cuMemAllocManaged, (CUdeviceptr *p, size_t n, unsigned int f),
      (p, n, f))
TRAMP(cuMemAllocAsync, (CUdeviceptr *p, size_t n, CUstream s), (p, n, s))
TRAMP(cuMemAllocAsync_ptsz, (CUdeviceptr *p, size_t n, CUstream s),
      (p, n, s))
TRAMP(cuMemFreeAsync, (CUdeviceptr p, CUstream s), (p, s))
TRAMP(cuMemFreeAsync_ptsz, (CUdeviceptr p, CUstream s), (p, s))
TRAMP(cuMemGetInfo, (unsigned int *f, unsigned int *t), (f, t))
TRAMP(cuMemGetInfo_v2, (size_t *f, size_t *t), (f, t))
TRAMP(cuGetErrorName, (CUresult e, const char **s), (e, s))
TRAMP(cuGetErrorString, (CUresult e, const char **s), (e, s))
TRAMP(cuGetProcAddress,
      (const char *s, void **p, int v, cuuint64_t f), (s, p, v, f))
TRAMP(cuGetProcAddress_v2,
      (const char *s, void **p, int v, cuuint64_t f,
       CUdriverProcAddressQueryResult *st),
      (s, p, v, f, st))

struct proc_row {
  const char *name; /* base name, as callers ask for it */
  int version;      /* CUDA version that introduced this variant */
  bool ptsz;        /* per-thread default stream variant */
  const char *elf;  /* ELF name, for the trace */
  void *fn;
  void *tramp;
};

/* Versions are those of the PFN_<name>_v<version> typedefs in
 * cudaTypedefs.h. */
#define ROW(name, ver, fn) \
  { name, ver, false, #fn, (void *)hid_##fn, (void *)tramp_##fn }
#define ROW_PTSZ(name, ver, fn) \
  { name, ver, true, #fn, (void *)hid_##fn, (void *)tramp_##fn }

static const struct proc_row table[] = {
  ROW("cuGetErrorString", 6000, cuGetErrorString),
  ROW("cuGetErrorName", 6000, cuGetErrorName),
  ROW("cuInit", 2000, cuInit),
  ROW("cuDriverGetVersion", 2020, cuDriverGetVersion),
  ROW("cuDeviceGet", 2000, cuDeviceGet),
  ROW("cuDeviceGetCount", 2000, cuDeviceGetCount),
  ROW("cuDeviceGetName", 2000, cuDeviceGetName),
  ROW("cuDeviceGetUuid", 9020, cuDeviceGetUuid),
  ROW("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
  ROW("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
  ROW("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
  ROW("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
  ROW("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
  ROW("cuDevicePrimaryCtxReset", 7000, cuDevicePrimaryCtxReset),
  ROW("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2),
  ROW("cuCtxCreate", 12050, cuCtxCreate_v4),
  ROW("cuCtxDestroy", 4000, cuCtxDestroy_v2),
  ROW("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
  ROW("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
  ROW("cuCtxGetDevice", 2000, cuCtxGetDevice),
  ROW("cuCtxSynchronize", 2000, cuCtxSynchronize),
  ROW("cuMemGetInfo", 2000, cuMemGetInfo),
  ROW("cuMemGetInfo", 3020, cuMemGetInfo_v2),
  ROW("cuMemAlloc", 2000, cuMemAlloc),
  ROW("cuMemAlloc", 3020, cuMemAlloc_v2),
  ROW("cuMemFree", 2000, cuMemFree),
  ROW("cuMemFree", 3020, cuMemFree_v2),
  ROW("cuMemAllocPitch", 3020, cuMemAllocPitch_v2),
  ROW("cuMemAllocManaged", 6000, cuMemAllocManaged),
  ROW("cuMemAllocAsync", 11020, cuMemAllocAsync),
  ROW_PTSZ("cuMemAllocAsync", 11020, cuMemAllocAsync_ptsz),
  ROW("cuMemFreeAsync", 11020, cuMemFreeAsync),
  ROW_PTSZ("cuMemFreeAsync", 11020, cuMemFreeAsync_ptsz),
  ROW("cuGetProcAddress", 11030, cuGetProcAddress),
  ROW("cuGetProcAddress", 12000, cuGetProcAddress_v2),
};

static CUresult
lookup(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
       CUdriverProcAddressQueryResult *symbolStatus, const char *via)
{
  sim_configure_once();
  if (symbol == NULL || pfn == NULL || cudaVersion > SIM_DRIVER_VERSION ||
      (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                             CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))) {
    if (sim_opt_trace)
      fprintf(stderr, "[cmgsim] %s(\"%s\", %d, %llu) -> invalid value\n", via,
              symbol ? symbol : "(null)", cudaVersion,
              (unsigned long long)flags);
    return CUDA_ERROR_INVALID_VALUE;
  }

  bool ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const struct proc_row *legacy = NULL, *perthread = NULL;
  bool known = false;
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
    const struct proc_row *r = &table[i];
    if (strcmp(r->name, symbol) != 0)
      continue;
    known = true;
    if (r->version > cudaVersion)
      continue;
    const struct proc_row **best = r->ptsz ? &perthread : &legacy;
    if (r->ptsz && !ptds)
      continue;
    if (*best == NULL || r->version > (*best)->version)
      *best = r;
  }
  /* Per-thread lookups fall back to the legacy variant when there is no
   * per-thread one, as cuda.h documents. */
  const struct proc_row *r = perthread ? perthread : legacy;

  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
  *pfn = NULL;
  if (r != NULL)
    *pfn = sim_opt_trampoline ? r->tramp : r->fn;
  else
    st = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
               : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (symbolStatus != NULL)
    *symbolStatus = st;
  if (sim_opt_trace)
    fprintf(stderr, "[cmgsim] %s(\"%s\", %d, %llu) -> %s%s\n", via, symbol,
            cudaVersion, (unsigned long long)flags,
            r ? (sim_opt_trampoline ? "trampoline of " : "") : "",
            r ? r->elf : (known ? "version not sufficient" : "not found"));
  return CUDA_SUCCESS;
}
