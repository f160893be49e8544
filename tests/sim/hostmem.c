/*
 * Page-locked host memory of the simulated driver: cuMemAllocHost,
 * cuMemHostAlloc and cuMemFreeHost.
 *
 * The memory is real (page-aligned, from posix_memalign) and writable,
 * because programs write to it; nothing is pinned.  It counts against no
 * device.  Live allocations are in a list under sim_obj_lock, with the
 * process's total of host memory, which also counts VMM allocations made
 * at a host location (vmm.c), and which cmgsim_host_stats reports.
 * Allocations belong to no context: context teardown leaves them alone.
 */
#include "libcuda.h"

#include <stdlib.h>

#define HOST_ALIGN 4096

struct host_alloc {
  void *p;
  size_t size;
  struct host_alloc *next;
};

static struct host_alloc *allocs;
static uint64_t host_used;

void
sim_host_account(uint64_t bytes, bool add)
{
  if (add)
    host_used += bytes;
  else
    host_used -= bytes;
}

/* The driver wants a current context for these, as a real one does. */
static CUresult
host_alloc(void **pp, size_t bytesize, unsigned int flags)
{
  CUresult rc = sim_current(NULL, NULL);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (pp == NULL || bytesize == 0 ||
      (flags & ~(unsigned int)(CU_MEMHOSTALLOC_PORTABLE |
                               CU_MEMHOSTALLOC_DEVICEMAP |
                               CU_MEMHOSTALLOC_WRITECOMBINED)))
    return CUDA_ERROR_INVALID_VALUE;
  struct host_alloc *a = malloc(sizeof(*a));
  void *p = NULL;
  if (a == NULL || posix_memalign(&p, HOST_ALIGN, bytesize) != 0) {
    free(a);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  a->p = p;
  a->size = bytesize;
  pthread_mutex_lock(&sim_obj_lock);
  a->next = allocs;
  allocs = a;
  sim_host_account(bytesize, true);
  pthread_mutex_unlock(&sim_obj_lock);
  *pp = p;
  return CUDA_SUCCESS;
}

SIM_EXPORT CUresult
cuMemAllocHost_v2(void **pp, size_t bytesize)
{
  return host_alloc(pp, bytesize, 0);
}

/* The CUDA 2.0 ABI, with a 32-bit size. */
SIM_EXPORT CUresult
cuMemAllocHost(void **pp, unsigned int bytesize)
{
  return host_alloc(pp, bytesize, 0);
}

SIM_EXPORT CUresult
cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
  return host_alloc(pp, bytesize, Flags);
}

SIM_EXPORT CUresult
cuMemFreeHost(void *p)
{
  CUresult rc = sim_current(NULL, NULL);
  if (rc != CUDA_SUCCESS || p == NULL)
    return rc;
  pthread_mutex_lock(&sim_obj_lock);
  struct host_alloc **pp = &allocs;
  while (*pp != NULL && (*pp)->p != p)
    pp = &(*pp)->next;
  struct host_alloc *a = *pp;
  if (a != NULL) {
    *pp = a->next;
    sim_host_account(a->size, false);
  }
  pthread_mutex_unlock(&sim_obj_lock);
  if (a == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  free(a->p);
  free(a);
  return CUDA_SUCCESS;
}

/* Test-only: the bytes of host memory this process has from the driver
 * (page-locked allocations and VMM allocations at a host location).
 * `used` may be NULL.  Returns 0. */
SIM_EXPORT int
cmgsim_host_stats(unsigned long long *used)
{
  pthread_mutex_lock(&sim_obj_lock);
  if (used != NULL)
    *used = host_used;
  pthread_mutex_unlock(&sim_obj_lock);
  return 0;
}

/* ---- hidden aliases ------------------------------------------------- */

SIM_HOST_FUNCTIONS(SIM_DEFINE_ALIAS)
