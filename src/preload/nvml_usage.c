/*
 * What NVML says the process holds on each device, and its list of the
 * card's processes: read as each context is made (footprint.c) and again
 * before each report, so that what modules and the driver took after a
 * context was made shows as unexplained.  NVML is loaded here if the
 * program has not loaded it.  A report written as the process dies reads
 * nothing here: it does not wait on the driver.
 *
 * NVML numbers processes by the host's pids: in a container's PID
 * namespace the process is listed under a pid it does not know itself by,
 * which footprint.c finds as a context is made and keeps here as the
 * device's alias.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "preload/device.h"
#include "preload/hooks/nvml_abi.h"
#include "preload/nvml_usage.h"
#include "preload/real.h"
#include "runtime/ledger/driver_held.h"

/* The pid NVML lists this process under on each device, where that is not
 * getpid() (a PID namespace); 0 while none is known. */
static _Atomic unsigned aliases[CMG__MAX_DEVICES];
/* NVML's figure as the program ended, kept for the exit report. */
static atomic_bool final;

static pthread_once_t nvml_once = PTHREAD_ONCE_INIT;
static nvmlReturn_t nvml_rc = -1;

/* NVML is loaded here if the program has not loaded it, and kept: the
 * measurement needs it whether the program uses it or not. */
static void
nvml_start(void)
{
  if (dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL) == NULL)
    return;
  cmg__pfn_nvmlInit_v2 init = cmg__real(CMG__FN_nvmlInit_v2);
  nvml_rc = init != NULL ? init() : -1;
}

/* The process's entry in the list of CUDA device `device` (NVML's dev),
 * kept in *l, or where it is not: 0 with its bytes, 1 not listed, -1 with
 * a reason. */
static int
listed_usage(int device, nvmlDevice_t dev, struct cmg__nvml_listing *l,
             uint64_t *bytes, char *r, size_t len)
{
  cmg__pfn_nvmlDeviceGetComputeRunningProcesses_v3 list =
      cmg__real(CMG__FN_nvmlDeviceGetComputeRunningProcesses_v3);
  nvmlProcessInfo_t buf[CMG__NVML_LISTED], *infos = buf;
  unsigned n = CMG__NVML_LISTED;
  nvmlReturn_t rc = list != NULL ? list(dev, &n, infos) : -1;
  if (rc == NVML_ERROR_INSUFFICIENT_SIZE &&
      (infos = calloc(n += 8, sizeof(*infos))) != NULL)
    rc = list(dev, &n, infos);
  int found = -1;
  unsigned alias = atomic_load(&aliases[device]);
  l->n = rc == NVML_SUCCESS ? n : 0;
  for (unsigned i = 0; rc == NVML_SUCCESS && i < n; i++) {
    if (infos[i].pid == (unsigned)getpid() ||
        (alias != 0 && infos[i].pid == alias))
      found = (int)i;
    if (i < CMG__NVML_LISTED) {
      l->pid[i] = infos[i].pid;
      l->bytes[i] = infos[i].usedGpuMemory;
    }
  }
  if (list == NULL)
    snprintf(r, len,
             "this NVML has no nvmlDeviceGetComputeRunningProcesses_v3");
  else if (rc == NVML_ERROR_NO_PERMISSION)
    snprintf(r, len, "NVML refused the list of processes (no permission)");
  else if (rc != NVML_SUCCESS)
    snprintf(r, len, "NVML could not list the processes (error %d)", rc);
  else if (found >= 0 && infos[found].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE)
    snprintf(r, len, "NVML does not know the process's usage");
  int out = rc != NVML_SUCCESS ? -1 : found < 0 ? 1 : 0;
  if (out == 0 && infos[found].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE)
    out = -1;
  if (out == 0)
    *bytes = infos[found].usedGpuMemory;
  if (infos != buf)
    free(infos);
  return out;
}

/* NVML's handle of CUDA device `device`: 0, or -1 with a reason in r. */
static int
nvml_device(int device, nvmlDevice_t *dev, char *r, size_t len)
{
  pthread_once(&nvml_once, nvml_start);
  cmg__pfn_nvmlDeviceGetHandleByUUID by_uuid =
      cmg__real(CMG__FN_nvmlDeviceGetHandleByUUID);
  char uuid[48];
  nvmlReturn_t rc;
  if (cmg__real(CMG__FN_nvmlInit_v2) == NULL)
    snprintf(r, len, "no NVML (libnvidia-ml.so.1 not found)");
  else if (nvml_rc != NVML_SUCCESS)
    snprintf(r, len, "NVML did not start (error %d)", nvml_rc);
  else if (cmg__device_uuid(device, uuid, sizeof(uuid)) < 0)
    snprintf(r, len, "the driver gave no UUID to match NVML's device with");
  else if (by_uuid == NULL || (rc = by_uuid(uuid, dev)) != NVML_SUCCESS)
    snprintf(r, len, "NVML does not know %s", uuid);
  else
    return 0;
  return -1;
}

int
cmg__nvml_usage(int device, struct cmg__nvml_listing *l, uint64_t *bytes,
                char *r, size_t len)
{
  nvmlDevice_t dev;
  l->n = 0;
  if (nvml_device(device, &dev, r, len) < 0)
    return -1;
  return listed_usage(device, dev, l, bytes, r, len);
}

bool
cmg__nvml_card_used(int device, uint64_t *used)
{
  cmg__pfn_nvmlDeviceGetMemoryInfo info =
      cmg__real(CMG__FN_nvmlDeviceGetMemoryInfo);
  nvmlDevice_t dev;
  nvmlMemory_t m;
  char r[160];
  if (info == NULL || nvml_device(device, &dev, r, sizeof(r)) < 0 ||
      info(dev, &m) != NVML_SUCCESS)
    return false;
  *used = m.used;
  return true;
}

void
cmg__nvml_usage_alias(int device, unsigned pid)
{
  if (device >= 0 && device < CMG__MAX_DEVICES)
    atomic_store(&aliases[device], pid);
}

void
cmg__nvml_usage_forget(void)
{
  for (int d = 0; d < CMG__MAX_DEVICES; d++)
    atomic_store(&aliases[d], 0);
}

void
cmg__nvml_usage_refresh(void)
{
  if (atomic_load(&final))
    return;
  for (int d = 0; d < CMG__MAX_DEVICES; d++) {
    struct cmg__footprint f;
    if (cmg__footprint_get(d, &f) < 0)
      continue;
    char r[sizeof(f.why)];
    struct cmg__nvml_listing l;
    uint64_t bytes = 0;
    bool has = cmg__nvml_usage(d, &l, &bytes, r, sizeof(r)) == 0;
    cmg__footprint_set_process(d, has, bytes);
  }
}

void
cmg__nvml_usage_final(void)
{
  cmg__nvml_usage_refresh();
  atomic_store(&final, true);
}
