/*
 * app_rt_shared and app_rt_static: the script interpreter over the CUDA
 * runtime API, linked against the simulated libcudart.so.13 or against
 * libcudart_static.a.  Same source, so the two differ only in how cudart
 * is linked: with the shared library an LD_PRELOAD library can interpose
 * cudaMalloc itself; with the static archive it can only catch the
 * driver calls the runtime makes through cuGetProcAddress.  rc= values are
 * cudaError_t.
 */
#include "app.h"

#include <cuda_runtime_api.h>

/* Not declared unless CUDA_API_PER_THREAD_DEFAULT_STREAM is defined. */
extern __typeof__(cudaMallocAsync) cudaMallocAsync_ptsz;
extern __typeof__(cudaFreeAsync) cudaFreeAsync_ptsz;

static int
set_device(int dev)
{
  return cudaSetDevice(dev);
}

static int
alloc(uint64_t *ptr, size_t size)
{
  void *p = NULL;
  cudaError_t rc = cudaMalloc(&p, size);
  *ptr = (uintptr_t)p;
  return rc;
}

static int
alloc_pitch(uint64_t *ptr, size_t *pitch, size_t width, size_t height,
            unsigned int elem)
{
  void *p = NULL;
  cudaError_t rc = cudaMallocPitch(&p, pitch, width, height);
  *ptr = (uintptr_t)p;
  return rc;
}

static int
alloc_managed(uint64_t *ptr, size_t size)
{
  void *p = NULL;
  cudaError_t rc = cudaMallocManaged(&p, size, cudaMemAttachGlobal);
  *ptr = (uintptr_t)p;
  return rc;
}

static int
alloc_async(uint64_t *ptr, size_t size, bool ptsz)
{
  void *p = NULL;
  cudaError_t rc = ptsz ? cudaMallocAsync_ptsz(&p, size, NULL)
                        : cudaMallocAsync(&p, size, NULL);
  *ptr = (uintptr_t)p;
  return rc;
}

static int
free_(uint64_t ptr)
{
  return cudaFree((void *)(uintptr_t)ptr);
}

static int
free_async(uint64_t ptr, bool ptsz)
{
  void *p = (void *)(uintptr_t)ptr;
  return ptsz ? cudaFreeAsync_ptsz(p, NULL) : cudaFreeAsync(p, NULL);
}

static int
meminfo(size_t *free, size_t *total)
{
  return cudaMemGetInfo(free, total);
}

static int
totalmem(int dev, size_t *bytes)
{
  struct cudaDeviceProp prop;
  cudaError_t rc = cudaGetDeviceProperties(&prop, dev);
  if (rc == cudaSuccess)
    *bytes = prop.totalGlobalMem;
  return rc;
}

/* Through cudaGetDriverEntryPointByVersion, which uses the runtime's own
 * cached cuGetProcAddress. */
static int
getproc(const char *symbol, int version, unsigned long long flags, void **fn,
        int *status)
{
  enum cudaDriverEntryPointQueryResult st =
      (enum cudaDriverEntryPointQueryResult)-1;
  *fn = NULL;
  cudaError_t rc = cudaGetDriverEntryPointByVersion(symbol, fn,
                                                    (unsigned int)version,
                                                    flags, &st);
  *status = (int)st;
  return rc;
}

/* cudaDeviceReset acts on the calling thread's device, which the
 * interpreter keeps equal to `dev`. */
static int
reset(int dev)
{
  return cudaDeviceReset();
}

static const struct app_backend backend = {
  .name = "runtime",
  .start = NULL,
  .set_device = set_device,
  .alloc = alloc,
  .alloc_pitch = alloc_pitch,
  .alloc_managed = alloc_managed,
  .alloc_async = alloc_async,
  .free = free_,
  .free_async = free_async,
  .meminfo = meminfo,
  .totalmem = totalmem,
  .reset = reset,
  .getproc = getproc,
};

int
main(int argc, char **argv)
{
  return app_main(&backend, argc, argv);
}
