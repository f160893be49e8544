/*
 * Virtual memory management of the simulated driver: cuMemCreate and the
 * calls that reserve, map and share what it made.
 *
 * Three kinds of object, in lists under sim_obj_lock:
 *   - a physical allocation (struct phys): its size and properties, and
 *     the device it counts against (NULL for host memory, which counts
 *     in the host total instead).  It lives while any handle to it does.
 *   - a handle (struct handle), the CUmemGenericAllocationHandle itself:
 *     cuMemCreate makes one, cuMemImportFromShareableHandle makes another
 *     one to the same physical allocation.  Each counts its references
 *     (cuMemCreate, import and cuMemRetainAllocationHandle add one,
 *     cuMemRelease drops one) and its mappings, and lives while it has
 *     either: as NVIDIA documents, memory released while still mapped is
 *     freed when the last mapping goes.
 *   - reservations and mappings of a virtual address space of its own,
 *     16 TiB at 0x600000000000, apart from every device's arena, so
 *     cuMemFree never mistakes a mapped address for an allocation.
 * Exports are memfd file descriptors: a real file with a unique inode, so
 * an import (even through a dup'ed or passed-on descriptor) finds its
 * allocation by st_dev/st_ino.
 *
 * The granularity is 2 MiB, minimum and recommended alike.  Reserving,
 * mapping and setting access count nothing; only cuMemCreate does.
 */
#define _GNU_SOURCE 1

#include "libcuda.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define GRANULARITY (UINT64_C(2) << 20)
#define VA_BASE UINT64_C(0x600000000000)
#define VA_SIZE (UINT64_C(1) << 44)
#define HANDLE_MAGIC 0x564d4d48u /* "VMMH" */

struct phys {
  uint64_t size;
  CUmemAllocationProp prop;
  struct sim_device *dev; /* NULL: host memory */
  int handles;            /* live handle objects */
};

struct handle {
  uint32_t magic;
  struct phys *phys;
  long refs;
  long maps;
  struct handle *next;
};

struct reservation {
  uint64_t addr;
  uint64_t size;
  struct reservation *next;
};

struct mapping {
  uint64_t addr;
  uint64_t size;
  struct handle *h;
  struct mapping *next;
};

struct export {
  dev_t dev;
  ino_t ino;
  struct phys *phys;
  struct export *next;
};

static struct handle *handles;
static struct reservation *reservations;
static struct mapping *mappings;
static struct export *exports;
static struct sim_arena va;
static bool va_ready;

/* ---- helpers (sim_obj_lock held) ----------------------------------- */

static struct handle *
find_handle(CUmemGenericAllocationHandle value)
{
  for (struct handle *h = handles; h != NULL; h = h->next)
    if ((uintptr_t)h == value)
      return h;
  return NULL;
}

static void
free_phys(struct phys *p)
{
  if (p->dev != NULL)
    sim_uncharge(p->dev, p->size);
  else
    sim_host_account(p->size, false);
  for (struct export **e = &exports; *e != NULL;) {
    if ((*e)->phys == p) {
      struct export *gone = *e;
      *e = gone->next;
      free(gone);
    } else {
      e = &(*e)->next;
    }
  }
  free(p);
}

/* Frees a handle with neither references nor mappings, and its
 * physical allocation with its last handle. */
static void
maybe_free(struct handle *h)
{
  if (h->refs > 0 || h->maps > 0)
    return;
  for (struct handle **pp = &handles; *pp != NULL; pp = &(*pp)->next) {
    if (*pp == h) {
      *pp = h->next;
      break;
    }
  }
  if (--h->phys->handles == 0)
    free_phys(h->phys);
  h->magic = 0;
  free(h);
}

static CUresult
new_handle(struct phys *p, CUmemGenericAllocationHandle *out)
{
  struct handle *h = calloc(1, sizeof(*h));
  if (h == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  h->magic = HANDLE_MAGIC;
  h->phys = p;
  h->refs = 1;
  h->next = handles;
  handles = h;
  p->handles++;
  *out = (uintptr_t)h;
  return CUDA_SUCCESS;
}

/* Where memory of `prop` lives: *dev is the device, or NULL for host
 * memory. */
static CUresult
check_prop(const CUmemAllocationProp *prop, struct sim_device **dev)
{
  if (prop == NULL || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
    return CUDA_ERROR_INVALID_VALUE;
  *dev = NULL;
  switch (prop->location.type) {
  case CU_MEM_LOCATION_TYPE_DEVICE:
    *dev = sim_device(prop->location.id);
    return *dev != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
  case CU_MEM_LOCATION_TYPE_HOST:
  case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
    return CUDA_SUCCESS;
  case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    return prop->location.id >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

static bool
is_granular(uint64_t n)
{
  return n % GRANULARITY == 0;
}

/* The mapping that holds `addr`, or NULL. */
static struct mapping *
mapping_at(uint64_t addr)
{
  for (struct mapping *m = mappings; m != NULL; m = m->next)
    if (addr >= m->addr && addr - m->addr < m->size)
      return m;
  return NULL;
}

static bool
overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
  return a < b + blen && b < a + alen;
}

/* ---- allocation handles -------------------------------------------- */

SIM_EXPORT CUresult
cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
            const CUmemAllocationProp *prop, unsigned long long flags)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  struct sim_device *dev;
  if (handle == NULL || flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if ((rc = check_prop(prop, &dev)) != CUDA_SUCCESS)
    return rc;
  if (size == 0 || !is_granular(size))
    return CUDA_ERROR_INVALID_VALUE;
  struct phys *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  p->size = size;
  p->prop = *prop;
  p->dev = dev;

  pthread_mutex_lock(&sim_obj_lock);
  if (dev != NULL)
    rc = sim_charge(dev, size);
  else
    sim_host_account(size, true);
  if (rc == CUDA_SUCCESS) {
    rc = new_handle(p, handle);
    if (rc != CUDA_SUCCESS) {
      if (dev != NULL)
        sim_uncharge(dev, size);
      else
        sim_host_account(size, false);
    }
  }
  pthread_mutex_unlock(&sim_obj_lock);
  if (rc != CUDA_SUCCESS)
    free(p);
  return rc;
}

SIM_EXPORT CUresult
cuMemRelease(CUmemGenericAllocationHandle handle)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  pthread_mutex_lock(&sim_obj_lock);
  struct handle *h = find_handle(handle);
  if (h == NULL || h->refs <= 0) {
    rc = CUDA_ERROR_INVALID_VALUE;
  } else {
    h->refs--;
    maybe_free(h);
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* Any address inside a mapping will do, as NVIDIA documents. */
SIM_EXPORT CUresult
cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (handle == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&sim_obj_lock);
  struct mapping *m = mapping_at((uintptr_t)addr);
  if (m == NULL) {
    rc = CUDA_ERROR_INVALID_VALUE;
  } else {
    m->h->refs++;
    *handle = (uintptr_t)m->h;
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

SIM_EXPORT CUresult
cuMemGetAllocationGranularity(size_t *granularity,
                              const CUmemAllocationProp *prop,
                              CUmemAllocationGranularity_flags option)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  struct sim_device *dev;
  if (granularity == NULL ||
      (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
       option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
    return CUDA_ERROR_INVALID_VALUE;
  if ((rc = check_prop(prop, &dev)) != CUDA_SUCCESS)
    return rc;
  *granularity = GRANULARITY;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                       CUmemGenericAllocationHandle handle)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (prop == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&sim_obj_lock);
  struct handle *h = find_handle(handle);
  if (h == NULL)
    rc = CUDA_ERROR_INVALID_VALUE;
  else
    *prop = h->phys->prop;
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* ---- address ranges and mappings ----------------------------------- */

SIM_EXPORT CUresult
cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                    CUdeviceptr addr, unsigned long long flags)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (ptr == NULL || size == 0 || !is_granular(size) || flags != 0 ||
      (alignment & (alignment - 1)) != 0 || size > VA_SIZE ||
      alignment > VA_SIZE)
    return CUDA_ERROR_INVALID_VALUE;
  /* The hint `addr` is only a hint; it is not followed. */
  uint64_t align = alignment > GRANULARITY ? alignment : GRANULARITY;
  struct reservation *r = calloc(1, sizeof(*r));
  if (r == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;

  pthread_mutex_lock(&sim_obj_lock);
  if (!va_ready && sim_arena_init(&va, VA_BASE, VA_SIZE) == 0)
    va_ready = true;
  uint64_t take = size + align - GRANULARITY, start;
  if (!va_ready || sim_arena_take(&va, take, &start) != 0) {
    rc = CUDA_ERROR_OUT_OF_MEMORY;
  } else {
    /* Everything in the arena is granule-aligned; a larger alignment
     * takes extra and gives the ends back. */
    uint64_t at = (start + align - 1) & ~(align - 1);
    if (at > start)
      sim_arena_give(&va, start, at - start);
    if (start + take > at + size)
      sim_arena_give(&va, at + size, start + take - (at + size));
    r->addr = at;
    r->size = size;
    r->next = reservations;
    reservations = r;
    *ptr = at;
  }
  pthread_mutex_unlock(&sim_obj_lock);
  if (rc != CUDA_SUCCESS)
    free(r);
  return rc;
}

/* The range must be one reservation, whole, with nothing mapped in it. */
SIM_EXPORT CUresult
cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  pthread_mutex_lock(&sim_obj_lock);
  struct reservation **pp = &reservations;
  while (*pp != NULL && ((*pp)->addr != ptr || (*pp)->size != size))
    pp = &(*pp)->next;
  rc = *pp == NULL ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
  for (struct mapping *m = mappings; m != NULL && rc == CUDA_SUCCESS;
       m = m->next)
    if (overlaps(m->addr, m->size, ptr, size))
      rc = CUDA_ERROR_INVALID_VALUE;
  if (rc == CUDA_SUCCESS) {
    struct reservation *r = *pp;
    *pp = r->next;
    sim_arena_give(&va, r->addr, r->size);
    free(r);
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

SIM_EXPORT CUresult
cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
         CUmemGenericAllocationHandle handle, unsigned long long flags)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (flags != 0 || size == 0 || !is_granular(size) || !is_granular(offset))
    return CUDA_ERROR_INVALID_VALUE;
  struct mapping *m = calloc(1, sizeof(*m));
  if (m == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;

  pthread_mutex_lock(&sim_obj_lock);
  struct handle *h = find_handle(handle);
  if (h == NULL || h->refs <= 0 || offset > h->phys->size ||
      size > h->phys->size - offset)
    rc = CUDA_ERROR_INVALID_VALUE;
  bool inside = false;
  for (struct reservation *r = reservations; r != NULL && !inside;
       r = r->next)
    inside = ptr >= r->addr && ptr - r->addr <= r->size &&
             size <= r->size - (ptr - r->addr);
  if (!inside)
    rc = CUDA_ERROR_INVALID_VALUE;
  for (struct mapping *o = mappings; o != NULL && rc == CUDA_SUCCESS;
       o = o->next)
    if (overlaps(o->addr, o->size, ptr, size))
      rc = CUDA_ERROR_INVALID_VALUE;
  if (rc == CUDA_SUCCESS) {
    m->addr = ptr;
    m->size = size;
    m->h = h;
    m->next = mappings;
    mappings = m;
    h->maps++;
  }
  pthread_mutex_unlock(&sim_obj_lock);
  if (rc != CUDA_SUCCESS)
    free(m);
  return rc;
}

/* Unmaps every mapping inside the range, which must cut none in two. */
SIM_EXPORT CUresult
cuMemUnmap(CUdeviceptr ptr, size_t size)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&sim_obj_lock);
  int inside = 0;
  for (struct mapping *m = mappings; m != NULL; m = m->next) {
    if (!overlaps(m->addr, m->size, ptr, size))
      continue;
    if (m->addr < ptr || m->addr + m->size > ptr + size)
      rc = CUDA_ERROR_INVALID_VALUE;
    inside++;
  }
  if (inside == 0)
    rc = CUDA_ERROR_INVALID_VALUE;
  if (rc == CUDA_SUCCESS) {
    for (struct mapping **pp = &mappings; *pp != NULL;) {
      struct mapping *m = *pp;
      if (!overlaps(m->addr, m->size, ptr, size)) {
        pp = &m->next;
        continue;
      }
      *pp = m->next;
      m->h->maps--;
      maybe_free(m->h);
      free(m);
    }
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* Checks the descriptors and that the whole range is mapped; access
 * itself is not simulated. */
SIM_EXPORT CUresult
cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
               size_t count)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (desc == NULL || count == 0 || size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; i++) {
    if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
        desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
        desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      return CUDA_ERROR_INVALID_VALUE;
    if (desc[i].location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
      if (sim_device(desc[i].location.id) == NULL)
        return CUDA_ERROR_INVALID_DEVICE;
    } else if (desc[i].location.type != CU_MEM_LOCATION_TYPE_HOST &&
               desc[i].location.type != CU_MEM_LOCATION_TYPE_HOST_NUMA &&
               desc[i].location.type !=
                   CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  pthread_mutex_lock(&sim_obj_lock);
  for (uint64_t at = ptr; at < ptr + size;) {
    struct mapping *m = mapping_at(at);
    if (m == NULL) {
      rc = CUDA_ERROR_INVALID_VALUE;
      break;
    }
    at = m->addr + m->size;
  }
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* ---- sharing --------------------------------------------------------- */

/* A POSIX file descriptor (int) for allocations created with
 * CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR among their requested types;
 * the caller owns and closes it. */
SIM_EXPORT CUresult
cuMemExportToShareableHandle(void *shareableHandle,
                             CUmemGenericAllocationHandle handle,
                             CUmemAllocationHandleType handleType,
                             unsigned long long flags)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (shareableHandle == NULL || flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    return CUDA_ERROR_NOT_SUPPORTED;
  struct export *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;

  pthread_mutex_lock(&sim_obj_lock);
  struct handle *h = find_handle(handle);
  int fd = -1;
  struct stat st;
  if (h == NULL || !(h->phys->prop.requestedHandleTypes &
                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
    rc = CUDA_ERROR_INVALID_VALUE;
  } else if ((fd = memfd_create("cmgsim-vmm", MFD_CLOEXEC)) < 0 ||
             fstat(fd, &st) != 0) {
    rc = CUDA_ERROR_OPERATING_SYSTEM;
  } else {
    e->dev = st.st_dev;
    e->ino = st.st_ino;
    e->phys = h->phys;
    e->next = exports;
    exports = e;
    *(int *)shareableHandle = fd;
  }
  pthread_mutex_unlock(&sim_obj_lock);
  if (rc != CUDA_SUCCESS) {
    if (fd >= 0)
      close(fd);
    free(e);
  }
  return rc;
}

/* A new handle to the same physical allocation, which is counted once,
 * where it was created: from the importer's side it is another process's
 * memory.  The descriptor stays the caller's. */
SIM_EXPORT CUresult
cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle,
                               void *osHandle,
                               CUmemAllocationHandleType shHandleType)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  if (handle == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  if (shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    return CUDA_ERROR_NOT_SUPPORTED;
  struct stat st;
  if (fstat((int)(intptr_t)osHandle, &st) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&sim_obj_lock);
  struct export *e = exports;
  while (e != NULL && (e->dev != st.st_dev || e->ino != st.st_ino))
    e = e->next;
  rc = e == NULL ? CUDA_ERROR_INVALID_VALUE : new_handle(e->phys, handle);
  pthread_mutex_unlock(&sim_obj_lock);
  return rc;
}

/* ---- hidden aliases ------------------------------------------------- */

SIM_VMM_FUNCTIONS(SIM_DEFINE_ALIAS)
