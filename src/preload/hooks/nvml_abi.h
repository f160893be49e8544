/*
 * The few NVML types and functions cumemguard wraps or calls.  NVIDIA's
 * nvml.h is not installed with the CUDA toolkit here, so they are declared
 * by hand, following the ABI NVIDIA documents for nvml.h (NVML API
 * Reference: nvmlReturn_t, nvmlDevice_t, nvmlMemory_t, nvmlMemory_v2_t and
 * the nvmlMemory_v2 version word).  Nothing else of NVML is used.
 */
#ifndef CMG_NVML_ABI_H
#define CMG_NVML_ABI_H

typedef int nvmlReturn_t; /* NVML_SUCCESS is 0 */
#define NVML_SUCCESS 0

typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_v2_t;

typedef nvmlReturn_t (*cmg__pfn_nvmlDeviceGetMemoryInfo)(nvmlDevice_t,
                                                         nvmlMemory_t *);
typedef nvmlReturn_t (*cmg__pfn_nvmlDeviceGetMemoryInfo_v2)(nvmlDevice_t,
                                                            nvmlMemory_v2_t *);
typedef nvmlReturn_t (*cmg__pfn_nvmlDeviceGetUUID)(nvmlDevice_t, char *,
                                                   unsigned int);

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
    __attribute__((visibility("default")));
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
                                        nvmlMemory_v2_t *memory)
    __attribute__((visibility("default")));

#endif /* CMG_NVML_ABI_H */
