/*
 * app_rt_shared and app_rt_static: the script interpreter over the CUDA
 * runtime API, linked against the simulated libcudart.so.13 or against
 * libcudart_static.a.  Same source, so the two differ only in how cudart
 * is linked: with the shared library an LD_PRELOAD library can interpose
 * cudaMalloc itself; with the static archive it can only catch the
 * driver calls the runtime makes through cuGetProcAddress.  rc= values are
 * cudaError_t, except for operations the runtime has no call for (VMM,
 * contexts, external memory, graph_nodes), which use driver entry points
 * from cudaGetDriverEntryPointByVersion and print the driver's CUresult.
 */
#include "app_drv.h"

#include <cuda_runtime_api.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Not declared unless CUDA_API_PER_THREAD_DEFAULT_STREAM is defined. */
extern __typeof__(cudaMallocAsync) cudaMallocAsync_ptsz;
extern __typeof__(cudaFreeAsync) cudaFreeAsync_ptsz;
extern __typeof__(cudaMallocFromPoolAsync) cudaMallocFromPoolAsync_ptsz;
extern __typeof__(cudaGetDriverEntryPointByVersion)
    cudaGetDriverEntryPointByVersion_ptsz;
/* Deprecated, and still what older programs call. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
extern __typeof__(cudaGetDriverEntryPoint) cudaGetDriverEntryPoint_ptsz;
#pragma GCC diagnostic pop

static int
set_device(int dev)
{
  return cudaSetDevice(dev);
}

static int
alloc(uint64_t *ptr, size_t size)
{
  void *p = NULL;
  cudaError_t rc = cudaMalloc(&p, size);
  *ptr = (uintptr_t)p;
  return rc;
}

static int
alloc_pitch(uint64_t *ptr, size_t *pitch, size_t width, size_t height,
            unsigned int elem)
{
  void *p = NULL;
  cudaError_t rc = cudaMallocPitch(&p, pitch, width, height);
  *ptr = (uintptr_t)p;
  return rc;
}

static int
alloc_managed(uint64_t *ptr, size_t size)
{
  void *p = NULL;
  cudaError_t rc = cudaMallocManaged(&p, size, cudaMemAttachGlobal);
  *ptr = (uintptr_t)p;
  return rc;
}

static int
alloc_async(uint64_t *ptr, size_t size, bool ptsz)
{
  void *p = NULL;
  cudaError_t rc = ptsz ? cudaMallocAsync_ptsz(&p, size, NULL)
                        : cudaMallocAsync(&p, size, NULL);
  *ptr = (uintptr_t)p;
  return rc;
}

static int
free_(uint64_t ptr)
{
  return cudaFree((void *)(uintptr_t)ptr);
}

static int
free_async(uint64_t ptr, bool ptsz)
{
  void *p = (void *)(uintptr_t)ptr;
  return ptsz ? cudaFreeAsync_ptsz(p, NULL) : cudaFreeAsync(p, NULL);
}

static int
meminfo(size_t *free, size_t *total)
{
  return cudaMemGetInfo(free, total);
}

static int
totalmem(int dev, size_t *bytes)
{
  struct cudaDeviceProp prop;
  cudaError_t rc = cudaGetDeviceProperties(&prop, dev);
  if (rc == cudaSuccess)
    *bytes = prop.totalGlobalMem;
  return rc;
}

/* Through cudaGetDriverEntryPointByVersion, which uses the runtime's own
 * cached cuGetProcAddress. */
static int
getproc(const char *symbol, int version, unsigned long long flags, void **fn,
        int *status)
{
  enum cudaDriverEntryPointQueryResult st =
      (enum cudaDriverEntryPointQueryResult)-1;
  *fn = NULL;
  cudaError_t rc = cudaGetDriverEntryPointByVersion(symbol, fn,
                                                    (unsigned int)version,
                                                    flags, &st);
  *status = (int)st;
  return rc;
}

/* cudaDeviceReset acts on the calling thread's device, which the
 * interpreter keeps equal to `dev`. */
static int
reset(int dev)
{
  return cudaDeviceReset();
}

/* ---- driver entry points --------------------------------------------- */

/* Every entry point from cudaGetDriverEntryPointByVersion, with the base
 * names, versions and flags of the driver programs: what a program that
 * mixes the two APIs (PyTorch's expandable segments) does.  Once, on the
 * first operation that needs one; a missing one stays NULL and makes
 * its operations fail with CUDA_ERROR_NOT_FOUND. */
static struct app_drv entries;
static pthread_once_t entries_once = PTHREAD_ONCE_INIT;
static int entries_rc;

#define ENTRY(field, type, base, version, flags, elf) \
  { \
    void *fn = NULL; \
    enum cudaDriverEntryPointQueryResult st = cudaDriverEntryPointSuccess; \
    cudaError_t rc = cudaGetDriverEntryPointByVersion(base, &fn, version, \
                                                      flags, &st); \
    if (rc != cudaSuccess || fn == NULL) { \
      fprintf(stderr, "app_rt: cudaGetDriverEntryPointByVersion(\"%s\", " \
              "%d, %d): rc=%d status=%d\n", base, version, (int)(flags), \
              (int)rc, (int)st); \
      entries_rc = 500; /* CUDA_ERROR_NOT_FOUND */ \
    } \
    entries.field = (type)fn; \
  }

static void
resolve_entries(void)
{
  APP_DRV_FUNCTIONS(ENTRY)
}

static struct app_drv *
table(int *rc)
{
  pthread_once(&entries_once, resolve_entries);
  *rc = entries_rc;
  return entries_rc == 0 ? &entries : NULL;
}

/* The `entry` operation: VER 0 asks the unversioned (and deprecated)
 * cudaGetDriverEntryPoint. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static int
entry(const char *symbol, int version, unsigned long long flags, bool ptsz,
      void **fn, int *status)
{
  enum cudaDriverEntryPointQueryResult st =
      (enum cudaDriverEntryPointQueryResult)-1;
  cudaError_t rc;
  *fn = NULL;
  if (version == 0)
    rc = ptsz ? cudaGetDriverEntryPoint_ptsz(symbol, fn, flags, &st)
              : cudaGetDriverEntryPoint(symbol, fn, flags, &st);
  else
    rc = ptsz ? cudaGetDriverEntryPointByVersion_ptsz(
                    symbol, fn, (unsigned int)version, flags, &st)
              : cudaGetDriverEntryPointByVersion(
                    symbol, fn, (unsigned int)version, flags, &st);
  *status = (int)st;
  return rc;
}
#pragma GCC diagnostic pop

/* ---- the runtime's own calls ------------------------------------------ */

static int
count(int *n)
{
  return cudaGetDeviceCount(n);
}

static int
uuid(int dev, unsigned char out[16])
{
  struct cudaDeviceProp prop;
  cudaError_t rc = cudaGetDeviceProperties(&prop, dev);
  if (rc == cudaSuccess)
    memcpy(out, prop.uuid.bytes, 16);
  return rc;
}

static int
pool_create(int dev, uint64_t *pool)
{
  struct cudaMemPoolProps props;
  memset(&props, 0, sizeof(props));
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = dev;
  cudaMemPool_t p = NULL;
  cudaError_t rc = cudaMemPoolCreate(&p, &props);
  *pool = (uintptr_t)p;
  return rc;
}

static int
pool_default(int dev, uint64_t *pool)
{
  cudaMemPool_t p = NULL;
  cudaError_t rc = cudaDeviceGetDefaultMemPool(&p, dev);
  *pool = (uintptr_t)p;
  return rc;
}

static int
pool_alloc(uint64_t pool, size_t size, bool ptsz, uint64_t *ptr)
{
  void *p = NULL;
  cudaMemPool_t mp = (cudaMemPool_t)(uintptr_t)pool;
  cudaError_t rc = ptsz ? cudaMallocFromPoolAsync_ptsz(&p, size, mp, NULL)
                        : cudaMallocFromPoolAsync(&p, size, mp, NULL);
  *ptr = (uintptr_t)p;
  return rc;
}

static int
pool_destroy(uint64_t pool)
{
  return cudaMemPoolDestroy((cudaMemPool_t)(uintptr_t)pool);
}

static int
pool_trim(uint64_t pool, size_t keep)
{
  return cudaMemPoolTrimTo((cudaMemPool_t)(uintptr_t)pool, keep);
}

static int
pool_stats(uint64_t pool, uint64_t *reserved, uint64_t *used)
{
  cudaMemPool_t mp = (cudaMemPool_t)(uintptr_t)pool;
  unsigned long long r = 0, u = 0;
  cudaError_t rc =
      cudaMemPoolGetAttribute(mp, cudaMemPoolAttrReservedMemCurrent, &r);
  if (rc == cudaSuccess)
    rc = cudaMemPoolGetAttribute(mp, cudaMemPoolAttrUsedMemCurrent, &u);
  *reserved = r;
  *used = u;
  return rc;
}

/* A format name as a channel descriptor. */
static struct cudaChannelFormatDesc
channel_desc(const char *format, unsigned int channels)
{
  int bits = strcmp(format + 1, "8") == 0 ? 8
           : strcmp(format + 1, "16") == 0 ? 16 : 32;
  enum cudaChannelFormatKind kind = format[0] == 'u'
      ? cudaChannelFormatKindUnsigned
      : format[0] == 's' ? cudaChannelFormatKindSigned
                         : cudaChannelFormatKindFloat;
  struct cudaChannelFormatDesc d = { 0, 0, 0, 0, kind };
  int *c[4] = { &d.x, &d.y, &d.z, &d.w };
  for (unsigned int i = 0; i < channels && i < 4; i++)
    *c[i] = bits;
  return d;
}

/* cudaMallocArray for 2D, cudaMalloc3DArray for 3D, and
 * cudaMallocMipmappedArray with levels. */
static int
array(const struct app_array *a, uint64_t *handle)
{
  struct cudaChannelFormatDesc d = channel_desc(a->format, a->channels);
  struct cudaExtent e = { a->width, a->height, a->depth };
  cudaError_t rc;
  if (a->levels > 0) {
    cudaMipmappedArray_t m = NULL;
    rc = cudaMallocMipmappedArray(&m, &d, e, a->levels, 0);
    *handle = (uintptr_t)m;
    return rc;
  }
  cudaArray_t h = NULL;
  rc = a->dims == 3 ? cudaMalloc3DArray(&h, &d, e, 0)
                    : cudaMallocArray(&h, &d, a->width, a->height, 0);
  *handle = (uintptr_t)h;
  return rc;
}

static int
array_free(uint64_t handle, bool mipmap)
{
  return mipmap ? cudaFreeMipmappedArray((cudaMipmappedArray_t)(uintptr_t)
                                             handle)
                : cudaFreeArray((cudaArray_t)(uintptr_t)handle);
}

static int
malloc3d(size_t width, size_t height, size_t depth, uint64_t *ptr,
         size_t *pitch)
{
  struct cudaPitchedPtr pp;
  memset(&pp, 0, sizeof(pp));
  struct cudaExtent e = { width, height, depth };
  cudaError_t rc = cudaMalloc3D(&pp, e);
  *ptr = (uintptr_t)pp.ptr;
  *pitch = pp.pitch;
  return rc;
}

static int
host(size_t size, bool hostalloc, unsigned int flags, uint64_t *ptr)
{
  void *p = NULL;
  cudaError_t rc = hostalloc ? cudaHostAlloc(&p, size, flags)
                             : cudaMallocHost(&p, size);
  *ptr = (uintptr_t)p;
  return rc;
}

static int
host_free(uint64_t ptr)
{
  return cudaFreeHost((void *)(uintptr_t)ptr);
}

/* cudaIpcOpenMemHandle; the 4010 driver variant through its entry point,
 * since the runtime has no call for it. */
static int
ipc_open(uint64_t ptr, bool legacy, uint64_t *alias)
{
  if (legacy)
    return app_drv_ipc_open(ptr, true, alias);
  cudaIpcMemHandle_t h;
  memset(&h, 0, sizeof(h));
  cudaError_t rc = cudaIpcGetMemHandle(&h, (void *)(uintptr_t)ptr);
  if (rc != cudaSuccess)
    return rc;
  void *p = NULL;
  rc = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
  *alias = (uintptr_t)p;
  return rc;
}

static int
ipc_close(uint64_t alias)
{
  return cudaIpcCloseMemHandle((void *)(uintptr_t)alias);
}

/* ---- streams, capture and graphs ------------------------------------- */

static cudaStream_t
stream(uint64_t s)
{
  return (cudaStream_t)(uintptr_t)s;
}

static cudaGraph_t
graph(uint64_t g)
{
  return (cudaGraph_t)(uintptr_t)g;
}

static int
stream_create(uint64_t *s)
{
  cudaStream_t h = NULL;
  cudaError_t rc = cudaStreamCreate(&h);
  *s = (uintptr_t)h;
  return rc;
}

static int
stream_destroy(uint64_t s)
{
  return cudaStreamDestroy(stream(s));
}

static int
stream_sync(uint64_t s)
{
  return cudaStreamSynchronize(stream(s));
}

static int
capture_begin(uint64_t s, int mode)
{
  return cudaStreamBeginCapture(stream(s), (enum cudaStreamCaptureMode)mode);
}

static int
capture_end(uint64_t s, uint64_t *g)
{
  cudaGraph_t h = NULL;
  cudaError_t rc = cudaStreamEndCapture(stream(s), &h);
  *g = (uintptr_t)h;
  return rc;
}

static int
capture_status(uint64_t s, int *status)
{
  enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  cudaError_t rc = cudaStreamIsCapturing(stream(s), &st);
  *status = (int)st;
  return rc;
}

static int
alloc_on(uint64_t s, size_t size, uint64_t *ptr)
{
  void *p = NULL;
  cudaError_t rc = cudaMallocAsync(&p, size, stream(s));
  *ptr = (uintptr_t)p;
  return rc;
}

static int
free_on(uint64_t s, uint64_t ptr)
{
  return cudaFreeAsync((void *)(uintptr_t)ptr, stream(s));
}

static int
graph_create(uint64_t *g)
{
  cudaGraph_t h = NULL;
  cudaError_t rc = cudaGraphCreate(&h, 0);
  *g = (uintptr_t)h;
  return rc;
}

static int
graph_destroy(uint64_t g)
{
  return cudaGraphDestroy(graph(g));
}

static int
graph_alloc(uint64_t g, int dev, size_t size, uint64_t *ptr)
{
  struct cudaMemAllocNodeParams p;
  memset(&p, 0, sizeof(p));
  p.poolProps.allocType = cudaMemAllocationTypePinned;
  p.poolProps.handleTypes = cudaMemHandleTypeNone;
  p.poolProps.location.type = cudaMemLocationTypeDevice;
  p.poolProps.location.id = dev;
  p.bytesize = size;
  cudaGraphNode_t n = NULL;
  cudaError_t rc = cudaGraphAddMemAllocNode(&n, graph(g), NULL, 0, &p);
  *ptr = rc == cudaSuccess ? (uintptr_t)p.dptr : 0;
  return rc;
}

static int
graph_free(uint64_t g, uint64_t ptr)
{
  cudaGraphNode_t n = NULL;
  return cudaGraphAddMemFreeNode(&n, graph(g), NULL, 0, (void *)(uintptr_t)ptr);
}

static int
instantiate(uint64_t g, bool auto_free, uint64_t *exec)
{
  cudaGraphExec_t e = NULL;
  cudaError_t rc = cudaGraphInstantiate(
      &e, graph(g), auto_free ? cudaGraphInstantiateFlagAutoFreeOnLaunch : 0);
  *exec = (uintptr_t)e;
  return rc;
}

/* An instantiation that succeeds must say so in result_out. */
static int
instantiate_params(uint64_t g, bool auto_free, uint64_t *exec)
{
  cudaGraphInstantiateParams p;
  memset(&p, 0, sizeof(p));
  p.flags = auto_free ? cudaGraphInstantiateFlagAutoFreeOnLaunch : 0;
  p.result_out = cudaGraphInstantiateError;
  cudaGraphExec_t e = NULL;
  cudaError_t rc = cudaGraphInstantiateWithParams(&e, graph(g), &p);
  if (rc == cudaSuccess && p.result_out != cudaGraphInstantiateSuccess)
    rc = cudaErrorUnknown;
  *exec = (uintptr_t)e;
  return rc;
}

static int
graph_run(uint64_t exec, uint64_t s, bool launch)
{
  cudaGraphExec_t e = (cudaGraphExec_t)(uintptr_t)exec;
  return launch ? cudaGraphLaunch(e, stream(s)) : cudaGraphUpload(e, stream(s));
}

static int
exec_destroy(uint64_t exec)
{
  return cudaGraphExecDestroy((cudaGraphExec_t)(uintptr_t)exec);
}

static int
graph_trim(int dev)
{
  return cudaDeviceGraphMemTrim(dev);
}

static int
graph_mem(int dev, uint64_t out[4])
{
  static const enum cudaGraphMemAttributeType attrs[4] = {
    cudaGraphMemAttrUsedMemCurrent, cudaGraphMemAttrUsedMemHigh,
    cudaGraphMemAttrReservedMemCurrent, cudaGraphMemAttrReservedMemHigh
  };
  cudaError_t rc = cudaSuccess;
  for (int i = 0; i < 4 && rc == cudaSuccess; i++) {
    unsigned long long v = 0;
    rc = cudaDeviceGetGraphMemAttribute(dev, attrs[i], &v);
    out[i] = v;
  }
  return rc;
}

static int
graph_mem_reset(int dev)
{
  unsigned long long zero = 0;
  cudaError_t rc =
      cudaDeviceSetGraphMemAttribute(dev, cudaGraphMemAttrUsedMemHigh, &zero);
  if (rc == cudaSuccess)
    rc = cudaDeviceSetGraphMemAttribute(dev, cudaGraphMemAttrReservedMemHigh,
                                        &zero);
  return rc;
}

static struct app_backend backend = {
  .name = "runtime",
  .start = NULL,
  .set_device = set_device,
  .alloc = alloc,
  .alloc_pitch = alloc_pitch,
  .alloc_managed = alloc_managed,
  .alloc_async = alloc_async,
  .free = free_,
  .free_async = free_async,
  .meminfo = meminfo,
  .totalmem = totalmem,
  .reset = reset,
  .getproc = getproc,
};

int
main(int argc, char **argv)
{
  /* Driver calls through entry points, then the runtime's own where it
   * has one. */
  app_drv_fill_ops(&backend, table);
  backend.count = count;
  backend.uuid = uuid;
  backend.pool_create = pool_create;
  backend.pool_default = pool_default;
  backend.pool_alloc = pool_alloc;
  backend.pool_destroy = pool_destroy;
  backend.pool_trim = pool_trim;
  backend.pool_stats = pool_stats;
  backend.array = array;
  backend.array_free = array_free;
  backend.rt_array = array;
  backend.malloc3d = malloc3d;
  backend.host = host;
  backend.host_free = host_free;
  backend.ipc_open = ipc_open;
  backend.ipc_close = ipc_close;
  backend.entry = entry;
  /* graph_nodes stays the driver's: the runtime has no node queries
   * here. */
  backend.stream_create = stream_create;
  backend.stream_destroy = stream_destroy;
  backend.stream_sync = stream_sync;
  backend.capture_begin = capture_begin;
  backend.capture_end = capture_end;
  backend.capture_status = capture_status;
  backend.alloc_on = alloc_on;
  backend.free_on = free_on;
  backend.graph_create = graph_create;
  backend.graph_destroy = graph_destroy;
  backend.graph_alloc = graph_alloc;
  backend.graph_free = graph_free;
  backend.instantiate = instantiate;
  backend.instantiate_params = instantiate_params;
  backend.graph_run = graph_run;
  backend.exec_destroy = exec_destroy;
  backend.graph_trim = graph_trim;
  backend.graph_mem = graph_mem;
  backend.graph_mem_reset = graph_mem_reset;
  return app_main(&backend, argc, argv);
}
