/*
 * The simulated CUDA driver: libcuda.so.1 for machines without a GPU.
 *
 * It owns a handful of simulated devices (CMG_SIM_DEVICES), each with a
 * memory size, a primary context and an arena of fake device addresses.
 * Allocations are accounted for exactly (the requested bytes) under one
 * mutex per device; nothing is ever backed by memory, so a 16 GiB device
 * costs nothing.  The current context is thread-local, as in the real
 * driver, and memory calls without one fail with CUDA_ERROR_INVALID_CONTEXT.
 *
 * cuGetProcAddress lives in procaddr.c.  This file also defines the
 * hidden aliases it hands out, and the test-only cmgsim_stats.
 *
 * Nothing here may call dlsym: the driver must not see an interposer.
 */
#include "libcuda.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_MAX_DEVICES 16
#define SIM_MAX_CONTEXTS 64
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

#define CTX_ALIVE 0x43545841u /* "CTXA" */
#define CTX_DEAD 0x44454144u  /* "DEAD" */

struct CUctx_st {
  uint32_t magic;
  int device;
  bool primary;
  atomic_int refs; /* retain count of a primary context */
};

struct sim_device {
  pthread_mutex_t lock;
  uint64_t total;
  uint64_t used;
  uint64_t peak;
  uint64_t allocs;
  uint64_t frees;
  struct sim_arena arena;
  struct sim_arena arena32;
  struct sim_table live;
  struct CUctx_st primary;
};

static struct sim_device devices[SIM_MAX_DEVICES];
static int ndevices;

/* Contexts made by cuCtxCreate are never freed, only marked dead, so a
 * stale handle is detected instead of read after free. */
static struct CUctx_st *created[SIM_MAX_CONTEXTS];
static int ncreated;
static pthread_mutex_t created_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static bool config_bad;
bool sim_opt_trampoline;
bool sim_opt_trace;
static bool opt_fork_poison;
static long long fail_alloc_after = -1;
static CUresult fail_alloc_code = CUDA_ERROR_OUT_OF_MEMORY;
static long long fail_free_after = -1;
static CUresult fail_free_code = CUDA_ERROR_INVALID_VALUE;

static atomic_bool initialized;
static atomic_bool poisoned;
static atomic_llong alloc_successes;
static atomic_llong free_successes;

static __thread struct CUctx_st *current;

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
  for (int i = 0; i < ndevices; i++)
    pthread_mutex_lock(&devices[i].lock);
  pthread_mutex_lock(&created_lock);
}

static void
unlock_all(void)
{
  pthread_mutex_unlock(&created_lock);
  for (int i = ndevices - 1; i >= 0; i--)
    pthread_mutex_unlock(&devices[i].lock);
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

  for (int i = 0; i < n; i++) {
    struct sim_device *d = &devices[i];
    pthread_mutex_init(&d->lock, NULL);
    d->total = sizes[i];
    d->primary.magic = CTX_ALIVE;
    d->primary.device = i;
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
  ndevices = n;

  sim_opt_trampoline = env_flag("CMG_SIM_GETPROC_TRAMPOLINE");
  sim_opt_trace = env_flag("CMG_SIM_TRACE");
  opt_fork_poison = env_flag("CMG_SIM_FORK_POISON");
  parse_fail("CMG_SIM_FAIL_ALLOC_AFTER", &fail_alloc_after, &fail_alloc_code);
  parse_fail("CMG_SIM_FAIL_FREE_AFTER", &fail_free_after, &fail_free_code);
  pthread_atfork(lock_all, unlock_all, after_fork_child);
}

void
sim_configure_once(void)
{
  pthread_once(&config_once, configure);
}

/* ---- state checks --------------------------------------------------- */

static CUresult
check_init(void)
{
  if (!atomic_load(&initialized) || atomic_load(&poisoned))
    return CUDA_ERROR_NOT_INITIALIZED;
  return CUDA_SUCCESS;
}

static bool
is_device(CUdevice dev)
{
  return dev >= 0 && dev < ndevices;
}

/* The device of the calling thread's current context, if it is usable. */
static CUresult
current_device(struct sim_device **out)
{
  CUresult rc = check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  struct CUctx_st *c = current;
  if (c == NULL)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (c->magic != CTX_ALIVE || (c->primary && atomic_load(&c->refs) <= 0))
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  *out = &devices[c->device];
  return CUDA_SUCCESS;
}

static bool
is_known_context(struct CUctx_st *c)
{
  for (int i = 0; i < ndevices; i++)
    if (c == &devices[i].primary)
      return true;
  bool found = false;
  pthread_mutex_lock(&created_lock);
  for (int i = 0; i < ncreated && !found; i++)
    found = created[i] == c;
  pthread_mutex_unlock(&created_lock);
  return found;
}

/* ---- allocation core ------------------------------------------------ */

static CUresult
dev_alloc(struct sim_device *d, uint64_t bytes, bool legacy, uint64_t *addr)
{
  if (bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (fail_alloc_after >= 0 &&
      atomic_load(&alloc_successes) >= fail_alloc_after)
    return fail_alloc_code;
  if (bytes > UINT64_MAX - SIM_ALIGN)
    return CUDA_ERROR_OUT_OF_MEMORY;
  uint64_t span = (bytes + SIM_ALIGN - 1) & ~(uint64_t)(SIM_ALIGN - 1);
  struct sim_live rec = { .bytes = bytes, .span = span, .owner = current,
                          .legacy = legacy };
  CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;

  pthread_mutex_lock(&d->lock);
  if (bytes <= d->total - d->used &&
      sim_arena_take(legacy ? &d->arena32 : &d->arena, span,
                     &rec.addr) == 0) {
    if (sim_table_insert(&d->live, &rec) == 0) {
      d->used += bytes;
      if (d->used > d->peak)
        d->peak = d->used;
      d->allocs++;
      *addr = rec.addr;
      rc = CUDA_SUCCESS;
    } else {
      sim_arena_give(legacy ? &d->arena32 : &d->arena, rec.addr, span);
    }
  }
  pthread_mutex_unlock(&d->lock);
  if (rc == CUDA_SUCCESS)
    atomic_fetch_add(&alloc_successes, 1);
  return rc;
}

/* Unlocked: the caller holds d->lock. */
static bool
dev_release(struct sim_device *d, uint64_t addr)
{
  struct sim_live rec;
  if (!sim_table_remove(&d->live, addr, &rec))
    return false;
  sim_arena_give(rec.legacy ? &d->arena32 : &d->arena, rec.addr, rec.span);
  d->used -= rec.bytes;
  d->frees++;
  return true;
}

static struct sim_device *
device_of_address(uint64_t addr)
{
  for (int i = 0; i < ndevices; i++) {
    struct sim_device *d = &devices[i];
    if ((addr >= d->arena.base && addr - d->arena.base < d->arena.size) ||
        (addr >= d->arena32.base && addr - d->arena32.base < d->arena32.size))
      return d;
  }
  return NULL;
}

static CUresult
sim_free(uint64_t addr)
{
  struct sim_device *cur;
  CUresult rc = current_device(&cur);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (addr == 0)
    return CUDA_SUCCESS;
  /* Unified addressing: any live allocation may be freed from any
   * context, as on a real driver. */
  struct sim_device *d = device_of_address(addr);
  if (d == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (fail_free_after >= 0 && atomic_load(&free_successes) >= fail_free_after)
    return fail_free_code;
  pthread_mutex_lock(&d->lock);
  bool ok = dev_release(d, addr);
  pthread_mutex_unlock(&d->lock);
  if (!ok)
    return CUDA_ERROR_INVALID_VALUE;
  atomic_fetch_add(&free_successes, 1);
  return CUDA_SUCCESS;
}

/* Frees what a context owned: what destroying or resetting it does to a
 * real device, and what an interposer's ledger must follow. */
static void
free_owned_by(struct CUctx_st *c)
{
  struct sim_device *d = &devices[c->device];
  pthread_mutex_lock(&d->lock);
  uint64_t *addrs;
  long n = sim_table_owned(&d->live, c, &addrs);
  for (long i = 0; i < n; i++)
    dev_release(d, addrs[i]);
  pthread_mutex_unlock(&d->lock);
  free(addrs);
}

/* ---- initialisation, devices --------------------------------------- */

SIM_EXPORT CUresult
cuInit(unsigned int Flags)
{
  if (Flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (atomic_load(&poisoned))
    return CUDA_ERROR_NOT_INITIALIZED;
  sim_configure_once();
  if (sim_opt_trace)
    fprintf(stderr, "[cmgsim] cuInit(0) devices=%d\n", ndevices);
  if (config_bad)
    return CUDA_ERROR_INVALID_VALUE;
  if (ndevices == 0)
    return CUDA_ERROR_NO_DEVICE;
  atomic_store(&initialized, true);
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
  CUresult rc = check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (device == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!is_device(ordinal))
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuDeviceGetCount(int *count)
{
  CUresult rc = check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (count == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *count = ndevices;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuDeviceGetName(char *name, int len, CUdevice dev)
{
  CUresult rc = check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (name == NULL || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (!is_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  snprintf(name, (size_t)len, "cumemguard simulated GPU %d", dev);
  return CUDA_SUCCESS;
}

/* Internal calls go to static functions, never to an exported name that
 * an interposer could preempt if -Bsymbolic were ever dropped. */
static CUresult
get_uuid(CUuuid *uuid, CUdevice dev)
{
  static const unsigned char stem[15] = {
    0xc3, 0x6d, 0x67, 0x51, 0x5e, 0x1a, 0x4d, 0x0c,
    0x9a, 0x77, 0x73, 0x69, 0x6d, 0x67, 0x70,
  };
  CUresult rc = check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (uuid == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!is_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  memcpy(uuid->bytes, stem, sizeof(stem));
  uuid->bytes[15] = (char)dev;
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
  CUresult rc = check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (bytes == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!is_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  *bytes = devices[dev].total;
  return CUDA_SUCCESS;
}

/* ---- contexts ------------------------------------------------------- */

SIM_EXPORT CUresult
cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
  CUresult rc = check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (pctx == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!is_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  atomic_fetch_add(&devices[dev].primary.refs, 1);
  *pctx = &devices[dev].primary;
  return CUDA_SUCCESS;
}

/* The last release destroys the primary context and, with it, every
 * allocation it made. */
static CUresult
primary_release(CUdevice dev)
{
  CUresult rc = check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (!is_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  struct CUctx_st *c = &devices[dev].primary;
  int refs = atomic_load(&c->refs);
  do {
    if (refs <= 0)
      return CUDA_ERROR_INVALID_CONTEXT;
  } while (!atomic_compare_exchange_weak(&c->refs, &refs, refs - 1));
  if (refs == 1)
    free_owned_by(c);
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
  return primary_release(dev);
}

/* cudart 13 asks for the 7000 (unversioned) variant. */
SIM_EXPORT CUresult
cuDevicePrimaryCtxRelease(CUdevice dev)
{
  return primary_release(dev);
}

/* Destroys every allocation of the primary context, which stays usable:
 * what cudaDeviceReset does to memory. */
static CUresult
primary_reset(CUdevice dev)
{
  CUresult rc = check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (!is_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  free_owned_by(&devices[dev].primary);
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
  return primary_reset(dev);
}

SIM_EXPORT CUresult
cuDevicePrimaryCtxReset(CUdevice dev)
{
  return primary_reset(dev);
}

SIM_EXPORT CUresult
cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
               unsigned int flags, CUdevice dev)
{
  CUresult rc = check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (pctx == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (!is_device(dev))
    return CUDA_ERROR_INVALID_DEVICE;
  struct CUctx_st *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  c->magic = CTX_ALIVE;
  c->device = dev;
  pthread_mutex_lock(&created_lock);
  if (ncreated == SIM_MAX_CONTEXTS) {
    pthread_mutex_unlock(&created_lock);
    free(c);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  created[ncreated++] = c;
  pthread_mutex_unlock(&created_lock);
  current = c;
  *pctx = c;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuCtxDestroy_v2(CUcontext ctx)
{
  CUresult rc = check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (ctx == NULL || !is_known_context(ctx) || ctx->primary)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx->magic != CTX_ALIVE)
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  free_owned_by(ctx);
  ctx->magic = CTX_DEAD;
  if (current == ctx)
    current = NULL;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuCtxSetCurrent(CUcontext ctx)
{
  CUresult rc = check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (ctx != NULL && !is_known_context(ctx))
    return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx != NULL && ctx->magic != CTX_ALIVE)
    return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  current = ctx;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuCtxGetCurrent(CUcontext *pctx)
{
  CUresult rc = check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (pctx == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *pctx = current;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuCtxGetDevice(CUdevice *device)
{
  struct sim_device *d;
  CUresult rc = current_device(&d);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (device == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  *device = current->device;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuCtxSynchronize(void)
{
  struct sim_device *d;
  return current_device(&d);
}

/* ---- memory --------------------------------------------------------- */

static CUresult
alloc_current(CUdeviceptr *dptr, size_t bytesize)
{
  struct sim_device *d;
  CUresult rc = current_device(&d);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (dptr == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t addr;
  rc = dev_alloc(d, bytesize, false, &addr);
  if (rc == CUDA_SUCCESS)
    *dptr = addr;
  return rc;
}

SIM_EXPORT CUresult
cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
  return alloc_current(dptr, bytesize);
}

SIM_EXPORT CUresult
cuMemFree_v2(CUdeviceptr dptr)
{
  return sim_free(dptr);
}

SIM_EXPORT CUresult
cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                   size_t Height, unsigned int ElementSizeBytes)
{
  struct sim_device *d;
  CUresult rc = current_device(&d);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (dptr == NULL || pPitch == NULL || WidthInBytes == 0 || Height == 0 ||
      (ElementSizeBytes != 4 && ElementSizeBytes != 8 &&
       ElementSizeBytes != 16))
    return CUDA_ERROR_INVALID_VALUE;
  if (WidthInBytes > SIZE_MAX - SIM_ALIGN)
    return CUDA_ERROR_OUT_OF_MEMORY;
  size_t pitch = (WidthInBytes + SIM_ALIGN - 1) & ~(size_t)(SIM_ALIGN - 1);
  if (Height > SIZE_MAX / pitch)
    return CUDA_ERROR_OUT_OF_MEMORY;
  uint64_t addr;
  rc = dev_alloc(d, (uint64_t)pitch * Height, false, &addr);
  if (rc == CUDA_SUCCESS) {
    *dptr = addr;
    *pPitch = pitch;
  }
  return rc;
}

SIM_EXPORT CUresult
cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
  struct sim_device *d;
  CUresult rc = current_device(&d);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (dptr == NULL ||
      (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t addr;
  rc = dev_alloc(d, bytesize, false, &addr);
  if (rc == CUDA_SUCCESS)
    *dptr = addr;
  return rc;
}

/* Streams are not simulated: stream-ordered calls complete at once, on
 * the current context's device, whatever stream is passed. */
SIM_EXPORT CUresult
cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
  return alloc_current(dptr, bytesize);
}

SIM_EXPORT CUresult
cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
  return alloc_current(dptr, bytesize);
}

SIM_EXPORT CUresult
cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
  return sim_free(dptr);
}

SIM_EXPORT CUresult
cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
  return sim_free(dptr);
}

static CUresult
get_info(size_t *free, size_t *total)
{
  struct sim_device *d;
  CUresult rc = current_device(&d);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (free == NULL || total == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&d->lock);
  *free = d->total - d->used;
  *total = d->total;
  pthread_mutex_unlock(&d->lock);
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuMemGetInfo_v2(size_t *free, size_t *total)
{
  return get_info(free, total);
}

/* The CUDA 2.0 entry points with 32-bit sizes and pointers.  Nothing
 * current calls them; they exist so that cuGetProcAddress has an older
 * variant to choose for versions below 3020. */
SIM_EXPORT CUresult
cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
  struct sim_device *d;
  CUresult rc = current_device(&d);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (dptr == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t addr;
  rc = dev_alloc(d, bytesize, true, &addr);
  if (rc == CUDA_SUCCESS)
    *dptr = (CUdeviceptr_v1)addr;
  return rc;
}

SIM_EXPORT CUresult
cuMemFree(CUdeviceptr_v1 dptr)
{
  return sim_free(dptr);
}

SIM_EXPORT CUresult
cuMemGetInfo(unsigned int *free, unsigned int *total)
{
  size_t f, t;
  CUresult rc = get_info(free ? &f : NULL, total ? &t : NULL);
  if (rc != CUDA_SUCCESS)
    return rc;
  /* Saturate rather than wrap, so 32-bit callers see "plenty". */
  *free = f > UINT_MAX ? UINT_MAX : (unsigned int)f;
  *total = t > UINT_MAX ? UINT_MAX : (unsigned int)t;
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
  { CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
  { CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED",
    "context is destroyed" },
  { CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
    "operation not supported" },
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
 * interposer let through.  Any pointer may be NULL.  0 or -EINVAL. */
SIM_EXPORT int
cmgsim_stats(int dev, unsigned long long *used, unsigned long long *peak_used,
             unsigned long long *allocs, unsigned long long *frees)
{
  sim_configure_once();
  if (!is_device(dev))
    return -EINVAL;
  struct sim_device *d = &devices[dev];
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

/* ---- hidden aliases ------------------------------------------------- */

#define SIM_DEFINE_ALIAS(fn) \
  extern __typeof__(fn) hid_##fn __attribute__((alias(#fn)));
SIM_DRIVER_FUNCTIONS(SIM_DEFINE_ALIAS)
