/*
 * The optional script operations over the driver API: virtual memory,
 * pools, arrays, host memory, contexts, IPC and external memory.
 *
 * Each calls through a table of driver function pointers that the program
 * provides (app_drv_fill_ops): app_dlsym and app_getproc fill theirs with
 * dlsym or cuGetProcAddress, app_driver with the addresses of the
 * functions it links, and the runtime programs with
 * cudaGetDriverEntryPoint, as PyTorch reaches cuMemCreate.  Operations
 * that take several calls (vmm: create, reserve, map, set access) undo
 * what they did when a later call fails, and return the first failure.
 * Every result is the driver's CUresult.
 */
#include "app_drv.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static app_drv_table *table;

/* The table, or NULL with *rc set: every operation starts with this. */
#define DRV(d, rc) \
  struct app_drv *d = table(&rc); \
  if (d == NULL) \
    return rc

/* ---- devices ---------------------------------------------------------- */

static int
count(int *n)
{
  int rc;
  DRV(d, rc);
  return d->device_count(n);
}

static int
uuid(int dev, unsigned char out[16])
{
  int rc;
  DRV(d, rc);
  CUuuid u;
  rc = d->device_uuid(&u, dev);
  if (rc == CUDA_SUCCESS)
    memcpy(out, u.bytes, 16);
  return rc;
}

/* ---- virtual memory --------------------------------------------------- */

/* Reserves a range for `size` bytes of handle `h`, maps it and lets device
 * `dev` read and write it; undoes what it did on failure. */
static int
map_handle(struct app_drv *d, CUmemGenericAllocationHandle h, size_t size,
           int dev, uint64_t *ptr)
{
  CUdeviceptr p = 0;
  int rc = d->addr_reserve(&p, size, 0, 0, 0);
  if (rc != CUDA_SUCCESS)
    return rc;
  rc = d->mem_map(p, size, 0, h, 0);
  if (rc != CUDA_SUCCESS) {
    d->addr_free(p, size);
    return rc;
  }
  CUmemAccessDesc access;
  memset(&access, 0, sizeof(access));
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  rc = d->mem_set_access(p, size, &access, 1);
  if (rc != CUDA_SUCCESS) {
    d->mem_unmap(p, size);
    d->addr_free(p, size);
    return rc;
  }
  *ptr = p;
  return CUDA_SUCCESS;
}

/* Exportable as a POSIX file descriptor, as NCCL asks. */
static int
vmm(size_t size, bool host, int dev, uint64_t *handle, uint64_t *ptr)
{
  int rc;
  DRV(d, rc);
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof(prop));
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location.type =
      host ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = host ? 0 : dev;
  CUmemGenericAllocationHandle h = 0;
  rc = d->mem_create(&h, size, &prop, 0);
  if (rc != CUDA_SUCCESS)
    return rc;
  rc = map_handle(d, h, size, dev, ptr);
  if (rc != CUDA_SUCCESS) {
    d->mem_release(h);
    return rc;
  }
  *handle = h;
  return CUDA_SUCCESS;
}

static int
vmm_unmap(uint64_t ptr, size_t size)
{
  int rc;
  DRV(d, rc);
  rc = d->mem_unmap(ptr, size);
  int rc2 = d->addr_free(ptr, size);
  return rc != CUDA_SUCCESS ? rc : rc2;
}

static int
vmm_release(uint64_t handle)
{
  int rc;
  DRV(d, rc);
  return d->mem_release(handle);
}

static int
vmm_retain(uint64_t ptr, uint64_t *handle)
{
  int rc;
  DRV(d, rc);
  CUmemGenericAllocationHandle h = 0;
  rc = d->mem_retain(&h, (void *)(uintptr_t)ptr);
  if (rc == CUDA_SUCCESS)
    *handle = h;
  return rc;
}

static int
vmm_export(uint64_t handle, int *fd)
{
  int rc;
  DRV(d, rc);
  return d->mem_export(fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                       0);
}

static int
vmm_import(int fd, size_t size, int dev, uint64_t *handle, uint64_t *ptr)
{
  int rc;
  DRV(d, rc);
  CUmemGenericAllocationHandle h = 0;
  rc = d->mem_import(&h, (void *)(intptr_t)fd,
                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  if (rc != CUDA_SUCCESS)
    return rc;
  rc = map_handle(d, h, size, dev, ptr);
  if (rc != CUDA_SUCCESS) {
    d->mem_release(h);
    return rc;
  }
  *handle = h;
  return CUDA_SUCCESS;
}

/* ---- pools ------------------------------------------------------------ */

static int
pool_create(int dev, uint64_t *pool)
{
  int rc;
  DRV(d, rc);
  CUmemPoolProps props;
  memset(&props, 0, sizeof(props));
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev;
  CUmemoryPool p = NULL;
  rc = d->pool_create(&p, &props);
  *pool = (uintptr_t)p;
  return rc;
}

static int
pool_default(int dev, uint64_t *pool)
{
  int rc;
  DRV(d, rc);
  CUmemoryPool p = NULL;
  rc = d->default_pool(&p, dev);
  *pool = (uintptr_t)p;
  return rc;
}

/* On the legacy (NULL) stream, which completes at once anyway. */
static int
pool_alloc(uint64_t pool, size_t size, bool ptsz, uint64_t *ptr)
{
  int rc;
  DRV(d, rc);
  CUdeviceptr p = 0;
  CUmemoryPool mp = (CUmemoryPool)(uintptr_t)pool;
  rc = ptsz ? d->alloc_from_pool_ptsz(&p, size, mp, NULL)
            : d->alloc_from_pool(&p, size, mp, NULL);
  *ptr = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
pool_destroy(uint64_t pool)
{
  int rc;
  DRV(d, rc);
  return d->pool_destroy((CUmemoryPool)(uintptr_t)pool);
}

static int
pool_trim(uint64_t pool, size_t keep)
{
  int rc;
  DRV(d, rc);
  return d->pool_trim((CUmemoryPool)(uintptr_t)pool, keep);
}

static int
pool_stats(uint64_t pool, uint64_t *reserved, uint64_t *used)
{
  int rc;
  DRV(d, rc);
  cuuint64_t r = 0, u = 0;
  CUmemoryPool mp = (CUmemoryPool)(uintptr_t)pool;
  rc = d->pool_get_attribute(mp, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &r);
  if (rc == CUDA_SUCCESS)
    rc = d->pool_get_attribute(mp, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &u);
  *reserved = r;
  *used = u;
  return rc;
}

/* ---- arrays ----------------------------------------------------------- */

static const struct {
  const char *name;
  CUarray_format format;
} formats[] = {
  { "u8", CU_AD_FORMAT_UNSIGNED_INT8 },
  { "u16", CU_AD_FORMAT_UNSIGNED_INT16 },
  { "u32", CU_AD_FORMAT_UNSIGNED_INT32 },
  { "s8", CU_AD_FORMAT_SIGNED_INT8 },
  { "s16", CU_AD_FORMAT_SIGNED_INT16 },
  { "s32", CU_AD_FORMAT_SIGNED_INT32 },
  { "f16", CU_AD_FORMAT_HALF },
  { "f32", CU_AD_FORMAT_FLOAT },
};

static CUarray_format
format_of(const char *name)
{
  for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
    if (strcmp(formats[i].name, name) == 0)
      return formats[i].format;
  return CU_AD_FORMAT_FLOAT;
}

static int
array(const struct app_array *a, uint64_t *handle)
{
  int rc;
  DRV(d, rc);
  CUDA_ARRAY3D_DESCRIPTOR d3;
  memset(&d3, 0, sizeof(d3));
  d3.Width = a->width;
  d3.Height = a->height;
  d3.Depth = a->depth;
  d3.Format = format_of(a->format);
  d3.NumChannels = a->channels;
  if (a->levels > 0) {
    CUmipmappedArray m = NULL;
    rc = d->mipmap_create(&m, &d3, a->levels);
    *handle = (uintptr_t)m;
    return rc;
  }
  CUarray h = NULL;
  if (a->dims == 3) {
    rc = d->array3d_create(&h, &d3);
  } else {
    CUDA_ARRAY_DESCRIPTOR d2;
    memset(&d2, 0, sizeof(d2));
    d2.Width = a->width;
    d2.Height = a->height;
    d2.Format = d3.Format;
    d2.NumChannels = a->channels;
    rc = d->array_create(&h, &d2);
  }
  *handle = (uintptr_t)h;
  return rc;
}

static int
array_free(uint64_t handle, bool mipmap)
{
  int rc;
  DRV(d, rc);
  return mipmap ? d->mipmap_destroy((CUmipmappedArray)(uintptr_t)handle)
                : d->array_destroy((CUarray)(uintptr_t)handle);
}

/* ---- host memory ------------------------------------------------------ */

static int
host(size_t size, bool hostalloc, unsigned int flags, uint64_t *ptr)
{
  int rc;
  DRV(d, rc);
  void *p = NULL;
  rc = hostalloc ? d->mem_host_alloc(&p, size, flags)
                 : d->mem_alloc_host(&p, size);
  *ptr = rc == CUDA_SUCCESS ? (uintptr_t)p : 0;
  return rc;
}

static int
host_free(uint64_t ptr)
{
  int rc;
  DRV(d, rc);
  return d->mem_free_host((void *)(uintptr_t)ptr);
}

/* ---- contexts --------------------------------------------------------- */

static int
ctx_create(int dev, uint64_t *ctx)
{
  int rc;
  DRV(d, rc);
  CUcontext c = NULL;
  rc = d->ctx_create(&c, NULL, 0, dev);
  *ctx = (uintptr_t)c;
  return rc;
}

static int
ctx_destroy(uint64_t ctx)
{
  int rc;
  DRV(d, rc);
  return d->ctx_destroy((CUcontext)(uintptr_t)ctx);
}

static int
retain(int dev)
{
  int rc;
  DRV(d, rc);
  CUcontext c;
  return d->primary_retain(&c, dev);
}

static int
release(int dev, bool legacy)
{
  int rc;
  DRV(d, rc);
  return legacy ? d->primary_release_legacy(dev) : d->primary_release(dev);
}

static int
reset_variant(int dev, bool legacy)
{
  int rc;
  DRV(d, rc);
  return legacy ? d->primary_reset_legacy(dev) : d->primary_reset(dev);
}

/* ---- IPC and external memory ------------------------------------------ */

int
app_drv_ipc_open(uint64_t ptr, bool legacy, uint64_t *alias)
{
  int rc;
  DRV(d, rc);
  CUipcMemHandle h;
  memset(&h, 0, sizeof(h));
  rc = d->ipc_get(&h, ptr);
  if (rc != CUDA_SUCCESS)
    return rc;
  CUdeviceptr p = 0;
  rc = legacy
      ? d->ipc_open_legacy(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
      : d->ipc_open(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  *alias = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
ipc_close(uint64_t alias)
{
  int rc;
  DRV(d, rc);
  return d->ipc_close(alias);
}

/* Any file descriptor will do for the simulated driver; /dev/null is
 * one.  The driver owns it once the import succeeds. */
static int
ext_import(size_t size, uint64_t *ext, uint64_t *ptr)
{
  int rc;
  DRV(d, rc);
  CUDA_EXTERNAL_MEMORY_HANDLE_DESC desc;
  memset(&desc, 0, sizeof(desc));
  desc.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
  desc.handle.fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  desc.size = size;
  CUexternalMemory e = NULL;
  rc = d->ext_import(&e, &desc);
  if (rc != CUDA_SUCCESS) {
    if (desc.handle.fd >= 0)
      close(desc.handle.fd);
    return rc;
  }
  CUDA_EXTERNAL_MEMORY_BUFFER_DESC buf;
  memset(&buf, 0, sizeof(buf));
  buf.size = size;
  CUdeviceptr p = 0;
  rc = d->ext_map(&p, e, &buf);
  if (rc != CUDA_SUCCESS) {
    d->ext_destroy(e);
    return rc;
  }
  *ext = (uintptr_t)e;
  *ptr = p;
  return CUDA_SUCCESS;
}

static int
ext_destroy(uint64_t ext)
{
  int rc;
  DRV(d, rc);
  return d->ext_destroy((CUexternalMemory)(uintptr_t)ext);
}

void
app_drv_fill_ops(struct app_backend *b, app_drv_table *t)
{
  table = t;
  b->count = count;
  b->uuid = uuid;
  b->vmm = vmm;
  b->vmm_unmap = vmm_unmap;
  b->vmm_release = vmm_release;
  b->vmm_retain = vmm_retain;
  b->vmm_export = vmm_export;
  b->vmm_import = vmm_import;
  b->pool_create = pool_create;
  b->pool_default = pool_default;
  b->pool_alloc = pool_alloc;
  b->pool_destroy = pool_destroy;
  b->pool_trim = pool_trim;
  b->pool_stats = pool_stats;
  b->array = array;
  b->array_free = array_free;
  b->host = host;
  b->host_free = host_free;
  b->ctx_create = ctx_create;
  b->ctx_destroy = ctx_destroy;
  b->retain = retain;
  b->release = release;
  b->reset_variant = reset_variant;
  b->ipc_open = app_drv_ipc_open;
  b->ipc_close = ipc_close;
  b->ext_import = ext_import;
  b->ext_destroy = ext_destroy;
  app_drv_fill_graph_ops(b, t);
}
