/*
 * A naive interposer, for tests/sim/t-sim.sh: it exports cuMemCreate and
 * cuGetProcAddress_v2 and nothing else -- no dlsym hook -- and says on
 * stderr each time one of them is called.  Only a program that calls the
 * driver by name (app_driver) reaches it; the simulated driver (linked
 * -Bsymbolic, answering cuGetProcAddress from its own table) and the
 * simulated runtime (dlopen + dlsym on the driver's handle) never do.
 */
#define _GNU_SOURCE 1
#include <cuda.h>
#include <cudaTypedefs.h>

#include <dlfcn.h>
#include <unistd.h>

#define NAIVE_EXPORT __attribute__((visibility("default")))

static void
say(const char *msg, size_t len)
{
  ssize_t n = write(2, msg, len);
  (void)n;
}

NAIVE_EXPORT CUresult
cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
            const CUmemAllocationProp *prop, unsigned long long flags)
{
  static const char msg[] = "naive: cuMemCreate\n";
  say(msg, sizeof(msg) - 1);
  PFN_cuMemCreate_v10020 next =
      (PFN_cuMemCreate_v10020)dlsym(RTLD_NEXT, "cuMemCreate");
  return next != NULL ? next(handle, size, prop, flags)
                      : CUDA_ERROR_NOT_INITIALIZED;
}

NAIVE_EXPORT CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                    cuuint64_t flags,
                    CUdriverProcAddressQueryResult *symbolStatus)
{
  static const char msg[] = "naive: cuGetProcAddress_v2\n";
  say(msg, sizeof(msg) - 1);
  PFN_cuGetProcAddress_v12000 next =
      (PFN_cuGetProcAddress_v12000)dlsym(RTLD_NEXT, "cuGetProcAddress_v2");
  return next != NULL ? next(symbol, pfn, cudaVersion, flags, symbolStatus)
                      : CUDA_ERROR_NOT_INITIALIZED;
}
