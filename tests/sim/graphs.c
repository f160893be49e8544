/*
 * Graphs of the simulated driver: graphs made by cuGraphCreate or by
 * stream capture, their memory allocation, memory free and empty nodes,
 * and the addresses of graph allocations.
 *
 * An allocation node allocates nothing: it takes an address, fixed for
 * the node's life and the same at every launch, from a range of its own
 * (GRAPH_VA_BASE, in no device's arena), as NVIDIA's driver reserves
 * virtual addresses for graph allocations when the node is made.  What
 * memory backs it, and when, is the graph memory pool's business
 * (graphexec.c).  A free node names an address some allocation node
 * returned, of its own graph or of any other.  Dependencies are checked
 * (they must be nodes of the graph) but not kept: the nodes of a graph
 * run in the order they were added.
 *
 * Graphs are in a list, and the graph allocations in a table by address,
 * all under sim_obj_lock.  Nodes are found through their graph before
 * they are used, so a stale handle is an error, not a read after free.
 */
#include "graphs.h"

#include <stdlib.h>
#include <string.h>

#define GRAPH_ALIVE 0x47525048u /* "GRPH" */
#define NODE_ALIVE 0x4e4f4445u  /* "NODE" */

/* 16 TiB below the VMM range (0x600000000000). */
#define GRAPH_VA_BASE UINT64_C(0x500000000000)
#define GRAPH_VA_SIZE UINT64_C(0x100000000000)

static struct CUgraph_st *graphs;
static struct sim_arena va;
static bool va_ready;
/* Graph allocations by address; each record's owner is its device, so
 * that sim_table_owned lists a device's, and obj its struct galloc. */
static struct sim_table gallocs;

/* ---- graph allocations ---------------------------------------------- */

static struct galloc *
galloc_new(struct sim_device *d, uint64_t bytes)
{
  if (!va_ready) {
    if (sim_arena_init(&va, GRAPH_VA_BASE, GRAPH_VA_SIZE) != 0)
      return NULL;
    va_ready = true;
  }
  if (bytes > GRAPH_VA_SIZE)
    return NULL;
  struct galloc *a = calloc(1, sizeof(*a));
  if (a == NULL)
    return NULL;
  a->bytes = bytes;
  a->span = (bytes + SIM_ALIGN - 1) & ~(uint64_t)(SIM_ALIGN - 1);
  a->dev = d;
  if (sim_arena_take(&va, a->span, &a->addr) != 0) {
    free(a);
    return NULL;
  }
  struct sim_live rec = {
    .addr = a->addr, .bytes = bytes, .span = a->span, .owner = d, .obj = a
  };
  if (sim_table_insert(&gallocs, &rec) != 0) {
    sim_arena_give(&va, a->addr, a->span);
    free(a);
    return NULL;
  }
  return a;
}

struct galloc *
sim_galloc_find(uint64_t addr)
{
  struct sim_live *rec = sim_table_get(&gallocs, addr);
  return rec != NULL ? rec->obj : NULL;
}

void
sim_galloc_put(struct galloc *a)
{
  if (a->refs > 0 || a->live)
    return;
  sim_table_remove(&gallocs, a->addr, &(struct sim_live){ 0 });
  sim_arena_give(&va, a->addr, a->span);
  free(a);
}

void
sim_galloc_unref(struct galloc *a)
{
  a->refs--;
  sim_galloc_put(a);
}

long
sim_gallocs_on(const struct sim_device *d, uint64_t **out)
{
  return sim_table_owned(&gallocs, d, out);
}

/* ---- graphs and nodes (sim_obj_lock held) --------------------------- */

bool
sim_graph_is(CUgraph g)
{
  for (struct CUgraph_st *p = graphs; p != NULL; p = p->next)
    if (p == g)
      return true;
  return false;
}

/* The node `n` of a live graph, or NULL. */
static struct CUgraphNode_st *
find_node(CUgraphNode n)
{
  for (struct CUgraph_st *g = graphs; g != NULL; g = g->next)
    for (struct CUgraphNode_st *p = g->first; p != NULL; p = p->next)
      if (p == n)
        return p;
  return NULL;
}

/* Every dependency a node of `g`. */
static bool
deps_ok(CUgraph g, const CUgraphNode *deps, size_t ndeps)
{
  for (size_t i = 0; i < ndeps; i++) {
    struct CUgraphNode_st *p = g->first;
    while (p != NULL && p != deps[i])
      p = p->next;
    if (p == NULL)
      return false;
  }
  return true;
}

static CUgraph
graph_new(bool capturing)
{
  struct CUgraph_st *g = calloc(1, sizeof(*g));
  if (g == NULL)
    return NULL;
  g->magic = GRAPH_ALIVE;
  g->capturing = capturing;
  g->next = graphs;
  graphs = g;
  return g;
}

/* Its executable, if any, lives on without it. */
static void
graph_destroy(CUgraph g)
{
  struct CUgraph_st **pp = &graphs;
  while (*pp != g)
    pp = &(*pp)->next;
  *pp = g->next;
  if (g->exec != NULL)
    g->exec->graph = NULL;
  for (struct CUgraphNode_st *n = g->first, *next; n != NULL; n = next) {
    next = n->next;
    if (n->alloc != NULL)
      sim_galloc_unref(n->alloc);
    free(n->access);
    n->magic = 0;
    free(n);
  }
  g->magic = 0;
  free(g);
}

static struct CUgraphNode_st *
node_new(CUgraph g, CUgraphNodeType type)
{
  struct CUgraphNode_st *n = calloc(1, sizeof(*n));
  if (n == NULL)
    return NULL;
  n->magic = NODE_ALIVE;
  n->type = type;
  if (g->last != NULL)
    g->last->next = n;
  else
    g->first = n;
  g->last = n;
  g->nnodes++;
  return n;
}

/* Takes the node's address; parameters checked by the caller. */
static CUresult
add_alloc(CUgraph g, struct sim_device *d, const CUmemPoolProps *props,
          const CUmemAccessDesc *access, size_t naccess, uint64_t bytes,
          struct CUgraphNode_st **out)
{
  CUmemAccessDesc *copy = NULL;
  if (naccess > 0) {
    copy = malloc(naccess * sizeof(*copy));
    if (copy == NULL)
      return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(copy, access, naccess * sizeof(*copy));
  }
  struct galloc *a = galloc_new(d, bytes);
  struct CUgraphNode_st *n =
      a != NULL ? node_new(g, CU_GRAPH_NODE_TYPE_MEM_ALLOC) : NULL;
  if (n == NULL) {
    if (a != NULL)
      sim_galloc_put(a);
    free(copy);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  a->refs = 1;
  n->alloc = a;
  n->props = *props;
  n->access = copy;
  n->naccess = naccess;
  *out = n;
  return CUDA_SUCCESS;
}

/* An address an allocation node returned, not already freed by a node of
 * `g`; freeing an allocation of `g` itself keeps it from escaping. */
static CUresult
add_free(CUgraph g, uint64_t addr, struct CUgraphNode_st **out)
{
  struct galloc *a = sim_galloc_find(addr);
  if (a == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  for (struct CUgraphNode_st *p = g->first; p != NULL; p = p->next)
    if (p->type == CU_GRAPH_NODE_TYPE_MEM_FREE && p->alloc == a)
      return CUDA_ERROR_INVALID_VALUE;
  struct CUgraphNode_st *n = node_new(g, CU_GRAPH_NODE_TYPE_MEM_FREE);
  if (n == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  n->alloc = a;
  a->refs++;
  for (struct CUgraphNode_st *p = g->first; p != NULL; p = p->next)
    if (p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC && p->alloc == a)
      p->freed_here = true;
  if (out != NULL)
    *out = n;
  return CUDA_SUCCESS;
}

/* Pinned memory on a device of the process, no IPC handle types, peer
 * access only for devices of the process; *d is where it lives. */
static CUresult
alloc_params(const CUmemPoolProps *props, const CUmemAccessDesc *access,
             size_t naccess, size_t bytes, struct sim_device **d)
{
  if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
      props->handleTypes != CU_MEM_HANDLE_TYPE_NONE ||
      props->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
      (*d = sim_device(props->location.id)) == NULL || bytes == 0 ||
      naccess > SIM_MAX_DEVICES || (naccess > 0 && access == NULL))
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < naccess; i++)
    if (access[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        !sim_is_device(access[i].location.id))
      return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

/* ---- for stream capture (streams.c) -------------------------------- */

CUgraph
sim_graph_new_capture(void)
{
  return graph_new(true);
}

void
sim_graph_end_capture(CUgraph g, bool keep)
{
  if (keep)
    g->capturing = false;
  else
    graph_destroy(g);
}

/* The node cuMemAllocAsync would have made: pinned memory on `d`. */
CUresult
sim_graph_capture_alloc(CUgraph g, struct sim_device *d, uint64_t bytes,
                        uint64_t *addr)
{
  if (bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  CUmemPoolProps props;
  memset(&props, 0, sizeof(props));
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = d->ordinal;
  struct CUgraphNode_st *n;
  CUresult rc = add_alloc(g, d, &props, NULL, 0, bytes, &n);
  if (rc == CUDA_SUCCESS)
    *addr = n->alloc->addr;
  return rc;
}

CUresult
sim_graph_capture_free(CUgraph g, uint64_t addr)
{
  return add_free(g, addr, NULL);
}

/* ---- graphs --------------------------------------------------------- */

SIM_EXPORT CUresult
cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (phGraph == NULL || flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&sim_obj_lock);
  CUgraph g = graph_new(false);
  pthread_mutex_unlock(&sim_obj_lock);
  if (g == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *phGraph = g;
  return CUDA_SUCCESS;
}

/* A capture graph is its stream's until the capture ends. */
SIM_EXPORT CUresult
cuGraphDestroy(CUgraph hGraph)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  pthread_mutex_lock(&sim_obj_lock);
  if (!sim_graph_is(hGraph))
    rc = CUDA_ERROR_INVALID_VALUE;
  else if (hGraph->capturing)
    rc = CUDA_ERROR_ILLEGAL_STATE;
  else
    graph_destroy(hGraph);
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* What every node-adding call checks first, taking sim_obj_lock on
 * success. */
static CUresult
adding(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (out == NULL || (deps == NULL && ndeps > 0))
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&sim_obj_lock);
  if (!sim_graph_is(g) || !deps_ok(g, deps, ndeps)) {
    pthread_mutex_unlock(&sim_obj_lock);
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

static CUresult
empty_node(CUgraphNode *phGraphNode, CUgraph hGraph,
           const CUgraphNode *dependencies, size_t numDependencies)
{
  CUresult rc = adding(phGraphNode, hGraph, dependencies, numDependencies);
  if (rc != CUDA_SUCCESS)
    return rc;
  struct CUgraphNode_st *n = node_new(hGraph, CU_GRAPH_NODE_TYPE_EMPTY);
  pthread_mutex_unlock(&sim_obj_lock);
  if (n == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *phGraphNode = n;
  return CUDA_SUCCESS;
}

static CUresult
alloc_node(CUgraphNode *phGraphNode, CUgraph hGraph,
           const CUgraphNode *dependencies, size_t numDependencies,
           const CUmemPoolProps *props, const CUmemAccessDesc *access,
           size_t naccess, size_t bytes, CUdeviceptr *dptr)
{
  CUresult rc = adding(phGraphNode, hGraph, dependencies, numDependencies);
  if (rc != CUDA_SUCCESS)
    return rc;
  struct sim_device *d = NULL;
  struct CUgraphNode_st *n = NULL;
  rc = alloc_params(props, access, naccess, bytes, &d);
  if (rc == CUDA_SUCCESS)
    rc = add_alloc(hGraph, d, props, access, naccess, bytes, &n);
  pthread_mutex_unlock(&sim_obj_lock);
  if (rc == CUDA_SUCCESS) {
    *dptr = n->alloc->addr;
    *phGraphNode = n;
  }
  return rc;
}

static CUresult
free_node(CUgraphNode *phGraphNode, CUgraph hGraph,
          const CUgraphNode *dependencies, size_t numDependencies,
          CUdeviceptr dptr)
{
  CUresult rc = adding(phGraphNode, hGraph, dependencies, numDependencies);
  if (rc != CUDA_SUCCESS)
    return rc;
  struct CUgraphNode_st *n = NULL;
  rc = add_free(hGraph, dptr, &n);
  pthread_mutex_unlock(&sim_obj_lock);
  if (rc == CUDA_SUCCESS)
    *phGraphNode = n;
  return rc;
}

SIM_EXPORT CUresult
cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                    const CUgraphNode *dependencies, size_t numDependencies)
{
  return empty_node(phGraphNode, hGraph, dependencies, numDependencies);
}

SIM_EXPORT CUresult
cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                       const CUgraphNode *dependencies, size_t numDependencies,
                       CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
  if (nodeParams == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  return alloc_node(phGraphNode, hGraph, dependencies, numDependencies,
                    &nodeParams->poolProps, nodeParams->accessDescs,
                    nodeParams->accessDescCount, nodeParams->bytesize,
                    &nodeParams->dptr);
}

SIM_EXPORT CUresult
cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                      const CUgraphNode *dependencies, size_t numDependencies,
                      CUdeviceptr dptr)
{
  return free_node(phGraphNode, hGraph, dependencies, numDependencies, dptr);
}

/* The generic form, for the node types the sim has. */
static CUresult
add_node(CUgraphNode *phGraphNode, CUgraph hGraph,
         const CUgraphNode *dependencies, size_t numDependencies,
         CUgraphNodeParams *nodeParams)
{
  if (nodeParams == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  switch (nodeParams->type) {
  case CU_GRAPH_NODE_TYPE_EMPTY:
    return empty_node(phGraphNode, hGraph, dependencies, numDependencies);
  case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
    return alloc_node(phGraphNode, hGraph, dependencies, numDependencies,
                      &nodeParams->alloc.poolProps,
                      nodeParams->alloc.accessDescs,
                      nodeParams->alloc.accessDescCount,
                      nodeParams->alloc.bytesize, &nodeParams->alloc.dptr);
  case CU_GRAPH_NODE_TYPE_MEM_FREE:
    return free_node(phGraphNode, hGraph, dependencies, numDependencies,
                     nodeParams->free.dptr);
  default:
    return CUDA_ERROR_NOT_SUPPORTED;
  }
}

SIM_EXPORT CUresult
cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                  const CUgraphNode *dependencies,
                  const CUgraphEdgeData *dependencyData, size_t numDependencies,
                  CUgraphNodeParams *nodeParams)
{
  return add_node(phGraphNode, hGraph, dependencies, numDependencies,
                  nodeParams);
}

/* CUDA 12.2's, before edge data. */
SIM_EXPORT CUresult
cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph,
               const CUgraphNode *dependencies, size_t numDependencies,
               CUgraphNodeParams *nodeParams)
{
  return add_node(phGraphNode, hGraph, dependencies, numDependencies,
                  nodeParams);
}

/* In the order they were added; unused entries of a larger array are
 * NULL. */
SIM_EXPORT CUresult
cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (numNodes == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&sim_obj_lock);
  if (!sim_graph_is(hGraph)) {
    rc = CUDA_ERROR_INVALID_VALUE;
  } else if (nodes == NULL) {
    *numNodes = hGraph->nnodes;
  } else {
    size_t i = 0;
    for (struct CUgraphNode_st *n = hGraph->first; n != NULL && i < *numNodes;
         n = n->next)
      nodes[i++] = n;
    for (size_t k = i; k < *numNodes; k++)
      nodes[k] = NULL;
    *numNodes = i;
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* The node, if it is one of type `type` (or `any` type); sim_obj_lock
 * is held on success. */
static CUresult
node_of(CUgraphNode hNode, CUgraphNodeType type, bool any,
        struct CUgraphNode_st **out)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  pthread_mutex_lock(&sim_obj_lock);
  struct CUgraphNode_st *n = find_node(hNode);
  if (n == NULL || (!any && n->type != type)) {
    pthread_mutex_unlock(&sim_obj_lock);
    return CUDA_ERROR_INVALID_VALUE;
  }
  *out = n;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
  if (type == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  struct CUgraphNode_st *n;
  CUresult rc = node_of(hNode, 0, true, &n);
  if (rc != CUDA_SUCCESS)
    return rc;
  *type = n->type;
  pthread_mutex_unlock(&sim_obj_lock);
  return CUDA_SUCCESS;
}

/* accessDescs points into the node, as NVIDIA documents: valid while the
 * node lives. */
SIM_EXPORT CUresult
cuGraphMemAllocNodeGetParams(CUgraphNode hNode,
                             CUDA_MEM_ALLOC_NODE_PARAMS *params_out)
{
  if (params_out == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  struct CUgraphNode_st *n;
  CUresult rc = node_of(hNode, CU_GRAPH_NODE_TYPE_MEM_ALLOC, false, &n);
  if (rc != CUDA_SUCCESS)
    return rc;
  params_out->poolProps = n->props;
  params_out->accessDescs = n->access;
  params_out->accessDescCount = n->naccess;
  params_out->bytesize = n->alloc->bytes;
  params_out->dptr = n->alloc->addr;
  pthread_mutex_unlock(&sim_obj_lock);
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out)
{
  if (dptr_out == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  struct CUgraphNode_st *n;
  CUresult rc = node_of(hNode, CU_GRAPH_NODE_TYPE_MEM_FREE, false, &n);
  if (rc != CUDA_SUCCESS)
    return rc;
  *dptr_out = n->alloc->addr;
  pthread_mutex_unlock(&sim_obj_lock);
  return CUDA_SUCCESS;
}

/* ---- hidden aliases ------------------------------------------------- */

SIM_GRAPH_FUNCTIONS(SIM_DEFINE_ALIAS)
