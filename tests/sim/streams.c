/*
 * Streams and stream capture of the simulated driver, and the
 * stream-ordered allocation calls.
 *
 * Work completes at once, so a stream is little more than a handle: it
 * belongs to the context current when it was made (whose teardown
 * destroys it) and, while it captures, has a capture graph (graphs.c) to
 * which the stream-ordered calls add nodes instead of running.  NULL,
 * CU_STREAM_LEGACY and CU_STREAM_PER_THREAD are streams that never
 * capture.  Capture belongs to the stream, not to a thread: any thread may
 * add work to a capturing stream, and only the end of a GLOBAL or
 * THREAD_LOCAL capture must come from the thread that began it.  Of what
 * the modes prohibit, the sim models one thing: while any stream of the
 * process captures in GLOBAL mode, the synchronous allocation calls fail
 * and invalidate those captures, as a real driver refuses "unsafe" calls.
 *
 * Streams are in a list under sim_obj_lock and freed when destroyed: a
 * handle is looked up in the list before it is used, so a stale one is an
 * error rather than a read after free.
 */
#include "libcuda.h"

#include <stdlib.h>

#define STREAM_ALIVE 0x5354524du /* "STRM" */

/* The range cuCtxGetStreamPriorityRange reports on an H100; a real driver
 * clamps a priority to it. */
#define PRIORITY_GREATEST (-5)
#define PRIORITY_LEAST 0

struct CUstream_st {
  uint32_t magic;
  const struct CUctx_st *ctx;
  unsigned int flags;
  int priority;
  CUgraph capture; /* NULL when not capturing */
  CUstreamCaptureMode mode;
  bool invalidated;
  cuuint64_t capture_id;
  pthread_t thread; /* the one that began the capture */
  struct CUstream_st *next;
};

static struct CUstream_st *streams;
static cuuint64_t last_capture_id;
/* Captures in GLOBAL mode not yet ended, invalidated ones included.  Every
 * synchronous allocation reads it without a lock, so that the check costs
 * a load no other thread writes while nothing captures. */
static atomic_int global_captures;

static bool
is_special(CUstream s)
{
  return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

/* The stream cuStreamCreate* made at `s`, or NULL. */
static struct CUstream_st *
find(CUstream s)
{
  for (struct CUstream_st *p = streams; p != NULL; p = p->next)
    if (p == s)
      return p;
  return NULL;
}

/* Ends the capture of `s`; its graph goes to the caller, or away. */
static CUgraph
stop_capture(struct CUstream_st *s, bool keep)
{
  CUgraph g = s->capture;
  if (s->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)
    atomic_fetch_sub(&global_captures, 1);
  s->capture = NULL;
  s->invalidated = false;
  sim_graph_end_capture(g, keep);
  return keep ? g : NULL;
}

/* Unlinks *pp and frees it; a capture in progress ends, its graph
 * discarded. */
static void
destroy(struct CUstream_st **pp)
{
  struct CUstream_st *s = *pp;
  *pp = s->next;
  if (s->capture != NULL)
    stop_capture(s, false);
  s->magic = 0;
  free(s);
}

CUresult
sim_stream_target(CUstream s, CUgraph *graph)
{
  *graph = NULL;
  if (is_special(s))
    return CUDA_SUCCESS;
  struct CUstream_st *p = find(s);
  if (p == NULL)
    return CUDA_ERROR_INVALID_HANDLE;
  if (p->capture != NULL && p->invalidated)
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  *graph = p->capture;
  return CUDA_SUCCESS;
}

/* A graph with memory nodes cannot become a child graph node, so a
 * launch into a capture is refused, as an unsupported call during
 * capture is: with the capture invalidated. */
CUresult
sim_stream_uncaptured(CUstream s)
{
  if (is_special(s))
    return CUDA_SUCCESS;
  struct CUstream_st *p = find(s);
  if (p == NULL)
    return CUDA_ERROR_INVALID_HANDLE;
  if (p->capture == NULL)
    return CUDA_SUCCESS;
  p->invalidated = true;
  return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

CUresult
sim_capture_forbids(void)
{
  if (atomic_load_explicit(&global_captures, memory_order_relaxed) == 0)
    return CUDA_SUCCESS;
  bool any = false;
  pthread_mutex_lock(&sim_obj_lock);
  for (struct CUstream_st *p = streams; p != NULL; p = p->next) {
    if (p->capture != NULL && p->mode == CU_STREAM_CAPTURE_MODE_GLOBAL) {
      p->invalidated = true;
      any = true;
    }
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return any ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

void
sim_streams_teardown(const struct CUctx_st *c)
{
  struct CUstream_st **pp = &streams;
  while (*pp != NULL) {
    if ((*pp)->ctx == c)
      destroy(pp);
    else
      pp = &(*pp)->next;
  }
}

/* ---- streams -------------------------------------------------------- */

/* A stream of the current context; CU_STREAM_NON_BLOCKING is the only
 * flag. */
static CUresult
create(CUstream *phStream, unsigned int flags, int priority)
{
  struct CUctx_st *c;
  CUresult rc = sim_current(&c, NULL);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (phStream == NULL || (flags & ~(unsigned int)CU_STREAM_NON_BLOCKING))
    return CUDA_ERROR_INVALID_VALUE;
  struct CUstream_st *s = calloc(1, sizeof(*s));
  if (s == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  s->magic = STREAM_ALIVE;
  s->ctx = c;
  s->flags = flags;
  s->priority = priority < PRIORITY_GREATEST ? PRIORITY_GREATEST
                : priority > PRIORITY_LEAST  ? PRIORITY_LEAST
                                             : priority;
  pthread_mutex_lock(&sim_obj_lock);
  s->next = streams;
  streams = s;
  pthread_mutex_unlock(&sim_obj_lock);
  *phStream = s;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
  return create(phStream, Flags, PRIORITY_LEAST);
}

SIM_EXPORT CUresult
cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
  return create(phStream, flags, priority);
}

/* The special streams are not the caller's to destroy. */
static CUresult
stream_destroy(CUstream hStream)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (is_special(hStream))
    return CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_lock(&sim_obj_lock);
  struct CUstream_st **pp = &streams;
  while (*pp != NULL && *pp != hStream)
    pp = &(*pp)->next;
  if (*pp == NULL)
    rc = CUDA_ERROR_INVALID_HANDLE;
  else
    destroy(pp);
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

SIM_EXPORT CUresult
cuStreamDestroy_v2(CUstream hStream)
{
  return stream_destroy(hStream);
}

/* The CUDA 2.0 ABI, the same shape as _v2. */
SIM_EXPORT CUresult
cuStreamDestroy(CUstream hStream)
{
  return stream_destroy(hStream);
}

/* Work is done by the time it is queued.  Waiting for a capturing stream
 * would wait for work that never runs: refused, and the capture is
 * invalidated. */
static CUresult
synchronize(CUstream hStream)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (is_special(hStream))
    return sim_current(NULL, NULL);
  pthread_mutex_lock(&sim_obj_lock);
  struct CUstream_st *s = find(hStream);
  if (s == NULL) {
    rc = CUDA_ERROR_INVALID_HANDLE;
  } else if (s->capture != NULL) {
    s->invalidated = true;
    rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

SIM_EXPORT CUresult
cuStreamSynchronize(CUstream hStream)
{
  return synchronize(hStream);
}

SIM_EXPORT CUresult
cuStreamSynchronize_ptsz(CUstream hStream)
{
  return synchronize(hStream);
}

/* ---- capture -------------------------------------------------------- */

static CUresult
begin_capture(CUstream hStream, CUstreamCaptureMode mode)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if ((unsigned int)mode > CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  if (is_special(hStream))
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  pthread_mutex_lock(&sim_obj_lock);
  struct CUstream_st *s = find(hStream);
  CUgraph g = NULL;
  if (s == NULL)
    rc = CUDA_ERROR_INVALID_HANDLE;
  else if (s->capture != NULL)
    rc = CUDA_ERROR_ILLEGAL_STATE;
  else if ((g = sim_graph_new_capture()) == NULL)
    rc = CUDA_ERROR_OUT_OF_MEMORY;
  if (rc == CUDA_SUCCESS) {
    s->capture = g;
    s->mode = mode;
    s->invalidated = false;
    s->capture_id = ++last_capture_id;
    s->thread = pthread_self();
    if (mode == CU_STREAM_CAPTURE_MODE_GLOBAL)
      atomic_fetch_add(&global_captures, 1);
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

SIM_EXPORT CUresult
cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
  return begin_capture(hStream, mode);
}

SIM_EXPORT CUresult
cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
  return begin_capture(hStream, mode);
}

/* CUDA 10.0's, before there were modes: a global capture. */
SIM_EXPORT CUresult
cuStreamBeginCapture(CUstream hStream)
{
  return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

SIM_EXPORT CUresult
cuStreamBeginCapture_ptsz(CUstream hStream)
{
  return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

/* The stream stops capturing whether the graph survives or not; a wrong
 * thread's attempt leaves the capture as it was. */
static CUresult
end_capture(CUstream hStream, CUgraph *phGraph)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (phGraph == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (is_special(hStream))
    return CUDA_ERROR_ILLEGAL_STATE;
  pthread_mutex_lock(&sim_obj_lock);
  struct CUstream_st *s = find(hStream);
  if (s == NULL) {
    rc = CUDA_ERROR_INVALID_HANDLE;
  } else if (s->capture == NULL) {
    rc = CUDA_ERROR_ILLEGAL_STATE;
  } else if (s->mode != CU_STREAM_CAPTURE_MODE_RELAXED &&
             !pthread_equal(s->thread, pthread_self())) {
    rc = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
  } else if (s->invalidated) {
    stop_capture(s, false);
    *phGraph = NULL;
    rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  } else {
    *phGraph = stop_capture(s, true);
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

SIM_EXPORT CUresult
cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
  return end_capture(hStream, phGraph);
}

SIM_EXPORT CUresult
cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
  return end_capture(hStream, phGraph);
}

/* Every capture query: the status, and (any may be NULL) the capture's id
 * and graph.  The sim keeps no dependencies: none are reported. */
static CUresult
capture_info(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id,
             CUgraph *graph, const CUgraphNode **deps,
             const CUgraphEdgeData **edges, size_t *ndeps)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (status == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  struct CUstream_st *s = NULL;
  pthread_mutex_lock(&sim_obj_lock);
  if (!is_special(hStream) && (s = find(hStream)) == NULL)
    rc = CUDA_ERROR_INVALID_HANDLE;
  if (rc == CUDA_SUCCESS) {
    bool on = s != NULL && s->capture != NULL;
    *status = !on              ? CU_STREAM_CAPTURE_STATUS_NONE
              : s->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                               : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    if (id != NULL && on)
      *id = s->capture_id;
    if (graph != NULL)
      *graph = on ? s->capture : NULL;
    if (deps != NULL)
      *deps = NULL;
    if (edges != NULL)
      *edges = NULL;
    if (ndeps != NULL)
      *ndeps = 0;
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

SIM_EXPORT CUresult
cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
  return capture_info(hStream, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

SIM_EXPORT CUresult
cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
  return capture_info(hStream, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

SIM_EXPORT CUresult
cuStreamGetCaptureInfo(CUstream hStream,
                       CUstreamCaptureStatus *captureStatus_out,
                       cuuint64_t *id_out)
{
  return capture_info(hStream, captureStatus_out, id_out, NULL, NULL, NULL,
                      NULL);
}

SIM_EXPORT CUresult
cuStreamGetCaptureInfo_ptsz(CUstream hStream,
                            CUstreamCaptureStatus *captureStatus_out,
                            cuuint64_t *id_out)
{
  return capture_info(hStream, captureStatus_out, id_out, NULL, NULL, NULL,
                      NULL);
}

SIM_EXPORT CUresult
cuStreamGetCaptureInfo_v2(CUstream hStream,
                          CUstreamCaptureStatus *captureStatus_out,
                          cuuint64_t *id_out, CUgraph *graph_out,
                          const CUgraphNode **dependencies_out,
                          size_t *numDependencies_out)
{
  return capture_info(hStream, captureStatus_out, id_out, graph_out,
                      dependencies_out, NULL, numDependencies_out);
}

SIM_EXPORT CUresult
cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream,
                               CUstreamCaptureStatus *captureStatus_out,
                               cuuint64_t *id_out, CUgraph *graph_out,
                               const CUgraphNode **dependencies_out,
                               size_t *numDependencies_out)
{
  return capture_info(hStream, captureStatus_out, id_out, graph_out,
                      dependencies_out, NULL, numDependencies_out);
}

SIM_EXPORT CUresult
cuStreamGetCaptureInfo_v3(CUstream hStream,
                          CUstreamCaptureStatus *captureStatus_out,
                          cuuint64_t *id_out, CUgraph *graph_out,
                          const CUgraphNode **dependencies_out,
                          const CUgraphEdgeData **edgeData_out,
                          size_t *numDependencies_out)
{
  return capture_info(hStream, captureStatus_out, id_out, graph_out,
                      dependencies_out, edgeData_out, numDependencies_out);
}

SIM_EXPORT CUresult
cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream,
                               CUstreamCaptureStatus *captureStatus_out,
                               cuuint64_t *id_out, CUgraph *graph_out,
                               const CUgraphNode **dependencies_out,
                               const CUgraphEdgeData **edgeData_out,
                               size_t *numDependencies_out)
{
  return capture_info(hStream, captureStatus_out, id_out, graph_out,
                      dependencies_out, edgeData_out, numDependencies_out);
}

/* ---- stream-ordered allocation ------------------------------------- */

/* From the current pool of the current context's device; on a capturing
 * stream nothing is allocated: the capture graph gets an allocation node
 * on that device, whose fixed address is returned. */
static CUresult
alloc_async(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
  struct sim_device *d;
  CUresult rc = sim_current(NULL, &d);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (dptr == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t addr;
  CUgraph g;
  pthread_mutex_lock(&sim_obj_lock);
  rc = sim_stream_target(hStream, &g);
  if (rc == CUDA_SUCCESS && g != NULL)
    rc = sim_graph_capture_alloc(g, d, bytesize, &addr);
  else if (rc == CUDA_SUCCESS)
    rc = sim_pool_alloc_current(d, bytesize, &addr);
  pthread_mutex_unlock(&sim_obj_lock);
  if (rc == CUDA_SUCCESS)
    *dptr = addr;
  return rc;
}

SIM_EXPORT CUresult
cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
  return alloc_async(dptr, bytesize, hStream);
}

SIM_EXPORT CUresult
cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
  return alloc_async(dptr, bytesize, hStream);
}

/* Frees at once, or, on a capturing stream, adds a free node (of an
 * address some allocation node returned).  The special streams need no
 * lock: they never capture. */
static CUresult
free_async(CUdeviceptr dptr, CUstream hStream)
{
  CUresult rc = sim_current(NULL, NULL);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (is_special(hStream))
    return sim_free(dptr);
  CUgraph g;
  pthread_mutex_lock(&sim_obj_lock);
  rc = sim_stream_target(hStream, &g);
  if (rc == CUDA_SUCCESS && g != NULL && dptr != 0)
    rc = sim_graph_capture_free(g, dptr);
  pthread_mutex_unlock(&sim_obj_lock);
  if (rc != CUDA_SUCCESS || g != NULL)
    return rc;
  return sim_free(dptr);
}

SIM_EXPORT CUresult
cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
  return free_async(dptr, hStream);
}

SIM_EXPORT CUresult
cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
  return free_async(dptr, hStream);
}

/* ---- hidden aliases ------------------------------------------------- */

SIM_STREAM_FUNCTIONS(SIM_DEFINE_ALIAS)
