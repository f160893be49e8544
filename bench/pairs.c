/*
 * cmgpairs: n allocation + free pairs through the driver, from a few
 * frames deep, and nothing else, for counting what the interposer adds to
 * each pair in instructions (scripts/bench-instructions runs it under
 * valgrind's callgrind, twice, and takes the difference).  A count of
 * instructions is the same on every run of the same build, where a time
 * on a shared machine moves by more than a hook's whole cost.
 */
#include "config.h"

#include <cuda.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define FRAMES 24

/* Where callgrind counts (--toggle-collect): the exit's report, which
 * grows with the run, is not the pairs' cost. */
__attribute__((noinline)) static int
pairs(long n)
{
  for (long i = 0; i < n; i++) {
    CUdeviceptr p;
    if (cuMemAlloc(&p, 4096) != CUDA_SUCCESS || cuMemFree(p) != CUDA_SUCCESS)
      return -1;
  }
  return 0;
}

/* Real frames for a capture to walk, as a program's call chain has. */
__attribute__((noipa)) static int
deeper(unsigned left, long n)
{
  int r = left == 0 ? pairs(n) : deeper(left - 1, n);
  __asm__ volatile("" : "+r"(r) : : "memory");
  return r;
}

int
main(int argc, char **argv)
{
  char *end;
  errno = 0;
  long n = argc == 2 ? strtol(argv[1], &end, 10) : -1;
  if (argc != 2 || errno != 0 || *end != '\0' || n < 0) {
    fprintf(stderr,
            "cmgpairs: bad count '%s': expected a number of pairs, "
            "0 or more\n",
            argc == 2 ? argv[1] : "");
    return 2;
  }
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
      cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
    fprintf(stderr, "cmgpairs: no device 0 to allocate on\n");
    return 1;
  }
  /* The first pair sets up what later pairs reuse. */
  if (deeper(FRAMES, 1) != 0 || deeper(FRAMES, n) != 0) {
    fprintf(stderr, "cmgpairs: an allocation or a free failed\n");
    return 1;
  }
  return 0;
}
