/*
 * libhardctor: a library that allocates device memory from its own
 * constructor, as libraries that set up a GPU when they are loaded do.
 * Linked into a program, its constructor runs before that of any
 * LD_PRELOAD library (the dynamic linker initializes the program's
 * dependencies first); preloaded after libcumemguard, it is initialized
 * before it too.  Either way the interposer's first call is a wrapper
 * running before its own constructor.
 *
 * It allocates HARDCTOR_FIRST bytes (default 512 KiB), then HARDCTOR_SECOND
 * (default 1 MiB), through hardctor_alloc, a frame of its own for the
 * report's stacks; the results are in hardctor_rc[] and hardctor_ptr[].
 */
#include <cuda.h>
#include <stdlib.h>

int hardctor_rc[2] = { -1, -1 };
unsigned long long hardctor_ptr[2];

__attribute__((noinline, visibility("default"))) int
hardctor_alloc(CUdeviceptr *p, size_t size)
{
  volatile int rc = cuMemAlloc(p, size);
  return rc;
}

static size_t
size_of(const char *var, size_t dflt)
{
  const char *s = getenv(var);
  return s != NULL && *s != '\0' ? strtoull(s, NULL, 0) : dflt;
}

__attribute__((constructor)) static void
hardctor_init(void)
{
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
      cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
    return;
  size_t sizes[2] = { size_of("HARDCTOR_FIRST", 512 << 10),
                      size_of("HARDCTOR_SECOND", 1 << 20) };
  for (int i = 0; i < 2; i++) {
    CUdeviceptr p = 0;
    hardctor_rc[i] = hardctor_alloc(&p, sizes[i]);
    hardctor_ptr[i] = p;
  }
}
