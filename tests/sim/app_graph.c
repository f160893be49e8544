/*
 * The script operations for streams, stream capture and CUDA graphs with
 * memory nodes: what a program capturing its allocations into a graph
 * (PyTorch's CUDA graphs, JAX) does to the driver's memory.
 *
 * Streams, graphs and executable graphs are numbered in script order like
 * pools, failed ones included, streams from 1: a stream argument of 0
 * (or null) is the NULL stream, and legacy and per_thread name CUDA's
 * CU_STREAM_LEGACY and CU_STREAM_PER_THREAD.  A failed stream is kept as
 * a handle no driver knows, so that later operations on it fail rather
 * than fall back to the NULL stream.  Allocations made on a stream or by a
 * graph's allocation node take allocation indexes, so that free,
 * free_async and graph_free can name them.  Each operation calls the
 * backend's function for it and prints "NAME unsupported" where the
 * program has none.  See README.md for each operation's output line.
 */
#include "app_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stream arguments that are not numbers. */
#define STREAM_LEGACY UINT64_MAX
#define STREAM_PER_THREAD (UINT64_MAX - 1)
/* A stream whose creation failed: no stream at all. */
#define NO_STREAM UINT64_MAX

const struct spec app_graph_specs[] = {
  { "stream", OP_STREAM, "", false, 's' },
  { "stream_destroy", OP_STREAM_DESTROY, "T", false, 0 },
  { "sync", OP_SYNC, "T", false, 0 },
  { "capture", OP_CAPTURE, "TM", false, 0 },
  { "capture_end", OP_CAPTURE_END, "T", false, 'g' },
  { "capturing", OP_CAPTURING, "T", false, 0 },
  { "async_on", OP_ASYNC_ON, "TS", true, 0 },
  { "free_async_on", OP_FREE_ASYNC_ON, "TI", false, 0 },
  { "async_thread", OP_ASYNC_THREAD, "TS", true, 0 },
  { "graph", OP_GRAPH, "", false, 'g' },
  { "graph_alloc", OP_GRAPH_ALLOC, "HNS", true, 0 },
  { "graph_free", OP_GRAPH_FREE, "HI", false, 0 },
  { "graph_destroy", OP_GRAPH_DESTROY, "H", false, 0 },
  { "graph_nodes", OP_GRAPH_NODES, "H", false, 0 },
  { "instantiate", OP_INSTANTIATE, "HF", false, 'e' },
  { "instantiate_params", OP_INSTANTIATE_PARAMS, "HF", false, 'e' },
  { "upload", OP_UPLOAD, "RT", false, 0 },
  { "launch", OP_LAUNCH, "RT", false, 0 },
  { "exec_destroy", OP_EXEC_DESTROY, "R", false, 0 },
  { "graph_trim", OP_GRAPH_TRIM, "N", false, 0 },
  { "graph_mem", OP_GRAPH_MEM, "N", false, 0 },
  { "graph_mem_reset", OP_GRAPH_MEM_RESET, "N", false, 0 },
};
const size_t app_graph_nspecs =
    sizeof(app_graph_specs) / sizeof(app_graph_specs[0]);

static const char *const modes[] = { "global", "thread", "relaxed" };
static const char *const statuses[] = { "none", "active", "invalidated" };

/* How many of each the script has made so far, while parsing; then the
 * handles, by number. */
static int nstreams = 1, ngraphs, nexecs;
static uint64_t *streams, *graphs, *execs;

/* ---- parsing -------------------------------------------------------- */

/* A decimal number below `limit`. */
static bool
number(const char *t, int limit, uint64_t *v)
{
  uint64_t n = 0;
  if (*t == '\0' || strlen(t) > 9)
    return false;
  for (; *t != '\0'; t++) {
    if (*t < '0' || *t > '9')
      return false;
    n = n * 10 + (uint64_t)(*t - '0');
  }
  *v = n;
  return n < (uint64_t)limit;
}

const char *
app_graph_arg(char a, const char *t, uint64_t *v)
{
  switch (a) {
  case 'T':
    *v = strcmp(t, "legacy") == 0       ? STREAM_LEGACY
         : strcmp(t, "per_thread") == 0 ? STREAM_PER_THREAD
                                        : 0;
    if (*v != 0 || strcmp(t, "null") == 0 || number(t, nstreams, v))
      return NULL;
    return "expected 0, null, legacy, per_thread or an earlier stream";
  case 'H':
    return number(t, ngraphs, v) ? NULL : "not the number of an earlier graph";
  case 'R':
    return number(t, nexecs, v) ? NULL
                                : "not the number of an earlier executable";
  case 'M':
    for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
      if (strcmp(t, modes[m]) == 0) {
        *v = m;
        return NULL;
      }
    }
    return "expected global, thread or relaxed";
  case 'F':
    *v = strcmp(t, "auto") == 0;
    return *v || strcmp(t, "0") == 0 ? NULL : "expected 0 or auto";
  default:
    return "unknown argument letter";
  }
}

void
app_graph_number(struct op *op)
{
  switch (op->spec->numbers) {
  case 's':
    op->number = nstreams++;
    break;
  case 'g':
    op->number = ngraphs++;
    break;
  case 'e':
    op->number = nexecs++;
    break;
  default:
    break;
  }
}

bool
app_graph_tables(void)
{
  streams = calloc((size_t)nstreams, sizeof(*streams));
  graphs = calloc((size_t)ngraphs + 1, sizeof(*graphs));
  execs = calloc((size_t)nexecs + 1, sizeof(*execs));
  return streams != NULL && graphs != NULL && execs != NULL;
}

/* ---- running -------------------------------------------------------- */

static bool
unsupported(const struct op *op, bool supported)
{
  if (!supported)
    app_line("%s unsupported", op->spec->name);
  return !supported;
}

/* The handle a stream argument names: CU_STREAM_LEGACY and
 * CU_STREAM_PER_THREAD are cudaStreamLegacy and cudaStreamPerThread. */
static uint64_t
stream_of(uint64_t arg)
{
  return arg == STREAM_LEGACY       ? 1
         : arg == STREAM_PER_THREAD ? 2
         : arg == 0                 ? 0
                                    : streams[arg];
}

/* A stream argument as the output shows it. */
static const char *
label(uint64_t arg, char buf[24])
{
  if (arg == STREAM_LEGACY)
    return "legacy";
  if (arg == STREAM_PER_THREAD)
    return "per_thread";
  snprintf(buf, 24, "%llu", (unsigned long long)arg);
  return buf;
}

static void
do_stream(const struct op *op)
{
  enum kind k = op->spec->kind;
  char buf[24];
  if (unsupported(op, app_be->stream_create != NULL))
    return;
  int rc = app_ensure_started();
  if (k == OP_STREAM) {
    uint64_t s = 0;
    if (rc == 0)
      rc = app_be->stream_create(&s);
    streams[op->number] = rc == 0 ? s : NO_STREAM;
    app_line("stream s=%d rc=%d", op->number, rc);
    return;
  }
  uint64_t s = stream_of(op->arg[0]);
  const char *name = label(op->arg[0], buf);
  int status = 0;
  uint64_t g = 0;
  switch (k) {
  case OP_STREAM_DESTROY:
  case OP_SYNC:
    if (rc == 0)
      rc = k == OP_SYNC ? app_be->stream_sync(s) : app_be->stream_destroy(s);
    app_line("%s s=%s rc=%d", op->spec->name, name, rc);
    break;
  case OP_CAPTURE:
    if (rc == 0)
      rc = app_be->capture_begin(s, (int)op->arg[1]);
    app_line("capture s=%s rc=%d", name, rc);
    break;
  case OP_CAPTURE_END:
    if (rc == 0)
      rc = app_be->capture_end(s, &g);
    graphs[op->number] = rc == 0 ? g : 0;
    app_line("capture_end s=%s g=%d rc=%d", name, op->number, rc);
    break;
  default:
    if (rc == 0)
      rc = app_be->capture_status(s, &status);
    if (rc == 0 && status >= 0 && status <= 2)
      app_line("capturing s=%s rc=0 status=%s", name, statuses[status]);
    else
      app_line("capturing s=%s rc=%d", name, rc);
    break;
  }
}

struct async_thread {
  uint64_t stream;
  size_t size;
  uint64_t ptr;
  int rc;
};

static void *
async_main(void *arg)
{
  struct async_thread *t = arg;
  t->rc = app_be->set_device(app_cur_dev);
  if (t->rc == 0)
    t->rc = app_be->alloc_on(t->stream, t->size, &t->ptr);
  return NULL;
}

/* async_on, async_thread (the same from a thread of its own, which
 * selects the current device first) and free_async_on. */
static void
do_async(const struct op *op)
{
  enum kind k = op->spec->kind;
  char buf[24];
  const char *name = label(op->arg[0], buf);
  if (unsupported(op, app_be->alloc_on != NULL))
    return;
  struct async_thread t = { .stream = stream_of(op->arg[0]),
                            .size = op->arg[1] };
  t.rc = app_ensure_started();
  if (k == OP_FREE_ASYNC_ON) {
    int i = (int)op->arg[1];
    if (t.rc == 0)
      t.rc = app_be->free_on(t.stream, app_ptrs[i]);
    app_line("free_async_on i=%d s=%s rc=%d", i, name, t.rc);
    return;
  }
  if (t.rc == 0 && k == OP_ASYNC_ON) {
    t.rc = app_be->alloc_on(t.stream, t.size, &t.ptr);
  } else if (t.rc == 0) {
    pthread_t tid;
    if (pthread_create(&tid, NULL, async_main, &t) != 0) {
      perror("async_thread");
      exit(1);
    }
    pthread_join(tid, NULL);
  }
  app_ptrs[op->index] = t.rc == 0 ? t.ptr : 0;
  if (t.rc == 0)
    app_line("%s i=%d s=%s size=%llu rc=0 ptr=0x%llx", op->spec->name,
             op->index, name, (unsigned long long)t.size,
             (unsigned long long)t.ptr);
  else
    app_line("%s i=%d s=%s size=%llu rc=%d", op->spec->name, op->index, name,
             (unsigned long long)t.size, t.rc);
}

/* graph, graph_alloc, graph_free, graph_destroy, graph_nodes. */
static void
do_graph(const struct op *op)
{
  enum kind k = op->spec->kind;
  if (unsupported(op, k == OP_GRAPH_NODES ? app_be->graph_nodes != NULL
                                          : app_be->graph_create != NULL))
    return;
  int rc = app_ensure_started();
  int g = (int)op->arg[0];
  uint64_t h = 0;
  struct app_graph_nodes n = { 0 };
  switch (k) {
  case OP_GRAPH:
    if (rc == 0)
      rc = app_be->graph_create(&h);
    graphs[op->number] = rc == 0 ? h : 0;
    app_line("graph g=%d rc=%d", op->number, rc);
    break;
  case OP_GRAPH_ALLOC:
    if (rc == 0)
      rc = app_be->graph_alloc(graphs[g], (int)op->arg[1], op->arg[2], &h);
    app_ptrs[op->index] = rc == 0 ? h : 0;
    if (rc == 0)
      app_line("graph_alloc i=%d g=%d dev=%d size=%llu rc=0 ptr=0x%llx",
               op->index, g, (int)op->arg[1], (unsigned long long)op->arg[2],
               (unsigned long long)h);
    else
      app_line("graph_alloc i=%d g=%d dev=%d size=%llu rc=%d", op->index, g,
               (int)op->arg[1], (unsigned long long)op->arg[2], rc);
    break;
  case OP_GRAPH_FREE:
    if (rc == 0)
      rc = app_be->graph_free(graphs[g], app_ptrs[op->arg[1]]);
    app_line("graph_free g=%d i=%d rc=%d", g, (int)op->arg[1], rc);
    break;
  case OP_GRAPH_DESTROY:
    if (rc == 0)
      rc = app_be->graph_destroy(graphs[g]);
    app_line("graph_destroy g=%d rc=%d", g, rc);
    break;
  default:
    if (rc == 0)
      rc = app_be->graph_nodes(graphs[g], &n);
    if (rc == 0)
      app_line("graph_nodes g=%d rc=0 n=%zu alloc=%zu free=%zu bytes=%llu", g,
               n.n, n.alloc, n.free, (unsigned long long)n.bytes);
    else
      app_line("graph_nodes g=%d rc=%d", g, rc);
    break;
  }
}

/* instantiate, instantiate_params, upload, launch, exec_destroy. */
static void
do_exec(const struct op *op)
{
  enum kind k = op->spec->kind;
  char buf[24];
  if (unsupported(op, k == OP_INSTANTIATE_PARAMS
                          ? app_be->instantiate_params != NULL
                          : app_be->instantiate != NULL))
    return;
  int rc = app_ensure_started();
  uint64_t e = 0;
  switch (k) {
  case OP_INSTANTIATE:
  case OP_INSTANTIATE_PARAMS:
    if (rc == 0)
      rc = (k == OP_INSTANTIATE ? app_be->instantiate
                                : app_be->instantiate_params)(
          graphs[op->arg[0]], op->arg[1] != 0, &e);
    execs[op->number] = rc == 0 ? e : 0;
    app_line("%s e=%d g=%d rc=%d", op->spec->name, op->number, (int)op->arg[0],
             rc);
    break;
  case OP_UPLOAD:
  case OP_LAUNCH:
    if (rc == 0)
      rc = app_be->graph_run(execs[op->arg[0]], stream_of(op->arg[1]),
                             k == OP_LAUNCH);
    app_line("%s e=%d s=%s rc=%d", op->spec->name, (int)op->arg[0],
             label(op->arg[1], buf), rc);
    break;
  default:
    if (rc == 0)
      rc = app_be->exec_destroy(execs[op->arg[0]]);
    app_line("exec_destroy e=%d rc=%d", (int)op->arg[0], rc);
    break;
  }
}

/* graph_trim, graph_mem, graph_mem_reset of device DEV. */
static void
do_graph_mem(const struct op *op)
{
  int dev = (int)op->arg[0];
  if (unsupported(op, app_be->graph_mem != NULL))
    return;
  int rc = app_ensure_started();
  uint64_t v[4] = { 0 };
  switch (op->spec->kind) {
  case OP_GRAPH_TRIM:
    if (rc == 0)
      rc = app_be->graph_trim(dev);
    app_line("graph_trim dev=%d rc=%d", dev, rc);
    break;
  case OP_GRAPH_MEM_RESET:
    if (rc == 0)
      rc = app_be->graph_mem_reset(dev);
    app_line("graph_mem_reset dev=%d rc=%d", dev, rc);
    break;
  default:
    if (rc == 0)
      rc = app_be->graph_mem(dev, v);
    if (rc == 0)
      app_line("graph_mem dev=%d rc=0 used=%llu used_high=%llu reserved=%llu "
               "reserved_high=%llu",
               dev, (unsigned long long)v[0], (unsigned long long)v[1],
               (unsigned long long)v[2], (unsigned long long)v[3]);
    else
      app_line("graph_mem dev=%d rc=%d", dev, rc);
    break;
  }
}

void
app_run_graph(const struct op *op)
{
  switch (op->spec->kind) {
  case OP_STREAM:
  case OP_STREAM_DESTROY:
  case OP_SYNC:
  case OP_CAPTURE:
  case OP_CAPTURE_END:
  case OP_CAPTURING:
    do_stream(op);
    break;
  case OP_ASYNC_ON:
  case OP_FREE_ASYNC_ON:
  case OP_ASYNC_THREAD:
    do_async(op);
    break;
  case OP_GRAPH:
  case OP_GRAPH_ALLOC:
  case OP_GRAPH_FREE:
  case OP_GRAPH_DESTROY:
  case OP_GRAPH_NODES:
    do_graph(op);
    break;
  case OP_INSTANTIATE:
  case OP_INSTANTIATE_PARAMS:
  case OP_UPLOAD:
  case OP_LAUNCH:
  case OP_EXEC_DESTROY:
    do_exec(op);
    break;
  case OP_GRAPH_TRIM:
  case OP_GRAPH_MEM:
  case OP_GRAPH_MEM_RESET:
    do_graph_mem(op);
    break;
  default:
    break;
  }
}
