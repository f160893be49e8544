/*
 * The stream, capture and graph script operations over the driver API
 * (app_graph.c calls them), through the same table of driver function
 * pointers as app_drvops.c: dlsym, cuGetProcAddress, linked addresses, or
 * cudaGetDriverEntryPoint in the runtime programs, which keep graph_nodes
 * from here.  Allocation nodes are pinned memory on the device the script
 * names; `capturing` asks cuStreamGetCaptureInfo_v3, so that a capture's
 * graph must come back with its status.  Every result is the driver's
 * CUresult.
 */
#include "app_drv.h"

#include <stdlib.h>
#include <string.h>

static app_drv_table *table;

/* The table, or NULL with *rc set: every operation starts with this. */
#define DRV(d, rc)                                                             \
  struct app_drv *d = table(&rc);                                              \
  if (d == NULL)                                                               \
  return rc

static CUstream
stream(uint64_t s)
{
  return (CUstream)(uintptr_t)s;
}

static CUgraph
graph(uint64_t g)
{
  return (CUgraph)(uintptr_t)g;
}

/* ---- streams and capture ---------------------------------------------- */

static int
stream_create(uint64_t *s)
{
  int rc;
  DRV(d, rc);
  CUstream h = NULL;
  rc = d->stream_create(&h, CU_STREAM_DEFAULT);
  *s = (uintptr_t)h;
  return rc;
}

static int
stream_destroy(uint64_t s)
{
  int rc;
  DRV(d, rc);
  return d->stream_destroy(stream(s));
}

static int
stream_sync(uint64_t s)
{
  int rc;
  DRV(d, rc);
  return d->stream_sync(stream(s));
}

static int
capture_begin(uint64_t s, int mode)
{
  int rc;
  DRV(d, rc);
  return d->capture_begin(stream(s), (CUstreamCaptureMode)mode);
}

static int
capture_end(uint64_t s, uint64_t *g)
{
  int rc;
  DRV(d, rc);
  CUgraph h = NULL;
  rc = d->capture_end(stream(s), &h);
  *g = (uintptr_t)h;
  return rc;
}

/* A capture without its graph is a driver bug: CUDA_ERROR_UNKNOWN. */
static int
capture_status(uint64_t s, int *status)
{
  int rc;
  DRV(d, rc);
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  CUgraph g = NULL;
  const CUgraphNode *deps = NULL;
  const CUgraphEdgeData *edges = NULL;
  size_t n = 0;
  rc = d->capture_info(stream(s), &st, &id, &g, &deps, &edges, &n);
  if (rc == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE && g == NULL)
    rc = CUDA_ERROR_UNKNOWN;
  *status = (int)st;
  return rc;
}

static int
alloc_on(uint64_t s, size_t size, uint64_t *ptr)
{
  int rc;
  DRV(d, rc);
  CUdeviceptr p = 0;
  rc = d->mem_alloc_async(&p, size, stream(s));
  *ptr = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
free_on(uint64_t s, uint64_t ptr)
{
  int rc;
  DRV(d, rc);
  return d->mem_free_async(ptr, stream(s));
}

/* ---- graphs ------------------------------------------------------------ */

static int
graph_create(uint64_t *g)
{
  int rc;
  DRV(d, rc);
  CUgraph h = NULL;
  rc = d->graph_create(&h, 0);
  *g = (uintptr_t)h;
  return rc;
}

static int
graph_destroy(uint64_t g)
{
  int rc;
  DRV(d, rc);
  return d->graph_destroy(graph(g));
}

static int
graph_alloc(uint64_t g, int dev, size_t size, uint64_t *ptr)
{
  int rc;
  DRV(d, rc);
  CUDA_MEM_ALLOC_NODE_PARAMS p;
  memset(&p, 0, sizeof(p));
  p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.poolProps.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.poolProps.location.id = dev;
  p.bytesize = size;
  CUgraphNode n = NULL;
  rc = d->graph_add_alloc(&n, graph(g), NULL, 0, &p);
  *ptr = rc == CUDA_SUCCESS ? p.dptr : 0;
  return rc;
}

static int
graph_free(uint64_t g, uint64_t ptr)
{
  int rc;
  DRV(d, rc);
  CUgraphNode n = NULL;
  return d->graph_add_free(&n, graph(g), NULL, 0, ptr);
}

/* Counts the nodes by type, and the bytes of the allocation nodes, from
 * what the node queries return. */
static int
graph_nodes(uint64_t g, struct app_graph_nodes *out)
{
  int rc;
  DRV(d, rc);
  size_t n = 0;
  rc = d->graph_get_nodes(graph(g), NULL, &n);
  if (rc != CUDA_SUCCESS)
    return rc;
  CUgraphNode *nodes = calloc(n + 1, sizeof(*nodes));
  if (nodes == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  rc = d->graph_get_nodes(graph(g), nodes, &n);
  memset(out, 0, sizeof(*out));
  out->n = n;
  for (size_t i = 0; rc == CUDA_SUCCESS && i < n; i++) {
    CUgraphNodeType type;
    CUDA_MEM_ALLOC_NODE_PARAMS p;
    CUdeviceptr ptr;
    rc = d->node_type(nodes[i], &type);
    if (rc == CUDA_SUCCESS && type == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
      rc = d->alloc_node_params(nodes[i], &p);
      out->alloc++;
      out->bytes += p.bytesize;
    } else if (rc == CUDA_SUCCESS && type == CU_GRAPH_NODE_TYPE_MEM_FREE) {
      rc = d->free_node_params(nodes[i], &ptr);
      out->free++;
    }
  }
  free(nodes);
  return rc;
}

/* ---- executable graphs ------------------------------------------------- */

static unsigned long long
flags_of(bool auto_free)
{
  return auto_free ? CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH : 0;
}

static int
instantiate(uint64_t g, bool auto_free, uint64_t *exec)
{
  int rc;
  DRV(d, rc);
  CUgraphExec e = NULL;
  rc = d->instantiate(&e, graph(g), flags_of(auto_free));
  *exec = (uintptr_t)e;
  return rc;
}

/* An instantiation that succeeds must say so in result_out. */
static int
instantiate_params(uint64_t g, bool auto_free, uint64_t *exec)
{
  int rc;
  DRV(d, rc);
  CUDA_GRAPH_INSTANTIATE_PARAMS p;
  memset(&p, 0, sizeof(p));
  p.flags = flags_of(auto_free);
  p.result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
  CUgraphExec e = NULL;
  rc = d->instantiate_params(&e, graph(g), &p);
  if (rc == CUDA_SUCCESS && p.result_out != CUDA_GRAPH_INSTANTIATE_SUCCESS)
    rc = CUDA_ERROR_UNKNOWN;
  *exec = (uintptr_t)e;
  return rc;
}

static int
graph_run(uint64_t exec, uint64_t s, bool launch)
{
  int rc;
  DRV(d, rc);
  CUgraphExec e = (CUgraphExec)(uintptr_t)exec;
  return launch ? d->graph_launch(e, stream(s)) : d->graph_upload(e, stream(s));
}

static int
exec_destroy(uint64_t exec)
{
  int rc;
  DRV(d, rc);
  return d->exec_destroy((CUgraphExec)(uintptr_t)exec);
}

/* ---- the graph memory pool --------------------------------------------- */

static int
graph_trim(int dev)
{
  int rc;
  DRV(d, rc);
  return d->graph_trim(dev);
}

static int
graph_mem(int dev, uint64_t out[4])
{
  static const CUgraphMem_attribute attrs[4] = {
    CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
    CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH
  };
  int rc;
  DRV(d, rc);
  for (int i = 0; i < 4 && rc == CUDA_SUCCESS; i++) {
    cuuint64_t v = 0;
    rc = d->graph_mem_get(dev, attrs[i], &v);
    out[i] = v;
  }
  return rc;
}

static int
graph_mem_reset(int dev)
{
  int rc;
  DRV(d, rc);
  cuuint64_t zero = 0;
  rc = d->graph_mem_set(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero);
  if (rc == CUDA_SUCCESS)
    rc = d->graph_mem_set(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &zero);
  return rc;
}

void
app_drv_fill_graph_ops(struct app_backend *b, app_drv_table *t)
{
  table = t;
  b->stream_create = stream_create;
  b->stream_destroy = stream_destroy;
  b->stream_sync = stream_sync;
  b->capture_begin = capture_begin;
  b->capture_end = capture_end;
  b->capture_status = capture_status;
  b->alloc_on = alloc_on;
  b->free_on = free_on;
  b->graph_create = graph_create;
  b->graph_destroy = graph_destroy;
  b->graph_alloc = graph_alloc;
  b->graph_free = graph_free;
  b->graph_nodes = graph_nodes;
  b->instantiate = instantiate;
  b->instantiate_params = instantiate_params;
  b->graph_run = graph_run;
  b->exec_destroy = exec_destroy;
  b->graph_trim = graph_trim;
  b->graph_mem = graph_mem;
  b->graph_mem_reset = graph_mem_reset;
}
