/*
 * Shared by the files of the simulated driver: libcuda.c (configuration,
 * devices), devmem.c (the accounting of device memory, plain memory),
 * contexts.c (contexts), procaddr.c
 * (cuGetProcAddress), visible.c
 * (CUDA_VISIBLE_DEVICES), vmm.c (virtual memory management), pools.c
 * (memory pools), arrays.c (CUDA arrays), hostmem.c (page-locked host
 * memory), ipc.c (IPC and external memory), streams.c (streams, stream
 * capture and the stream-ordered allocation calls), graphs.c (graphs and
 * their nodes) and graphexec.c (executable graphs and each device's graph
 * memory pool; graphs.h is what the two graph files share).
 *
 * __CUDA_API_VERSION_INTERNAL is defined, as NVIDIA's own driver build
 * does, because only then does cuda.h declare the legacy 32-bit entry
 * points, the _ptsz variants and the 4-argument cuGetProcAddress: every
 * definition is checked against NVIDIA's declaration of its ELF name.
 *
 * Locks: sim_obj_lock guards every registry of driver objects (VMM
 * handles, reservations and mappings, pools, arrays, host allocations,
 * external memory, streams and their captures, graphs, executable graphs
 * and the graph memory pools) and is taken before any device lock; a device's lock
 * guards its counters, its arenas and its table of live addresses (and
 * the counters of the pools on it); created_lock in contexts.c is taken
 * last.  The fork handlers take them all in that order.
 */
#ifndef CMGSIM_LIBCUDA_H
#define CMGSIM_LIBCUDA_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>

/* Definitions use ELF names; drop cuda.h's renaming macros. */
#undef cuDeviceTotalMem
#undef cuDeviceGetUuid
#undef cuDevicePrimaryCtxRelease
#undef cuDevicePrimaryCtxReset
#undef cuCtxCreate
#undef cuCtxDestroy
#undef cuMemGetInfo
#undef cuMemAlloc
#undef cuMemAllocPitch
#undef cuMemFree
#undef cuMemAllocAsync
#undef cuMemFreeAsync
#undef cuMemAllocFromPoolAsync
#undef cuMemAllocHost
#undef cuArrayCreate
#undef cuArray3DCreate
#undef cuArrayGetDescriptor
#undef cuArray3DGetDescriptor
#undef cuIpcOpenMemHandle
#undef cuGetProcAddress
#undef cuStreamDestroy
#undef cuStreamSynchronize
#undef cuStreamIsCapturing
#undef cuStreamGetCaptureInfo
#undef cuStreamBeginCapture
#undef cuStreamEndCapture
#undef cuGraphAddNode
#undef cuGraphInstantiate
#undef cuGraphInstantiateWithParams
#undef cuGraphUpload
#undef cuGraphLaunch

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "arena.h"

#define SIM_EXPORT __attribute__((visibility("default")))
#define SIM_DRIVER_VERSION 13000
#define SIM_MAX_DEVICES 16

/* cuda.h declares the _ptsz variants only for per-thread builds; these
 * declarations come from NVIDIA's typedefs all the same. */
extern __typeof__(*(PFN_cuMemAllocAsync_v11020_ptsz)0) cuMemAllocAsync_ptsz;
extern __typeof__(*(PFN_cuMemFreeAsync_v11020_ptsz)0) cuMemFreeAsync_ptsz;
extern __typeof__(*(PFN_cuMemAllocFromPoolAsync_v11020_ptsz)0)
    cuMemAllocFromPoolAsync_ptsz;

/* The exported driver functions, one list per file that defines them.
 * Each gets a hidden alias hid_<name>: same address, but never preempted
 * by an LD_PRELOAD library, so the cuGetProcAddress table and the
 * trampolines always name this library's own code, -Bsymbolic or not. */
#define SIM_DRIVER_FUNCTIONS(X) \
  X(cuInit) \
  X(cuDriverGetVersion) \
  X(cuDeviceGet) \
  X(cuDeviceGetCount) \
  X(cuDeviceGetName) \
  X(cuDeviceGetUuid) \
  X(cuDeviceGetUuid_v2) \
  X(cuDeviceTotalMem_v2) \
  X(cuGetErrorName) \
  X(cuGetErrorString)

#define SIM_MEMORY_FUNCTIONS(X) \
  X(cuMemAlloc) \
  X(cuMemAlloc_v2) \
  X(cuMemFree) \
  X(cuMemFree_v2) \
  X(cuMemAllocPitch_v2) \
  X(cuMemAllocManaged) \
  X(cuMemGetInfo) \
  X(cuMemGetInfo_v2)

#define SIM_CONTEXT_FUNCTIONS(X) \
  X(cuDevicePrimaryCtxRetain) \
  X(cuDevicePrimaryCtxRelease) \
  X(cuDevicePrimaryCtxRelease_v2) \
  X(cuDevicePrimaryCtxReset) \
  X(cuDevicePrimaryCtxReset_v2) \
  X(cuCtxCreate) \
  X(cuCtxCreate_v2) \
  X(cuCtxCreate_v3) \
  X(cuCtxCreate_v4) \
  X(cuCtxDestroy) \
  X(cuCtxDestroy_v2) \
  X(cuCtxSetCurrent) \
  X(cuCtxGetCurrent) \
  X(cuCtxGetDevice) \
  X(cuCtxSynchronize)

#define SIM_VMM_FUNCTIONS(X) \
  X(cuMemCreate) \
  X(cuMemRelease) \
  X(cuMemRetainAllocationHandle) \
  X(cuMemAddressReserve) \
  X(cuMemAddressFree) \
  X(cuMemMap) \
  X(cuMemUnmap) \
  X(cuMemSetAccess) \
  X(cuMemGetAllocationGranularity) \
  X(cuMemGetAllocationPropertiesFromHandle) \
  X(cuMemExportToShareableHandle) \
  X(cuMemImportFromShareableHandle)

#define SIM_POOL_FUNCTIONS(X) \
  X(cuDeviceGetDefaultMemPool) \
  X(cuDeviceGetMemPool) \
  X(cuDeviceSetMemPool) \
  X(cuMemPoolCreate) \
  X(cuMemPoolDestroy) \
  X(cuMemPoolTrimTo) \
  X(cuMemPoolGetAttribute) \
  X(cuMemPoolSetAttribute) \
  X(cuMemAllocFromPoolAsync) \
  X(cuMemAllocFromPoolAsync_ptsz)

#define SIM_ARRAY_FUNCTIONS(X) \
  X(cuArrayCreate) \
  X(cuArrayCreate_v2) \
  X(cuArray3DCreate) \
  X(cuArray3DCreate_v2) \
  X(cuArrayDestroy) \
  X(cuArrayGetDescriptor_v2) \
  X(cuArray3DGetDescriptor_v2) \
  X(cuArrayGetMemoryRequirements) \
  X(cuMipmappedArrayCreate) \
  X(cuMipmappedArrayDestroy) \
  X(cuMipmappedArrayGetMemoryRequirements)

#define SIM_HOST_FUNCTIONS(X) \
  X(cuMemAllocHost) \
  X(cuMemAllocHost_v2) \
  X(cuMemHostAlloc) \
  X(cuMemFreeHost)

#define SIM_IPC_FUNCTIONS(X) \
  X(cuIpcGetMemHandle) \
  X(cuIpcOpenMemHandle) \
  X(cuIpcOpenMemHandle_v2) \
  X(cuIpcCloseMemHandle) \
  X(cuImportExternalMemory) \
  X(cuExternalMemoryGetMappedBuffer) \
  X(cuDestroyExternalMemory)

#define SIM_STREAM_FUNCTIONS(X) \
  X(cuStreamCreate) \
  X(cuStreamCreateWithPriority) \
  X(cuStreamDestroy) \
  X(cuStreamDestroy_v2) \
  X(cuStreamSynchronize) \
  X(cuStreamSynchronize_ptsz) \
  X(cuStreamIsCapturing) \
  X(cuStreamIsCapturing_ptsz) \
  X(cuStreamGetCaptureInfo) \
  X(cuStreamGetCaptureInfo_ptsz) \
  X(cuStreamGetCaptureInfo_v2) \
  X(cuStreamGetCaptureInfo_v2_ptsz) \
  X(cuStreamGetCaptureInfo_v3) \
  X(cuStreamGetCaptureInfo_v3_ptsz) \
  X(cuStreamBeginCapture) \
  X(cuStreamBeginCapture_ptsz) \
  X(cuStreamBeginCapture_v2) \
  X(cuStreamBeginCapture_v2_ptsz) \
  X(cuStreamEndCapture) \
  X(cuStreamEndCapture_ptsz) \
  X(cuMemAllocAsync) \
  X(cuMemAllocAsync_ptsz) \
  X(cuMemFreeAsync) \
  X(cuMemFreeAsync_ptsz)

#define SIM_GRAPH_FUNCTIONS(X) \
  X(cuGraphCreate) \
  X(cuGraphDestroy) \
  X(cuGraphAddEmptyNode) \
  X(cuGraphAddMemAllocNode) \
  X(cuGraphAddMemFreeNode) \
  X(cuGraphAddNode) \
  X(cuGraphAddNode_v2) \
  X(cuGraphGetNodes) \
  X(cuGraphNodeGetType) \
  X(cuGraphMemAllocNodeGetParams) \
  X(cuGraphMemFreeNodeGetParams)

#define SIM_GRAPH_EXEC_FUNCTIONS(X) \
  X(cuGraphInstantiate) \
  X(cuGraphInstantiate_v2) \
  X(cuGraphInstantiateWithFlags) \
  X(cuGraphInstantiateWithParams) \
  X(cuGraphInstantiateWithParams_ptsz) \
  X(cuGraphExecGetFlags) \
  X(cuGraphUpload) \
  X(cuGraphUpload_ptsz) \
  X(cuGraphLaunch) \
  X(cuGraphLaunch_ptsz) \
  X(cuGraphExecDestroy) \
  X(cuDeviceGraphMemTrim) \
  X(cuDeviceGetGraphMemAttribute) \
  X(cuDeviceSetGraphMemAttribute)

#define SIM_DECLARE_HIDDEN(fn) \
  extern __typeof__(fn) hid_##fn __attribute__((visibility("hidden")));
#define SIM_DEFINE_ALIAS(fn) \
  extern __typeof__(fn) hid_##fn __attribute__((alias(#fn)));
SIM_DRIVER_FUNCTIONS(SIM_DECLARE_HIDDEN)
SIM_MEMORY_FUNCTIONS(SIM_DECLARE_HIDDEN)
SIM_CONTEXT_FUNCTIONS(SIM_DECLARE_HIDDEN)
SIM_VMM_FUNCTIONS(SIM_DECLARE_HIDDEN)
SIM_POOL_FUNCTIONS(SIM_DECLARE_HIDDEN)
SIM_ARRAY_FUNCTIONS(SIM_DECLARE_HIDDEN)
SIM_HOST_FUNCTIONS(SIM_DECLARE_HIDDEN)
SIM_IPC_FUNCTIONS(SIM_DECLARE_HIDDEN)
SIM_STREAM_FUNCTIONS(SIM_DECLARE_HIDDEN)
SIM_GRAPH_FUNCTIONS(SIM_DECLARE_HIDDEN)
SIM_GRAPH_EXEC_FUNCTIONS(SIM_DECLARE_HIDDEN)

/* ---- state shared by the driver's files ----------------------------- */

#define SIM_CTX_ALIVE 0x43545841u /* "CTXA" */
#define SIM_CTX_DEAD 0x44454144u  /* "DEAD" */

struct CUctx_st {
  uint32_t magic;
  int ordinal;     /* the CUDA ordinal it was made for */
  int phys;        /* index into sim_devices */
  bool primary;
  atomic_int refs; /* retain count of a primary context */
  /* Whether the context exists on its device, holding its cost
   * (sim_context_bytes): a created one from cuCtxCreate to its
   * destruction, a primary one from a retain (or its next use after a
   * reset) to its last release or a reset.  Written under the device's
   * lock; read without it on every call that needs a context. */
  atomic_bool charged;
};

/* A physical device.  CUDA ordinals map onto these through
 * CUDA_VISIBLE_DEVICES (sim_device); `ordinal` is -1 for a hidden one.
 *
 * Threads using different devices must not slow each other down, as on a
 * real driver: what every call reads (the identity, the primary context)
 * comes first, what the device's own allocations write starts on a cache
 * line of its own, and each device has a page of its own.  A line apart is
 * not enough: with devices 256 bytes apart, a thread allocating on device
 * 1 paid 10% more per pair while another allocated on device 0, the
 * hardware prefetchers carrying lines across (they stop at pages). */
struct sim_device {
  int phys;
  int gpu; /* its index on the machine, which its UUID and name carry */
  int ordinal;
  uint64_t total;
  struct CUctx_st primary;
  _Alignas(64) pthread_mutex_t lock;
  uint64_t used;   /* every counted allocation, whatever its kind, and
                     the contexts */
  uint64_t contexts; /* the part of `used` that is contexts */
  uint64_t driver_own; /* the part of `contexts` the driver keeps for
                          itself, outside NVML's count of the process */
  uint64_t peak;
  uint64_t allocs;
  uint64_t frees;
  struct sim_arena arena;
  struct sim_arena arena32;
  struct sim_table live;
} __attribute__((aligned(4096)));

SIM_HIDDEN extern struct sim_device sim_devices[SIM_MAX_DEVICES];
SIM_HIDDEN extern int sim_nphys;
SIM_HIDDEN extern pthread_mutex_t sim_obj_lock;

/* Set from the environment by sim_configure_once. */
SIM_HIDDEN extern bool sim_opt_trampoline;
SIM_HIDDEN extern bool sim_opt_trace;
/* CMG_SIM_NO_GRAPH_MEM_ATTR: a driver that does not answer
 * cuDeviceGetGraphMemAttribute (801). */
SIM_HIDDEN extern bool sim_opt_no_graph_attr;
/* CMG_SIM_CONTEXT_BYTES: what each context costs its device, as a
 * real driver's contexts take device memory nobody allocated (about 518
 * MiB on an H100).  0 by default. */
SIM_HIDDEN extern uint64_t sim_context_bytes;
/* CMG_SIM_CONTEXT_DRIVER_BYTES: what the driver keeps for itself with
 * each context beyond that, which its free memory shows and NVML's count
 * of the process does not (about 6 MiB on an H100).  0 by default. */
SIM_HIDDEN extern uint64_t sim_context_driver_bytes;
/* CMG_SIM_FAIL_ALLOC_AFTER and CMG_SIM_FAIL_FREE_AFTER, N or N:CODE:
 * after N successful allocations (frees), each fails with CODE; -1 when
 * unset.  devmem.c applies them. */
SIM_HIDDEN extern long long sim_fail_alloc_after;
SIM_HIDDEN extern CUresult sim_fail_alloc_code;
SIM_HIDDEN extern long long sim_fail_free_after;
SIM_HIDDEN extern CUresult sim_fail_free_code;

/* Reads the environment and sets the devices up, once per process. */
SIM_HIDDEN void sim_configure_once(void);

/* CUDA_SUCCESS once cuInit has succeeded (and no fork poisoned us), else
 * CUDA_ERROR_NOT_INITIALIZED. */
SIM_HIDDEN CUresult sim_check_init(void);

/* The calling thread's current context (NULL for none). */
SIM_HIDDEN extern __thread struct CUctx_st *sim_current_ctx;

/* Whether `dev` is a CUDA ordinal of this process. */
SIM_HIDDEN bool sim_is_device(CUdevice dev);

/* The device of CUDA ordinal `dev`, or NULL if there is none. */
SIM_HIDDEN struct sim_device *sim_device(CUdevice dev);

/* The calling thread's current context and its device, if usable:
 * CUDA_SUCCESS, or the error a memory call without one returns. */
SIM_HIDDEN CUresult sim_current(struct CUctx_st **ctx,
                                struct sim_device **dev);

/* The device whose address ranges hold `addr`, or NULL. */
SIM_HIDDEN struct sim_device *sim_device_of_address(uint64_t addr);

/* Counts `bytes` against `d` (with failure injection and the OOM check),
 * or gives them back; both take d->lock. */
SIM_HIDDEN CUresult sim_charge(struct sim_device *d, uint64_t bytes);
SIM_HIDDEN void sim_uncharge(struct sim_device *d, uint64_t bytes);

/* Gives `bytes` of `d` an address and records it as a live allocation
 * of `kind` owned by the current context.  PLAIN and POOL records are
 * charged (sim_charge's checks apply); IPC and EXTBUF records are not.
 * CUDA_SUCCESS or the error. */
SIM_HIDDEN CUresult sim_dev_alloc(struct sim_device *d, uint64_t bytes,
                                  enum sim_kind kind, void *obj,
                                  uint64_t *addr);

/* Removes the record of `addr` from `d` (whose lock the caller holds)
 * and gives its address and charge back; false if there is none. */
SIM_HIDDEN bool sim_dev_release_locked(struct sim_device *d, uint64_t addr);

/* cuMemFree and cuMemFreeAsync outside a capture: frees the allocation
 * at `addr`, whatever made it (a graph allocation through
 * sim_graph_free).  Needs a current context. */
SIM_HIDDEN CUresult sim_free(uint64_t addr);

/* Contexts (contexts.c): takes (true) or drops created_lock, for the
 * fork handlers; and frees everything context `c` owns, on every device
 * (its teardown). */
SIM_HIDDEN void sim_contexts_lock(bool lock);
SIM_HIDDEN void sim_free_owned_by(struct CUctx_st *c);

/* Makes context `c` exist on its device, charging its cost there unless
 * it already does: CUDA_SUCCESS, or CUDA_ERROR_OUT_OF_MEMORY with nothing
 * changed when the device has no room.  Not an allocation: failure
 * injection does not apply, and allocs/frees do not count it.  Takes the
 * device's lock. */
SIM_HIDDEN CUresult sim_context_charge(struct CUctx_st *c);

/* Formats the UUID of physical device `phys` as nvidia-smi does,
 * "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (41 bytes with the NUL), and
 * its 16 bytes. */
#define SIM_UUID_TEXT 41
SIM_HIDDEN void sim_uuid_bytes(int phys, unsigned char out[16]);
SIM_HIDDEN void sim_uuid_text(int phys, char out[SIM_UUID_TEXT]);

/* Parses CUDA_VISIBLE_DEVICES (`spec`, NULL when unset) into the list of
 * physical devices that become ordinals 0, 1, ...; returns its length. */
SIM_HIDDEN int sim_parse_visible(const char *spec, int nphys,
                                 int out[SIM_MAX_DEVICES]);

/* Pools (pools.c).  Called with pool->dev's lock held when a POOL record
 * is inserted (add) or released: keeps the pool's counters, and frees a
 * destroyed pool with its last allocation. */
SIM_HIDDEN void sim_pool_account(void *pool, uint64_t bytes, bool add);

/* Allocates from the current pool of `d` (cuMemAllocAsync).  Caller
 * holds sim_obj_lock. */
SIM_HIDDEN CUresult sim_pool_alloc_current(struct sim_device *d,
                                           uint64_t bytes, uint64_t *addr);

/* Arrays (arrays.c): destroys every array `ctx` made.  Caller holds
 * sim_obj_lock. */
SIM_HIDDEN void sim_arrays_teardown(const struct CUctx_st *ctx);

/* Host memory (hostmem.c): counts VMM host allocations with the
 * page-locked ones.  Caller holds sim_obj_lock. */
SIM_HIDDEN void sim_host_account(uint64_t bytes, bool add);

/* Streams (streams.c).  Where stream-ordered work on `s` goes, sim_obj_lock
 * held: CUDA_SUCCESS with *graph the capture graph of a capturing stream,
 * or NULL for a stream whose work runs now; CUDA_ERROR_INVALID_HANDLE for
 * a handle that is no stream, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED for an
 * invalidated capture. */
SIM_HIDDEN CUresult sim_stream_target(CUstream s, CUgraph *graph);

/* For a graph upload or launch, sim_obj_lock held: CUDA_SUCCESS for a
 * stream that runs work now, CUDA_ERROR_INVALID_HANDLE for no stream, and
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED for a capturing one, whose capture
 * it invalidates. */
SIM_HIDDEN CUresult sim_stream_uncaptured(CUstream s);

/* The synchronous allocation calls: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
 * while a stream captures in CU_STREAM_CAPTURE_MODE_GLOBAL, which
 * invalidates those captures; else CUDA_SUCCESS, without a lock. */
SIM_HIDDEN CUresult sim_capture_forbids(void);

/* Destroys every stream context `c` made, ending their captures.  Caller
 * holds sim_obj_lock. */
SIM_HIDDEN void sim_streams_teardown(const struct CUctx_st *c);

/* Graphs (graphs.c, graphexec.c); sim_obj_lock held by the caller of all
 * but sim_graph_free.  A capture graph is a graph that only its stream
 * may use until the capture ends: ended, it is kept (the caller's) or
 * destroyed. */
SIM_HIDDEN CUgraph sim_graph_new_capture(void);
SIM_HIDDEN void sim_graph_end_capture(CUgraph g, bool keep);

/* A captured cuMemAllocAsync (an allocation node of `bytes` on `d`, whose
 * address goes to *addr) or cuMemFreeAsync (a free node). */
SIM_HIDDEN CUresult sim_graph_capture_alloc(CUgraph g, struct sim_device *d,
                                            uint64_t bytes, uint64_t *addr);
SIM_HIDDEN CUresult sim_graph_capture_free(CUgraph g, uint64_t addr);

/* cuMemFree of a graph allocation (`addr` in no device's arena): frees it
 * if a launch made it and nothing freed it yet, else
 * CUDA_ERROR_INVALID_VALUE.  Takes sim_obj_lock. */
SIM_HIDDEN CUresult sim_graph_free(uint64_t addr);

/* Gives back the graph memory pool chunks context `c` grew, on every
 * device (its teardown). */
SIM_HIDDEN void sim_graph_mem_teardown(const struct CUctx_st *c);

#endif /* CMGSIM_LIBCUDA_H */
