/*
 * app_pool: allocations made the way a framework's memory pool makes them,
 * for the tests of --no-pools and of the reader's pool hint.  Linked with
 * the shared simulated runtime and -rdynamic, so the report names its
 * functions.  A pool block is allocated through functions whose names hold
 * the markers the reader looks for in real frameworks' symbols (PyTorch's
 * DeviceCachingAllocator, the BFCAllocator of TensorFlow and XLA); a
 * tensor is allocated through functions that hold none.  C has no
 * namespaces, so the names are the mangled ones' words joined by '_'.
 *
 *   app_pool OP...
 *     torch SIZE   cudaMalloc under ..._DeviceCachingAllocator_malloc
 *     bfc SIZE     cudaMalloc under ..._BFCAllocator_AllocateRaw
 *     tensor SIZE  cudaMalloc under cmgpool_make_tensor only
 *     env NAME     prints NAME=VALUE, or NAME unset
 *
 * Each allocation prints "OP size=N rc=R"; nothing is freed, so every
 * allocation is in the report's leaks.  Exit status 64 for a bad script.
 */
#include <cuda_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The leaf every path shares, as cudaMallocMaybeCapturing is in PyTorch;
 * noinline so that each caller keeps its own frame. */
__attribute__((noinline)) int
cmgpool_device_malloc(size_t size)
{
  void *p = NULL;
  int rc = cudaMalloc(&p, size);
  __asm__ volatile("" ::: "memory");
  return rc;
}

__attribute__((noinline)) int
cmgpool_c10_cuda_CUDACachingAllocator_Native_DeviceCachingAllocator_alloc_block(
    size_t size)
{
  int rc = cmgpool_device_malloc(size);
  __asm__ volatile("" ::: "memory");
  return rc;
}

__attribute__((noinline)) int
cmgpool_c10_cuda_CUDACachingAllocator_Native_DeviceCachingAllocator_malloc(
    size_t size)
{
  int rc =
      cmgpool_c10_cuda_CUDACachingAllocator_Native_DeviceCachingAllocator_alloc_block(
          size);
  __asm__ volatile("" ::: "memory");
  return rc;
}

__attribute__((noinline)) int
cmgpool_tsl_BFCAllocator_AllocateRaw(size_t size)
{
  int rc = cmgpool_device_malloc(size);
  __asm__ volatile("" ::: "memory");
  return rc;
}

__attribute__((noinline)) int
cmgpool_make_tensor(size_t size)
{
  int rc = cmgpool_device_malloc(size);
  __asm__ volatile("" ::: "memory");
  return rc;
}

/* SIZE in bytes with an optional K, M or G (binary); 0 when malformed. */
static size_t
parse_size(const char *s)
{
  char *end;
  unsigned long long n = strtoull(s, &end, 10);

  if (end == s)
    return 0;
  switch (*end) {
  case 'K': n <<= 10; end++; break;
  case 'M': n <<= 20; end++; break;
  case 'G': n <<= 30; end++; break;
  default: break;
  }
  return *end == '\0' ? (size_t)n : 0;
}

int
main(int argc, char **argv)
{
  for (int i = 1; i < argc; i += 2) {
    const char *op = argv[i];
    if (i + 1 >= argc) {
      fprintf(stderr, "app_pool: '%s' needs an argument\n", op);
      return 64;
    }
    if (strcmp(op, "env") == 0) {
      const char *v = getenv(argv[i + 1]);
      if (v != NULL)
        printf("%s=%s\n", argv[i + 1], v);
      else
        printf("%s unset\n", argv[i + 1]);
      fflush(stdout);
      continue;
    }
    size_t size = parse_size(argv[i + 1]);
    int rc;
    if (size == 0) {
      fprintf(stderr, "app_pool: bad size '%s': expected bytes, K, M or G\n",
              argv[i + 1]);
      return 64;
    }
    if (strcmp(op, "torch") == 0)
      rc = cmgpool_c10_cuda_CUDACachingAllocator_Native_DeviceCachingAllocator_malloc(
          size);
    else if (strcmp(op, "bfc") == 0)
      rc = cmgpool_tsl_BFCAllocator_AllocateRaw(size);
    else if (strcmp(op, "tensor") == 0)
      rc = cmgpool_make_tensor(size);
    else {
      fprintf(stderr, "app_pool: unknown operation '%s': expected torch, "
              "bfc, tensor or env\n", op);
      return 64;
    }
    printf("%s size=%zu rc=%d\n", op, size, rc);
    fflush(stdout);
  }
  return 0;
}
