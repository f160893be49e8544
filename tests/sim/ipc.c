/*
 * Memory that another process owns, as the simulated driver shows it:
 * CUDA IPC (cuIpcGetMemHandle, cuIpcOpenMemHandle, cuIpcCloseMemHandle)
 * and external memory (cuImportExternalMemory and its mapped buffers).
 *
 * There is only one process here, so the simulation lets a process open
 * its own IPC handles (a real driver refuses): each open returns a new
 * address of the allocation's device, an alias of the same memory, which
 * is not counted again.  An IPC handle carries the device and address of
 * the allocation; opening it finds that allocation, which must still be
 * live.  Imported external memory has a size and nothing else; each
 * buffer mapped from it gets an address of the current context's device,
 * also uncounted, which cuMemFree frees, as NVIDIA documents.  Aliases
 * are records of kind IPC or EXTBUF in the device's table (devmem.c), so
 * they are owned by the context that opened them like anything else.
 *
 * External memory objects are in a list under sim_obj_lock.
 */
#include "libcuda.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXT_ALIVE 0x54585845u /* "EXXT" */

/* The bytes of a CUipcMemHandle. */
struct ipc_payload {
  char magic[8];
  int32_t phys;
  uint32_t pad;
  uint64_t addr;
  uint64_t bytes;
};

static const char ipc_magic[8] = "cmgsimIP";

struct CUextMemory_st {
  uint32_t magic;
  uint64_t size;
  struct CUextMemory_st *next;
};

static struct CUextMemory_st *externals;

_Static_assert(sizeof(struct ipc_payload) <= sizeof(CUipcMemHandle),
               "an IPC payload fits a CUipcMemHandle");

/* ---- IPC -------------------------------------------------------------- */

/* Only the start of an allocation made by cuMemAlloc and friends. */
SIM_EXPORT CUresult
cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
  CUresult rc = sim_current(NULL, NULL);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (pHandle == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_device *d = sim_device_of_address(dptr);
  if (d == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  struct ipc_payload pl;
  memset(&pl, 0, sizeof(pl));
  pthread_mutex_lock(&d->lock);
  struct sim_live *rec = sim_table_get(&d->live, dptr);
  if (rec == NULL || rec->kind != SIM_KIND_PLAIN) {
    rc = CUDA_ERROR_INVALID_VALUE;
  } else {
    memcpy(pl.magic, ipc_magic, sizeof(pl.magic));
    pl.phys = d->phys;
    pl.addr = dptr;
    pl.bytes = rec->bytes;
  }
  pthread_mutex_unlock(&d->lock);
  if (rc == CUDA_SUCCESS) {
    memset(pHandle, 0, sizeof(*pHandle));
    memcpy(pHandle->reserved, &pl, sizeof(pl));
  }
  return rc;
}

static CUresult
ipc_open(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int flags)
{
  CUresult rc = sim_current(NULL, NULL);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (pdptr == NULL || (flags & ~CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) != 0)
    return CUDA_ERROR_INVALID_VALUE;
  struct ipc_payload pl;
  memcpy(&pl, handle.reserved, sizeof(pl));
  if (memcmp(pl.magic, ipc_magic, sizeof(pl.magic)) != 0 || pl.phys < 0 ||
      pl.phys >= sim_nphys)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_device *d = &sim_devices[pl.phys];
  pthread_mutex_lock(&d->lock);
  struct sim_live *rec = sim_table_get(&d->live, pl.addr);
  bool live = rec != NULL && rec->kind == SIM_KIND_PLAIN &&
              rec->bytes == pl.bytes;
  pthread_mutex_unlock(&d->lock);
  if (!live)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t addr;
  rc = sim_dev_alloc(d, pl.bytes, SIM_KIND_IPC, NULL, &addr);
  if (rc == CUDA_SUCCESS)
    *pdptr = addr;
  return rc;
}

SIM_EXPORT CUresult
cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
                      unsigned int Flags)
{
  return ipc_open(pdptr, handle, Flags);
}

/* The CUDA 4.1 variant (4010), the same in the simulation. */
SIM_EXPORT CUresult
cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle,
                   unsigned int Flags)
{
  return ipc_open(pdptr, handle, Flags);
}

SIM_EXPORT CUresult
cuIpcCloseMemHandle(CUdeviceptr dptr)
{
  CUresult rc = sim_current(NULL, NULL);
  if (rc != CUDA_SUCCESS)
    return rc;
  struct sim_device *d = sim_device_of_address(dptr);
  if (d == NULL)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&d->lock);
  struct sim_live *rec = sim_table_get(&d->live, dptr);
  if (rec == NULL || rec->kind != SIM_KIND_IPC)
    rc = CUDA_ERROR_INVALID_VALUE;
  else
    sim_dev_release_locked(d, dptr);
  pthread_mutex_unlock(&d->lock);
  return rc;
}

/* ---- external memory ------------------------------------------------- */

/* Only CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD, with any open file
 * descriptor; on success the driver owns it and closes it, as a real one
 * does. */
SIM_EXPORT CUresult
cuImportExternalMemory(CUexternalMemory *extMem_out,
                       const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *memHandleDesc)
{
  CUresult rc = sim_current(NULL, NULL);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (extMem_out == NULL || memHandleDesc == NULL ||
      memHandleDesc->size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (memHandleDesc->type != CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD)
    return CUDA_ERROR_NOT_SUPPORTED;
  int fd = memHandleDesc->handle.fd;
  if (fd < 0 || fcntl(fd, F_GETFD) == -1)
    return CUDA_ERROR_INVALID_VALUE;
  struct CUextMemory_st *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return CUDA_ERROR_OUT_OF_MEMORY;
  e->magic = EXT_ALIVE;
  e->size = memHandleDesc->size;
  pthread_mutex_lock(&sim_obj_lock);
  e->next = externals;
  externals = e;
  pthread_mutex_unlock(&sim_obj_lock);
  close(fd);
  *extMem_out = e;
  return CUDA_SUCCESS;
}

static bool
is_external(const struct CUextMemory_st *e)
{
  for (struct CUextMemory_st *x = externals; x != NULL; x = x->next)
    if (x == e)
      return true;
  return false;
}

SIM_EXPORT CUresult
cuExternalMemoryGetMappedBuffer(CUdeviceptr *devPtr, CUexternalMemory extMem,
                                const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *
                                    bufferDesc)
{
  struct sim_device *d;
  CUresult rc = sim_current(NULL, &d);
  if (rc != CUDA_SUCCESS)
    return rc;
  if (devPtr == NULL || bufferDesc == NULL || bufferDesc->size == 0 ||
      bufferDesc->flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t addr;
  pthread_mutex_lock(&sim_obj_lock);
  if (!is_external(extMem) || bufferDesc->offset > extMem->size ||
      bufferDesc->size > extMem->size - bufferDesc->offset)
    rc = CUDA_ERROR_INVALID_VALUE;
  else
    rc = sim_dev_alloc(d, bufferDesc->size, SIM_KIND_EXTBUF, extMem, &addr);
  pthread_mutex_unlock(&sim_obj_lock);
  if (rc == CUDA_SUCCESS)
    *devPtr = addr;
  return rc;
}

/* Buffers mapped from it stay until cuMemFree, as NVIDIA's documentation
 * asks programs to free them. */
SIM_EXPORT CUresult
cuDestroyExternalMemory(CUexternalMemory extMem)
{
  CUresult rc = sim_check_init();
  if (rc != CUDA_SUCCESS)
    return rc;
  pthread_mutex_lock(&sim_obj_lock);
  struct CUextMemory_st **pp = &externals;
  while (*pp != NULL && *pp != extMem)
    pp = &(*pp)->next;
  struct CUextMemory_st *e = *pp;
  if (e != NULL)
    *pp = e->next;
  pthread_mutex_unlock(&sim_obj_lock);
  if (e == NULL)
    return CUDA_ERROR_INVALID_HANDLE;
  e->magic = 0;
  free(e);
  return CUDA_SUCCESS;
}

/* ---- hidden aliases ------------------------------------------------- */

SIM_IPC_FUNCTIONS(SIM_DEFINE_ALIAS)
