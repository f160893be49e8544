/*
 * The NVML functions the library exports in NVML's place (hooks/nvml.c);
 * NVML's types are core's.
 */
#ifndef CMG_PRELOAD_HOOKS_NVML_ABI_H
#define CMG_PRELOAD_HOOKS_NVML_ABI_H

#include "core/nvml_abi.h"

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
    __attribute__((visibility("default")));
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
                                        nvmlMemory_v2_t *memory)
    __attribute__((visibility("default")));
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
                                                  unsigned int *infoCount,
                                                  nvmlProcessInfo_v1_t *infos)
    __attribute__((visibility("default")));
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
                                                     unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
    __attribute__((visibility("default")));
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                     unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
    __attribute__((visibility("default")));

#endif /* CMG_PRELOAD_HOOKS_NVML_ABI_H */
