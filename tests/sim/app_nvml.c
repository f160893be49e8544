/*
 * The NVML operations of the script interpreter: memory, UUIDs, the
 * device count and the list of compute processes, as a tool that watches
 * the GPU reads them.  app_driver calls NVML by name (its backend's
 * table); the other programs dlopen libnvidia-ml.so.1, as frameworks and
 * monitoring libraries do.  None of them starts CUDA, so a script can
 * read NVML before, between and after its CUDA calls.  See README.md for
 * each operation's output line.
 */
#include "app_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* NVML as this program reaches it: its own table, or dlopen and dlsym of
 * libnvidia-ml.so.1.  NULL when there is none. */
static const struct app_nvml *
nvml_table(void)
{
  static struct app_nvml t;
  static bool tried;
  if (app_be->nvml != NULL)
    return app_be->nvml();
  if (!tried) {
    tried = true;
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (h != NULL) {
      t.init = (__typeof__(t.init))dlsym(h, "nvmlInit_v2");
      t.count = (__typeof__(t.count))dlsym(h, "nvmlDeviceGetCount_v2");
      t.handle = (__typeof__(t.handle))dlsym(h,
                                             "nvmlDeviceGetHandleByIndex_v2");
      t.uuid = (__typeof__(t.uuid))dlsym(h, "nvmlDeviceGetUUID");
      t.memory = (__typeof__(t.memory))dlsym(h, "nvmlDeviceGetMemoryInfo");
      t.memory_v2 = (__typeof__(t.memory_v2))dlsym(
          h, "nvmlDeviceGetMemoryInfo_v2");
      t.procs = (__typeof__(t.procs))dlsym(
          h, "nvmlDeviceGetComputeRunningProcesses_v3");
    }
  }
  if (t.init == NULL || t.count == NULL || t.handle == NULL || t.uuid == NULL ||
      t.memory == NULL || t.memory_v2 == NULL || t.procs == NULL)
    return NULL;
  return &t;
}

/* nvml_procs: the list in an array of CAP entries (NULL for none), and
 * its first entry.  Too small an array still says how many are needed. */
static void
do_procs(const struct app_nvml *n, nvmlDevice_t d, const struct op *op)
{
  nvmlProcessInfo_t infos[APP_NVML_PROCS_MAX];
  unsigned int count =
      op->nargs > 1 ? (unsigned int)op->arg[1] : APP_NVML_PROCS_MAX;
  int dev = (int)op->arg[0];
  memset(infos, 0, sizeof(infos));
  int rc = (int)n->procs(d, &count, count > 0 ? infos : NULL);
  if (rc == NVML_SUCCESS && count > 0)
    app_line("nvml_procs dev=%d rc=0 count=%u pid=%u used=%llu", dev, count,
             infos[0].pid, infos[0].usedGpuMemory);
  else if (rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE)
    app_line("nvml_procs dev=%d rc=%d count=%u", dev, rc, count);
  else
    app_line("nvml_procs dev=%d rc=%d", dev, rc);
}

/* The nvml operations; NVML is initialised once, on the first. */
void
app_run_nvml(const struct op *op)
{
  static int init_rc = -1;
  const struct app_nvml *n = nvml_table();
  enum kind k = op->spec->kind;
  const char *name = op->spec->name;
  int dev = (int)op->arg[0];
  if (n == NULL) {
    app_line("%s absent", name);
    return;
  }
  if (init_rc < 0)
    init_rc = (int)n->init();
  int rc = init_rc;
  if (k == OP_NVML_COUNT) {
    unsigned int count = 0;
    if (rc == 0)
      rc = (int)n->count(&count);
    if (rc == 0)
      app_line("nvml_count rc=0 n=%u", count);
    else
      app_line("nvml_count rc=%d", rc);
    return;
  }
  nvmlDevice_t d = NULL;
  if (rc == 0)
    rc = (int)n->handle((unsigned int)dev, &d);
  if (rc != 0) {
    app_line("%s dev=%d rc=%d", name, dev, rc);
    return;
  }
  if (k == OP_NVML_PROCS) {
    do_procs(n, d, op);
  } else if (k == OP_NVML_UUID) {
    char uuid[NVML_DEVICE_UUID_BUFFER_SIZE];
    rc = (int)n->uuid(d, uuid, sizeof(uuid));
    if (rc == 0)
      app_line("nvml_uuid dev=%d rc=0 uuid=%s", dev, uuid);
    else
      app_line("nvml_uuid dev=%d rc=%d", dev, rc);
  } else if (k == OP_NVML) {
    nvmlMemory_t m;
    memset(&m, 0, sizeof(m));
    rc = (int)n->memory(d, &m);
    if (rc == 0)
      app_line("nvml dev=%d rc=0 total=%llu free=%llu used=%llu", dev, m.total,
           m.free, m.used);
    else
      app_line("nvml dev=%d rc=%d", dev, rc);
  } else {
    nvmlMemory_v2_t m;
    memset(&m, 0, sizeof(m));
    m.version = nvmlMemory_v2;
    rc = (int)n->memory_v2(d, &m);
    if (rc == 0)
      app_line("nvml2 dev=%d rc=0 total=%llu reserved=%llu free=%llu used=%llu",
           dev, m.total, m.reserved, m.free, m.used);
    else
      app_line("nvml2 dev=%d rc=%d", dev, rc);
  }
}
