/*
 * cmg_alloc: a plain CUDA program built with nvcc, for the real-GPU suite
 * (scripts/gpu-suite).  It is built twice, with `-cudart static` (nvcc's
 * default: the runtime reaches the driver only through cuGetProcAddress)
 * and with `-cudart shared` (libcudart.so.13, as PyTorch uses it).
 *
 * Like the simulated-CUDA programs (tests/sim/app.c), it runs a script
 * given as its arguments and prints one line of key=value pairs per
 * operation, in the same format for the operations both have.  make check
 * builds it a third and fourth time, against the simulated runtime
 * (tests/gpu/local.mk: cmg_alloc_sim_static, cmg_alloc_sim_shared), and
 * the suite's dry run (--dry-run) runs those, so the very program the GPU
 * runs is checked on machines without one:
 *
 *   alloc SIZE     alloc i=0 size=N rc=0 ptr=0x...   (failure: rc=2, the
 *                  cudaError_t; allocations are numbered in script order)
 *   site N SIZE    allocates through cmgtest_site_N -> cmgtest_alloc_leaf
 *                  (exported, never inlined: the report must name them)
 *   free I         free i=0 rc=0
 *   info           info rc=0 free=N total=N          (cudaMemGetInfo)
 *   total DEV      total dev=0 rc=0 bytes=N          (totalGlobalMem)
 *   cmg DEV        the interposer's counters (cmg_device_stats, by dlsym)
 *   sleep MS       sleep ms=N
 *   exit CODE      exit(CODE)
 *   kernel I       a kernel writes allocation I and the host reads it
 *                  back: kernel i=5 rc=0 ok=1 (on the simulated runtime,
 *                  which runs no device code: rc=209 ok=0)
 *   graph SIZE     a graph of two memory-allocation nodes of SIZE each
 *                  (never freed), instantiated and launched on a stream of
 *                  its own: graph size=N rc=0 inst=0 launch=0 sync=0
 *   capture SIZE   the same graph made by capturing two cudaMallocAsync of
 *                  SIZE: capture size=N rc=0 a=0 b=0 end=0 inst=0 launch=0
 *                  sync=0
 *   graph_mem      cudaDeviceGetGraphMemAttribute of device 0:
 *                  graph_mem rc=0 used=N used_high=N reserved=N
 *                  reserved_high=N
 *   trim           trim rc=0 (cudaDeviceGraphMemTrim of device 0)
 *   pid            pid pid=N (for matching nvidia-smi's list)
 *   ctx_create     cuCtxCreate on device 0 (from the runtime's
 *                  cudaGetDriverEntryPointByVersion, as frameworks reach
 *                  the driver), which makes the new context current:
 *                  ctx_create rc=0
 *
 * SIZE takes K, M, G, T suffixes (binary).  A malformed script exits 64.
 */
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "cumemguard.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXIT_BAD_SCRIPT 64
#define MAX_ALLOCS 4096

/* A frame that stays a frame: exported (-rdynamic), never inlined or
 * cloned, and kept out of tail position by a store after each call. */
#define FRAME extern "C" __attribute__((noinline, noclone, used))

static volatile int frame_sink;
static void *ptrs[MAX_ALLOCS];
static int nallocs;

FRAME int
cmgtest_alloc_leaf(void **ptr, size_t size)
{
  int rc = (int)cudaMalloc(ptr, size);
  frame_sink += rc;
  return rc;
}

FRAME int
cmgtest_site_1(void **ptr, size_t size)
{
  int rc = cmgtest_alloc_leaf(ptr, size);
  frame_sink += 1;
  return rc;
}

FRAME int
cmgtest_site_2(void **ptr, size_t size)
{
  int rc = cmgtest_alloc_leaf(ptr, size);
  frame_sink += 2;
  return rc;
}

FRAME int
cmgtest_site_3(void **ptr, size_t size)
{
  int rc = cmgtest_alloc_leaf(ptr, size);
  frame_sink += 3;
  return rc;
}

__global__ void
fill_kernel(uint32_t *p, size_t n, uint32_t seed)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = seed ^ (uint32_t)i;
}

static void
line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#include <stdarg.h>
static void
line(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
}

static const char *prog = "cmg_alloc";

static void
bad(int word, const char *text, const char *msg)
{
  fprintf(stderr, "%s: word %d ('%s'): %s\n", prog, word, text, msg);
  exit(EXIT_BAD_SCRIPT);
}

static bool
parse_u64(const char *s, bool suffix, uint64_t *out)
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
  if (suffix && *s != '\0' && s[1] == '\0') {
    const char *units = "KkMmGgTt";
    const char *p = strchr(units, *s);
    if (p == NULL)
      return false;
    shift = 10 * (int)(1 + (p - units) / 2);
    s++;
  }
  if (*s != '\0' || (shift && v > (UINT64_MAX >> shift)))
    return false;
  *out = v << shift;
  return true;
}

/* The operations and their argument letters: S size, N number, I index. */
static const struct spec {
  const char *name;
  const char *args;
  bool allocates;
} specs[] = {
  { "alloc", "S", true }, { "site", "NS", true }, { "free", "I", false },
  { "info", "", false },  { "total", "N", false }, { "cmg", "N", false },
  { "sleep", "N", false }, { "exit", "N", false }, { "kernel", "I", false },
  { "graph", "S", false }, { "capture", "S", false },
  { "graph_mem", "", false }, { "trim", "", false },
  { "pid", "", false }, { "ctx_create", "", false },
};

struct op {
  const struct spec *spec;
  uint64_t arg[2];
  int index;
};

/* The interposer's public API, looked up at run time: the program is not
 * linked against the library, which is there only under the launcher.
 * The header's own types, so that the call cannot drift from it. */
static void
do_cmg(int dev)
{
  auto fn = (decltype(&cmg_device_stats))dlsym(RTLD_DEFAULT,
                                                 "cmg_device_stats");
  if (fn == NULL) {
    line("cmg absent");
    return;
  }
  struct cmg_device_stats s;
  int rc = fn(dev, &s, sizeof(s));
  if (rc != 0) {
    line("cmg dev=%d rc=%d", dev, rc);
    return;
  }
  char limit[32];
  if (s.limit_bytes == UINT64_MAX)
    strcpy(limit, "none");
  else
    snprintf(limit, sizeof(limit), "%llu", (unsigned long long)s.limit_bytes);
  line("cmg dev=%d limit=%s physical=%llu live=%llu peak=%llu live_allocs=%llu "
       "allocs=%llu frees=%llu denials=%llu", dev, limit,
       (unsigned long long)s.physical_bytes, (unsigned long long)s.live_bytes,
       (unsigned long long)s.peak_bytes,
       (unsigned long long)s.live_allocations,
       (unsigned long long)s.allocations, (unsigned long long)s.frees,
       (unsigned long long)s.denials);
}

static size_t sizes[MAX_ALLOCS];

static void
do_kernel(int i)
{
  if (ptrs[i] == NULL) {
    line("kernel i=%d rc=-1 ok=0", i);
    return;
  }
  size_t n = sizes[i] / sizeof(uint32_t);
  fill_kernel<<<1024, 256>>>((uint32_t *)ptrs[i], n, 0x5eedu + (uint32_t)i);
  int rc = (int)cudaGetLastError();
  if (rc == 0)
    rc = (int)cudaDeviceSynchronize();
  int ok = 0;
  if (rc == 0 && n > 0) {
    uint32_t first = 0, last = 0;
    rc = (int)cudaMemcpy(&first, ptrs[i], sizeof(first),
                         cudaMemcpyDeviceToHost);
    if (rc == 0)
      rc = (int)cudaMemcpy(&last, (uint32_t *)ptrs[i] + (n - 1), sizeof(last),
                           cudaMemcpyDeviceToHost);
    uint32_t seed = 0x5eedu + (uint32_t)i;
    ok = rc == 0 && first == seed && last == (seed ^ (uint32_t)(n - 1));
  }
  line("kernel i=%d rc=%d ok=%d", i, rc, ok);
}

/* Instantiates and launches g on a stream of its own; the executable and
 * its allocations are kept to the end, as a program's graphs are. */
static void
run_graph(cudaGraph_t g, cudaStream_t s, int *inst, int *launch, int *sync)
{
  cudaGraphExec_t e = NULL;
  *inst = (int)cudaGraphInstantiate(&e, g, 0);
  *launch = *inst == 0 ? (int)cudaGraphLaunch(e, s) : -1;
  *sync = *launch == 0 ? (int)cudaStreamSynchronize(s) : -1;
  cudaGetLastError();
}

static void
do_graph(size_t size)
{
  cudaGraph_t g = NULL;
  cudaStream_t s = NULL;
  cudaGraphNode_t n[2];
  int inst = -1, launch = -1, sync = -1;
  cudaMemAllocNodeParams p;
  memset(&p, 0, sizeof(p));
  p.poolProps.allocType = cudaMemAllocationTypePinned;
  p.poolProps.location.type = cudaMemLocationTypeDevice;
  p.poolProps.location.id = 0;
  p.bytesize = size;
  int rc = (int)cudaStreamCreate(&s);
  if (rc == 0)
    rc = (int)cudaGraphCreate(&g, 0);
  for (int i = 0; rc == 0 && i < 2; i++)
    rc = (int)cudaGraphAddMemAllocNode(&n[i], g, i ? n : NULL, i, &p);
  if (rc == 0)
    run_graph(g, s, &inst, &launch, &sync);
  line("graph size=%zu rc=%d inst=%d launch=%d sync=%d", size, rc, inst,
       launch, sync);
}

static void
do_capture(size_t size)
{
  cudaGraph_t g = NULL;
  cudaStream_t s = NULL;
  void *a = NULL, *b = NULL;
  int ra = -1, rb = -1, end = -1, inst = -1, launch = -1, sync = -1;
  int rc = (int)cudaStreamCreate(&s);
  if (rc == 0)
    rc = (int)cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  if (rc == 0) {
    ra = (int)cudaMallocAsync(&a, size, s);
    rb = (int)cudaMallocAsync(&b, size, s);
    end = (int)cudaStreamEndCapture(s, &g);
  }
  if (end == 0)
    run_graph(g, s, &inst, &launch, &sync);
  line("capture size=%zu rc=%d a=%d b=%d end=%d inst=%d launch=%d sync=%d",
       size, rc, ra, rb, end, inst, launch, sync);
}

static void
do_graph_mem(void)
{
  static const cudaGraphMemAttributeType attrs[4] = {
    cudaGraphMemAttrUsedMemCurrent, cudaGraphMemAttrUsedMemHigh,
    cudaGraphMemAttrReservedMemCurrent, cudaGraphMemAttrReservedMemHigh,
  };
  unsigned long long v[4] = { 0, 0, 0, 0 };
  int rc = 0;
  for (int i = 0; rc == 0 && i < 4; i++)
    rc = (int)cudaDeviceGetGraphMemAttribute(0, attrs[i], &v[i]);
  if (rc == 0)
    line("graph_mem rc=0 used=%llu used_high=%llu reserved=%llu "
         "reserved_high=%llu", v[0], v[1], v[2], v[3]);
  else
    line("graph_mem rc=%d", rc);
}

/* A second context on device 0, made while the runtime's is current. */
static void
do_ctx_create(void)
{
  PFN_cuCtxCreate_v12050 create = NULL;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  int rc = (int)cudaGetDriverEntryPointByVersion(
      "cuCtxCreate", (void **)&create, 12050, cudaEnableDefault, &q);
  if (rc == 0 && (q != cudaDriverEntryPointSuccess || create == NULL))
    rc = -1;
  CUcontext c = NULL;
  if (rc == 0)
    rc = (int)create(&c, NULL, 0, 0);
  line("ctx_create rc=%d", rc);
}

int
main(int argc, char **argv)
{
  const char *slash = strrchr(argv[0], '/');
  prog = slash ? slash + 1 : argv[0];
  struct op *ops = (struct op *)calloc((size_t)argc, sizeof(*ops));
  if (ops == NULL)
    return EXIT_BAD_SCRIPT;
  int nops = 0;
  for (int w = 1; w < argc; w++) {
    const struct spec *sp = NULL;
    for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++)
      if (strcmp(argv[w], specs[k].name) == 0)
        sp = &specs[k];
    if (sp == NULL)
      bad(w, argv[w], "unknown operation");
    struct op *op = &ops[nops++];
    op->spec = sp;
    for (int a = 0; sp->args[a] != '\0'; a++) {
      if (++w >= argc)
        bad(w - 1, argv[w - 1], "missing argument");
      char t = sp->args[a];
      if (!parse_u64(argv[w], t == 'S', &op->arg[a]))
        bad(w, argv[w], t == 'S' ? "expected a size" : "expected a number");
      if (t == 'I' && op->arg[a] >= (uint64_t)nallocs)
        bad(w, argv[w], "no allocation has this index yet");
      if (!strcmp(sp->name, "site") && a == 0 &&
          (op->arg[0] < 1 || op->arg[0] > 3))
        bad(w, argv[w], "sites are 1, 2 and 3");
    }
    if (sp->allocates) {
      if (nallocs >= MAX_ALLOCS)
        bad(w, argv[w], "too many allocations");
      op->index = nallocs++;
    }
  }

  static int (*const sites[3])(void **, size_t) = {
    cmgtest_site_1, cmgtest_site_2, cmgtest_site_3,
  };
  for (int k = 0; k < nops; k++) {
    struct op *op = &ops[k];
    const char *name = op->spec->name;
    int rc;
    if (!strcmp(name, "alloc") || !strcmp(name, "site")) {
      bool site = name[0] == 's';
      size_t size = (size_t)op->arg[site ? 1 : 0];
      void *p = NULL;
      rc = site ? sites[op->arg[0] - 1](&p, size) : cmgtest_alloc_leaf(&p, size);
      if (rc != 0)
        cudaGetLastError(); /* an allocation error is not sticky; clear it */
      ptrs[op->index] = rc == 0 ? p : NULL;
      sizes[op->index] = rc == 0 ? size : 0;
      char n[32] = "";
      if (site)
        snprintf(n, sizeof(n), " n=%d", (int)op->arg[0]);
      if (rc == 0)
        line("%s i=%d%s size=%zu rc=0 ptr=%p", name, op->index, n, size, p);
      else
        line("%s i=%d%s size=%zu rc=%d", name, op->index, n, size, rc);
    } else if (!strcmp(name, "free")) {
      int i = (int)op->arg[0];
      rc = (int)cudaFree(ptrs[i]);
      if (rc == 0) {
        ptrs[i] = NULL;
        sizes[i] = 0;
      }
      line("free i=%d rc=%d", i, rc);
    } else if (!strcmp(name, "info")) {
      size_t f = 0, t = 0;
      rc = (int)cudaMemGetInfo(&f, &t);
      if (rc == 0)
        line("info rc=0 free=%zu total=%zu", f, t);
      else
        line("info rc=%d", rc);
    } else if (!strcmp(name, "total")) {
      int dev = (int)op->arg[0];
      cudaDeviceProp prop;
      rc = (int)cudaGetDeviceProperties(&prop, dev);
      if (rc == 0)
        line("total dev=%d rc=0 bytes=%zu", dev, prop.totalGlobalMem);
      else
        line("total dev=%d rc=%d", dev, rc);
    } else if (!strcmp(name, "cmg")) {
      do_cmg((int)op->arg[0]);
    } else if (!strcmp(name, "sleep")) {
      struct timespec left = { (time_t)(op->arg[0] / 1000),
                               (long)(op->arg[0] % 1000) * 1000000 };
      while (nanosleep(&left, &left) != 0 && errno == EINTR)
        ;
      line("sleep ms=%llu", (unsigned long long)op->arg[0]);
    } else if (!strcmp(name, "exit")) {
      exit((int)op->arg[0]);
    } else if (!strcmp(name, "kernel")) {
      do_kernel((int)op->arg[0]);
    } else if (!strcmp(name, "graph")) {
      do_graph((size_t)op->arg[0]);
    } else if (!strcmp(name, "capture")) {
      do_capture((size_t)op->arg[0]);
    } else if (!strcmp(name, "graph_mem")) {
      do_graph_mem();
    } else if (!strcmp(name, "trim")) {
      line("trim rc=%d", (int)cudaDeviceGraphMemTrim(0));
    } else if (!strcmp(name, "pid")) {
      line("pid pid=%ld", (long)getpid());
    } else if (!strcmp(name, "ctx_create")) {
      do_ctx_create();
    }
  }
  free(ops);
  return 0;
}
