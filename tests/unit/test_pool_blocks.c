/*
 * Unit tests of pool_blocks.c.  Under a framework's memory pool a leak
 * group shows where the pool grew, not which tensor leaked, so the summary
 * marks such groups and, when they hold most of the leaked memory, says
 * to rerun with --no-pools.  Cases: the pool classes by function name,
 * mangled or not, where CUDACachingAllocator alone (the uncached path) is
 * no pool; the frameworks' modules, but not while the process had that
 * pool switched off; a name deciding before a module; stream-ordered
 * allocations never; the libraries that keep a handle's memory for the
 * process's life, by a whole function name; and the share of the leaked
 * device memory, with the largest pool named and "mostly" past one half.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "reader/model/index.h"
#include "reader/model/leak_class.h"
#include "reader/model/pool_blocks.h"
#include "reader/model/view.h"
#include "reader/tool.h"
#include "report_builder.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

#define TORCH "PyTorch caching allocator"
#define BFC "BFC allocator of TensorFlow or XLA"
#define TF "TensorFlow BFC allocator"
#define XLA "XLA (JAX) BFC allocator"
#define CUPY "CuPy memory pool"

/* The frames, by id; the stacks are lists of them. */
enum {
  DRV,       /* cuMemAlloc_v2 in libcuda */
  CACHING,   /* DeviceCachingAllocator::malloc, mangled, in libc10_cuda.so */
  UNCACHED,  /* c10::cuda::CUDACachingAllocator::raw_alloc */
  C10_ANON,  /* an unnamed frame of libc10_cuda.so */
  THC,       /* THCCachingAllocator_malloc */
  BFC_FN,    /* tsl::BFCAllocator::AllocateRaw */
  TF_ANON,   /* libtensorflow_framework.so.2, unnamed */
  PYWRAP,    /* _pywrap_tensorflow_internal.so, unnamed */
  XLA_ANON,  /* xla_extension.so, unnamed */
  PLUGIN,    /* xla_cuda_plugin.so, unnamed */
  CUPY_FN,   /* cupy ... SingleDeviceMemoryPool ... */
  CUBLAS,    /* cublasCreate_v2 */
  CUBLAS_IN, /* cublasCreate_v2_internal */
  NCCL,      /* ncclCommInitRank */
  MAIN,      /* main */
  N_FRAMES
};

struct pool_case {
  const char *what;
  uint32_t frames[6];
  uint32_t n;
  const char *api;
  const char *torch, *tf, *xla; /* the pool switches the process had */
  const char *want;
};

/* clang-format off */
static const struct pool_case cases[] = {
  { "PyTorch's per-device cache, mangled", { DRV, CACHING, MAIN }, 3,
    "cuMemAlloc_v2", NULL, NULL, NULL, TORCH },
  { "its uncached path is no pool block", { DRV, UNCACHED, MAIN }, 3,
    "cudaMalloc", NULL, NULL, NULL, NULL },
  { "the older THC cache", { THC, MAIN }, 2, "cudaMalloc", NULL, NULL,
    NULL, TORCH },
  { "TensorFlow's and XLA's BFCAllocator", { BFC_FN, MAIN }, 2, "cuMemAlloc_v2",
    NULL, NULL, NULL, BFC },
  { "CuPy's pool", { CUPY_FN, MAIN }, 2, "cudaMalloc", NULL, NULL, NULL,
    CUPY },
  { "a name is definite, whatever switch", { CACHING, MAIN }, 2,
    "cudaMalloc", "1", NULL, NULL, TORCH },
  { "stream-ordered memory is the tensors already", { DRV, CACHING, MAIN },
    3, "cuMemAllocAsync", NULL, NULL, NULL, NULL },
  { "cudaMallocAsync too", { CACHING, MAIN }, 2, "cudaMallocAsync", NULL,
    NULL, NULL, NULL },
  { "libc10_cuda.so, its functions hidden", { DRV, C10_ANON, MAIN }, 3,
    "cuMemAlloc_v2", NULL, NULL, NULL, TORCH },
  { "libc10_cuda.so with the cache switched off (any value)",
    { DRV, C10_ANON, MAIN }, 3, "cuMemAlloc_v2", "0", NULL, NULL, NULL },
  { "TensorFlow's framework library", { TF_ANON, MAIN }, 2, "cuMemAlloc_v2",
    NULL, NULL, NULL, TF },
  { "its Python extension", { PYWRAP, MAIN }, 2, "cuMemAlloc_v2", NULL,
    NULL, NULL, TF },
  { "TensorFlow with TF_GPU_ALLOCATOR=cuda_malloc", { TF_ANON, MAIN }, 2,
    "cuMemAlloc_v2", NULL, "cuda_malloc", NULL, NULL },
  { "TensorFlow with another allocator value", { TF_ANON, MAIN }, 2,
    "cuMemAlloc_v2", NULL, "bfc", NULL, TF },
  { "another framework's switch changes nothing", { TF_ANON, MAIN }, 2,
    "cuMemAlloc_v2", "1", NULL, "platform", TF },
  { "XLA's extension", { XLA_ANON, MAIN }, 2, "cuMemAlloc_v2", NULL, NULL,
    NULL, XLA },
  { "XLA's CUDA plugin", { PLUGIN, MAIN }, 2, "cuMemAlloc_v2", NULL, NULL,
    NULL, XLA },
  { "XLA with its platform allocator", { XLA_ANON, MAIN }, 2,
    "cuMemAlloc_v2", NULL, NULL, "platform", NULL },
  { "a name anywhere decides before a module", { C10_ANON, BFC_FN, MAIN },
    3, "cuMemAlloc_v2", NULL, NULL, NULL, BFC },
  { "the innermost name first", { BFC_FN, CACHING, MAIN }, 3,
    "cuMemAlloc_v2", NULL, NULL, NULL, BFC },
  { "the innermost module first", { XLA_ANON, C10_ANON, MAIN }, 3,
    "cuMemAlloc_v2", NULL, NULL, NULL, XLA },
  { "a switched-off module leaves the next", { C10_ANON, TF_ANON, MAIN }, 3,
    "cuMemAlloc_v2", "1", NULL, NULL, TF },
  { "the program's own allocation", { DRV, MAIN }, 2, "cudaMalloc", NULL,
    NULL, NULL, NULL },
};
/* clang-format on */

static void
make_report(struct cmg__model_report *r, uint32_t *frames)
{
  report_init(r, "pools.json", 1);
  uint32_t drv = report_module(r, "/usr/lib/libcuda.so.1", "1");
  uint32_t c10 = report_module(r, "/venv/torch/lib/libc10_cuda.so", "2");
  uint32_t tf = report_module(r, "/venv/tf/libtensorflow_framework.so.2", "3");
  uint32_t pyw =
      report_module(r, "/venv/tf/_pywrap_tensorflow_internal.so", "4");
  uint32_t xla = report_module(r, "/venv/jaxlib/xla_extension.so", "5");
  uint32_t plugin = report_module(r, "/venv/jax/xla_cuda_plugin.so", "6");
  uint32_t app = report_module(r, "/opt/app", "7");

  frames[DRV] = report_frame(r, drv, 0x10, "cuMemAlloc_v2");
  frames[CACHING] = report_frame(
      r, c10, 0x20,
      "_ZN3c104cuda20CUDACachingAllocator6Native22DeviceCachingAllocator6"
      "mallocEimP11CUstream_st");
  frames[UNCACHED] =
      report_frame(r, app, 0x30,
                   "c10::cuda::CUDACachingAllocator::raw_alloc(unsigned long)");
  frames[C10_ANON] = report_frame(r, c10, 0x40, NULL);
  frames[THC] = report_frame(r, app, 0x50, "THCCachingAllocator_malloc");
  frames[BFC_FN] = report_frame(r, app, 0x60, "tsl::BFCAllocator::AllocateRaw");
  frames[TF_ANON] = report_frame(r, tf, 0x70, NULL);
  frames[PYWRAP] = report_frame(r, pyw, 0x80, NULL);
  frames[XLA_ANON] = report_frame(r, xla, 0x90, NULL);
  frames[PLUGIN] = report_frame(r, plugin, 0xa0, NULL);
  frames[CUPY_FN] = report_frame(
      r, app, 0xb0,
      "__pyx_f_4cupy_4cuda_6memory_22SingleDeviceMemoryPool_malloc");
  frames[CUBLAS] = report_frame(r, app, 0xc0, "cublasCreate_v2");
  frames[CUBLAS_IN] = report_frame(r, app, 0xd0, "cublasCreate_v2_internal");
  frames[NCCL] = report_frame(r, app, 0xe0, "ncclCommInitRank");
  frames[MAIN] = report_frame(r, app, 0xf0, "main");
}

static void
test_of(void)
{
  struct cmg__model_report r;
  struct cmg__index ix;
  uint32_t frames[N_FRAMES], ids[N(cases)];

  make_report(&r, frames);
  for (size_t i = 0; i < N(cases); i++) {
    uint32_t list[6];

    for (uint32_t k = 0; k < cases[i].n; k++)
      list[k] = frames[cases[i].frames[k]];
    report_stack_of(&r, list, cases[i].n);
  }
  cmg__index_init(&ix);
  cmg__index_add(&ix, &r, ids);
  for (size_t i = 0; i < N(cases); i++) {
    const char *sw[3] = { cases[i].torch, cases[i].tf, cases[i].xla };

    for (int k = 0; k < 3; k++)
      r.pool_values[k] = report_strdup(sw[k]);
    const char *got = cmg__pool_blocks_of(&ix, ids[i], cases[i].api, &r);
    ok(cases[i].want ? got != NULL && strcmp(got, cases[i].want) == 0
                     : got == NULL,
       "%s: %s", cases[i].what, cases[i].want ? cases[i].want : "no pool");
    if (cases[i].want ? got == NULL || strcmp(got, cases[i].want) != 0
                      : got != NULL)
      printf("#   got %s\n", got ? got : "no pool");
    for (int k = 0; k < 3; k++) {
      free(r.pool_values[k]);
      r.pool_values[k] = NULL;
    }
  }
  ok(cmg__pool_blocks_of(&ix, CMG__TOOL_NONE, "cuMemAlloc_v2", &r) == NULL,
     "no stack: no pool");
  cmg__index_free(&ix);
  cmg__read_report_free(&r);
}

static void
test_held_by(void)
{
  static const struct {
    const char *what;
    uint32_t frames[3];
    uint32_t n;
    const char *want;
  } held[] = {
    { "a cuBLAS handle's workspace",
      { DRV, CUBLAS, MAIN },
      3,
      "cuBLAS handle (cublasCreate_v2)" },
    { "an NCCL communicator's buffers",
      { NCCL, MAIN },
      2,
      "NCCL communicator (ncclCommInitRank)" },
    { "a function that only begins like one", { CUBLAS_IN, MAIN }, 2, NULL },
    { "the program's own", { DRV, MAIN }, 2, NULL },
  };
  struct cmg__model_report r;
  struct cmg__index ix;
  uint32_t frames[N_FRAMES], ids[N(held)];

  make_report(&r, frames);
  for (size_t i = 0; i < N(held); i++) {
    uint32_t list[3];

    for (uint32_t k = 0; k < held[i].n; k++)
      list[k] = frames[held[i].frames[k]];
    report_stack_of(&r, list, held[i].n);
  }
  cmg__index_init(&ix);
  cmg__index_add(&ix, &r, ids);
  for (size_t i = 0; i < N(held); i++) {
    const char *got = cmg__pool_blocks_held_by(&ix, ids[i]);

    if (held[i].want != NULL)
      is_str(got, held[i].want, "%s: kept by the library", held[i].what);
    else
      ok(got == NULL, "%s: kept by none", held[i].what);
  }
  ok(cmg__pool_blocks_held_by(&ix, CMG__TOOL_NONE) == NULL,
     "no stack: kept by none");
  cmg__index_free(&ix);
  cmg__read_report_free(&r);
}

/* ---- the share ----------------------------------------------------------- */

struct group {
  enum cmg__leak_class by_kind;
  uint32_t rule;
  const char *pool;
  uint64_t bytes;
};

static void
share_of(const struct group *g, size_t n, uint64_t *pooled, uint64_t *live,
         const char **pool, bool *mostly)
{
  struct cmg__view_leak leaks[8];
  struct cmg__view v;

  memset(&v, 0, sizeof(v));
  memset(leaks, 0, sizeof(leaks));
  for (size_t i = 0; i < n; i++) {
    leaks[i].by_kind = g[i].by_kind;
    leaks[i].rule = g[i].rule;
    leaks[i].pool = g[i].pool;
    leaks[i].bytes = g[i].bytes;
    leaks[i].count = 1;
  }
  v.leaks = leaks;
  v.n_leaks = n;
  cmg__pool_blocks_share(&v, pooled, live, pool);
  *mostly = cmg__pool_blocks_is_mostly(&v);
}

#define LEAKED CMG__LEAK_CLASS_LEAKED
#define NO CMG__TOOL_NONE

static void
test_share(void)
{
  /* Two groups of one pool outweigh a larger group of another. */
  static const struct group mixed[] = {
    { LEAKED, NO, TORCH, 300 },
    { LEAKED, NO, BFC, 400 },
    { LEAKED, NO, TORCH, 200 },
    { LEAKED, NO, NULL, 100 },
    /* Not leaked device memory: none of these counts. */
    { LEAKED, 0, TORCH, 10000 },
    { CMG__LEAK_CLASS_OTHER, NO, TORCH, 20000 },
    { CMG__LEAK_CLASS_GRAPH, NO, TORCH, 40000 },
    { CMG__LEAK_CLASS_CONTEXT, NO, NULL, 80000 },
  };
  static const struct group half[] = {
    { LEAKED, NO, CUPY, 500 },
    { LEAKED, NO, NULL, 500 },
  };
  static const struct group more[] = {
    { LEAKED, NO, CUPY, 501 },
    { LEAKED, NO, NULL, 500 },
  };
  static const struct group none[] = {
    { LEAKED, NO, NULL, 500 },
    { LEAKED, 1, TORCH, 5000 },
  };
  uint64_t pooled, live;
  const char *pool;
  bool mostly;

  share_of(mixed, N(mixed), &pooled, &live, &pool, &mostly);
  is_u64(live, 1000, "the leaked device memory, not suppressed: 1000 bytes");
  is_u64(pooled, 900, "pool blocks: 900 of them");
  is_str(pool, TORCH, "the pool holding the most, summed over its groups");
  ok(mostly, "900 of 1000: mostly pool blocks");
  share_of(half, N(half), &pooled, &live, &pool, &mostly);
  ok(pooled == 500 && live == 1000 && !mostly, "exactly half is not mostly");
  is_str(pool, CUPY, "but the pool is named");
  share_of(more, N(more), &pooled, &live, &pool, &mostly);
  ok(mostly, "one byte past half is");
  share_of(none, N(none), &pooled, &live, &pool, &mostly);
  ok(pooled == 0 && live == 500 && pool == NULL && !mostly,
     "no pool block: no pool, not mostly");
  share_of(none, 0, &pooled, &live, &pool, &mostly);
  ok(pooled == 0 && live == 0 && pool == NULL && !mostly, "no group: nothing");
}

int
main(void)
{
  test_of();
  test_held_by();
  test_share();
  return done_testing();
}
