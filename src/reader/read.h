/*
 * read.c: one report file, checked, as a struct cmg__tool_report; the
 * structs of a report as it was written, before any interning (those of
 * its stack tables in stacks.h, of its timeline in series.h).
 */
#ifndef CMG_READER_READ_H
#define CMG_READER_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pools.h"
#include "reader/series.h"
#include "reader/stacks.h"

/* One entry of a composition (peaks[].by_stack, denials[].by_stack). */
struct cmg__tool_share {
  uint32_t stack; /* stack index, or CMG__TOOL_NONE */
  uint64_t bytes;
  uint64_t count;
};

struct cmg__tool_comp {
  uint64_t bytes; /* live bytes when it was recorded */
  double time;
  size_t n;
  struct cmg__tool_share *items;
};

/* devices[].graph_memory: what the CUDA graph memory pool of a device
 * held, as the driver's attributes or the library's estimate say. */
struct cmg__tool_graphmem {
  bool present;  /* false when null, and in reports written before it */
  bool estimate; /* source "estimate": the driver could not be asked */
  uint64_t reserved_bytes, reserved_high_bytes, used_bytes, used_high_bytes;
  uint64_t launches, uploads, trims, denied;
};

/* devices[].footprint: what the process took on the card beyond its
 * allocations (its contexts and the modules loaded into them), as the
 * library measured it, and NVML's figure for the whole process. */
enum cmg__tool_fp_source {
  CMG__TOOL_FP_NONE,   /* not measured: `why` says why */
  CMG__TOOL_FP_NVML,   /* NVML's per-process usage around each creation */
  CMG__TOOL_FP_DRIVER, /* the driver's free memory around it */
};

struct cmg__tool_footprint {
  bool present; /* false when null, and in reports written before it */
  bool counted; /* the caps count context_bytes */
  /* Which of the nullable counts were known. */
  bool has_context_bytes, has_process_bytes, has_unexplained_bytes;
  enum cmg__tool_fp_source source; /* NONE exactly when no context_bytes */
  uint64_t contexts, context_bytes, allocated_bytes, process_bytes;
  uint64_t unexplained_bytes;
  char *why; /* why context_bytes is not known, or NULL */
  /* cross_check: the contexts measured by NVML and by the driver's free
   * memory, and what each said; checked 0 where none was. */
  uint64_t checked, checked_nvml, checked_driver;
};

struct cmg__tool_rdevice {
  int ordinal;
  char *name;
  char *uuid;
  uint64_t physical_bytes;
  bool has_limit;
  uint64_t limit_bytes;
  uint64_t live_bytes, peak_bytes, allocations, frees, denied;
  struct cmg__tool_graphmem graph;
  struct cmg__tool_footprint footprint;
};

/* A thread a leak group's allocations were made on (leaks[].threads). */
struct cmg__tool_thread {
  uint32_t source; /* in a view, the report it came from; 0 as read */
  uint32_t tid;
  char *name; /* NULL when the library had none for it */
};

/* The threads of a group, each (source, tid) once, in the order added. */
struct cmg__tool_threads {
  size_t n, cap;
  struct cmg__tool_thread *list;
};

/* A leak group, or a group released by context teardown. */
struct cmg__tool_rleak {
  uint32_t stack; /* stack index, or CMG__TOOL_NONE */
  char *api;
  char *kind; /* "device" when the report has no kind */
  int device; /* -1 for none (host memory) */
  uint64_t count, bytes;
  /* Leaks only, and empty in reports written before threads were. */
  struct cmg__tool_threads threads;
};

/* Page-locked host memory, the report's host{} object. */
struct cmg__tool_host {
  bool has_limit;
  uint64_t limit_bytes;
  uint64_t live_bytes, peak_bytes, allocations, frees, denied;
};

struct cmg__tool_rpeak {
  int device;
  struct cmg__tool_comp comp;
};

struct cmg__tool_rdenial {
  char *api;
  int device; /* -1 for none (host memory) */
  uint64_t requested_bytes, live_bytes;
  bool has_limit;
  uint64_t limit_bytes;
  uint32_t stack;
  bool has_comp;              /* by_stack was present */
  struct cmg__tool_comp comp; /* bytes = live_bytes, time of the denial */
};

/* A soft limit: bytes, or a percent of the device; both 0 for none. */
struct cmg__tool_soft {
  double bytes, percent;
};

/* The devices options.soft_limits can name (the library's). */
#define CMG__TOOL_SOFT_DEVICES 16

struct cmg__tool_report {
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
  struct cmg__tool_soft soft_limit;
  struct cmg__tool_soft soft_limits[CMG__TOOL_SOFT_DEVICES];
  /* "python": why its frames are not in the stacks, or NULL (no Python,
   * frames captured, or a report from before Python frames). */
  char *python_note;
  /* options.pool_switches: each switch's value, in the order of
   * cmg__pools_switches; NULL when unset or not recorded. */
  char *pool_values[CMG__POOLS_N];
  bool has_host;
  struct cmg__tool_host host;
  size_t n_devices, n_leaks, n_peaks, n_denials, n_released;
  size_t n_stacks, n_frames, n_modules;
  struct cmg__tool_rdevice *devices;
  struct cmg__tool_rleak *leaks;
  struct cmg__tool_rleak *released;
  struct cmg__tool_rpeak *peaks;
  struct cmg__tool_rdenial *denials_list;
  struct cmg__tool_rstack *stacks;
  struct cmg__tool_rframe *frames;
  struct cmg__tool_rmodule *modules;
  struct cmg__tool_timeline timeline; /* .present false when absent */
  size_t n_largest;                   /* read with CMG__TOOL_READ_LARGEST */
  struct cmg__tool_ralloc *largest;
};

/* What cmg__tool_read_with() reads beyond what every command uses. */
#define CMG__TOOL_READ_LARGEST 1u /* the largest live allocations */

/* True for the kinds that count as device memory (device, array, vmm,
 * graph, context), as the limits and the report's summary.live_bytes
 * count them. */
bool cmg__tool_is_device_kind(const char *kind);

/* Reads and checks the report at `file` ("-" is standard input).  Returns 0,
 * or -EINVAL / -ENOMEM with one line (no file name, no newline) in err
 * saying what is wrong. */
int cmg__tool_read(const char *file, struct cmg__tool_report *out, char *err,
                   size_t errlen);

/* cmg__tool_read() that also reads what `what` asks for. */
int cmg__tool_read_with(const char *file, unsigned what,
                        struct cmg__tool_report *out, char *err, size_t errlen);

/* Adds the threads of `from` not yet in `to`, as those of report
 * `source`: a view's leak group gathers those of every report's.  Returns 0
 * or -ENOMEM. */
int cmg__tool_threads_add(struct cmg__tool_threads *to,
                          const struct cmg__tool_threads *from,
                          uint32_t source);

void cmg__tool_threads_free(struct cmg__tool_threads *t);

/* Frees what cmg__tool_read() filled, also after it failed. */
void cmg__tool_report_free(struct cmg__tool_report *r);

#endif /* CMG_READER_READ_H */
