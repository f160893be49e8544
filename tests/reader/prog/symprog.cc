// A C++ program whose allocations go through a template in a namespace, a
// function inlined into its caller and a lambda, built with -g and without
// -rdynamic: none of its functions is in the dynamic symbol table, so only
// the symbol table and DWARF name them.  It allocates on the simulated GPU
// (tests/sim) and prints one line per allocation.
//
// The test finds its lines by the "@" markers in the comments.
#include <cuda_runtime_api.h>

#include <cstdio>

namespace gpu {

template <typename T> struct Pool {
  int calls = 0;

  __attribute__((noinline, noclone)) void *
  grab(unsigned long n)
  {
    void *p = nullptr;
    cudaError_t rc = cudaMalloc(&p, n * sizeof(T)); // @grab
    calls += rc == cudaSuccess;
    return p;
  }
};

} // namespace gpu

static inline __attribute__((always_inline)) void *
reserve(gpu::Pool<float> &pool, unsigned long n)
{
  return pool.grab(n); // @reserve
}

__attribute__((noinline, noclone)) static void *
direct(gpu::Pool<float> &pool)
{
  return pool.grab(1 << 18); // @direct
}

int
main()
{
  gpu::Pool<float> pool;
  auto lambda = [&pool](unsigned long n) __attribute__((noinline)) {
    return pool.grab(n); // @lambda
  };

  std::printf("a %p\n", direct(pool)); // @main-direct
  std::printf("b %p\n", reserve(pool, 1 << 19)); // @main-reserve
  std::printf("c %p\n", lambda(1 << 20));  // @main-lambda
  return pool.calls == 3 ? 0 : 1;
}
