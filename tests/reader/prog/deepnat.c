/*
 * A native extension's deep call path, as a framework's C++ dispatch has
 * between the Python call and the CUDA runtime: deepnat_alloc nests depth
 * calls before it calls cudaMalloc.  The test loads it with ctypes from a
 * package under site-packages, where a wheel's shared objects live.
 */
#include <cuda_runtime_api.h>
#include <stddef.h>

__attribute__((visibility("default"))) int deepnat_alloc(int depth, size_t size,
                                                         void **out);

static __attribute__((noinline, noclone)) int
descend(int n, size_t size, void **out)
{
  if (n <= 0)
    return (int)cudaMalloc(out, size);
  int rc = descend(n - 1, size, out);
  /* Work after the call keeps it a call, not a jump. */
  __asm__ volatile("" : "+r"(rc));
  return rc;
}

int
deepnat_alloc(int depth, size_t size, void **out)
{
  return descend(depth, size, out);
}
