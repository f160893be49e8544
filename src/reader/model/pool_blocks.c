/*
 * Pool blocks: PyTorch's caching allocator, the BFC allocator of
 * TensorFlow and XLA (JAX) and CuPy's memory pool ask the driver for large
 * blocks and hand tensors out inside them, so under a pool a leak group
 * shows where the pool grew, not which tensor leaked.  A group is a pool
 * block when its stack runs through the pool's code, which is recognised
 * in two ways:
 *
 * - by a function name holding the pool class's name, mangled or not:
 *   DeviceCachingAllocator, the per-device cache behind PyTorch's
 *   c10::cuda::CUDACachingAllocator (not CUDACachingAllocator itself: its
 *   uncached path, PYTORCH_NO_CUDA_MEMORY_CACHING, and its cudaMallocAsync
 *   backend live in that namespace too); BFCAllocator (tensorflow:: and
 *   tsl::); CuPy's SingleDeviceMemoryPool.  These are definite: the
 *   uncached paths never pass through those classes.
 * - by module, because release builds hide those functions from the
 *   dynamic symbol table the report names frames from (libc10_cuda is
 *   built with -fvisibility=hidden): a frame in libc10_cuda.so, in
 *   TensorFlow's libraries or in XLA's.  A module also holds the uncached
 *   path, so this counts only while that framework's switch was off in
 *   the process, as the report's options.pool_switches say.
 *
 * Stream-ordered allocations (cuMemAllocAsync, cudaMallocAsync,
 * cuMemAllocFromPoolAsync: CUDA's own pools, PyTorch's cudaMallocAsync
 * backend, TF_GPU_ALLOCATOR=cuda_malloc_async) are never pool blocks: the
 * driver's pool hands out each one by itself and the library sees each,
 * so they are the tensors already.  The caller asks only about device
 * memory: no framework pools pinned host memory through these paths.
 *
 * Two more questions of the same kind are answered here: how much of the
 * leaked device memory pool blocks hold (more than half, and the summary
 * says to rerun with --no-pools), and which library keeps a group's memory
 * for the life of the process (a cuBLAS or cuDNN handle's workspace, an
 * NCCL communicator's buffers).
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "reader/load/model.h"
#include "reader/model/index.h"
#include "reader/model/leak_class.h"
#include "core/base.h"
#include "reader/model/pool_blocks.h"
#include "reader/model/view.h"
#include "reader/tool.h"

/* Indexes into cmg__pools_switches (core/pools.c). */
enum { SW_TORCH = 0, SW_TF = 1, SW_XLA = 2, SW_NONE = -1 };

static const struct {
  const char *marker; /* a substring of the function name */
  const char *label;
} by_function[] = {
  { "DeviceCachingAllocator", "PyTorch caching allocator" },
  { "THCCachingAllocator", "PyTorch caching allocator" },
  { "BFCAllocator", "BFC allocator of TensorFlow or XLA" },
  { "SingleDeviceMemoryPool", "CuPy memory pool" },
};

static const struct {
  const char *prefix;    /* of the module's base name */
  int off_switch;        /* the switch that turns this pool off */
  const char *off_value; /* its value that does; NULL: any value */
  const char *label;
} by_module[] = {
  { "libc10_cuda.", SW_TORCH, NULL, "PyTorch caching allocator" },
  { "libtensorflow_framework.", SW_TF, "cuda_malloc",
    "TensorFlow BFC allocator" },
  { "_pywrap_tensorflow_internal.", SW_TF, "cuda_malloc",
    "TensorFlow BFC allocator" },
  { "xla_extension.", SW_XLA, "platform", "XLA (JAX) BFC allocator" },
  { "xla_cuda_plugin.", SW_XLA, "platform", "XLA (JAX) BFC allocator" },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static bool
is_stream_ordered(const char *api)
{
  return strstr(api, "Async") != NULL;
}

/* True when the process had the switch set to a value that turns the pool
 * off (value NULL: any value does, as PyTorch only asks whether it is
 * set). */
static bool
is_switched_off(const struct cmg__model_report *r, int sw, const char *value)
{
  const char *v = sw == SW_NONE ? NULL : r->pool_values[sw];

  if (v == NULL)
    return false;
  return value == NULL || strcmp(v, value) == 0;
}

static const char *
by_name(const char *fn)
{
  for (size_t i = 0; fn != NULL && i < N(by_function); i++)
    if (strstr(fn, by_function[i].marker) != NULL)
      return by_function[i].label;
  return NULL;
}

static const char *
by_module_name(const char *module, const struct cmg__model_report *r)
{
  for (size_t i = 0; module != NULL && i < N(by_module); i++)
    if (cmg__has_prefix(module, by_module[i].prefix) &&
        !is_switched_off(r, by_module[i].off_switch, by_module[i].off_value))
      return by_module[i].label;
  return NULL;
}

/* The pool of a leak group; see pool_blocks.h.  A function name decides first,
 * innermost frame first; a module only when no frame names a pool. */
const char *
cmg__pool_blocks_of(const struct cmg__index *ix, uint32_t stack,
                    const char *api, const struct cmg__model_report *r)
{
  const char *label = NULL;

  if (stack == CMG__TOOL_NONE || is_stream_ordered(api))
    return NULL;
  const struct cmg__index_stack *s = &ix->stacks[stack];
  for (uint32_t k = 0; k < s->n && label == NULL; k++)
    label = by_name(ix->frames[s->frames[k]].function);
  for (uint32_t k = 0; k < s->n && label == NULL; k++) {
    const struct cmg__index_frame *f = &ix->frames[s->frames[k]];
    if (f->module != CMG__TOOL_NONE)
      label = by_module_name(ix->modules[f->module].name, r);
  }
  return label;
}

/* Memory a library keeps for the life of the process once it has started:
 * a handle's workspace, a communicator's buffers.  It is live at exit by
 * design, whatever the program does, so it is marked, as pool blocks are,
 * rather than taken for a leak of the program's. */
static const struct {
  const char *function; /* a frame's function, whole */
  const char *label;
} held_by[] = {
  { "cublasCreate_v2", "cuBLAS handle (cublasCreate_v2)" },
  { "cublasLtCreate", "cuBLASLt handle (cublasLtCreate)" },
  { "cudnnCreate", "cuDNN handle (cudnnCreate)" },
  { "ncclCommInitRank", "NCCL communicator (ncclCommInitRank)" },
  { "ncclCommInitRankConfig", "NCCL communicator (ncclCommInitRankConfig)" },
  { "ncclCommInitAll", "NCCL communicators (ncclCommInitAll)" },
  { "ncclCommSplit", "NCCL communicator (ncclCommSplit)" },
};

const char *
cmg__pool_blocks_held_by(const struct cmg__index *ix, uint32_t stack)
{
  if (stack == CMG__TOOL_NONE)
    return NULL;
  const struct cmg__index_stack *s = &ix->stacks[stack];
  for (uint32_t k = 0; k < s->n; k++) {
    const char *fn = ix->frames[s->frames[k]].function;

    for (size_t i = 0; fn != NULL && i < N(held_by); i++)
      if (strcmp(fn, held_by[i].function) == 0)
        return held_by[i].label;
  }
  return NULL;
}

void
cmg__pool_blocks_share(const struct cmg__view *v, uint64_t *pooled,
                       uint64_t *live, const char **pool)
{
  /* Few labels exist, so the largest is found by summing per label. */
  const char *labels[8];
  uint64_t sums[8];
  size_t n = 0, best = 0;

  *pooled = *live = 0;
  *pool = NULL;
  for (size_t i = 0; i < v->n_leaks; i++) {
    const struct cmg__view_leak *l = &v->leaks[i];
    size_t j = 0;

    if (cmg__leak_class_of(l) != CMG__LEAK_CLASS_LEAKED)
      continue;
    *live = cmg__tool_add(*live, l->bytes);
    if (l->pool == NULL)
      continue;
    *pooled = cmg__tool_add(*pooled, l->bytes);
    while (j < n && strcmp(labels[j], l->pool) != 0)
      j++;
    if (j == n && n == sizeof(labels) / sizeof(*labels))
      continue;
    if (j == n) {
      labels[n] = l->pool;
      sums[n++] = 0;
    }
    sums[j] = cmg__tool_add(sums[j], l->bytes);
    if (sums[j] > sums[best] || best >= n)
      best = j;
  }
  if (n > 0)
    *pool = labels[best];
}

/* More than half: a pool holding a quarter of the memory beside a real
 * leak is worth no line, one holding most of it hides the tensors. */
bool
cmg__pool_blocks_is_mostly(const struct cmg__view *v)
{
  uint64_t pooled, live;
  const char *pool;

  cmg__pool_blocks_share(v, &pooled, &live, &pool);
  return pooled > 0 && pooled > live - pooled;
}
