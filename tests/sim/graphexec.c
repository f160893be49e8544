/*
 * Executable graphs of the simulated driver, and each physical device's
 * graph memory pool.
 *
 * Instantiating reserves nothing.  Memory comes at upload or launch, from
 * a pool per device that grows to what an executable needs and keeps what
 * it took, as NVIDIA's graph memory pool does; the figures follow what an
 * H100 showed (upload of a graph that allocates and frees 2 GiB takes 2
 * GiB; three more launches take nothing; a second graph allocating 3 GiB
 * and freeing none takes 1 GiB more, reusing the 2; a trim then gives
 * nothing back, 3 GiB being in use; with the card full, instantiating
 * succeeds and the upload and the launch fail with 2):
 *
 *  - footprint(E, d): the bytes of E's allocation nodes on d (the sim
 *    reuses nothing inside a graph);
 *  - escaped(d): graph allocations on d that a launch made live and
 *    nothing has freed (an allocation node that no free node of its graph
 *    frees escapes at launch);
 *  - an upload or launch of E needs escaped(d) + footprint(E, d), less E's
 *    own live allocations when E frees them first (AUTO_FREE_ON_LAUNCH).
 *    The pool grows by what it lacks through sim_charge, so failure
 *    injection counts a growth as one allocation and a full device fails
 *    it with 2, nothing changed; each growth is a chunk owned by the
 *    current context, whose teardown gives it back.  E becomes the
 *    device's resident graph;
 *  - used(d) = escaped(d) + the resident graph's allocations that do not
 *    escape.  cuDeviceGraphMemTrim gives back all but escaped(d) and
 *    leaves nothing resident.
 *
 * The device's free memory counts the pool's reserved bytes, since they
 * are charged.  Executables are in a list under sim_obj_lock, like the
 * pools' state.
 */
#include "graphs.h"

#include <stdlib.h>

#define EXEC_ALIVE 0x45584543u /* "EXEC" */

#define AUTO_FREE CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH
#define KNOWN_FLAGS                                                            \
  (AUTO_FREE | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |                            \
   CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |                                 \
   CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)

struct chunk {
  const struct CUctx_st *owner;
  uint64_t bytes;
  struct chunk *next;
};

struct gpool {
  uint64_t reserved;
  uint64_t reserved_high;
  uint64_t escaped;
  uint64_t used_high;
  CUgraphExec resident;
  uint64_t resident_bytes; /* the resident's allocations that do not escape */
  struct chunk *chunks;    /* newest first */
};

/* By physical device. */
static struct gpool gpools[SIM_MAX_DEVICES];
static struct CUgraphExec_st *execs;

/* ---- helpers (sim_obj_lock held) ----------------------------------- */

static uint64_t
used(const struct gpool *p)
{
  return p->escaped + p->resident_bytes;
}

static bool
is_exec(CUgraphExec e)
{
  for (struct CUgraphExec_st *p = execs; p != NULL; p = p->next)
    if (p == e)
      return true;
  return false;
}

/* Whether an allocation node of `g` made `a`. */
static bool
allocated_in(CUgraph g, const struct galloc *a)
{
  for (struct CUgraphNode_st *n = g->first; n != NULL; n = n->next)
    if (n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && n->alloc == a)
      return true;
  return false;
}

/* Copies what the memory nodes of `g` do into `e`, which becomes the
 * graph's one executable if there are any. */
static CUresult
build(struct CUgraphExec_st *e, CUgraph g)
{
  if (!sim_graph_is(g) || g->capturing)
    return CUDA_ERROR_INVALID_VALUE;
  size_t na = 0, nf = 0;
  for (struct CUgraphNode_st *n = g->first; n != NULL; n = n->next) {
    na += n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    nf += n->type == CU_GRAPH_NODE_TYPE_MEM_FREE;
  }
  if (na + nf > 0 && g->exec != NULL)
    return CUDA_ERROR_INVALID_VALUE;
  e->allocs = calloc(na + 1, sizeof(*e->allocs));
  e->frees = calloc(nf + 1, sizeof(*e->frees));
  if (e->allocs == NULL || e->frees == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  for (struct CUgraphNode_st *n = g->first; n != NULL; n = n->next) {
    if (n->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
      e->allocs[e->nallocs++] =
          (struct exec_alloc){ .alloc = n->alloc, .escapes = !n->freed_here };
      n->alloc->refs++;
    } else if (n->type == CU_GRAPH_NODE_TYPE_MEM_FREE &&
               !allocated_in(g, n->alloc)) {
      e->frees[e->nfrees++] = n->alloc;
      n->alloc->refs++;
    }
  }
  if (na + nf > 0) {
    g->exec = e;
    e->graph = g;
  }
  return CUDA_SUCCESS;
}

/* Frees `e` (unlinked, or never linked); what it made live stays live. */
static void
release(struct CUgraphExec_st *e)
{
  if (e->graph != NULL)
    e->graph->exec = NULL;
  for (int i = 0; i < sim_nphys; i++) {
    if (gpools[i].resident == e) {
      gpools[i].resident = NULL;
      gpools[i].resident_bytes = 0;
    }
  }
  for (size_t i = 0; i < e->nallocs; i++)
    sim_galloc_unref(e->allocs[i].alloc);
  for (size_t i = 0; i < e->nfrees; i++)
    sim_galloc_unref(e->frees[i]);
  free(e->allocs);
  free(e->frees);
  e->magic = 0;
  free(e);
}

/* A launch must find E's escaping allocations freed (unless it frees them
 * itself) and what its free nodes free still live. */
static CUresult
launchable(const struct CUgraphExec_st *e)
{
  bool auto_free = (e->flags & AUTO_FREE) != 0;
  for (size_t i = 0; i < e->nallocs; i++)
    if (e->allocs[i].escapes && e->allocs[i].alloc->live && !auto_free)
      return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < e->nfrees; i++)
    if (!e->frees[i]->live)
      return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

/* Grows each device's pool to what `e` needs, in chunks owned by `c`; on
 * failure nothing has changed. */
static CUresult
reserve(const struct CUgraphExec_st *e, const struct CUctx_st *c)
{
  uint64_t foot[SIM_MAX_DEVICES] = { 0 }, own[SIM_MAX_DEVICES] = { 0 };
  uint64_t grow[SIM_MAX_DEVICES] = { 0 };
  struct chunk *fresh[SIM_MAX_DEVICES] = { 0 };
  bool auto_free = (e->flags & AUTO_FREE) != 0;
  for (size_t i = 0; i < e->nallocs; i++) {
    const struct exec_alloc *x = &e->allocs[i];
    foot[x->alloc->dev->phys] += x->alloc->bytes;
    if (auto_free && x->escapes && x->alloc->live)
      own[x->alloc->dev->phys] += x->alloc->bytes;
  }
  /* The chunks first: once memory is charged, nothing may fail. */
  CUresult rc = CUDA_SUCCESS;
  for (int i = 0; i < sim_nphys && rc == CUDA_SUCCESS; i++) {
    uint64_t need = gpools[i].escaped - own[i] + foot[i];
    if (foot[i] == 0 || need <= gpools[i].reserved)
      continue;
    grow[i] = need - gpools[i].reserved;
    if ((fresh[i] = calloc(1, sizeof(*fresh[i]))) == NULL)
      rc = CUDA_ERROR_OUT_OF_MEMORY;
  }
  int charged = 0;
  for (; charged < sim_nphys && rc == CUDA_SUCCESS; charged++)
    if (grow[charged] > 0)
      rc = sim_charge(&sim_devices[charged], grow[charged]);
  if (rc != CUDA_SUCCESS) {
    for (int i = 0; i < charged - 1; i++)
      if (grow[i] > 0)
        sim_uncharge(&sim_devices[i], grow[i]);
    for (int i = 0; i < sim_nphys; i++)
      free(fresh[i]);
    return rc;
  }
  for (int i = 0; i < sim_nphys; i++) {
    struct gpool *p = &gpools[i];
    if (grow[i] == 0)
      continue;
    if (p->chunks != NULL && p->chunks->owner == c) {
      p->chunks->bytes += grow[i];
      free(fresh[i]);
    } else {
      fresh[i]->owner = c;
      fresh[i]->bytes = grow[i];
      fresh[i]->next = p->chunks;
      p->chunks = fresh[i];
    }
    p->reserved += grow[i];
    if (p->reserved > p->reserved_high)
      p->reserved_high = p->reserved;
  }
  return CUDA_SUCCESS;
}

/* What a launch does to memory: E's earlier allocations freed first with
 * AUTO_FREE_ON_LAUNCH, its escaping ones made live, its free nodes of
 * other graphs' allocations applied. */
static void
apply(const struct CUgraphExec_st *e)
{
  for (size_t i = 0; i < e->nallocs; i++) {
    struct galloc *a = e->allocs[i].alloc;
    if (e->allocs[i].escapes && a->live) {
      a->live = false;
      gpools[a->dev->phys].escaped -= a->bytes;
    }
  }
  for (size_t i = 0; i < e->nallocs; i++) {
    struct galloc *a = e->allocs[i].alloc;
    if (e->allocs[i].escapes) {
      a->live = true;
      gpools[a->dev->phys].escaped += a->bytes;
    }
  }
  for (size_t i = 0; i < e->nfrees; i++) {
    e->frees[i]->live = false;
    gpools[e->frees[i]->dev->phys].escaped -= e->frees[i]->bytes;
  }
}

/* `e` is resident on every device it allocates on. */
static void
settle(struct CUgraphExec_st *e)
{
  uint64_t inside[SIM_MAX_DEVICES] = { 0 };
  bool has[SIM_MAX_DEVICES] = { false };
  for (size_t i = 0; i < e->nallocs; i++) {
    int d = e->allocs[i].alloc->dev->phys;
    has[d] = true;
    if (!e->allocs[i].escapes)
      inside[d] += e->allocs[i].alloc->bytes;
  }
  for (int i = 0; i < sim_nphys; i++) {
    struct gpool *p = &gpools[i];
    if (!has[i])
      continue;
    p->resident = e;
    p->resident_bytes = inside[i];
    if (used(p) > p->used_high)
      p->used_high = used(p);
  }
}

/* Each of `d`'s escaped allocations is gone with the pool's memory. */
static void
drop_escaped(struct sim_device *d)
{
  uint64_t *addrs;
  long n = sim_gallocs_on(d, &addrs);
  for (long k = 0; k < n; k++) {
    struct galloc *a = sim_galloc_find(addrs[k]);
    if (a->live) {
      a->live = false;
      sim_galloc_put(a);
    }
  }
  free(addrs);
  gpools[d->phys].escaped = 0;
}

/* ---- executables ---------------------------------------------------- */

static CUresult
instantiate(CUgraphExec *phGraphExec, CUgraph hGraph, cuuint64_t flags)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (phGraphExec == NULL || (flags & ~(cuuint64_t)KNOWN_FLAGS) ||
      ((flags & AUTO_FREE) &&
       (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)))
    return CUDA_ERROR_INVALID_VALUE;
  struct CUgraphExec_st *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  e->magic = EXEC_ALIVE;
  e->flags = flags;
  pthread_mutex_lock(&sim_obj_lock);
  rc = build(e, hGraph);
  if (rc == CUDA_SUCCESS) {
    e->next = execs;
    execs = e;
  } else {
    release(e);
  }
  pthread_mutex_unlock(&sim_obj_lock);
  if (rc == CUDA_SUCCESS)
    *phGraphExec = e;
  return rc;
}

/* CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD is for cuGraphInstantiateWithParams
 * only. */
SIM_EXPORT CUresult
cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                            unsigned long long flags)
{
  if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)
    return CUDA_ERROR_INVALID_VALUE;
  return instantiate(phGraphExec, hGraph, flags);
}

/* The 5-argument forms of CUDA 10.0 and 11.0, without flags; the sim has
 * no failing node and nothing to log. */
static CUresult
instantiate_logged(CUgraphExec *phGraphExec, CUgraph hGraph,
                   CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)
{
  if (phErrorNode != NULL)
    *phErrorNode = NULL;
  if (logBuffer != NULL && bufferSize > 0)
    logBuffer[0] = '\0';
  return instantiate(phGraphExec, hGraph, 0);
}

SIM_EXPORT CUresult
cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
                   CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)
{
  return instantiate_logged(phGraphExec, hGraph, phErrorNode, logBuffer,
                            bufferSize);
}

SIM_EXPORT CUresult
cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph,
                      CUgraphNode *phErrorNode, char *logBuffer,
                      size_t bufferSize)
{
  return instantiate_logged(phGraphExec, hGraph, phErrorNode, logBuffer,
                            bufferSize);
}

static CUresult run(CUgraphExec hGraphExec, CUstream hStream, bool launch);
static CUresult exec_destroy(CUgraphExec hGraphExec);

/* Flags from the parameters; with CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD an
 * upload to their stream, whose failure undoes the instantiation. */
static CUresult
instantiate_params(CUgraphExec *phGraphExec, CUgraph hGraph,
                   CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
  if (p == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  p->hErrNode_out = NULL;
  CUresult rc = instantiate(phGraphExec, hGraph, p->flags);
  if (rc == CUDA_SUCCESS && (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)) {
    rc = run(*phGraphExec, p->hUploadStream, false);
    if (rc != CUDA_SUCCESS)
      exec_destroy(*phGraphExec);
  }
  p->result_out = rc == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS
                                     : CUDA_GRAPH_INSTANTIATE_ERROR;
  return rc;
}

SIM_EXPORT CUresult
cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                             CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
  return instantiate_params(phGraphExec, hGraph, instantiateParams);
}

SIM_EXPORT CUresult
cuGraphInstantiateWithParams_ptsz(
    CUgraphExec *phGraphExec, CUgraph hGraph,
    CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
  return instantiate_params(phGraphExec, hGraph, instantiateParams);
}

SIM_EXPORT CUresult
cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t *flags)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (flags == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&sim_obj_lock);
  if (is_exec(hGraphExec))
    *flags = hGraphExec->flags;
  else
    rc = CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* Upload and launch: the memory the executable needs, in chunks owned by
 * the current context; a launch then makes and frees its allocations. */
static CUresult
run(CUgraphExec hGraphExec, CUstream hStream, bool launch)
{
  struct CUctx_st *c;
  CUresult rc = sim_current(&c, NULL);
  if (rc != CUDA_SUCCESS)
    return rc;
  pthread_mutex_lock(&sim_obj_lock);
  if (!is_exec(hGraphExec))
    rc = CUDA_ERROR_INVALID_VALUE;
  else
    rc = sim_stream_uncaptured(hStream);
  if (rc == CUDA_SUCCESS && launch)
    rc = launchable(hGraphExec);
  if (rc == CUDA_SUCCESS)
    rc = reserve(hGraphExec, c);
  if (rc == CUDA_SUCCESS) {
    if (launch)
      apply(hGraphExec);
    settle(hGraphExec);
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

SIM_EXPORT CUresult
cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
  return run(hGraphExec, hStream, false);
}

SIM_EXPORT CUresult
cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
  return run(hGraphExec, hStream, false);
}

SIM_EXPORT CUresult
cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
  return run(hGraphExec, hStream, true);
}

SIM_EXPORT CUresult
cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
  return run(hGraphExec, hStream, true);
}

/* Nothing is resident after it; the allocations its launches made stay
 * valid until something frees them. */
static CUresult
exec_destroy(CUgraphExec hGraphExec)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  pthread_mutex_lock(&sim_obj_lock);
  struct CUgraphExec_st **pp = &execs;
  while (*pp != NULL && *pp != hGraphExec)
    pp = &(*pp)->next;
  if (*pp == NULL) {
    rc = CUDA_ERROR_INVALID_VALUE;
  } else {
    *pp = hGraphExec->next;
    release(hGraphExec);
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

SIM_EXPORT CUresult
cuGraphExecDestroy(CUgraphExec hGraphExec)
{
  return exec_destroy(hGraphExec);
}

/* ---- the graph memory pool ----------------------------------------- */

CUresult
sim_graph_free(uint64_t addr)
{
  CUresult rc = CUDA_SUCCESS;
  pthread_mutex_lock(&sim_obj_lock);
  struct galloc *a = sim_galloc_find(addr);
  if (a == NULL || !a->live) {
    rc = CUDA_ERROR_INVALID_VALUE;
  } else {
    a->live = false;
    gpools[a->dev->phys].escaped -= a->bytes;
    sim_galloc_put(a);
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* What the context grew goes back; a pool left with less than is in use
 * keeps nothing resident, and an empty one no allocation either. */
void
sim_graph_mem_teardown(const struct CUctx_st *c)
{
  for (int i = 0; i < sim_nphys; i++) {
    struct gpool *p = &gpools[i];
    uint64_t bytes = 0;
    for (struct chunk **pp = &p->chunks; *pp != NULL;) {
      struct chunk *k = *pp;
      if (k->owner == c) {
        bytes += k->bytes;
        *pp = k->next;
        free(k);
      } else {
        pp = &k->next;
      }
    }
    if (bytes == 0)
      continue;
    p->reserved -= bytes;
    sim_uncharge(&sim_devices[i], bytes);
    if (p->reserved == 0 || p->reserved < used(p)) {
      p->resident = NULL;
      p->resident_bytes = 0;
    }
    if (p->reserved == 0 && p->escaped > 0)
      drop_escaped(&sim_devices[i]);
  }
}

/* Gives back everything but the escaped allocations, newest chunks
 * first. */
SIM_EXPORT CUresult
cuDeviceGraphMemTrim(CUdevice device)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  struct sim_device *d = sim_device(device);
  if (d == NULL)
    return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&sim_obj_lock);
  struct gpool *p = &gpools[d->phys];
  p->resident = NULL;
  p->resident_bytes = 0;
  uint64_t give = p->reserved > p->escaped ? p->reserved - p->escaped : 0;
  p->reserved -= give;
  for (uint64_t left = give; left > 0;) {
    struct chunk *k = p->chunks;
    uint64_t take = k->bytes < left ? k->bytes : left;
    k->bytes -= take;
    left -= take;
    if (k->bytes == 0) {
      p->chunks = k->next;
      free(k);
    }
  }
  if (give > 0)
    sim_uncharge(d, give);
  pthread_mutex_unlock(&sim_obj_lock);
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr,
                             void *value)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (sim_opt_no_graph_attr)
    return CUDA_ERROR_NOT_SUPPORTED;
  if (value == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_device *d = sim_device(device);
  if (d == NULL)
    return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&sim_obj_lock);
  const struct gpool *p = &gpools[d->phys];
  cuuint64_t *v = value;
  switch (attr) {
  case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
    *v = used(p);
    break;
  case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
    *v = p->used_high;
    break;
  case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT:
    *v = p->reserved;
    break;
  case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
    *v = p->reserved_high;
    break;
  default:
    rc = CUDA_ERROR_INVALID_VALUE;
    break;
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* Only the high-water marks can be set, and only reset (to the current
 * value), with 0, as NVIDIA documents. */
SIM_EXPORT CUresult
cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr,
                             void *value)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (value == NULL || *(cuuint64_t *)value != 0)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_device *d = sim_device(device);
  if (d == NULL)
    return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&sim_obj_lock);
  struct gpool *p = &gpools[d->phys];
  switch (attr) {
  case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
    p->used_high = used(p);
    break;
  case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
    p->reserved_high = p->reserved;
    break;
  default:
    rc = CUDA_ERROR_INVALID_VALUE;
    break;
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* ---- hidden aliases ------------------------------------------------- */

SIM_GRAPH_EXEC_FUNCTIONS(SIM_DEFINE_ALIAS)
