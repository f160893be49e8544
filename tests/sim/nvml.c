/*
 * The simulated NVML: libnvidia-ml.so.1, as much of it as memory reports
 * need (nvml_abi.h lists it).
 *
 * Like the real NVML it numbers every physical device and ignores
 * CUDA_VISIBLE_DEVICES, and a device's UUID is the one the driver reports
 * for it, so a tool can match NVML devices to CUDA ordinals by UUID.  The
 * numbers come from the simulated driver's own accounting: nvmlInit loads
 * libcuda.so.1 (the same copy the process uses, if it has one) and asks
 * its cmgsim_physical* exports.  "used" is all this process holds on the
 * device (allocations and the contexts' cost), nvidia-smi's view of a GPU
 * with one process on it; "reserved" is always 0.  Nothing needs cuInit.
 *
 * nvmlDeviceGetComputeRunningProcesses lists that one process, with all
 * it holds on the device but what the driver keeps for itself with each
 * context, as the real one lists every process.  The
 * environment can make it look like a process in a container
 * (CMG_SIM_NVML_PID, the host's pid where NVML reports one, or
 * CMG_SIM_NVML_PIDNS, a PID namespace whose pids the host numbers N
 * higher), one that may not list processes (CMG_SIM_NVML_PROCESSES=
 * denied), or one that shares the card with other processes
 * (CMG_SIM_NVML_OTHERS, there from the start, and CMG_SIM_NVML_RIVAL, one
 * that starts with this process), all of which an interposer reading NVML
 * must survive.  The others' memory is NVML's only: the driver's free
 * memory does not see it.
 *
 * State (the init count and the device table) is under one mutex; the
 * driver's functions are resolved once and kept, and libcuda is never
 * unloaded.  Linked -Bsymbolic like the driver.
 */
#include "nvml_abi.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NVML_EXPORT __attribute__((visibility("default")))
#define MAX_DEVICES 16
#define UUID_TEXT 41
/* gpuInstanceId and computeInstanceId without MIG. */
#define NOT_MIG 0xFFFFFFFFu

struct nvmlDevice_st {
  int phys;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int inits;
static unsigned int ndevices;
static struct nvmlDevice_st devices[MAX_DEVICES];
static int (*physical_count)(void);
static int (*physical)(int phys, char *uuid, unsigned long long *total,
                       unsigned long long *used, unsigned long long *process);
/* From the environment, at the first nvmlInit that finds it well formed;
 * unchanged after. */
#define MAX_OTHERS 8

/* A process of the card other than this one. */
struct other {
  unsigned int pid; /* 0: it holds memory but is not listed */
  unsigned long long bytes;
};

static bool env_read;
static unsigned int opt_pid;   /* CMG_SIM_NVML_PID; 0: getpid() */
static unsigned int opt_pidns; /* CMG_SIM_NVML_PIDNS: added to getpid() */
static bool opt_denied;        /* CMG_SIM_NVML_PROCESSES=denied */
static struct other others[MAX_OTHERS]; /* CMG_SIM_NVML_OTHERS */
static unsigned int n_others;
static struct other rival; /* CMG_SIM_NVML_RIVAL; bytes 0: none */

/* A whole number from 1 to UINT_MAX at *s, up to a character of `ends`:
 * true with *out, *s past it. */
static bool
number(const char **s, const char *ends, unsigned long *out)
{
  char *end;
  errno = 0;
  unsigned long n = strtoul(*s, &end, 10);
  if (**s < '0' || **s > '9' || strchr(ends, *end) == NULL || errno != 0 ||
      n > UINT_MAX)
    return false;
  *out = n;
  *s = end;
  return true;
}

/* PID:SIZE (SIZE with an optional K, M, G or T, binary) at *s, up to ','
 * or the end: true with *o, *s past it. */
static bool
process(const char **s, struct other *o)
{
  unsigned long pid, n;
  if (!number(s, ":", &pid) || *(*s)++ != ':' || !number(s, "KMGT,", &n))
    return false;
  int shift = 0;
  if (**s != '\0' && **s != ',')
    shift = (int)(strchr("KMGT", *(*s)++) - "KMGT" + 1) * 10;
  if (**s != '\0' && **s != ',')
    return false;
  o->pid = (unsigned int)pid;
  o->bytes = (unsigned long long)n << shift;
  return o->bytes > 0;
}

/* false, after a message naming it, for a malformed variable. */
static bool
read_env(void)
{
  const char *pid = getenv("CMG_SIM_NVML_PID");
  const char *ns = getenv("CMG_SIM_NVML_PIDNS");
  const char *procs = getenv("CMG_SIM_NVML_PROCESSES");
  const char *list = getenv("CMG_SIM_NVML_OTHERS");
  const char *r = getenv("CMG_SIM_NVML_RIVAL");
  unsigned long n = 0, off = 0;
  if (pid != NULL && *pid != '\0' && (!number(&pid, "", &n) || n == 0)) {
    fprintf(stderr, "cmgsim: CMG_SIM_NVML_PID=%s: expected a pid\n", pid);
    return false;
  }
  if (ns != NULL && *ns != '\0' && (!number(&ns, "", &off) || off == 0)) {
    fprintf(stderr,
            "cmgsim: CMG_SIM_NVML_PIDNS=%s: expected how much higher the "
            "host numbers the pids (a whole number above 0)\n",
            ns);
    return false;
  }
  bool denied = procs != NULL && strcmp(procs, "denied") == 0;
  if (procs != NULL && *procs != '\0' && !denied) {
    fprintf(stderr, "cmgsim: CMG_SIM_NVML_PROCESSES=%s: expected denied\n",
            procs);
    return false;
  }
  n_others = 0;
  for (const char *s = list; s != NULL && *s != '\0'; s += *s == ',') {
    if (n_others == MAX_OTHERS || !process(&s, &others[n_others]) ||
        others[n_others].pid == 0) {
      fprintf(stderr,
              "cmgsim: CMG_SIM_NVML_OTHERS=%s: expected up to %d PID:SIZE "
              "separated by ',' (1234:300M)\n",
              list, MAX_OTHERS);
      return false;
    }
    n_others++;
  }
  rival.bytes = 0;
  const char *s = r;
  if (r != NULL && *r != '\0' && (!process(&s, &rival) || *s != '\0')) {
    fprintf(stderr,
            "cmgsim: CMG_SIM_NVML_RIVAL=%s: expected PID:SIZE (0:SIZE: not "
            "listed)\n",
            r);
    return false;
  }
  opt_pid = (unsigned int)n;
  opt_pidns = (unsigned int)off;
  opt_denied = denied;
  env_read = true;
  return true;
}

/* What the other processes hold on a device where this one holds `mine`:
 * those there from the start, and the rival once this one holds any. */
static unsigned long long
others_bytes(unsigned long long mine)
{
  unsigned long long sum = mine > 0 ? rival.bytes : 0;
  for (unsigned int i = 0; i < n_others; i++)
    sum += others[i].bytes;
  return sum;
}

static nvmlReturn_t
init(void)
{
  nvmlReturn_t rc = NVML_SUCCESS;
  pthread_mutex_lock(&lock);
  if (!env_read && !read_env())
    rc = NVML_ERROR_UNKNOWN;
  if (rc == NVML_SUCCESS && physical == NULL) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    if (h != NULL) {
      physical_count = (int (*)(void))dlsym(h, "cmgsim_physical_count");
      physical = (int (*)(int, char *, unsigned long long *,
                          unsigned long long *, unsigned long long *))dlsym(
          h, "cmgsim_physical");
    }
    if (physical_count == NULL || physical == NULL) {
      physical = NULL;
      rc = NVML_ERROR_DRIVER_NOT_LOADED;
    }
  }
  if (rc == NVML_SUCCESS) {
    int n = physical_count();
    if (n < 0) {
      rc = NVML_ERROR_UNKNOWN;
    } else {
      ndevices = n > MAX_DEVICES ? MAX_DEVICES : (unsigned int)n;
      for (unsigned int i = 0; i < ndevices; i++)
        devices[i].phys = (int)i;
      inits++;
    }
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

NVML_EXPORT nvmlReturn_t
nvmlInit_v2(void)
{
  return init();
}

NVML_EXPORT nvmlReturn_t
nvmlInit(void)
{
  return init();
}

NVML_EXPORT nvmlReturn_t
nvmlShutdown(void)
{
  nvmlReturn_t rc = NVML_SUCCESS;
  pthread_mutex_lock(&lock);
  if (inits == 0)
    rc = NVML_ERROR_UNINITIALIZED;
  else
    inits--;
  pthread_mutex_unlock(&lock);
  return rc;
}

static bool
is_initialized(void)
{
  pthread_mutex_lock(&lock);
  bool yes = inits > 0;
  pthread_mutex_unlock(&lock);
  return yes;
}

/* Whether the physical device is listed in the file CMG_SIM_NVML_LOST
 * names, read again at each call: a test loses a GPU and gets it back
 * while a program runs, as a GPU that falls off the bus does. */
static bool
is_lost(int phys)
{
  const char *path = getenv("CMG_SIM_NVML_LOST");
  char buf[256];
  FILE *f;

  if (path == NULL || *path == '\0' || (f = fopen(path, "re")) == NULL)
    return false;
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  for (char *p = buf; *p != '\0';) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p) {
      p++;
      continue;
    }
    if (v == phys)
      return true;
    p = end;
  }
  return false;
}

/* The device behind a handle; NVML_SUCCESS or the error to return. */
static nvmlReturn_t
check_device(nvmlDevice_t device)
{
  if (!is_initialized())
    return NVML_ERROR_UNINITIALIZED;
  if (device == NULL || device < devices || device >= devices + ndevices)
    return NVML_ERROR_INVALID_ARGUMENT;
  if (is_lost(device->phys))
    return NVML_ERROR_GPU_IS_LOST;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t
nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
  if (!is_initialized())
    return NVML_ERROR_UNINITIALIZED;
  if (deviceCount == NULL)
    return NVML_ERROR_INVALID_ARGUMENT;
  *deviceCount = ndevices;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t
nvmlDeviceGetCount(unsigned int *deviceCount)
{
  return nvmlDeviceGetCount_v2(deviceCount);
}

NVML_EXPORT nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
  if (!is_initialized())
    return NVML_ERROR_UNINITIALIZED;
  if (device == NULL || index >= ndevices)
    return NVML_ERROR_INVALID_ARGUMENT;
  *device = &devices[index];
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t
nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}

NVML_EXPORT nvmlReturn_t
nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
  if (!is_initialized())
    return NVML_ERROR_UNINITIALIZED;
  if (uuid == NULL || device == NULL)
    return NVML_ERROR_INVALID_ARGUMENT;
  for (unsigned int i = 0; i < ndevices; i++) {
    char text[UUID_TEXT];
    if (physical(devices[i].phys, text, NULL, NULL, NULL) == 0 &&
        strcmp(text, uuid) == 0) {
      *device = &devices[i];
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

NVML_EXPORT nvmlReturn_t
nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
  nvmlReturn_t rc = check_device(device);
  if (rc != NVML_SUCCESS)
    return rc;
  char text[UUID_TEXT];
  if (uuid == NULL || physical(device->phys, text, NULL, NULL, NULL) != 0)
    return NVML_ERROR_INVALID_ARGUMENT;
  if (length < strlen(text) + 1)
    return NVML_ERROR_INSUFFICIENT_SIZE;
  memcpy(uuid, text, strlen(text) + 1);
  return NVML_SUCCESS;
}

/* The driver's name for the same physical device. */
NVML_EXPORT nvmlReturn_t
nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
  nvmlReturn_t rc = check_device(device);
  if (rc != NVML_SUCCESS)
    return rc;
  if (name == NULL)
    return NVML_ERROR_INVALID_ARGUMENT;
  char text[NVML_DEVICE_NAME_BUFFER_SIZE];
  int n = snprintf(text, sizeof(text), "cumemguard simulated GPU %d",
                   device->phys);
  if (length < (unsigned int)n + 1)
    return NVML_ERROR_INSUFFICIENT_SIZE;
  memcpy(name, text, (size_t)n + 1);
  return NVML_SUCCESS;
}

static nvmlReturn_t
memory(nvmlDevice_t device, unsigned long long *total,
       unsigned long long *used)
{
  nvmlReturn_t rc = check_device(device);
  if (rc != NVML_SUCCESS)
    return rc;
  if (physical(device->phys, NULL, total, used, NULL) != 0)
    return NVML_ERROR_UNKNOWN;
  *used += others_bytes(*used);
  if (*used > *total)
    *used = *total;
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t
nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *mem)
{
  if (mem == NULL)
    return is_initialized() ? NVML_ERROR_INVALID_ARGUMENT
                            : NVML_ERROR_UNINITIALIZED;
  unsigned long long total, used;
  nvmlReturn_t rc = memory(device, &total, &used);
  if (rc != NVML_SUCCESS)
    return rc;
  mem->total = total;
  mem->used = used;
  mem->free = total - used;
  return NVML_SUCCESS;
}

/* The caller sets memory->version to nvmlMemory_v2 first. */
NVML_EXPORT nvmlReturn_t
nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *mem)
{
  if (mem == NULL)
    return is_initialized() ? NVML_ERROR_INVALID_ARGUMENT
                            : NVML_ERROR_UNINITIALIZED;
  if (mem->version != nvmlMemory_v2)
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  unsigned long long total, used;
  nvmlReturn_t rc = memory(device, &total, &used);
  if (rc != NVML_SUCCESS)
    return rc;
  mem->total = total;
  mem->reserved = 0;
  mem->used = used;
  mem->free = total - used;
  return NVML_SUCCESS;
}

/* The compute processes on a device, into an array of v1 structs or of
 * the later ones: this process, if it holds anything there (used > 0),
 * with the driver's count of all it holds but the driver's own share of
 * its contexts, then the others, then the rival while this process holds
 * anything (unless its pid is 0).  *infoCount is the array's
 * size on entry and the number of processes on return; too small, it
 * says how many are needed. */
static nvmlReturn_t
processes(nvmlDevice_t device, unsigned int *infoCount, void *infos, bool v1)
{
  nvmlReturn_t rc = check_device(device);
  if (rc != NVML_SUCCESS)
    return rc;
  if (infoCount == NULL)
    return NVML_ERROR_INVALID_ARGUMENT;
  if (opt_denied)
    return NVML_ERROR_NO_PERMISSION;
  unsigned long long used, mine;
  if (physical(device->phys, NULL, NULL, &used, &mine) != 0)
    return NVML_ERROR_UNKNOWN;
  struct other list[MAX_OTHERS + 2];
  unsigned int n = 0;
  if (used > 0)
    list[n++] = (struct other){ opt_pid != 0 ? opt_pid
                                             : (unsigned int)getpid() + opt_pidns,
                                mine };
  for (unsigned int i = 0; i < n_others; i++)
    list[n++] = others[i];
  if (used > 0 && rival.bytes > 0 && rival.pid != 0)
    list[n++] = rival;
  if (*infoCount < n) {
    *infoCount = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (n > 0 && infos == NULL)
    return NVML_ERROR_INVALID_ARGUMENT;
  *infoCount = n;
  for (unsigned int i = 0; i < n; i++) {
    if (v1) {
      nvmlProcessInfo_v1_t *p = (nvmlProcessInfo_v1_t *)infos + i;
      p->pid = list[i].pid;
      p->usedGpuMemory = list[i].bytes;
    } else {
      nvmlProcessInfo_t *p = (nvmlProcessInfo_t *)infos + i;
      p->pid = list[i].pid;
      p->usedGpuMemory = list[i].bytes;
      p->gpuInstanceId = NOT_MIG;
      p->computeInstanceId = NOT_MIG;
    }
  }
  return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t
nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                        unsigned int *infoCount,
                                        nvmlProcessInfo_t *infos)
{
  return processes(device, infoCount, infos, false);
}

NVML_EXPORT nvmlReturn_t
nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
                                        unsigned int *infoCount,
                                        nvmlProcessInfo_v2_t *infos)
{
  return processes(device, infoCount, infos, false);
}

NVML_EXPORT nvmlReturn_t
nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
                                     unsigned int *infoCount,
                                     nvmlProcessInfo_v1_t *infos)
{
  return processes(device, infoCount, infos, true);
}

NVML_EXPORT const char *
nvmlErrorString(nvmlReturn_t result)
{
  switch (result) {
  case NVML_SUCCESS: return "Success";
  case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
  case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
  case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
  case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
  case NVML_ERROR_NOT_FOUND: return "Not Found";
  case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
  case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
  case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
    return "Argument Version Mismatch";
  default: return "Unknown Error";
  }
}
