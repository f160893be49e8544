/*
 * Driver-API script backend over a table of function pointers, for the
 * programs that never link libcuda (app_dlsym, app_getproc).  The table is
 * filled once, by the program's resolver, before the first CUDA operation;
 * the optional operations (app_drvops.c) use the same table.
 */
#include "app_drv.h"

#include <pthread.h>

#define MAX_DEVICES 16

static struct app_drv drv;
static app_drv_resolver *resolver;

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext ctxs[MAX_DEVICES];

static int
set_device(int ordinal)
{
  CUdevice dev;
  CUresult rc = drv.device_get(&dev, ordinal);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (ordinal >= MAX_DEVICES)
    return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&ctx_lock);
  if (ctxs[ordinal] == NULL)
    rc = drv.primary_retain(&ctxs[ordinal], dev);
  CUcontext ctx = ctxs[ordinal];
  pthread_mutex_unlock(&ctx_lock);
  if (rc != CUDA_SUCCESS)
    return rc;
  return drv.ctx_set(ctx);
}

static int
start(int dev)
{
  int rc = resolver(&drv);
  if (rc != 0)
    return rc;
  rc = drv.init(0);
  if (rc != CUDA_SUCCESS)
    return rc;
  return set_device(dev);
}

static int
alloc(uint64_t *ptr, size_t size)
{
  CUdeviceptr p;
  CUresult rc = drv.mem_alloc(&p, size);
  *ptr = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
alloc_pitch(uint64_t *ptr, size_t *pitch, size_t width, size_t height,
            unsigned int elem)
{
  CUdeviceptr p;
  CUresult rc = drv.mem_alloc_pitch(&p, pitch, width, height, elem);
  *ptr = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
alloc_managed(uint64_t *ptr, size_t size)
{
  CUdeviceptr p;
  CUresult rc = drv.mem_alloc_managed(&p, size, CU_MEM_ATTACH_GLOBAL);
  *ptr = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
alloc_async(uint64_t *ptr, size_t size, bool ptsz)
{
  CUdeviceptr p;
  CUresult rc = ptsz ? drv.mem_alloc_async_ptsz(&p, size, NULL)
                     : drv.mem_alloc_async(&p, size, NULL);
  *ptr = rc == CUDA_SUCCESS ? p : 0;
  return rc;
}

static int
free_(uint64_t ptr)
{
  return drv.mem_free(ptr);
}

static int
free_async(uint64_t ptr, bool ptsz)
{
  return ptsz ? drv.mem_free_async_ptsz(ptr, NULL)
              : drv.mem_free_async(ptr, NULL);
}

static int
meminfo(size_t *free, size_t *total)
{
  return drv.mem_info(free, total);
}

static int
totalmem(int ordinal, size_t *bytes)
{
  CUdevice dev;
  CUresult rc = drv.device_get(&dev, ordinal);
  if (rc != CUDA_SUCCESS)
    return rc;
  return drv.device_total(bytes, dev);
}

static int
reset(int ordinal)
{
  CUdevice dev;
  CUresult rc = drv.device_get(&dev, ordinal);
  if (rc != CUDA_SUCCESS)
    return rc;
  return drv.primary_reset(dev);
}

/* The interpreter starts the backend before any operation that calls
 * CUDA, so the table is complete by then. */
static struct app_drv *
table(int *rc)
{
  *rc = 0;
  return &drv;
}

int
app_drv_main(const char *name, app_drv_resolver *resolve,
             int (*getproc)(const char *symbol, int version,
                            unsigned long long flags, void **fn,
                            int *status),
             int argc, char **argv)
{
  static struct app_backend backend = {
    .start = start,
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
  };
  backend.name = name;
  backend.getproc = getproc;
  app_drv_fill_ops(&backend, table);
  resolver = resolve;
  return app_main(&backend, argc, argv);
}
