/*
 * CUDA graph memory.  What an H100 showed, and this module follows:
 * instantiation reserves nothing; an upload or launch maps the graph's
 * allocations from the device's graph memory pool, which grows to what is
 * needed and keeps its memory between launches and across graphs; a trim
 * gives back what no graph allocation still holds; the driver fails a
 * graph's memory at upload or launch.  So the limit is applied there,
 * before the real call, where the driver itself would fail.
 *
 * Before an upload or launch the pool's growth is predicted: the
 * allocations still live from earlier launches, plus every allocation node
 * of the graph (no reuse inside a graph is assumed, so the prediction errs
 * high), less what the pool holds.  After the call the pool is set to the
 * driver's own count.  A graph allocation that outlives its launch is
 * remembered until it is freed (by cuMemFree, cuMemFreeAsync or a later
 * graph's free node), since it keeps its part of the pool in use.
 *
 * One lock covers the module and is held across the real upload or launch,
 * so that what the driver says afterwards is the result of that call alone.
 * Graph calls are few next to allocations; the allocation path only reads
 * an atomic flag until the first capture.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ledger/driver_held.h"
#include "runtime/ledger/ledger.h"
#include "preload/context.h"
#include "preload/forklock.h"
#include "preload/graph.h"
#include "preload/state.h"
#include "preload/real.h"

struct node {
  uint64_t addr, size;
  bool escapes; /* no free node in its own graph */
};

struct exec {
  CUgraphExec h;
  bool auto_free;
  int device;         /* of its allocations; -1 for none */
  uint64_t footprint; /* its allocation nodes' bytes on that device */
  uint64_t internal;  /* those freed inside the graph */
  struct node *allocs;
  size_t n_allocs;
  uint64_t *frees;
  size_t n_frees;
};

/* A graph allocation that a launch made and nothing has freed yet. */
struct live {
  uint64_t addr, size;
  CUgraphExec from;
  int device;
};

/* One growth of a pool: a ledger entry of kind graph. */
struct chunk {
  uint64_t key, size;
};

struct pool {
  struct chunk *chunks;
  size_t n, cap;
  uint64_t held;
  uint64_t reserved_high, used_high;
  CUgraphExec resident; /* mapped by the last upload or launch */
};

static struct exec *execs;
static size_t n_execs, cap_execs;
static struct live *lives;
static size_t cap_lives;
static _Atomic size_t n_lives;
static struct pool pools[CMG__MAX_DEVICES];
static uint64_t keys;
static _Atomic bool began;

/* ---- small tables --------------------------------------------------- */

static bool
room(void **a, size_t *cap, size_t n, size_t size)
{
  if (n < *cap)
    return true;
  size_t want = *cap ? 2 * *cap : 8;
  void *p = realloc(*a, want * size);
  if (p == NULL)
    return false;
  *a = p;
  *cap = want;
  return true;
}

static void
exec_free(struct exec *e)
{
  free(e->allocs);
  free(e->frees);
}

static struct exec *
find_exec(CUgraphExec h)
{
  for (size_t i = 0; i < n_execs; i++)
    if (execs[i].h == h)
      return &execs[i];
  return NULL;
}

static void
drop_exec(CUgraphExec h)
{
  struct exec *e = find_exec(h);
  if (e == NULL)
    return;
  exec_free(e);
  *e = execs[--n_execs];
}

static void
drop_live(size_t i)
{
  size_t n = atomic_load_explicit(&n_lives, memory_order_relaxed) - 1;
  lives[i] = lives[n];
  atomic_store_explicit(&n_lives, n, memory_order_relaxed);
}

static bool
add_live(uint64_t addr, uint64_t size, CUgraphExec from, int device)
{
  size_t n = atomic_load_explicit(&n_lives, memory_order_relaxed);
  if (!room((void **)&lives, &cap_lives, n, sizeof(*lives)))
    return false;
  lives[n] = (struct live){ addr, size, from, device };
  atomic_store_explicit(&n_lives, n + 1, memory_order_relaxed);
  return true;
}

static bool
forget_live(uint64_t addr)
{
  size_t n = atomic_load_explicit(&n_lives, memory_order_relaxed);
  for (size_t i = 0; i < n; i++)
    if (lives[i].addr == addr) {
      drop_live(i);
      return true;
    }
  return false;
}

/* Live graph allocations on device, less those `skip` will free itself. */
static uint64_t
escaped(int device, const struct exec *skip)
{
  uint64_t sum = 0;
  size_t n = atomic_load_explicit(&n_lives, memory_order_relaxed);
  for (size_t i = 0; i < n; i++)
    if (lives[i].device == device &&
        (skip == NULL || !skip->auto_free || lives[i].from != skip->h))
      sum += lives[i].size;
  return sum;
}

static uint64_t
used_estimate(int device)
{
  const struct exec *r = find_exec(pools[device].resident);
  return escaped(device, NULL) + (r != NULL ? r->internal : 0);
}

/* ---- fork ------------------------------------------------------------ */

/* The child starts with no graphs, as it starts with no CUDA. */
static void
forget_all(void)
{
  for (size_t i = 0; i < n_execs; i++)
    exec_free(&execs[i]);
  n_execs = 0;
  atomic_store(&n_lives, 0);
  for (int d = 0; d < CMG__MAX_DEVICES; d++) {
    free(pools[d].chunks);
    pools[d] = (struct pool){ 0 };
  }
  cmg__held_reset();
}

/* Held across the real upload or launch; taken before the ledger's. */
static struct cmg__forklock guard = CMG__FORKLOCK(forget_all);

/* ---- learning a graph ---------------------------------------------- */

static bool
is_freed_in(const struct exec *e, uint64_t addr)
{
  for (size_t i = 0; i < e->n_frees; i++)
    if (e->frees[i] == addr)
      return true;
  return false;
}

static void
add_node(struct exec *e, CUgraphNode n, size_t *cap_a, size_t *cap_f)
{
  cmg__pfn_cuGraphNodeGetType get_type = REAL(cuGraphNodeGetType);
  cmg__pfn_cuGraphMemAllocNodeGetParams alloc_params =
      REAL(cuGraphMemAllocNodeGetParams);
  cmg__pfn_cuGraphMemFreeNodeGetParams free_params =
      REAL(cuGraphMemFreeNodeGetParams);
  CUgraphNodeType type;
  if (get_type == NULL || get_type(n, &type) != CUDA_SUCCESS)
    return;
  CUDA_MEM_ALLOC_NODE_PARAMS p;
  CUdeviceptr freed;
  memset(&p, 0, sizeof(p));
  if (type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && alloc_params != NULL &&
      alloc_params(n, &p) == CUDA_SUCCESS &&
      room((void **)&e->allocs, cap_a, e->n_allocs, sizeof(*e->allocs))) {
    if (e->device < 0)
      e->device = p.poolProps.location.id;
    if (p.poolProps.location.id == e->device)
      e->allocs[e->n_allocs++] = (struct node){ p.dptr, p.bytesize, true };
  } else if (type == CU_GRAPH_NODE_TYPE_MEM_FREE && free_params != NULL &&
             free_params(n, &freed) == CUDA_SUCCESS &&
             room((void **)&e->frees, cap_f, e->n_frees, sizeof(*e->frees)))
    e->frees[e->n_frees++] = freed;
}

/* The memory nodes of graph; allocations on devices other than the first
 * one's are left to the driver's count after each launch. */
static void
read_nodes(CUgraph graph, struct exec *e)
{
  cmg__pfn_cuGraphGetNodes get_nodes = REAL(cuGraphGetNodes);
  size_t n = 0, cap_a = 0, cap_f = 0;
  CUgraphNode *nodes;
  if (get_nodes == NULL || get_nodes(graph, NULL, &n) != CUDA_SUCCESS ||
      n == 0 || (nodes = calloc(n, sizeof(*nodes))) == NULL)
    return;
  if (get_nodes(graph, nodes, &n) == CUDA_SUCCESS)
    for (size_t i = 0; i < n; i++)
      add_node(e, nodes[i], &cap_a, &cap_f);
  free(nodes);
  for (size_t i = 0; i < e->n_allocs; i++) {
    struct node *a = &e->allocs[i];
    a->escapes = !is_freed_in(e, a->addr);
    e->footprint += a->size;
    e->internal += a->escapes ? 0 : a->size;
  }
}

void
cmg__graph_instantiated(CUresult rc, const CUgraphExec *exec, CUgraph graph,
                        unsigned long long flags)
{
  if (rc != CUDA_SUCCESS || exec == NULL || cmg__self.depth > 0)
    return;
  struct exec e = {
    .h = *exec,
    .auto_free = (flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) != 0,
    .device = -1,
  };
  read_nodes(graph, &e);
  cmg__forklock_take(&guard);
  drop_exec(e.h);
  if ((e.n_allocs == 0 && e.n_frees == 0) || e.device >= CMG__MAX_DEVICES ||
      !room((void **)&execs, &cap_execs, n_execs, sizeof(*execs)))
    exec_free(&e);
  else
    execs[n_execs++] = e;
  cmg__forklock_give(&guard);
}

/* ---- the pool ------------------------------------------------------- */

static void
add_chunk(struct pool *p, uint64_t key, uint64_t size)
{
  struct cmg__alloc a;
  if (cmg__ledger_lookup(key, CMG__KIND_GRAPH, &a) < 0 ||
      !room((void **)&p->chunks, &p->cap, p->n, sizeof(*p->chunks)))
    return;
  p->chunks[p->n++] = (struct chunk){ key, size };
  p->held += size;
}

static uint64_t
new_key(int device)
{
  return UINT64_C(0x6a) << 56 | (uint64_t)device << 48 | ++keys;
}

/* Gives back `bytes` of the pool, newest growth first. */
static void
shrink(struct pool *p, uint64_t bytes)
{
  while (bytes > 0 && p->n > 0) {
    struct chunk *c = &p->chunks[p->n - 1];
    struct cmg__alloc a;
    if (c->size > bytes) {
      cmg__shrink(c->key, CMG__KIND_GRAPH, bytes);
      c->size -= bytes;
      p->held -= bytes;
      return;
    }
    if (cmg__ledger_remove(c->key, CMG__KIND_GRAPH, &a) == 0)
      cmg__uncount(&a, false);
    bytes -= c->size;
    p->held -= c->size;
    p->n--;
  }
}

/* The driver's reserved, reserved high, used and used high, if it says. */
static bool
ask_driver(int device, uint64_t v[4])
{
  static const CUgraphMem_attribute attrs[4] = {
    CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT,
    CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH,
    CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT,
    CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
  };
  cmg__pfn_cuDeviceGetGraphMemAttribute get =
      REAL(cuDeviceGetGraphMemAttribute);
  for (int i = 0; i < 4; i++) {
    cuuint64_t x = 0;
    if (get == NULL || get(device, attrs[i], &x) != CUDA_SUCCESS)
      return false;
    v[i] = x;
  }
  return true;
}

/* Sets the pool's entries to the driver's count, or to `estimate` where
 * the driver cannot be asked, and the report's figures with them. */
static void
settle(int device, enum cmg__fn fn, uint64_t estimate)
{
  struct pool *p = &pools[device];
  uint64_t v[4];
  bool truth = ask_driver(device, v);
  uint64_t target = truth ? v[0] : estimate;
  if (target > p->held) {
    uint64_t key = new_key(device);
    cmg__alloc_taken(fn, CMG__KIND_GRAPH, device, target - p->held, key, NULL);
    add_chunk(p, key, target - p->held);
  } else if (target < p->held)
    shrink(p, p->held - target);
  uint64_t used = truth ? v[2] : used_estimate(device);
  if (p->held > p->reserved_high)
    p->reserved_high = p->held;
  if (used > p->used_high)
    p->used_high = used;
  if (truth)
    cmg__graphmem_set(device, v[0], v[1], v[2], v[3], true);
  else
    cmg__graphmem_set(device, p->held, p->reserved_high, used, p->used_high,
                      false);
}

/* ---- uploads and launches ------------------------------------------ */

static bool
has_live(const struct exec *e)
{
  size_t n = atomic_load_explicit(&n_lives, memory_order_relaxed);
  for (size_t i = 0; i < n; i++)
    if (lives[i].from == e->h)
      return true;
  return false;
}

/* A launch whose own allocations from the last one are still live fails in
 * the driver (CUDA_ERROR_INVALID_VALUE) unless it frees them itself: it
 * needs nothing, and must not be turned into a denial. */
static uint64_t
growth_for(const struct exec *e, bool launch)
{
  if (launch && !e->auto_free && has_live(e))
    return 0;
  uint64_t need = escaped(e->device, e) + e->footprint;
  uint64_t held = pools[e->device].held;
  return need > held ? need - held : 0;
}

CUresult
cmg__graph_run_begin(struct cmg__graph_run *r, enum cmg__fn fn,
                     CUgraphExec exec, bool launch)
{
  *r = (struct cmg__graph_run){ .exec = exec, .device = -1, .launch = launch };
  if (cmg__self.depth > 0)
    return CUDA_SUCCESS;
  r->fn = fn;
  cmg__forklock_take(&guard);
  r->active = true;
  const struct exec *e = find_exec(exec);
  r->device = e != NULL && e->device >= 0 ? e->device : cmg__current_device();
  uint64_t growth = e != NULL && e->device >= 0 ? growth_for(e, launch) : 0;
  if (growth == 0) {
    cmg__self.depth++;
    return CUDA_SUCCESS;
  }
  r->began = true;
  CUresult rc = cmg__alloc_begin(&r->c, fn, CMG__KIND_GRAPH, e->device, growth);
  if (rc != CUDA_SUCCESS) {
    cmg__graphmem_count(e->device, CMG__GRAPHMEM_DENIED);
    r->active = false;
    cmg__forklock_give(&guard);
  }
  return rc;
}

/* A launch's allocations that outlive it, and the frees it makes. */
static void
launched(const struct exec *e)
{
  size_t n = atomic_load_explicit(&n_lives, memory_order_relaxed);
  for (size_t i = n; e->auto_free && i-- > 0;)
    if (lives[i].from == e->h)
      drop_live(i);
  for (size_t i = 0; i < e->n_allocs; i++)
    if (e->allocs[i].escapes) {
      forget_live(e->allocs[i].addr);
      add_live(e->allocs[i].addr, e->allocs[i].size, e->h, e->device);
    }
  for (size_t i = 0; i < e->n_frees; i++)
    forget_live(e->frees[i]);
}

CUresult
cmg__graph_run_end(struct cmg__graph_run *r, CUresult rc)
{
  if (!r->active)
    return rc;
  int d = r->device;
  if (r->began) {
    uint64_t key = rc == CUDA_SUCCESS && r->c.tracked ? new_key(d) : 0;
    cmg__alloc_end(&r->c, rc, key);
    if (key != 0)
      add_chunk(&pools[d], key, r->c.r.bytes);
  } else
    cmg__self.depth--;
  const struct exec *e = find_exec(r->exec);
  if (rc == CUDA_SUCCESS && e != NULL && r->launch)
    launched(e);
  if (rc == CUDA_SUCCESS && d >= 0 && d < CMG__MAX_DEVICES) {
    pools[d].resident = r->exec;
    cmg__graphmem_count(d, r->launch ? CMG__GRAPHMEM_LAUNCH
                                     : CMG__GRAPHMEM_UPLOAD);
    settle(d, r->fn, pools[d].held);
  }
  cmg__forklock_give(&guard);
  return rc;
}

/* ---- the rest of a graph's life ------------------------------------ */

void
cmg__graph_exec_destroyed(CUresult rc, CUgraphExec exec)
{
  if (rc != CUDA_SUCCESS)
    return;
  cmg__forklock_take(&guard);
  for (int d = 0; d < CMG__MAX_DEVICES; d++)
    if (pools[d].resident == exec)
      pools[d].resident = NULL;
  drop_exec(exec);
  cmg__forklock_give(&guard);
}

void
cmg__graph_trimmed(CUresult rc, CUdevice device)
{
  if (rc != CUDA_SUCCESS || device < 0 || device >= CMG__MAX_DEVICES ||
      cmg__self.depth > 0)
    return;
  cmg__forklock_take(&guard);
  pools[device].resident = NULL;
  cmg__graphmem_count(device, CMG__GRAPHMEM_TRIM);
  settle(device, CMG__FN_cuDeviceGraphMemTrim, escaped(device, NULL));
  cmg__forklock_give(&guard);
}

bool
cmg__graph_freed(uint64_t addr)
{
  if (atomic_load_explicit(&n_lives, memory_order_relaxed) == 0)
    return false;
  cmg__forklock_take(&guard);
  bool found = forget_live(addr);
  cmg__forklock_give(&guard);
  return found;
}

/* Drops the chunks a teardown took out of the ledger; true if any. */
static bool
sync_pool(struct pool *p)
{
  bool changed = false;
  for (size_t i = p->n; i-- > 0;) {
    struct cmg__alloc a;
    if (cmg__ledger_lookup(p->chunks[i].key, CMG__KIND_GRAPH, &a) == 0)
      continue;
    p->held -= p->chunks[i].size;
    memmove(&p->chunks[i], &p->chunks[i + 1],
            (p->n - i - 1) * sizeof(*p->chunks));
    p->n--;
    changed = true;
  }
  return changed;
}

void
cmg__graph_context_gone(void)
{
  cmg__forklock_take(&guard);
  for (int d = 0; d < CMG__MAX_DEVICES; d++) {
    struct pool *p = &pools[d];
    if (p->n == 0 || !sync_pool(p))
      continue;
    if (p->held == 0) {
      p->resident = NULL;
      for (size_t i = atomic_load_explicit(&n_lives, memory_order_relaxed);
           i-- > 0;)
        if (lives[i].device == d)
          drop_live(i);
    }
    settle(d, CMG__FN_cuGraphLaunch, p->held);
  }
  cmg__forklock_give(&guard);
}

/* ---- streams -------------------------------------------------------- */

void
cmg__graph_capture_began(void)
{
  atomic_store_explicit(&began, true, memory_order_release);
}

bool CMG__HOT
cmg__graph_capturing(CUstream stream, bool ptsz)
{
  if (cmg__likely(!atomic_load_explicit(&began, memory_order_acquire)))
    return false;
  cmg__pfn_cuStreamIsCapturing is = REAL(cuStreamIsCapturing);
  CUstreamCaptureStatus status;
  if (stream == NULL && ptsz)
    stream = CU_STREAM_PER_THREAD;
  return is != NULL && is(stream, &status) == CUDA_SUCCESS &&
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}
