/*
 * Shared by the two files of the simulated driver (libcuda.c: devices,
 * contexts and memory; procaddr.c: cuGetProcAddress).
 *
 * __CUDA_API_VERSION_INTERNAL is defined, as NVIDIA's own driver build
 * does, because only then does cuda.h declare the legacy 32-bit entry
 * points, the _ptsz variants and the 4-argument cuGetProcAddress: every
 * definition is checked against NVIDIA's declaration of its ELF name.
 */
#ifndef CMGSIM_LIBCUDA_H
#define CMGSIM_LIBCUDA_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>

/* Definitions use ELF names; drop cuda.h's renaming macros. */
#undef cuDeviceTotalMem
#undef cuDeviceGetUuid
#undef cuDevicePrimaryCtxRelease
#undef cuDevicePrimaryCtxReset
#undef cuCtxCreate
#undef cuCtxDestroy
#undef cuMemGetInfo
#undef cuMemAlloc
#undef cuMemAllocPitch
#undef cuMemFree
#undef cuMemAllocAsync
#undef cuMemFreeAsync
#undef cuGetProcAddress

#include <stdbool.h>

#include "arena.h"

#define SIM_EXPORT __attribute__((visibility("default")))
#define SIM_DRIVER_VERSION 13000

/* Every exported driver function that libcuda.c defines.  Each gets a
 * hidden alias hid_<name>: same address, but never preempted by an
 * LD_PRELOAD library, so the cuGetProcAddress table and the trampolines
 * always name this library's own code, -Bsymbolic or not. */
#define SIM_DRIVER_FUNCTIONS(X) \
  X(cuInit) \
  X(cuDriverGetVersion) \
  X(cuDeviceGet) \
  X(cuDeviceGetCount) \
  X(cuDeviceGetName) \
  X(cuDeviceGetUuid) \
  X(cuDeviceGetUuid_v2) \
  X(cuDeviceTotalMem_v2) \
  X(cuDevicePrimaryCtxRetain) \
  X(cuDevicePrimaryCtxRelease) \
  X(cuDevicePrimaryCtxRelease_v2) \
  X(cuDevicePrimaryCtxReset) \
  X(cuDevicePrimaryCtxReset_v2) \
  X(cuCtxCreate_v4) \
  X(cuCtxDestroy_v2) \
  X(cuCtxSetCurrent) \
  X(cuCtxGetCurrent) \
  X(cuCtxGetDevice) \
  X(cuCtxSynchronize) \
  X(cuMemAlloc) \
  X(cuMemAlloc_v2) \
  X(cuMemFree) \
  X(cuMemFree_v2) \
  X(cuMemAllocPitch_v2) \
  X(cuMemAllocManaged) \
  X(cuMemAllocAsync) \
  X(cuMemAllocAsync_ptsz) \
  X(cuMemFreeAsync) \
  X(cuMemFreeAsync_ptsz) \
  X(cuMemGetInfo) \
  X(cuMemGetInfo_v2) \
  X(cuGetErrorName) \
  X(cuGetErrorString)

#define SIM_DECLARE_HIDDEN(fn) \
  extern __typeof__(fn) hid_##fn __attribute__((visibility("hidden")));
SIM_DRIVER_FUNCTIONS(SIM_DECLARE_HIDDEN)

/* Set from the environment by sim_configure_once. */
SIM_HIDDEN extern bool sim_opt_trampoline;
SIM_HIDDEN extern bool sim_opt_trace;

/* Reads the environment and sets the devices up, once per process. */
SIM_HIDDEN void sim_configure_once(void);

#endif /* CMGSIM_LIBCUDA_H */
