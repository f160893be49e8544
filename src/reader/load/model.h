/*
 * The data model of cumemguard-report: one report as it was written,
 * checked, before any interning.  The loader (read.c and the read_*.c
 * files beside it) fills a struct cmg__model_report from a file; the
 * model's queries (src/reader/model/) and the commands read it through
 * this header alone, never through the loader's.
 *
 * Indexes are uint32_t, CMG__TOOL_NONE standing for "none" (a frame
 * without a module, a leak without a stack).  Every string is valid UTF-8
 * without control characters (the loader cleans what it copies), so no
 * output, whether a terminal, an SVG or folded stacks, needs to.
 */
#ifndef CMG_READER_LOAD_MODEL_H
#define CMG_READER_LOAD_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pools.h"

/* ---- the stack tables: modules[], frames[], stacks[] -------------------- */

struct cmg__model_module {
  char *path;
  char *build_id;
  const char *note; /* why its frames were not named here; NULL */
};

struct cmg__model_frame {
  uint64_t address;
  uint32_t module; /* index into modules, or CMG__TOOL_NONE */
  bool has_offset;
  uint64_t offset;
  char *function; /* NULL when unknown; demangled, parameters included */
  char *name;     /* without parameters; NULL when the same as function */
  bool has_function_offset;
  uint64_t function_offset;
  bool python;   /* "lang": "python": function, file and line */
  bool inlined;  /* a call inlined at the next frame's address */
  char *file;    /* the source file (Python's, or DWARF's), else NULL */
  uint64_t line; /* its line; 0 when none is known */
  /* Not 0: not a frame but the place of a stack's "cuts" entry, and how
   * many frames the capture left out there (CMG__MODEL_CUT_UNKNOWN when it
   * did not say).  function says so, and of which language, so that every
   * output shows it as it shows a frame. */
  uint32_t cut;
};

#define CMG__MODEL_CUT_UNKNOWN UINT32_MAX

struct cmg__model_stack {
  bool truncated;
  uint32_t n;
  uint32_t *frames; /* indexes into frames, innermost first */
};

/* ---- leaks, peaks, denials ---------------------------------------------- */

/* One entry of a composition (peaks[].by_stack, denials[].by_stack). */
struct cmg__model_share {
  uint32_t stack; /* stack index, or CMG__TOOL_NONE */
  uint64_t bytes;
  uint64_t count;
};

struct cmg__model_comp {
  uint64_t bytes; /* live bytes when it was recorded */
  double time;
  size_t n;
  struct cmg__model_share *items;
};

/* A thread a leak group's allocations were made on (leaks[].threads). */
struct cmg__model_thread {
  uint32_t source; /* in a view, the report it came from; 0 as read */
  uint32_t tid;
  char *name; /* NULL when the library had none for it */
};

/* The threads of a group, each (source, tid) once, in the order added. */
struct cmg__model_threads {
  size_t n, cap;
  struct cmg__model_thread *list;
};

/* A leak group, or a group released by context teardown. */
struct cmg__model_leak {
  uint32_t stack; /* stack index, or CMG__TOOL_NONE */
  char *api;
  char *kind; /* "device" when the report has no kind */
  int device; /* -1 for none (host memory) */
  uint64_t count, bytes;
  /* Leaks only, and empty in reports written before threads were. */
  struct cmg__model_threads threads;
};

struct cmg__model_peak {
  int device;
  struct cmg__model_comp comp;
};

struct cmg__model_denial {
  char *api;
  int device; /* -1 for none (host memory) */
  uint64_t requested_bytes, live_bytes;
  bool has_limit;
  uint64_t limit_bytes;
  uint32_t stack;
  bool has_comp;               /* by_stack was present */
  struct cmg__model_comp comp; /* bytes = live_bytes, time of the denial */
};

/* ---- devices and host memory -------------------------------------------- */

/* devices[].graph_memory: what the CUDA graph memory pool of a device
 * held, as the driver's attributes or the library's estimate say. */
struct cmg__model_graphmem {
  bool present;  /* false when null, and in reports written before it */
  bool estimate; /* source "estimate": the driver could not be asked */
  uint64_t reserved_bytes, reserved_high_bytes, used_bytes, used_high_bytes;
  uint64_t launches, uploads, trims, denied;
};

/* devices[].footprint: what the process took on the card beyond its
 * allocations (its contexts and the modules loaded into them), as the
 * library measured it, and NVML's figure for the whole process. */
enum cmg__model_fp_source {
  CMG__MODEL_FP_NONE,   /* not measured: `why` says why */
  CMG__MODEL_FP_NVML,   /* NVML's per-process usage around each creation */
  CMG__MODEL_FP_DRIVER, /* the driver's free memory around it */
};

struct cmg__model_footprint {
  bool present; /* false when null, and in reports written before it */
  bool counted; /* the caps count context_bytes */
  /* Which of the nullable counts were known. */
  bool has_context_bytes, has_process_bytes, has_unexplained_bytes;
  enum cmg__model_fp_source source; /* NONE exactly when no context_bytes */
  uint64_t contexts, context_bytes, allocated_bytes, process_bytes;
  uint64_t unexplained_bytes;
  char *why; /* why context_bytes is not known, or NULL */
  /* cross_check: the contexts measured by NVML and by the driver's free
   * memory, and what each said; checked 0 where none was. */
  uint64_t checked, checked_nvml, checked_driver;
};

struct cmg__model_device {
  int ordinal;
  char *name;
  char *uuid;
  uint64_t physical_bytes;
  bool has_limit;
  uint64_t limit_bytes;
  uint64_t live_bytes, peak_bytes, allocations, frees, denied;
  struct cmg__model_graphmem graph;
  struct cmg__model_footprint footprint;
};

/* Page-locked host memory, the report's host{} object. */
struct cmg__model_host {
  bool has_limit;
  uint64_t limit_bytes;
  uint64_t live_bytes, peak_bytes, allocations, frees, denied;
};

/* A soft limit: bytes, or a percent of the device; both 0 for none. */
struct cmg__model_soft {
  double bytes, percent;
};

/* The devices options.soft_limits can name (the library's). */
#define CMG__MODEL_SOFT_DEVICES 16

/* A soft limit that options.gpu_limits sets for the GPU of that UUID;
 * the library keys at most 16 GPUs. */
#define CMG__MODEL_SOFT_GPUS 16
struct cmg__model_gpu_soft {
  char uuid[48];
  struct cmg__model_soft soft;
};

/* ---- time --------------------------------------------------------------- */

/* [time, live, min, max] of docs/report-format.md. */
struct cmg__model_point {
  double time;
  uint64_t live, min, max;
};

struct cmg__model_series {
  int device;
  double resolution;
  uint64_t peak_bytes;
  double peak_time;
  size_t n;
  struct cmg__model_point *points;
};

struct cmg__model_dump {
  double time;
  char *reason;
};

/* One of the largest allocations freed, from timeline.freed. */
struct cmg__model_freed {
  uint64_t bytes;
  int device;
  char *api;
  uint32_t stack; /* stack index, or CMG__TOOL_NONE */
  double time, free_time;
};

struct cmg__model_timeline {
  bool present; /* false for reports written before it existed */
  size_t n_series, n_dumps, n_freed;
  uint64_t dumps_total;
  struct cmg__model_series *series;
  struct cmg__model_dump *dumps;
  struct cmg__model_freed *freed;
};

/* The largest live allocations the loader keeps, when asked for them. */
#define CMG__MODEL_LARGEST 64

/* A live allocation, from leaks[].allocations. */
struct cmg__model_alloc {
  uint64_t bytes;
  double time;
  size_t leak; /* index into the report's leaks */
};

/* ---- the report --------------------------------------------------------- */

struct cmg__model_report {
  char *file;
  long pid;
  char *exe;
  char *command; /* argv joined with spaces */
  char *hostname;
  char *reason;
  /* process.end: the exit status (-1 when not said), or the signal that
   * killed the process ("SIGTERM"; NULL when none did). */
  int exit_status;
  char *killed_by;
  double start_time, end_time;
  uint64_t live_allocations, live_bytes, untracked_frees, denials;
  uint64_t events[3]; /* warn, wait, soft_limit; 0 in older reports */
  bool no_pools;      /* options.no_pools; false in older reports */
  /* options.soft_limit, and soft_limits by device ordinal. */
  struct cmg__model_soft soft_limit;
  struct cmg__model_soft soft_limits[CMG__MODEL_SOFT_DEVICES];
  /* options.gpu_limits' soft limits, which come before an ordinal's;
   * none in older reports. */
  size_t n_gpu_soft;
  struct cmg__model_gpu_soft gpu_soft[CMG__MODEL_SOFT_GPUS];
  /* "python": why its frames are not in the stacks, or NULL (no Python,
   * frames captured, or a report from before Python frames). */
  char *python_note;
  /* options.pool_switches: each switch's value, in the order of
   * cmg__pools_switches; NULL when unset or not recorded. */
  char *pool_values[CMG__POOLS_N];
  bool has_host;
  struct cmg__model_host host;
  size_t n_devices, n_leaks, n_peaks, n_denials, n_released;
  size_t n_stacks, n_frames, n_modules;
  struct cmg__model_device *devices;
  struct cmg__model_leak *leaks;
  struct cmg__model_leak *released;
  struct cmg__model_peak *peaks;
  struct cmg__model_denial *denials_list;
  struct cmg__model_stack *stacks;
  struct cmg__model_frame *frames;
  struct cmg__model_module *modules;
  struct cmg__model_timeline timeline; /* .present false when absent */
  size_t n_largest;                    /* read with CMG__READ_LARGEST */
  struct cmg__model_alloc *largest;
};

#endif /* CMG_READER_LOAD_MODEL_H */
