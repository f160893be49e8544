/*
 * NVML's memory queries, so that tools sizing memory through NVML (vLLM's
 * profiling, pynvml, nvidia-smi-like monitors inside the job) see the limit
 * as cuMemGetInfo shows it (HAMi-core#181).
 *
 * NVML numbers every GPU of the machine and ignores CUDA_VISIBLE_DEVICES,
 * so an NVML device is matched to the CUDA ordinal with the same UUID
 * (mixing the two numberings is HAMi's #1381).  That needs CUDA initialized
 * in the process; before that, and for GPUs the process cannot see, NVML's
 * own answer stands.  Matches are cached: a process has a few devices.
 * The list of processes gets the same view for the process itself.
 */
#include "config.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "preload/account.h"
#include "preload/device.h"
#include "preload/hooks/hooks.h"
#include "preload/fn.h"

#include "preload/start.h"
#include "preload/real.h"

#define MAX_MATCHES 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  nvmlDevice_t device;
  int ordinal;
} matches[MAX_MATCHES];
static size_t n_matches;

/* The CUDA ordinal of an NVML device, or -1. */
static int
ordinal_of(nvmlDevice_t device)
{
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < n_matches; i++)
    if (matches[i].device == device) {
      int ordinal = matches[i].ordinal;
      pthread_mutex_unlock(&lock);
      return ordinal;
    }
  pthread_mutex_unlock(&lock);

  cmg__pfn_nvmlDeviceGetUUID get_uuid = cmg__real(CMG__FN_nvmlDeviceGetUUID);
  cmg__pfn_cuDeviceGetCount count = REAL(cuDeviceGetCount);
  char want[96], have[48];
  int n = 0;
  if (get_uuid == NULL || count == NULL ||
      get_uuid(device, want, sizeof(want)) != NVML_SUCCESS ||
      count(&n) != CUDA_SUCCESS)
    return -1;
  int ordinal = -1;
  for (int i = 0; i < n && i < CMG__MAX_DEVICES && ordinal < 0; i++)
    if (cmg__device_uuid(i, have, sizeof(have)) == 0 && strcmp(want, have) == 0)
      ordinal = i;
  pthread_mutex_lock(&lock);
  if (n_matches < MAX_MATCHES)
    matches[n_matches++] = (__typeof__(matches[0])){ device, ordinal };
  pthread_mutex_unlock(&lock);
  return ordinal;
}

/* Lowers free and total to the limit of the matching CUDA device; false
 * when there is none (no match, CUDA not initialized, no limit). */
static bool
limit_view(nvmlDevice_t device, unsigned long long *free,
           unsigned long long *total)
{
  cmg__init();
  int ordinal = ordinal_of(device);
  if (ordinal < 0)
    return false;
  uint64_t f = *free, t = *total;
  cmg__virtual_meminfo(ordinal, &f, &t);
  *free = f;
  *total = t;
  return true;
}

nvmlReturn_t
nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
  cmg__pfn_nvmlDeviceGetMemoryInfo real =
      cmg__real(CMG__FN_nvmlDeviceGetMemoryInfo);
  if (real == NULL)
    return 3; /* NVML_ERROR_NOT_SUPPORTED: no NVML loaded to answer */
  nvmlReturn_t rc = real(device, memory);
  if (rc == NVML_SUCCESS && memory != NULL &&
      limit_view(device, &memory->free, &memory->total))
    memory->used = memory->total - memory->free;
  return rc;
}

nvmlReturn_t
nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
  cmg__pfn_nvmlDeviceGetMemoryInfo_v2 real =
      cmg__real(CMG__FN_nvmlDeviceGetMemoryInfo_v2);
  if (real == NULL)
    return 3;
  nvmlReturn_t rc = real(device, memory);
  if (rc == NVML_SUCCESS && memory != NULL &&
      limit_view(device, &memory->free, &memory->total)) {
    uint64_t held = memory->total - memory->free;
    if (memory->reserved > held)
      memory->reserved = 0;
    memory->used = held - memory->reserved;
  }
  return rc;
}

/* The process's own entry in a device's list of processes says, under a
 * limit, what the limit counts, as cuMemGetInfo's used and NVML's memory
 * information do: one figure for the process in every view.  Entries
 * start with the same two fields in every version of the list. */
static void
own_entry(nvmlDevice_t device, unsigned n, void *infos, size_t stride)
{
  cmg__init();
  int ordinal = ordinal_of(device);
  uint64_t used;
  if (ordinal < 0 || !cmg__virtual_used(ordinal, &used))
    return;
  for (unsigned i = 0; i < n; i++) {
    nvmlProcessInfo_v1_t *p =
        (nvmlProcessInfo_v1_t *)((char *)infos + (size_t)i * stride);
    if (p->pid == (unsigned)getpid() &&
        p->usedGpuMemory != NVML_VALUE_NOT_AVAILABLE)
      p->usedGpuMemory = used;
  }
}

#define PROCESSES_HOOK(name, type)                                             \
  nvmlReturn_t name(nvmlDevice_t device, unsigned int *infoCount, type *infos) \
  {                                                                            \
    cmg__pfn_##name real = cmg__real(CMG__FN_##name);                          \
    if (real == NULL)                                                          \
      return 3;                                                                \
    nvmlReturn_t rc = real(device, infoCount, infos);                          \
    if (rc == NVML_SUCCESS && infos != NULL && infoCount != NULL)              \
      own_entry(device, *infoCount, infos, sizeof(*infos));                    \
    return rc;                                                                 \
  }

PROCESSES_HOOK(nvmlDeviceGetComputeRunningProcesses, nvmlProcessInfo_v1_t)
PROCESSES_HOOK(nvmlDeviceGetComputeRunningProcesses_v2, nvmlProcessInfo_t)
PROCESSES_HOOK(nvmlDeviceGetComputeRunningProcesses_v3, nvmlProcessInfo_t)
