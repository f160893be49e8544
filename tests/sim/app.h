/*
 * The script interpreter shared by the simulated-CUDA test programs.
 *
 * app.c parses argv into a script and runs it; each app_<path>.c supplies
 * one backend, a table of operations that reach CUDA by one path (the
 * driver by name, dlsym, cuGetProcAddress, the runtime).  Every operation
 * returns the API's own status code (CUresult, or cudaError_t for the
 * runtime backends), which is what the script prints as rc=.
 */
#ifndef CMGSIM_APP_H
#define CMGSIM_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvml_abi.h"

/* A CUDA array for the array operations.  `format` is one of the names
 * app.c accepts (u8, u16, u32, s8, s16, s32, f16, f32), which each
 * backend turns into its API's format. */
struct app_array {
  size_t width;
  size_t height;
  size_t depth;
  int dims;             /* 2: a 2D create call; 3: a 3D one */
  unsigned int levels;  /* 0: a plain array; else a mipmapped one */
  const char *format;
  unsigned int channels;
};

/* What graph_nodes counts of a graph's nodes. */
struct app_graph_nodes {
  size_t n;
  size_t alloc;
  size_t free;
  uint64_t bytes; /* of the allocation nodes */
};

/* The NVML functions the nvml operations call. */
struct app_nvml {
  __typeof__(nvmlInit_v2) *init;
  __typeof__(nvmlDeviceGetCount_v2) *count;
  __typeof__(nvmlDeviceGetHandleByIndex_v2) *handle;
  __typeof__(nvmlDeviceGetUUID) *uuid;
  __typeof__(nvmlDeviceGetMemoryInfo) *memory;
  __typeof__(nvmlDeviceGetMemoryInfo_v2) *memory_v2;
  __typeof__(nvmlDeviceGetComputeRunningProcesses_v3) *procs;
};

struct app_backend {
  const char *name;
  /* Called once, before the first CUDA operation of the process: driver
   * backends resolve their entry points, call cuInit and bind `dev`.  NULL
   * for the runtime, which initialises itself on its first call. */
  int (*start)(int dev);
  /* Makes the calling thread use `dev`: driver backends make the device's
   * primary context current, runtime backends call cudaSetDevice.  Also
   * run first by every thread of a `threads` operation. */
  int (*set_device)(int dev);
  int (*alloc)(uint64_t *ptr, size_t size);
  int (*alloc_pitch)(uint64_t *ptr, size_t *pitch, size_t width,
                     size_t height, unsigned int elem);
  int (*alloc_managed)(uint64_t *ptr, size_t size);
  int (*alloc_async)(uint64_t *ptr, size_t size, bool ptsz);
  int (*free)(uint64_t ptr);
  int (*free_async)(uint64_t ptr, bool ptsz);
  int (*meminfo)(size_t *free, size_t *total);
  int (*totalmem)(int dev, size_t *bytes);
  /* Resets `dev`'s primary context, which frees everything allocated in
   * it: cuDevicePrimaryCtxReset, or cudaDeviceReset on the current device. */
  int (*reset)(int dev);
  /* Optional (NULL if the path has none): a cuGetProcAddress-style lookup
   * through this backend's path; *status is a CUdriverProcAddressQueryResult. */
  int (*getproc)(const char *symbol, int version, unsigned long long flags,
                 void **fn, int *status);

  /*
   * The operations below are optional too: NULL where this path cannot
   * reach the call, and the operation then prints "NAME unsupported".
   * Handles (VMM handles, pools, arrays, contexts, external memory) travel
   * as uint64_t.  Driver backends implement them with the driver API
   * (app_drvops.c); the runtime ones with the runtime's own call where it
   * has one, else with a driver entry point from cudaGetDriverEntryPoint.
   */
  int (*count)(int *n);
  int (*uuid)(int dev, unsigned char uuid[16]);
  /* cuMemCreate at the device `dev` (or host memory), then reserve, map
   * and set access for `dev`. */
  int (*vmm)(size_t size, bool host, int dev, uint64_t *handle,
             uint64_t *ptr);
  int (*vmm_unmap)(uint64_t ptr, size_t size);  /* unmap, free the range */
  int (*vmm_release)(uint64_t handle);
  int (*vmm_retain)(uint64_t ptr, uint64_t *handle);
  int (*vmm_export)(uint64_t handle, int *fd);
  /* Import, then reserve, map and set access for `dev`. */
  int (*vmm_import)(int fd, size_t size, int dev, uint64_t *handle,
                    uint64_t *ptr);
  int (*pool_create)(int dev, uint64_t *pool);
  int (*pool_default)(int dev, uint64_t *pool);
  int (*pool_alloc)(uint64_t pool, size_t size, bool ptsz, uint64_t *ptr);
  int (*pool_destroy)(uint64_t pool);
  int (*pool_trim)(uint64_t pool, size_t keep);
  int (*pool_stats)(uint64_t pool, uint64_t *reserved, uint64_t *used);
  int (*array)(const struct app_array *a, uint64_t *handle);
  int (*array_free)(uint64_t handle, bool mipmap);
  int (*rt_array)(const struct app_array *a, uint64_t *handle);
  int (*malloc3d)(size_t width, size_t height, size_t depth, uint64_t *ptr,
                  size_t *pitch);
  int (*host)(size_t size, bool hostalloc, unsigned int flags,
              uint64_t *ptr);
  int (*host_free)(uint64_t ptr);
  int (*ctx_create)(int dev, uint64_t *ctx);  /* and make it current */
  int (*ctx_destroy)(uint64_t ctx);
  int (*retain)(int dev);
  int (*release)(int dev, bool legacy);
  int (*reset_variant)(int dev, bool legacy);
  int (*ipc_open)(uint64_t ptr, bool legacy, uint64_t *alias);
  int (*ipc_close)(uint64_t alias);
  int (*ext_import)(size_t size, uint64_t *ext, uint64_t *ptr);
  int (*ext_destroy)(uint64_t ext);
  int (*entry)(const char *symbol, int version, unsigned long long flags,
               bool ptsz, void **fn, int *status);
  /* Streams, capture and graphs (app_graph.c).  Streams, graphs and
   * executables travel as uint64_t too; stream 0 is the NULL stream, 1
   * and 2 CUDA's legacy and per-thread handles.  Modes and statuses are
   * CUDA's numbers (0 global, 1 thread-local, 2 relaxed; 0 none, 1
   * active, 2 invalidated). */
  int (*stream_create)(uint64_t *stream);
  int (*stream_destroy)(uint64_t stream);
  int (*stream_sync)(uint64_t stream);
  int (*capture_begin)(uint64_t stream, int mode);
  int (*capture_end)(uint64_t stream, uint64_t *graph);
  int (*capture_status)(uint64_t stream, int *status);
  int (*alloc_on)(uint64_t stream, size_t size, uint64_t *ptr);
  int (*free_on)(uint64_t stream, uint64_t ptr);
  int (*graph_create)(uint64_t *graph);
  int (*graph_destroy)(uint64_t graph);
  /* An allocation node on device `dev`; its address goes to *ptr. */
  int (*graph_alloc)(uint64_t graph, int dev, size_t size, uint64_t *ptr);
  int (*graph_free)(uint64_t graph, uint64_t ptr);
  int (*graph_nodes)(uint64_t graph, struct app_graph_nodes *out);
  int (*instantiate)(uint64_t graph, bool auto_free, uint64_t *exec);
  int (*instantiate_params)(uint64_t graph, bool auto_free, uint64_t *exec);
  int (*graph_run)(uint64_t exec, uint64_t stream, bool launch); /* or upload */
  int (*exec_destroy)(uint64_t exec);
  int (*graph_trim)(int dev);
  /* used, used_high, reserved, reserved_high */
  int (*graph_mem)(int dev, uint64_t out[4]);
  int (*graph_mem_reset)(int dev);
  /* NVML as this program reaches it; NULL: dlopen("libnvidia-ml.so.1")
   * and dlsym, done by app.c. */
  const struct app_nvml *(*nvml)(void);
};

/* Runs the script in argv[1..] with backend `b`; returns the exit code. */
int app_main(const struct app_backend *b, int argc, char **argv);

/*
 * Known allocation sites, exported (the programs are linked -rdynamic) so
 * that a report's stacks name them.  Each allocates size bytes with the
 * backend's plain alloc through cmgtest_alloc_leaf and returns its status:
 * the `site N` operation calls cmgtest_site_N, and `deep D` calls
 * cmgtest_deep(D), which is D frames of cmgtest_deep above the leaf.
 */
int cmgtest_alloc_leaf(uint64_t *ptr, size_t size);
int cmgtest_site_1(uint64_t *ptr, size_t size);
int cmgtest_site_2(uint64_t *ptr, size_t size);
int cmgtest_site_3(uint64_t *ptr, size_t size);
int cmgtest_deep(int depth, uint64_t *ptr, size_t size);

#endif /* CMGSIM_APP_H */
