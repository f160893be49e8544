/*
 * The optional operations of the script interpreter: virtual memory,
 * pools, arrays, host memory, contexts, IPC, external memory, device
 * identity and driver entry points (NVML's are in app_nvml.c).
 *
 * Each calls the backend's function for it, and prints "NAME unsupported"
 * (and goes on) where the program's path has none.  Allocation-like
 * operations take the next allocation index, whose address goes to
 * app_ptrs and whose handle, size and exported descriptor go to
 * app_slots, so that the matching free operation can find them; pools
 * and contexts have numbers of their own.  `name` and `thread` give
 * threads names, as frameworks
 * name the threads they allocate from.  See README.md for each
 * operation's output line.
 */
/* For pthread_setname_np. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include "app_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Says so, and returns true, when this program cannot do `op`. */
static bool
unsupported(const struct op *op, bool supported)
{
  if (supported)
    return false;
  app_line("%s unsupported", op->spec->name);
  return true;
}

static void
record(int index, uint64_t ptr, uint64_t handle, uint64_t size)
{
  app_ptrs[index] = ptr;
  app_slots[index].handle = handle;
  app_slots[index].size = size;
}

/* vmm and vmm_host: one allocation, mapped and accessible, in one go. */
static void
do_vmm(const struct op *op)
{
  bool host = op->spec->kind == OP_VMM_HOST;
  int dev = !host && op->nargs > 1 ? (int)op->arg[1] : app_cur_dev;
  unsigned long long size = op->arg[0];
  if (unsupported(op, app_be->vmm != NULL))
    return;
  uint64_t h = 0, p = 0;
  int rc = app_ensure_started();
  if (rc == 0)
    rc = app_be->vmm(size, host, dev, &h, &p);
  if (rc != 0)
    h = p = 0;
  record(op->index, p, h, size);
  char where[32] = "";
  if (!host)
    snprintf(where, sizeof(where), " dev=%d", dev);
  if (rc == 0)
    app_line("%s i=%d size=%llu%s rc=0 handle=0x%llx ptr=0x%llx",
             op->spec->name,
         op->index, size, where, (unsigned long long)h,
         (unsigned long long)p);
  else
    app_line("%s i=%d size=%llu%s rc=%d", op->spec->name, op->index, size,
             where,
         rc);
}

/* Unmaps and frees the range (if it has one), then releases the handle
 * whatever happened: the first failure is the result. */
static void
do_vmm_free(const struct op *op)
{
  int i = (int)op->arg[0];
  if (unsupported(op, app_be->vmm_unmap != NULL))
    return;
  int rc = app_ensure_started();
  if (rc == 0) {
    if (app_ptrs[i] != 0)
      rc = app_be->vmm_unmap(app_ptrs[i], app_slots[i].size);
    int rc2 = app_be->vmm_release(app_slots[i].handle);
    if (rc == 0)
      rc = rc2;
  }
  app_line("vmm_free i=%d rc=%d", i, rc);
}

static void
do_vmm_handle(const struct op *op)
{
  int i = (int)op->arg[0];
  enum kind k = op->spec->kind;
  if (unsupported(op, app_be->vmm_retain != NULL))
    return;
  int rc = app_ensure_started();
  uint64_t h = 0;
  int fd = -1;
  if (rc == 0) {
    if (k == OP_VMM_RETAIN)
      rc = app_be->vmm_retain(app_ptrs[i], &h);
    else if (k == OP_VMM_RELEASE)
      rc = app_be->vmm_release(app_slots[i].handle);
    else
      rc = app_be->vmm_export(app_slots[i].handle, &fd);
  }
  if (k == OP_VMM_EXPORT && rc == 0)
    app_slots[i].fd = fd;
  if (rc != 0 || k == OP_VMM_RELEASE)
    app_line("%s i=%d rc=%d", op->spec->name, i, rc);
  else if (k == OP_VMM_RETAIN)
    app_line("vmm_retain i=%d rc=0 handle=0x%llx", i, (unsigned long long)h);
  else
    app_line("vmm_export i=%d rc=0 fd=%d", i, fd);
}

/* Imports what vmm_export made of allocation `from`, and maps it. */
static void
do_vmm_import(const struct op *op)
{
  int from = (int)op->arg[0];
  if (unsupported(op, app_be->vmm_import != NULL))
    return;
  uint64_t h = 0, p = 0;
  int rc = app_ensure_started();
  if (rc == 0)
    rc = app_be->vmm_import(app_slots[from].fd, app_slots[from].size,
                            app_cur_dev, &h, &p);
  if (rc != 0)
    h = p = 0;
  record(op->index, p, h, app_slots[from].size);
  if (rc == 0)
    app_line("vmm_import i=%d from=%d rc=0 handle=0x%llx ptr=0x%llx", op->index,
         from, (unsigned long long)h, (unsigned long long)p);
  else
    app_line("vmm_import i=%d from=%d rc=%d", op->index, from, rc);
}

/* The pool a P argument names. */
static int
pool_of(uint64_t arg, uint64_t *pool)
{
  if (arg == POOL_DEFAULT)
    return app_be->pool_default(app_cur_dev, pool);
  *pool = app_pools[arg];
  return 0;
}

static void
do_pool(const struct op *op)
{
  enum kind k = op->spec->kind;
  if (unsupported(op, app_be->pool_create != NULL))
    return;
  int rc = app_ensure_started();
  if (k == OP_POOL_CREATE) {
    uint64_t p = 0;
    if (rc == 0)
      rc = app_be->pool_create((int)op->arg[0], &p);
    app_pools[op->number] = rc == 0 ? p : 0;
    app_line("pool p=%d dev=%d rc=%d", op->number, (int)op->arg[0], rc);
    return;
  }
  char label[32] = "default";
  if (op->arg[0] != POOL_DEFAULT)
    snprintf(label, sizeof(label), "%llu", (unsigned long long)op->arg[0]);
  uint64_t pool = 0, ptr = 0, reserved = 0, used = 0;
  if (rc == 0)
    rc = pool_of(op->arg[0], &pool);
  unsigned long long size = op->arg[1];
  switch (k) {
  case OP_POOL_ALLOC: case OP_POOL_ALLOC_PTSZ:
    if (rc == 0)
      rc = app_be->pool_alloc(pool, size, k == OP_POOL_ALLOC_PTSZ, &ptr);
    record(op->index, rc == 0 ? ptr : 0, 0, size);
    if (rc == 0)
      app_line("%s i=%d pool=%s size=%llu rc=0 ptr=0x%llx", op->spec->name,
           op->index, label, size, (unsigned long long)ptr);
    else
      app_line("%s i=%d pool=%s size=%llu rc=%d", op->spec->name, op->index,
           label, size, rc);
    break;
  case OP_POOL_DESTROY:
    if (rc == 0)
      rc = app_be->pool_destroy(pool);
    app_line("pool_destroy p=%s rc=%d", label, rc);
    break;
  case OP_POOL_TRIM:
    if (rc == 0)
      rc = app_be->pool_trim(pool, size);
    app_line("pool_trim p=%s keep=%llu rc=%d", label, size, rc);
    break;
  default:
    if (rc == 0)
      rc = app_be->pool_stats(pool, &reserved, &used);
    if (rc == 0)
      app_line("pool_stats p=%s rc=0 reserved=%llu used=%llu", label,
           (unsigned long long)reserved, (unsigned long long)used);
    else
      app_line("pool_stats p=%s rc=%d", label, rc);
    break;
  }
}

/* array, array3d, mipmap (the driver's calls, or the runtime's), and the
 * runtime-only malloc_array and malloc_3darray. */
static void
do_array(const struct op *op)
{
  enum kind k = op->spec->kind;
  bool rt = k == OP_MALLOC_ARRAY || k == OP_MALLOC_3DARRAY;
  int (*fn)(const struct app_array *, uint64_t *) = rt ? app_be->rt_array
                                                       : app_be->array;
  if (unsupported(op, fn != NULL))
    return;
  struct app_array a = { .width = op->arg[0], .height = op->arg[1],
                         .dims = 2, .format = "f32", .channels = 1 };
  int extra = 2;  /* where the format argument is */
  if (k == OP_ARRAY3D || k == OP_MALLOC_3DARRAY) {
    a.depth = op->arg[2];
    a.dims = 3;
    extra = 3;
  } else if (k == OP_MIPMAP) {
    a.levels = (unsigned int)op->arg[2];
    a.dims = 3;
    extra = 3;
  }
  if (op->format != NULL)
    a.format = op->format;
  if (op->nargs > extra + 1)
    a.channels = (unsigned int)op->arg[extra + 1];
  uint64_t h = 0;
  int rc = app_ensure_started();
  if (rc == 0)
    rc = fn(&a, &h);
  if (rc != 0)
    h = 0;
  record(op->index, h, h, 0);

  char text[160];
  int n = snprintf(text, sizeof(text), "%s i=%d width=%zu height=%zu",
                   op->spec->name, op->index, a.width, a.height);
  if (k == OP_ARRAY3D || k == OP_MALLOC_3DARRAY)
    n += snprintf(text + n, sizeof(text) - (size_t)n, " depth=%zu", a.depth);
  if (k == OP_MIPMAP)
    n += snprintf(text + n, sizeof(text) - (size_t)n, " levels=%u",
                  a.levels);
  if (!rt)
    snprintf(text + n, sizeof(text) - (size_t)n, " format=%s ch=%u",
             a.format, a.channels);
  if (rc == 0)
    app_line("%s rc=0 handle=0x%llx", text, (unsigned long long)h);
  else
    app_line("%s rc=%d", text, rc);
}

static void
do_array_free(const struct op *op)
{
  int i = (int)op->arg[0];
  if (unsupported(op, app_be->array_free != NULL))
    return;
  int rc = app_ensure_started();
  if (rc == 0)
    rc = app_be->array_free(app_slots[i].handle,
                            op->spec->kind == OP_MIPMAP_FREE);
  app_line("%s i=%d rc=%d", op->spec->name, i, rc);
}

static void
do_malloc3d(const struct op *op)
{
  if (unsupported(op, app_be->malloc3d != NULL))
    return;
  uint64_t p = 0;
  size_t pitch = 0;
  int rc = app_ensure_started();
  if (rc == 0)
    rc = app_be->malloc3d(op->arg[0], op->arg[1], op->arg[2], &p, &pitch);
  record(op->index, rc == 0 ? p : 0, 0, 0);
  if (rc == 0)
    app_line("malloc3d i=%d width=%llu height=%llu depth=%llu rc=0 ptr=0x%llx "
         "pitch=%zu", op->index, (unsigned long long)op->arg[0],
         (unsigned long long)op->arg[1], (unsigned long long)op->arg[2],
         (unsigned long long)p, pitch);
  else
    app_line("malloc3d i=%d width=%llu height=%llu depth=%llu rc=%d", op->index,
         (unsigned long long)op->arg[0], (unsigned long long)op->arg[1],
         (unsigned long long)op->arg[2], rc);
}

/* host and hostalloc write the first and last byte: the memory must be
 * real. */
static void
do_host(const struct op *op)
{
  bool hostalloc = op->spec->kind == OP_HOSTALLOC;
  unsigned int flags = op->nargs > 1 ? (unsigned int)op->arg[1] : 0;
  unsigned long long size = op->arg[0];
  if (unsupported(op, app_be->host != NULL))
    return;
  uint64_t p = 0;
  int rc = app_ensure_started();
  if (rc == 0)
    rc = app_be->host(size, hostalloc, flags, &p);
  if (rc == 0 && p != 0 && size > 0) {
    ((volatile unsigned char *)(uintptr_t)p)[0] = 0xa5;
    ((volatile unsigned char *)(uintptr_t)p)[size - 1] = 0x5a;
  }
  record(op->index, rc == 0 ? p : 0, 0, size);
  char fl[32] = "";
  if (hostalloc)
    snprintf(fl, sizeof(fl), " flags=%u", flags);
  if (rc == 0)
    app_line("%s i=%d size=%llu%s rc=0 ptr=0x%llx", op->spec->name, op->index,
         size, fl, (unsigned long long)p);
  else
    app_line("%s i=%d size=%llu%s rc=%d", op->spec->name, op->index, size, fl,
         rc);
}

static void
do_host_free(const struct op *op)
{
  int i = (int)op->arg[0];
  if (unsupported(op, app_be->host_free != NULL))
    return;
  int rc = app_ensure_started();
  if (rc == 0)
    rc = app_be->host_free(app_ptrs[i]);
  app_line("host_free i=%d rc=%d", i, rc);
}

static void
do_hoststats(void)
{
  int (*stats)(unsigned long long *) =
      (int (*)(unsigned long long *))app_find_symbol("cmgsim_host_stats");
  if (stats == NULL) {
    app_line("hoststats absent");
    return;
  }
  unsigned long long used = 0;
  stats(&used);
  app_line("hoststats used=%llu", used);
}

/* ctxstats: what the contexts cost the device, which `stats` counts in
 * `used` without telling them from allocations. */
static void
do_ctxstats(int dev)
{
  typedef int bytes_fn(int, unsigned long long *);
  bytes_fn *bytes_of = (bytes_fn *)app_find_symbol("cmgsim_context_bytes");
  if (bytes_of == NULL) {
    app_line("ctxstats absent");
    return;
  }
  unsigned long long bytes = 0;
  int rc = bytes_of(dev, &bytes);
  if (rc != 0)
    app_line("ctxstats dev=%d rc=%d", dev, rc);
  else
    app_line("ctxstats dev=%d bytes=%llu", dev, bytes);
}

/* Contexts and the primary context's reference count. */
static void
do_ctx(const struct op *op)
{
  enum kind k = op->spec->kind;
  bool ok;
  switch (k) {
  case OP_CTX_PRIMARY: ok = true; break;
  case OP_CTX_CREATE: case OP_CTX_DESTROY: ok = app_be->ctx_create; break;
  case OP_RETAIN: ok = app_be->retain; break;
  case OP_RELEASE: case OP_RELEASE_LEGACY: ok = app_be->release; break;
  default: ok = app_be->reset_variant; break;
  }
  if (unsupported(op, ok))
    return;
  int rc = app_ensure_started();
  switch (k) {
  case OP_CTX_CREATE: {
    uint64_t c = 0;
    if (rc == 0)
      rc = app_be->ctx_create(app_cur_dev, &c);
    app_ctxs[op->number] = rc == 0 ? c : 0;
    app_line("ctx c=%d rc=%d", op->number, rc);
    return;
  }
  case OP_CTX_DESTROY:
    if (rc == 0)
      rc = app_be->ctx_destroy(app_ctxs[op->arg[0]]);
    app_line("ctx_destroy c=%d rc=%d", (int)op->arg[0], rc);
    return;
  case OP_CTX_PRIMARY:
    if (rc == 0)
      rc = app_be->set_device(app_cur_dev);
    break;
  case OP_RETAIN:
    if (rc == 0)
      rc = app_be->retain(app_cur_dev);
    break;
  case OP_RELEASE: case OP_RELEASE_LEGACY:
    if (rc == 0)
      rc = app_be->release(app_cur_dev, k == OP_RELEASE_LEGACY);
    break;
  default:
    if (rc == 0)
      rc = app_be->reset_variant(app_cur_dev, k == OP_RESET_LEGACY);
    break;
  }
  app_line("%s dev=%d rc=%d", op->spec->name, app_cur_dev, rc);
}

static void
do_ipc(const struct op *op)
{
  enum kind k = op->spec->kind;
  int i = (int)op->arg[0];
  if (unsupported(op, app_be->ipc_open != NULL))
    return;
  int rc = app_ensure_started();
  if (k == OP_IPC_CLOSE) {
    if (rc == 0)
      rc = app_be->ipc_close(app_ptrs[i]);
    app_line("ipc_close i=%d rc=%d", i, rc);
    return;
  }
  uint64_t alias = 0;
  if (rc == 0)
    rc = app_be->ipc_open(app_ptrs[i], k == OP_IPC_OPEN_LEGACY, &alias);
  record(op->index, rc == 0 ? alias : 0, 0, app_slots[i].size);
  if (rc == 0)
    app_line("%s i=%d from=%d rc=0 ptr=0x%llx", op->spec->name, op->index, i,
         (unsigned long long)alias);
  else
    app_line("%s i=%d from=%d rc=%d", op->spec->name, op->index, i, rc);
}

/* ext_destroy frees the mapped buffer first, with the program's plain
 * free, as NVIDIA's documentation asks. */
static void
do_ext(const struct op *op)
{
  if (unsupported(op, app_be->ext_import != NULL))
    return;
  int rc = app_ensure_started();
  if (op->spec->kind == OP_EXT_DESTROY) {
    int i = (int)op->arg[0];
    int free_rc = 0;
    if (rc == 0 && app_ptrs[i] != 0)
      free_rc = app_be->free(app_ptrs[i]);
    if (rc == 0)
      rc = app_be->ext_destroy(app_slots[i].handle);
    app_line("ext_destroy i=%d free_rc=%d rc=%d", i, free_rc, rc);
    return;
  }
  uint64_t ext = 0, p = 0;
  unsigned long long size = op->arg[0];
  if (rc == 0)
    rc = app_be->ext_import(size, &ext, &p);
  if (rc != 0)
    ext = p = 0;
  record(op->index, p, ext, size);
  if (rc == 0)
    app_line("ext_import i=%d size=%llu rc=0 handle=0x%llx ptr=0x%llx",
         op->index, size, (unsigned long long)ext, (unsigned long long)p);
  else
    app_line("ext_import i=%d size=%llu rc=%d", op->index, size, rc);
}

static void
do_device_info(const struct op *op)
{
  int dev = (int)op->arg[0];
  if (unsupported(op, op->spec->kind == OP_COUNT ? app_be->count != NULL
                                                 : app_be->uuid != NULL))
    return;
  int rc = app_ensure_started();
  if (op->spec->kind == OP_COUNT) {
    int n = 0;
    if (rc == 0)
      rc = app_be->count(&n);
    if (rc == 0)
      app_line("count rc=0 n=%d", n);
    else
      app_line("count rc=%d", rc);
    return;
  }
  unsigned char u[16];
  if (rc == 0)
    rc = app_be->uuid(dev, u);
  if (rc != 0) {
    app_line("uuid dev=%d rc=%d", dev, rc);
    return;
  }
  app_line("uuid dev=%d rc=0 uuid=GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-"
       "%02x%02x-%02x%02x%02x%02x%02x%02x", dev, u[0], u[1], u[2], u[3],
       u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
       u[15]);
}

/* entry and entry_ptsz: a lookup through cudaGetDriverEntryPoint*, shown
 * as getproc shows its answer. */
static void
do_entry(const struct op *op)
{
  if (unsupported(op, app_be->entry != NULL))
    return;
  void *fn = NULL;
  int status = -1;
  unsigned long long flags = op->nargs > 2 ? op->arg[2] : 0;
  int rc = app_be->entry(op->word, (int)op->arg[1], flags,
                     op->spec->kind == OP_ENTRY_PTSZ, &fn, &status);
  char name[128];
  const char *lib;
  app_name_pointer(fn, name, sizeof(name), &lib);
  app_line("%s name=%s version=%llu flags=%llu rc=%d status=%d fn=%s lib=%s "
       "addr=0x%llx", op->spec->name, op->word,
       (unsigned long long)op->arg[1], flags, rc, status, name, lib,
       (unsigned long long)(uintptr_t)fn);
}

/* name: the calling thread's, as pthread_setname_np sets it. */
static void
do_name(const struct op *op)
{
  int rc = pthread_setname_np(pthread_self(), op->word);
  app_line("name name=%s rc=%d", op->word, rc);
}

struct block {
  const struct op *op;
  int from, to;
  int rc;
};

static void *
block_main(void *arg)
{
  struct block *b = arg;
  b->rc = pthread_setname_np(pthread_self(), b->op->word);
  if (b->rc == 0)
    b->rc = app_be->set_device(app_cur_dev);
  if (b->rc == 0)
    app_run(b->from, b->to);
  return NULL;
}

/* thread: the block on a thread of its own, named before it runs a step,
 * with the current device selected; the parent waits for it.  CUDA starts
 * first, in the parent, whose context later steps keep. */
int
app_do_thread(const struct op *op, int at)
{
  struct block b = { .op = op, .from = at + 1, .to = op->match };
  pthread_t t;
  b.rc = app_ensure_started();
  if (b.rc == 0 && pthread_create(&t, NULL, block_main, &b) != 0) {
    perror("thread");
    exit(1);
  }
  if (b.rc == 0)
    pthread_join(t, NULL);
  app_line("thread name=%s rc=%d", op->word, b.rc);
  return op->match + 1;
}

void
app_run_more(const struct op *op)
{
  switch (op->spec->kind) {
  case OP_NAME:
    do_name(op);
    break;
  case OP_VMM: case OP_VMM_HOST:
    do_vmm(op);
    break;
  case OP_VMM_FREE:
    do_vmm_free(op);
    break;
  case OP_VMM_RETAIN: case OP_VMM_RELEASE: case OP_VMM_EXPORT:
    do_vmm_handle(op);
    break;
  case OP_VMM_IMPORT:
    do_vmm_import(op);
    break;
  case OP_POOL_CREATE: case OP_POOL_ALLOC: case OP_POOL_ALLOC_PTSZ:
  case OP_POOL_DESTROY: case OP_POOL_TRIM: case OP_POOL_STATS:
    do_pool(op);
    break;
  case OP_ARRAY: case OP_ARRAY3D: case OP_MIPMAP: case OP_MALLOC_ARRAY:
  case OP_MALLOC_3DARRAY:
    do_array(op);
    break;
  case OP_ARRAY_FREE: case OP_MIPMAP_FREE:
    do_array_free(op);
    break;
  case OP_MALLOC3D:
    do_malloc3d(op);
    break;
  case OP_HOST: case OP_HOSTALLOC:
    do_host(op);
    break;
  case OP_HOST_FREE:
    do_host_free(op);
    break;
  case OP_HOSTSTATS:
    do_hoststats();
    break;
  case OP_CTXSTATS:
    do_ctxstats((int)op->arg[0]);
    break;
  case OP_CTX_CREATE: case OP_CTX_DESTROY: case OP_CTX_PRIMARY:
  case OP_RETAIN: case OP_RELEASE: case OP_RELEASE_LEGACY:
  case OP_RESET_LEGACY: case OP_RESET_V2:
    do_ctx(op);
    break;
  case OP_IPC_OPEN: case OP_IPC_OPEN_LEGACY: case OP_IPC_CLOSE:
    do_ipc(op);
    break;
  case OP_EXT_IMPORT: case OP_EXT_DESTROY:
    do_ext(op);
    break;
  case OP_NVML: case OP_NVML2: case OP_NVML_UUID: case OP_NVML_COUNT:
  case OP_NVML_PROCS:
    app_run_nvml(op);
    break;
  case OP_UUID: case OP_COUNT:
    do_device_info(op);
    break;
  case OP_ENTRY: case OP_ENTRY_PTSZ:
    do_entry(op);
    break;
  case OP_LIB_ALLOC: case OP_LIB_FREE:
    app_run_lib(op);
    break;
  case OP_CRASH: case OP_HANDLE: case OP_GETSIG: case OP_SIGDFL:
  case OP_TOGGLE: case OP_CLOSEFDS: case OP_FDCHECK: case OP_PID:
  case OP_AWAIT: case OP_CLONE:
    app_run_signals(op);
    break;
  default:
    app_run_graph(op);
    break;
  }
}
