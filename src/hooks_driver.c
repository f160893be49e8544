/*
 * The driver's memory entry points.  Every allocation is counted here, at the
 * driver level, exactly once, whichever way the program reached the driver;
 * the runtime wrappers only set the label this file records.
 *
 * An allocation wrapper: reserve the bytes against the device's limit, call
 * the real function, then record the allocation or give the reservation
 * back.  A free wrapper: take the entry out of the ledger, call the real free
 * (always, tracked or not), and put the entry back if the free failed.  No
 * lock is held across a real call.
 *
 * A wrapper called while another runs on the same thread (a driver calling
 * its own exports) forwards without counting.  A denial returns
 * CUDA_ERROR_OUT_OF_MEMORY, the code every framework already handles.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>

#include "hooks.h"

struct call {
  int device;
  uint16_t fn;
  bool tracked;
  uint32_t stack;
  struct cmg__reservation r;
};

int
cmg__current_device(void)
{
  PFN_cuCtxGetDevice_v2000 get = cmg__real(CMG__FN_cuCtxGetDevice);
  CUdevice dev;
  if (get == NULL || get(&dev) != CUDA_SUCCESS)
    return -1;
  return dev;
}

/* The device's name and UUID, for reports that line up across processes. */
static void
identify(int device)
{
  PFN_cuDeviceGetName_v2000 get_name = cmg__real(CMG__FN_cuDeviceGetName);
  PFN_cuDeviceGetUuid_v11040 get_uuid = cmg__real(CMG__FN_cuDeviceGetUuid_v2);
  char name[256] = "", uuid[48] = "";
  CUuuid u;
  if (get_name == NULL || get_name(name, sizeof(name), device) != CUDA_SUCCESS)
    name[0] = '\0';
  if (get_uuid != NULL && get_uuid(&u, device) == CUDA_SUCCESS) {
    const unsigned char *b = (const unsigned char *)u.bytes;
    snprintf(uuid, sizeof(uuid),
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
             "%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
             b[10], b[11], b[12], b[13], b[14], b[15]);
  }
  cmg__history_set_device(device, name, uuid);
}

void
cmg__device_setup(int device)
{
  if (cmg__policy_is_device_set(device))
    return;
  PFN_cuDeviceTotalMem_v3020 total =
      REAL_DRV(cuDeviceTotalMem_v2, cuDeviceTotalMem, 3020, );
  size_t physical = 0;
  if (total == NULL || total(&physical, device) != CUDA_SUCCESS)
    physical = 0;
  identify(device);
  cmg__policy_set_device(device, cmg__config_limit(&cmg__cfg, device, physical),
                         physical);
}

static void
log_denial(const struct call *c, uint64_t bytes, uint64_t used, int err)
{
  char want[32], have[32], cap[32];
  cmg__format_size(bytes, want, sizeof(want));
  if (err == -EPERM) {
    cmg__log("denied %s of %s on device %d: the configuration is invalid, "
             "so no device allocation succeeds",
             cmg__fn_name(c->fn), want, c->device);
    return;
  }
  cmg__format_size(used, have, sizeof(have));
  cmg__format_size(cmg__policy_limit(c->device), cap, sizeof(cap));
  cmg__log("denied %s of %s (%" PRIu64 " bytes) on device %d: %s in use, "
           "limit %s",
           cmg__fn_name(c->fn), want, bytes, c->device, have, cap);
}

static void
deny(const struct call *c, uint64_t bytes, uint64_t used, int err)
{
  struct cmg__denial d = {
    .time_ns = cmg__now_ns(),
    .requested_bytes = bytes,
    .live_bytes = cmg__ledger_live_bytes(c->device),
    .limit_bytes = err == -EPERM ? 0 : cmg__policy_limit(c->device),
    .stack = c->stack,
    .device = (int16_t)c->device,
    .fn = c->fn,
  };
  cmg__ledger_count_denial(c->device);
  cmg__history_denial(&d);
  log_denial(c, bytes, used, err);
}

/* Before the real allocation.  Returns CUDA_SUCCESS to go ahead, or the
 * error to return instead (the limit said no). */
static CUresult
alloc_begin(struct call *c, enum cmg__fn fn, uint64_t bytes)
{
  c->tracked = false;
  if (cmg__self.depth++ > 0)
    return CUDA_SUCCESS;
  cmg__init();
  c->fn = cmg__self.label ? cmg__self.label : (uint16_t)fn;
  c->device = cmg__current_device();
  /* Without a context the driver refuses the call itself. */
  if (c->device < 0 || c->device >= CMG__MAX_DEVICES)
    return CUDA_SUCCESS;
  cmg__history_touch();
  cmg__device_setup(c->device);
  c->stack = cmg__stacks_capture();
  uint64_t used;
  int err = cmg__policy_prepare(c->device, bytes, &c->r, &used);
  if (err < 0) {
    cmg__self.depth--;
    deny(c, bytes, used, err);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  c->tracked = true;
  return CUDA_SUCCESS;
}

/* After the real allocation: record it, or give the reservation back. */
static CUresult
alloc_end(struct call *c, CUresult rc, CUdeviceptr addr)
{
  cmg__self.depth--;
  if (!c->tracked)
    return rc;
  if (rc != CUDA_SUCCESS || addr == 0) {
    cmg__policy_release(c->device, c->r.bytes);
    return rc;
  }
  struct cmg__alloc a = {
    .addr = addr,
    .size = c->r.bytes,
    .seq = cmg__ledger_next_seq(),
    .time_ns = cmg__now_ns(),
    .stack = c->stack,
    .thread = cmg__tid(),
    .device = (int16_t)c->device,
    .fn = c->fn,
  };
  struct cmg__alloc stale;
  int err = cmg__ledger_insert(&a, &stale);
  /* A ledger that cannot grow must not make the program fail: the
   * allocation goes on untracked and its bytes stop counting. */
  if (err < 0) {
    cmg__policy_release(c->device, c->r.bytes);
    return rc;
  }
  if (err == 1) {
    cmg__policy_release(stale.device, stale.size);
    cmg__stacks_account(stale.stack, stale.device, -(int64_t)stale.size, -1);
  }
  cmg__stacks_account(a.stack, a.device, (int64_t)a.size, 1);
  cmg__history_peak(a.device, cmg__ledger_live_bytes(a.device));
  return rc;
}

/* Before the real free: the entry leaves the ledger first, since the driver
 * may hand the same address to another thread as soon as it is freed. */
static bool
free_begin(CUdeviceptr addr, struct cmg__alloc *a)
{
  cmg__init();
  return addr != 0 && cmg__ledger_remove(addr, a) == 0;
}

static CUresult
free_end(bool tracked, const struct cmg__alloc *a, CUresult rc,
         CUdeviceptr addr)
{
  if (tracked && rc != CUDA_SUCCESS)
    cmg__ledger_restore(a);
  else if (tracked) {
    cmg__ledger_count_free(a);
    cmg__stacks_account(a->stack, a->device, -(int64_t)a->size, -1);
    cmg__policy_release(a->device, a->size);
  } else if (rc == CUDA_SUCCESS && addr != 0)
    cmg__ledger_count_untracked_free();
  return rc;
}

#define REAL_OR_FAIL(real, elf, base, version, suffix)                       \
  PFN_##base##_v##version##suffix real =                                     \
      REAL_DRV(elf, base, version, suffix);                                  \
  if (real == NULL) {                                                        \
    cmg__missing(CMG__FN_##elf);                                             \
    return CUDA_ERROR_NOT_INITIALIZED;                                       \
  }

/* One allocation wrapper whose size is known up front. */
#define ALLOC_HOOK(elf, base, version, suffix, params, size, args)           \
  CUresult CUDAAPI elf params                                                \
  {                                                                          \
    REAL_OR_FAIL(real, elf, base, version, suffix)                           \
    struct call c;                                                           \
    CUresult rc = alloc_begin(&c, CMG__FN_##elf, (size));                    \
    if (rc != CUDA_SUCCESS)                                                  \
      return rc;                                                             \
    rc = real args;                                                          \
    return alloc_end(&c, rc, rc == CUDA_SUCCESS && dptr ? *dptr : 0);        \
  }

#define FREE_HOOK(elf, base, version, suffix, params, args)                  \
  CUresult CUDAAPI elf params                                                \
  {                                                                          \
    REAL_OR_FAIL(real, elf, base, version, suffix)                           \
    struct cmg__alloc a;                                                     \
    bool tracked = free_begin(dptr, &a);                                     \
    return free_end(tracked, &a, real args, dptr);                           \
  }

ALLOC_HOOK(cuMemAlloc_v2, cuMemAlloc, 3020, ,
           (CUdeviceptr *dptr, size_t bytesize), bytesize, (dptr, bytesize))
ALLOC_HOOK(cuMemAllocManaged, cuMemAllocManaged, 6000, ,
           (CUdeviceptr *dptr, size_t bytesize, unsigned int flags), bytesize,
           (dptr, bytesize, flags))
ALLOC_HOOK(cuMemAllocAsync, cuMemAllocAsync, 11020, ,
           (CUdeviceptr *dptr, size_t bytesize, CUstream hStream), bytesize,
           (dptr, bytesize, hStream))
ALLOC_HOOK(cuMemAllocAsync_ptsz, cuMemAllocAsync, 11020, _ptsz,
           (CUdeviceptr *dptr, size_t bytesize, CUstream hStream), bytesize,
           (dptr, bytesize, hStream))

FREE_HOOK(cuMemFree_v2, cuMemFree, 3020, , (CUdeviceptr dptr), (dptr))
FREE_HOOK(cuMemFreeAsync, cuMemFreeAsync, 11020, ,
          (CUdeviceptr dptr, CUstream hStream), (dptr, hStream))
FREE_HOOK(cuMemFreeAsync_ptsz, cuMemFreeAsync, 11020, _ptsz,
          (CUdeviceptr dptr, CUstream hStream), (dptr, hStream))

/* The pitch, and so the real size, is known only after the call: reserve
 * width x height, then reserve the padding too or undo the allocation. */
CUresult CUDAAPI
cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                   size_t Height, unsigned int ElementSizeBytes)
{
  REAL_OR_FAIL(real, cuMemAllocPitch_v2, cuMemAllocPitch, 3020, )
  struct call c;
  uint64_t bytes = (uint64_t)WidthInBytes * Height;
  CUresult rc = alloc_begin(&c, CMG__FN_cuMemAllocPitch_v2, bytes);
  if (rc != CUDA_SUCCESS)
    return rc;
  rc = real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
  if (rc == CUDA_SUCCESS && c.tracked && *pPitch > WidthInBytes) {
    uint64_t extra = (uint64_t)(*pPitch - WidthInBytes) * Height;
    uint64_t used = cmg__policy_used(c.device) - c.r.bytes;
    if (cmg__policy_grow(&c.r, extra) < 0) {
      PFN_cuMemFree_v3020 release = REAL_DRV(cuMemFree_v2, cuMemFree, 3020, );
      if (release != NULL)
        release(*dptr);
      deny(&c, bytes + extra, used, -ENOMEM);
      rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
  }
  return alloc_end(&c, rc, rc == CUDA_SUCCESS ? *dptr : 0);
}

/* Frameworks size their pools from this (XLA takes 75% of total, TF free
 * minus a margin), so with a limit they must see the limit, not the card.
 * The driver's own answer is kept where there is no limit or no context, and
 * NULL arguments get the driver's own verdict. */
CUresult CUDAAPI
cuMemGetInfo_v2(size_t *free, size_t *total)
{
  REAL_OR_FAIL(real, cuMemGetInfo_v2, cuMemGetInfo, 3020, )
  CUresult rc = real(free, total);
  if (rc != CUDA_SUCCESS)
    return rc;
  cmg__init();
  int dev = cmg__current_device();
  if (dev < 0 || dev >= CMG__MAX_DEVICES)
    return rc;
  cmg__device_setup(dev);
  uint64_t limit = cmg__policy_limit(dev);
  if (limit == CMG__NO_LIMIT)
    return rc;
  uint64_t physical = cmg__policy_physical(dev);
  if (total != NULL)
    *total = physical && physical < limit ? physical : limit;
  if (free != NULL) {
    uint64_t live = cmg__ledger_live_bytes(dev);
    uint64_t room = live < limit ? limit - live : 0;
    if (room < *free)
      *free = room;
  }
  return rc;
}

CUresult CUDAAPI
cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
  REAL_OR_FAIL(real, cuDeviceTotalMem_v2, cuDeviceTotalMem, 3020, )
  CUresult rc = real(bytes, dev);
  if (rc != CUDA_SUCCESS || bytes == NULL || dev < 0 ||
      dev >= CMG__MAX_DEVICES)
    return rc;
  cmg__init();
  cmg__device_setup(dev);
  uint64_t limit = cmg__policy_limit(dev);
  if (limit < *bytes)
    *bytes = limit;
  return rc;
}

/* The resolvers: ask the driver, then swap in the wrapper of the variant it
 * was asked for.  The runtime also asks for "cuGetProcAddress" and uses
 * what it gets for every later lookup, which lands here again. */
CUresult CUDAAPI
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                    cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
  REAL_OR_FAIL(real, cuGetProcAddress_v2, cuGetProcAddress, 12000, )
  CUresult rc = real(symbol, pfn, cudaVersion, flags, status);
  if (rc == CUDA_SUCCESS && pfn != NULL)
    *pfn = cmg__resolve_proc(symbol, cudaVersion, flags, *pfn);
  return rc;
}

CUresult CUDAAPI
cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                 cuuint64_t flags)
{
  REAL_OR_FAIL(real, cuGetProcAddress, cuGetProcAddress, 11030, )
  CUresult rc = real(symbol, pfn, cudaVersion, flags);
  if (rc == CUDA_SUCCESS && pfn != NULL)
    *pfn = cmg__resolve_proc(symbol, cudaVersion, flags, *pfn);
  return rc;
}
