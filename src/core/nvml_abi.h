/*
 * The few NVML types and functions cumemguard wraps or calls: the
 * library and the device plugin.  NVIDIA's
 * nvml.h is not installed with the CUDA toolkit here, so they are declared
 * by hand, following the ABI NVIDIA documents for nvml.h (NVML API
 * Reference: nvmlReturn_t, nvmlDevice_t, nvmlMemory_t, nvmlMemory_v2_t and
 * the nvmlMemory_v2 version word, nvmlProcessInfo_v1_t and nvmlProcessInfo_t
 * with the codes the process list returns; the count, handle and name calls
 * that number the GPUs).  Nothing else of NVML is used.
 */
#ifndef CMG_CORE_NVML_ABI_H
#define CMG_CORE_NVML_ABI_H

typedef int nvmlReturn_t; /* NVML_SUCCESS is 0 */
#define NVML_SUCCESS 0
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

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

/* A process on a device: the first two fields are version 1's. */
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef nvmlReturn_t (*cmg__pfn_nvmlInit_v2)(void);
typedef const char *(*cmg__pfn_nvmlErrorString)(nvmlReturn_t);
typedef nvmlReturn_t (*cmg__pfn_nvmlDeviceGetHandleByUUID)(const char *,
                                                           nvmlDevice_t *);
typedef nvmlReturn_t (*cmg__pfn_nvmlDeviceGetComputeRunningProcesses)(
    nvmlDevice_t, unsigned int *, nvmlProcessInfo_v1_t *);
typedef nvmlReturn_t (*cmg__pfn_nvmlDeviceGetComputeRunningProcesses_v2)(
    nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
typedef nvmlReturn_t (*cmg__pfn_nvmlDeviceGetComputeRunningProcesses_v3)(
    nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
typedef nvmlReturn_t (*cmg__pfn_nvmlDeviceGetMemoryInfo)(nvmlDevice_t,
                                                         nvmlMemory_t *);
typedef nvmlReturn_t (*cmg__pfn_nvmlDeviceGetMemoryInfo_v2)(nvmlDevice_t,
                                                            nvmlMemory_v2_t *);
typedef nvmlReturn_t (*cmg__pfn_nvmlDeviceGetUUID)(nvmlDevice_t, char *,
                                                   unsigned int);
typedef nvmlReturn_t (*cmg__pfn_nvmlDeviceGetCount_v2)(unsigned int *);
typedef nvmlReturn_t (*cmg__pfn_nvmlDeviceGetHandleByIndex_v2)(unsigned int,
                                                               nvmlDevice_t *);
typedef nvmlReturn_t (*cmg__pfn_nvmlDeviceGetName)(nvmlDevice_t, char *,
                                                   unsigned int);

#endif /* CMG_CORE_NVML_ABI_H */
