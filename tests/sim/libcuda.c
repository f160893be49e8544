/*
 * The simulated CUDA driver: libcuda.so.1 for machines without a GPU.
 *
 * It owns a handful of simulated devices (CMG_SIM_DEVICES), each with a
 * memory size, a primary context and an arena of fake device addresses.
 * CUDA_VISIBLE_DEVICES picks which of them the process sees, and in what
 * order, as CUDA ordinals; UUIDs and addresses stay those of the physical
 * device.  Allocations are accounted for exactly (the requested bytes)
 * under one mutex per device; nothing is ever backed by memory, so a
 * 16 GiB device costs nothing.  The current context is thread-local, as
 * in the real driver, and memory calls without one fail with
 * CUDA_ERROR_INVALID_CONTEXT.  Every allocation remembers the context
 * that made it, so destroying or resetting a context frees exactly what
 * it owned.
 *
 * This file has the configuration and the devices; the accounting every
 * allocation family shares and the plain allocation calls are in
 * devmem.c, contexts and the other families in files of their own (see
 * libcuda.h), and cuGetProcAddress in procaddr.c.  It also defines the
 * test-only cmgsim_stats and the cmgsim_physical* exports the simulated
 * NVML uses (contexts.c has cmgsim_context_bytes).
 *
 * Nothing here may call dlsym: the driver must not see an interposer.
 */
#include "libcuda.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#define SIM_DEFAULT_DEVICE_BYTES (UINT64_C(16) << 30)
/* The arena of device N is 1 TiB at 0x7f0000000000 + N TiB; capping a
 * device at half that keeps fragmentation from ever causing an OOM that
 * the accounting would not. */
#define SIM_ARENA_BASE UINT64_C(0x7f0000000000)
#define SIM_ARENA_SHIFT 40
#define SIM_MAX_DEVICE_BYTES (UINT64_C(1) << (SIM_ARENA_SHIFT - 1))
/* The legacy 32-bit entry points need addresses below 4 GiB: each device
 * gets a 128 MiB window of its own for them. */
#define SIM_ARENA32_BASE UINT64_C(0x10000000)
#define SIM_ARENA32_SIZE UINT64_C(0x08000000)

struct sim_device sim_devices[SIM_MAX_DEVICES];
int sim_nphys;
pthread_mutex_t sim_obj_lock = PTHREAD_MUTEX_INITIALIZER;

/* CUDA ordinal -> physical device. */
static int visible[SIM_MAX_DEVICES];
static int nvisible;

static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static bool config_bad;
bool sim_opt_trampoline;
bool sim_opt_trace;
bool sim_opt_no_graph_attr;
uint64_t sim_context_bytes;
uint64_t sim_context_driver_bytes;
static bool opt_fork_poison;
long long sim_fail_alloc_after = -1;
CUresult sim_fail_alloc_code = CUDA_ERROR_OUT_OF_MEMORY;
long long sim_fail_free_after = -1;
CUresult sim_fail_free_code = CUDA_ERROR_INVALID_VALUE;

static atomic_bool initialized;
static atomic_bool poisoned;
/* The driver's exit handler has run: the process holds nothing on the
 * card any more, and every call is refused as the driver shutting down. */
static atomic_bool torn_down;
static pthread_once_t teardown_once = PTHREAD_ONCE_INIT;

__thread struct CUctx_st *sim_current_ctx;

/* ---- configuration -------------------------------------------------- */

/* Parses "123", "64K", "8G"... (binary suffixes); false on junk. */
static bool
parse_size(const char *s, const char **end, uint64_t *out)
{
  if (*s < '0' || *s > '9')
    return false;
  uint64_t v = 0;
  for (; *s >= '0' && *s <= '9'; s++) {
    if (v > (UINT64_MAX - 9) / 10)
      return false;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  int shift = 0;
  switch (*s) {
  case 'k': case 'K': shift = 10; s++; break;
  case 'm': case 'M': shift = 20; s++; break;
  case 'g': case 'G': shift = 30; s++; break;
  case 't': case 'T': shift = 40; s++; break;
  default: break;
  }
  if (shift && v > (UINT64_MAX >> shift))
    return false;
  *out = v << shift;
  *end = s;
  return true;
}

static bool
env_flag(const char *name)
{
  const char *v = getenv(name);
  return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

/* "N" or "N:CODE" for the failure-injection variables. */
static void
parse_fail(const char *name, long long *after, CUresult *code)
{
  const char *v = getenv(name);
  if (v == NULL || *v == '\0')
    return;
  char *end;
  long long n = strtoll(v, &end, 10);
  long c = *code;
  if (*end == ':')
    c = strtol(end + 1, &end, 10);
  if (n < 0 || *end != '\0' || c <= 0) {
    fprintf(stderr, "cmgsim: %s=%s: expected N or N:CODE\n", name, v);
    config_bad = true;
    return;
  }
  *after = n;
  *code = (CUresult)c;
}

static void
lock_all(void)
{
  pthread_mutex_lock(&sim_obj_lock);
  for (int i = 0; i < sim_nphys; i++)
    pthread_mutex_lock(&sim_devices[i].lock);
  sim_contexts_lock(true);
}

static void
unlock_all(void)
{
  sim_contexts_lock(false);
  for (int i = sim_nphys - 1; i >= 0; i--)
    pthread_mutex_unlock(&sim_devices[i].lock);
  pthread_mutex_unlock(&sim_obj_lock);
}

/* The child gets a copy of the simulated GPU state, which is handy for
 * tests; CMG_SIM_FORK_POISON=1 makes it unusable instead, closer to a real
 * driver, where a forked child cannot use its parent's CUDA state. */
static void
after_fork_child(void)
{
  unlock_all();
  if (opt_fork_poison)
    atomic_store(&poisoned, true);
}

/* A size from the environment (a context's cost): unset or empty is 0,
 * malformed says so and makes cuInit fail. */
static void
parse_cost(const char *name, uint64_t *out)
{
  const char *cost = getenv(name), *end;
  *out = 0;
  if (cost == NULL || *cost == '\0' ||
      (parse_size(cost, &end, out) && *end == '\0'))
    return;
  fprintf(stderr, "cmgsim: %s=%s: expected a size (bytes, K, M, G or T)\n",
          name, cost);
  config_bad = true;
  *out = 0;
}

static void
configure(void)
{
  uint64_t sizes[SIM_MAX_DEVICES];
  int n = 0;
  const char *spec = getenv("CMG_SIM_DEVICES");

  if (spec == NULL) {
    sizes[n++] = SIM_DEFAULT_DEVICE_BYTES;
  } else if (*spec != '\0') {
    const char *s = spec;
    for (;;) {
      const char *end;
      if (n == SIM_MAX_DEVICES || !parse_size(s, &end, &sizes[n]) ||
          sizes[n] > SIM_MAX_DEVICE_BYTES || (*end != ',' && *end != '\0')) {
        fprintf(stderr, "cmgsim: CMG_SIM_DEVICES=%s: expected a comma list "
                "of at most %d sizes (bytes, K, M, G; each at most 512G)\n",
                spec, SIM_MAX_DEVICES);
        config_bad = true;
        n = 0;
        break;
      }
      n++;
      if (*end == '\0')
        break;
      s = end + 1;
    }
  }

  /* A container sees only the GPUs whose device nodes it was given. */
  int gpu[SIM_MAX_DEVICES], m = 0;
  const char *present = getenv("CMG_SIM_PRESENT");
  for (int i = 0; i < n; i++) {
    char node[4096];
    snprintf(node, sizeof(node), "%s/gpu%d", present ? present : "", i);
    if (present == NULL || access(node, F_OK) == 0) {
      sizes[m] = sizes[i];
      gpu[m++] = i;
    }
  }
  n = m;
  for (int i = 0; i < n; i++) {
    struct sim_device *d = &sim_devices[i];
    pthread_mutex_init(&d->lock, NULL);
    d->phys = i;
    d->gpu = gpu[i];
    d->ordinal = -1;
    d->total = sizes[i];
    d->primary.magic = SIM_CTX_ALIVE;
    d->primary.phys = i;
    d->primary.ordinal = -1;
    d->primary.primary = true;
    if (sim_arena_init(&d->arena,
                       SIM_ARENA_BASE + ((uint64_t)i << SIM_ARENA_SHIFT),
                       UINT64_C(1) << SIM_ARENA_SHIFT) != 0 ||
        sim_arena_init(&d->arena32,
                       SIM_ARENA32_BASE + (uint64_t)i * SIM_ARENA32_SIZE,
                       SIM_ARENA32_SIZE) != 0) {
      fprintf(stderr, "cmgsim: out of memory setting up device %d\n", i);
      config_bad = true;
    }
  }
  sim_nphys = n;

  /* Ordinals follow CUDA_VISIBLE_DEVICES, read once as the real driver
   * reads it at cuInit. */
  nvisible = sim_parse_visible(getenv("CUDA_VISIBLE_DEVICES"), n, visible);
  for (int o = 0; o < nvisible; o++) {
    sim_devices[visible[o]].ordinal = o;
    sim_devices[visible[o]].primary.ordinal = o;
  }

  sim_opt_trampoline = env_flag("CMG_SIM_GETPROC_TRAMPOLINE");
  sim_opt_trace = env_flag("CMG_SIM_TRACE");
  sim_opt_no_graph_attr = env_flag("CMG_SIM_NO_GRAPH_MEM_ATTR");
  opt_fork_poison = env_flag("CMG_SIM_FORK_POISON");
  parse_fail("CMG_SIM_FAIL_ALLOC_AFTER", &sim_fail_alloc_after,
             &sim_fail_alloc_code);
  parse_fail("CMG_SIM_FAIL_FREE_AFTER", &sim_fail_free_after,
             &sim_fail_free_code);
  parse_cost("CMG_SIM_CONTEXT_BYTES", &sim_context_bytes);
  parse_cost("CMG_SIM_CONTEXT_DRIVER_BYTES", &sim_context_driver_bytes);
  pthread_atfork(lock_all, unlock_all, after_fork_child);
}

void
sim_configure_once(void)
{
  pthread_once(&config_once, configure);
}

/* ---- state checks --------------------------------------------------- */

CUresult
sim_check_init(void)
{
  if (atomic_load(&torn_down))
    return CUDA_ERROR_DEINITIALIZED;
  if (!atomic_load(&initialized) || atomic_load(&poisoned))
    return CUDA_ERROR_NOT_INITIALIZED;
  return CUDA_SUCCESS;
}

bool
sim_is_device(CUdevice dev)
{
  return dev >= 0 && dev < nvisible;
}

struct sim_device *
sim_device(CUdevice dev)
{
  return sim_is_device(dev) ? &sim_devices[visible[dev]] : NULL;
}

CUresult
sim_current(struct CUctx_st **ctx, struct sim_device **dev)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  struct CUctx_st *c = sim_current_ctx;
  if (c == NULL)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (c->magic != SIM_CTX_ALIVE || (c->primary && atomic_load(&c->refs) <= 0))
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  /* A reset destroyed the primary context its retains still name: the
   * next use makes it again, as a real driver does. */
  if (c->primary && !atomic_load(&c->charged) &&
      (rc = sim_context_charge(c)) != CUDA_SUCCESS)
    return rc;
  if (ctx != NULL)
    *ctx = c;
  if (dev != NULL)
    *dev = &sim_devices[c->phys];
  return CUDA_SUCCESS;
}

/* From the fixed layout of the arenas, not from the devices' arena
 * structs, which their own allocations write: a free on one device reads
 * nothing that another device's allocations write. */
struct sim_device *
sim_device_of_address(uint64_t addr)
{
  uint64_t i = UINT64_MAX;
  if (addr >= SIM_ARENA_BASE)
    i = (addr - SIM_ARENA_BASE) >> SIM_ARENA_SHIFT;
  else if (addr >= SIM_ARENA32_BASE)
    i = (addr - SIM_ARENA32_BASE) / SIM_ARENA32_SIZE;
  return i < (uint64_t)sim_nphys ? &sim_devices[i] : NULL;
}

/* ---- initialisation, devices --------------------------------------- */

/* As NVIDIA's driver does, at exit, from a handler that cuInit registers:
 * the process's contexts end, so NVML no longer lists it, and what runs
 * after (exit handlers registered before cuInit, library destructors)
 * finds the driver shut down. */
static void
teardown(void)
{
  atomic_store(&torn_down, true);
}

static void
register_teardown(void)
{
  atexit(teardown);
}

SIM_EXPORT CUresult
cuInit(unsigned int Flags)
{
  if (Flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (atomic_load(&poisoned))
    return CUDA_ERROR_NOT_INITIALIZED;
  sim_configure_once();
  if (sim_opt_trace)
    fprintf(stderr, "[cmgsim] cuInit(0) devices=%d\n", nvisible);
  if (config_bad)
    return CUDA_ERROR_INVALID_VALUE;
  if (nvisible == 0)
    return CUDA_ERROR_NO_DEVICE;
  atomic_store(&initialized, true);
  pthread_once(&teardown_once, register_teardown);
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuDriverGetVersion(int *driverVersion)
{
  if (driverVersion == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = SIM_DRIVER_VERSION;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuDeviceGet(CUdevice *device, int ordinal)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (device == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!sim_is_device(ordinal))
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuDeviceGetCount(int *count)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (count == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *count = nvisible;
  return CUDA_SUCCESS;
}

/* Named after the physical device, as NVML names it. */
SIM_EXPORT CUresult
cuDeviceGetName(char *name, int len, CUdevice dev)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (name == NULL || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (!sim_is_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  snprintf(name, (size_t)len, "cumemguard simulated GPU %d",
           sim_devices[visible[dev]].gpu);
  return CUDA_SUCCESS;
}

/* Internal calls go to static functions, never to an exported name that
 * an interposer could preempt if -Bsymbolic were ever dropped. */
static CUresult
get_uuid(CUuuid *uuid, CUdevice dev)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (uuid == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!sim_is_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  sim_uuid_bytes(visible[dev], (unsigned char *)uuid->bytes);
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
  return get_uuid(uuid, dev);
}

/* The pre-11.4 variant; the real one differs for MIG only. */
SIM_EXPORT CUresult
cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
  return get_uuid(uuid, dev);
}

SIM_EXPORT CUresult
cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (bytes == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!sim_is_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  *bytes = sim_device(dev)->total;
  return CUDA_SUCCESS;
}

/* ---- errors --------------------------------------------------------- */

static const struct {
  CUresult code;
  const char *name;
  const char *text;
} errors[] = {
  { CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
  { CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE",
    "invalid argument" },
  { CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
  { CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
    "initialization error" },
  { CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED",
    "driver shutting down" },
  { CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
    "no CUDA-capable device is detected" },
  { CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
    "invalid device ordinal" },
  { CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
    "invalid device context" },
  { CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
    "invalid resource handle" },
  { CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
    "the operation is not permitted in the current state" },
  { CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
  { CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED",
    "context is destroyed" },
  { CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
    "operation not supported" },
  { CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
    "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
    "operation not permitted when stream is capturing" },
  { CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
    "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
    "operation failed due to a previous error during capture" },
  { CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
    "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
    "attempt to terminate a thread-local capture sequence from another "
    "thread" },
  { CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static CUresult
error_text(CUresult error, const char **pStr, bool name)
{
  if (pStr == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
    if (errors[i].code == error) {
      *pStr = name ? errors[i].name : errors[i].text;
      return CUDA_SUCCESS;
    }
  }
  *pStr = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

SIM_EXPORT CUresult
cuGetErrorName(CUresult error, const char **pStr)
{
  return error_text(error, pStr, true);
}

SIM_EXPORT CUresult
cuGetErrorString(CUresult error, const char **pStr)
{
  return error_text(error, pStr, false);
}

/* ---- test-only introspection ---------------------------------------- */

/* The driver's own view of a device, so a test can check what the
 * interposer let through.  `dev` is a CUDA ordinal; `used` counts every
 * kind of device allocation (plain, pool, VMM, arrays) and the contexts,
 * which allocs and frees do not count.  Any pointer may be NULL.  0 or
 * -EINVAL. */
SIM_EXPORT int
cmgsim_stats(int dev, unsigned long long *used, unsigned long long *peak_used,
             unsigned long long *allocs, unsigned long long *frees)
{
  sim_configure_once();
  if (!sim_is_device(dev))
    return -EINVAL;
  struct sim_device *d = sim_device(dev);
  pthread_mutex_lock(&d->lock);
  if (used != NULL)
    *used = d->used;
  if (peak_used != NULL)
    *peak_used = d->peak;
  if (allocs != NULL)
    *allocs = d->allocs;
  if (frees != NULL)
    *frees = d->frees;
  pthread_mutex_unlock(&d->lock);
  return 0;
}

/* For the simulated NVML, which numbers physical devices and ignores
 * CUDA_VISIBLE_DEVICES: how many there are (-1 if CMG_SIM_DEVICES is
 * malformed). */
SIM_EXPORT int
cmgsim_physical_count(void)
{
  sim_configure_once();
  return config_bad ? -1 : sim_nphys;
}

/* Physical device `phys`: its UUID as nvidia-smi prints it (`uuid` holds
 * at least 41 bytes; may be NULL), its size, the bytes this process holds
 * on it (allocations, contexts, the graph memory pool): NVML's "used" of
 * the device, and the part NVML counts as the process's (all but what
 * the driver keeps for itself).  Any pointer may be NULL.  0 or -EINVAL. */
SIM_EXPORT int
cmgsim_physical(int phys, char *uuid, unsigned long long *total,
                unsigned long long *used, unsigned long long *process)
{
  sim_configure_once();
  if (phys < 0 || phys >= sim_nphys)
    return -EINVAL;
  struct sim_device *d = &sim_devices[phys];
  if (uuid != NULL)
    sim_uuid_text(phys, uuid);
  pthread_mutex_lock(&d->lock);
  if (total != NULL)
    *total = d->total;
  bool gone = atomic_load(&torn_down);
  if (used != NULL)
    *used = gone ? 0 : d->used;
  if (process != NULL)
    *process = gone ? 0 : d->used - d->driver_own;
  pthread_mutex_unlock(&d->lock);
  return 0;
}

/* ---- hidden aliases ------------------------------------------------- */

SIM_DRIVER_FUNCTIONS(SIM_DEFINE_ALIAS)
