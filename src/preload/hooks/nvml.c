/*
 * NVML's memory queries, so that tools sizing memory through NVML (vLLM's
 * profiling, pynvml, nvidia-smi-like monitors inside the job) see the limit
 * as cuMemGetInfo shows it (HAMi-core#181).
 *
 * NVML numbers every GPU of the machine and ignores CUDA_VISIBLE_DEVICES,
 * so an NVML device is matched to the CUDA ordinal with the same UUID
 * (mixing the two numberings is HAMi's #1381).  Matches are cached: a
 * process has a few devices.  For GPUs the process cannot see, NVML's own
 * answer stands.
 *
 * A process that has not started CUDA cannot ask it, and must not start it
 * here: a server's launcher reads NVML before it forks its workers, and
 * CUDA does not survive a fork.  Such a process (nvidia-smi run by a
 * guarded program, SGLang's `nvidia-smi --query-gpu=memory.total`, vLLM's
 * launcher) finds the ordinal as CUDA will give it, from
 * CUDA_VISIBLE_DEVICES; it holds nothing, so it sees its caps, and its
 * group's usage under a group's cap.
 *
 * The list of processes gets the same view for the process itself.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "core/conf_gpu.h"
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

/* The ordinal CUDA gives an NVML device, or -1; *cuda is false where CUDA
 * is not loaded or not initialized in this process and could not tell. */
static int
cuda_ordinal(nvmlDevice_t device, bool *cuda)
{
  *cuda = true;
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
  CUresult rc = count != NULL ? count(&n) : CUDA_ERROR_NOT_INITIALIZED;
  *cuda = rc != CUDA_ERROR_NOT_INITIALIZED;
  if (get_uuid == NULL || rc != CUDA_SUCCESS ||
      get_uuid(device, want, sizeof(want)) != NVML_SUCCESS)
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

/* The GPUs as NVML numbers them: their handles and UUIDs, and whether they
 * are all one model. */
struct gpus {
  unsigned n;
  nvmlDevice_t handle[CMG__MAX_DEVICES];
  char uuid[CMG__MAX_DEVICES][48];
  bool one_model;
};

static bool
list_gpus(struct gpus *g)
{
  cmg__pfn_nvmlDeviceGetCount_v2 count =
      cmg__real(CMG__FN_nvmlDeviceGetCount_v2);
  cmg__pfn_nvmlDeviceGetHandleByIndex_v2 handle =
      cmg__real(CMG__FN_nvmlDeviceGetHandleByIndex_v2);
  cmg__pfn_nvmlDeviceGetUUID uuid = cmg__real(CMG__FN_nvmlDeviceGetUUID);
  cmg__pfn_nvmlDeviceGetName name = cmg__real(CMG__FN_nvmlDeviceGetName);
  char first[96] = "", model[96];
  if (count == NULL || handle == NULL || uuid == NULL || name == NULL ||
      count(&g->n) != NVML_SUCCESS)
    return false;
  if (g->n > CMG__MAX_DEVICES)
    g->n = CMG__MAX_DEVICES;
  g->one_model = true;
  for (unsigned i = 0; i < g->n; i++) {
    if (handle(i, &g->handle[i]) != NVML_SUCCESS ||
        uuid(g->handle[i], g->uuid[i], sizeof(g->uuid[i])) != NVML_SUCCESS ||
        name(g->handle[i], model, sizeof(model)) != NVML_SUCCESS)
      return false;
    if (i == 0)
      snprintf(first, sizeof(first), "%s", model);
    g->one_model &= strcmp(first, model) == 0;
  }
  return true;
}

/* The NVML index CUDA_VISIBLE_DEVICES' entry [p, p + len) names, or -1 for
 * an entry that names no GPU, which ends the list for CUDA: a GPU index,
 * taken as NVML's only where CUDA numbers the GPUs as NVML does (by PCI
 * bus: under CUDA_DEVICE_ORDER=PCI_BUS_ID, and by default among GPUs of one
 * model, which fastest-first orders by bus), or a UUID's unique prefix. */
static int
visible_entry(const struct gpus *g, const char *p, size_t len, bool by_bus)
{
  if (len >= 4 && strncmp(p, "GPU-", 4) == 0) {
    int found = -1;
    for (unsigned i = 0; i < g->n; i++)
      if (strncmp(g->uuid[i], p, len) == 0) {
        if (found >= 0)
          return -1;
        found = (int)i;
      }
    return found;
  }
  unsigned long index = 0;
  size_t i = 0;
  for (; i < len && p[i] >= '0' && p[i] <= '9' && index < g->n; i++)
    index = index * 10 + (unsigned long)(p[i] - '0');
  return i == len && len > 0 && index < g->n && by_bus ? (int)index : -1;
}

/* Where CUDA cannot tell, the ordinal it will give an NVML device, read
 * from CUDA_VISIBLE_DEVICES as CUDA reads it (entries separated by commas,
 * blanks around them ignored, the list ending at the first entry that names
 * no GPU or one already listed), or -1 where that cannot be known (MIG
 * instances, GPU indexes with CUDA's order unknown). */
static int
visible_ordinal(nvmlDevice_t device)
{
  struct gpus g;
  if (!list_gpus(&g))
    return -1;
  const char *order = getenv("CUDA_DEVICE_ORDER");
  bool by_bus =
      g.one_model || (order != NULL && strcmp(order, "PCI_BUS_ID") == 0);
  const char *v = getenv("CUDA_VISIBLE_DEVICES");
  for (unsigned i = 0; v == NULL && i < g.n; i++)
    if (g.handle[i] == device)
      return by_bus ? (int)i : -1;
  uint64_t listed = 0;
  for (int ordinal = 0; v != NULL && ordinal < CMG__MAX_DEVICES; ordinal++) {
    v += strspn(v, " \t");
    size_t len = strcspn(v, ",");
    size_t end = len;
    while (end > 0 && (v[end - 1] == ' ' || v[end - 1] == '\t'))
      end--;
    int index = visible_entry(&g, v, end, by_bus);
    if (index < 0 || (listed >> index & 1))
      return -1;
    if (g.handle[index] == device)
      return ordinal;
    listed |= 1ULL << index;
    v = v[len] == ',' ? v + len + 1 : NULL;
  }
  return -1;
}

/* Lowers free and total to the caps of the matching CUDA device; false
 * when there is none (no match, or no ordinal known). */
static bool
limit_view(nvmlDevice_t device, unsigned long long *free,
           unsigned long long *total)
{
  cmg__init();
  bool cuda;
  int ordinal = cuda_ordinal(device, &cuda);
  if (!cuda)
    ordinal = visible_ordinal(device);
  if (ordinal < 0)
    return false;
  uint64_t f = *free, t = *total;
  if (cuda) {
    cmg__virtual_meminfo(ordinal, &f, &t);
  } else {
    cmg__pfn_nvmlDeviceGetUUID get = cmg__real(CMG__FN_nvmlDeviceGetUUID);
    char text[96];
    unsigned char u[CMG__UUID_BYTES];
    bool known = get != NULL &&
                 get(device, text, sizeof(text)) == NVML_SUCCESS &&
                 cmg__uuid_parse(text, strlen(text), u) == 0;
    cmg__virtual_meminfo_no_cuda(ordinal, known ? u : NULL, t, &f, &t);
  }
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
  bool cuda;
  int ordinal = cuda_ordinal(device, &cuda);
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
