/*
 * view.c: reports folded into a view, the leak groups, device rows,
 * peaks and first denials that every command prints from.
 */
#ifndef CMG_READER_MODEL_VIEW_H
#define CMG_READER_MODEL_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/load/model.h"
#include "reader/model/index.h"
#include "reader/model/leak_class.h"

struct cmg__view_source {
  char *file;
  long pid;
  char *exe, *command, *hostname, *reason;
  int exit_status; /* as the report's (cmg__model_report) */
  char *killed_by;
  double start_time, end_time;
  uint64_t live_allocations, live_bytes, untracked_frees, denials;
};

struct cmg__view_device {
  int ordinal; /* in the first report that has the device */
  char *name, *uuid;
  uint64_t physical_bytes;
  bool has_limit, limit_varies;
  uint64_t limit_bytes;
  uint64_t live_bytes, peak_bytes, allocations, frees, denied;
  /* Summed over the processes, but for the highs, the largest of one. */
  struct cmg__model_graphmem graph;
  /* Summed over the processes whose report has one (footprints of
   * processes); counted_any: whether any of them counted its contexts;
   * mixed_sources: whether NVML measured some and the driver others. */
  struct cmg__model_footprint footprint;
  unsigned footprints;
  bool counted_any, mixed_sources;
  unsigned processes;
};

struct cmg__view_leak {
  uint32_t stack; /* interned stack id, or CMG__TOOL_NONE */
  char *api;
  char *kind;
  /* What its kind makes it, before suppressions: ask leak_class.c's
   * cmg__leak_class_of() how the group counts. */
  enum cmg__leak_class by_kind;
  uint32_t device; /* index into the view's devices, or NONE */
  uint64_t count, bytes;
  const char *pool; /* the framework pool it is a block of (pool_blocks.c),
                     * or NULL */
  const char *held; /* the library that keeps it for the process's life
                     * (cmg__pool_blocks_held_by), or NULL */
  uint32_t rule;    /* suppression rule that hid it, or NONE */
  uint32_t order;   /* first-seen order, to sort stably */
  /* The threads its allocations were made on, with the index of their
   * report in the view's sources. */
  struct cmg__model_threads threads;
};

/* A peak or first-denial composition with its context. */
struct cmg__view_moment {
  uint32_t source;
  uint32_t device; /* index into the view's devices, or NONE (host) */
  struct cmg__model_comp comp; /* items' stacks are interned ids */
  uint64_t count;              /* sum of the items' counts */
  bool has_comp;
  /* Denials only. */
  char *api;
  uint64_t requested_bytes;
  bool has_limit;
  uint64_t limit_bytes;
  uint32_t stack;
};

struct cmg__view {
  struct cmg__index *ix;
  bool by_uuid; /* devices matched by UUID, else by ordinal */
  size_t n_sources, n_devices, n_leaks, n_peaks, n_denials;
  size_t cap_sources, cap_devices, cap_leaks, cap_peaks, cap_denials;
  struct cmg__view_source *sources;
  struct cmg__view_device *devices;
  struct cmg__view_leak *leaks;
  struct cmg__view_moment *peaks;
  struct cmg__view_moment *denials; /* the first of each device */
  struct cmg__intern_map leak_map;
  bool has_host;
  struct cmg__model_host host; /* summed over the reports */
  uint64_t events[3];          /* warn, wait, soft_limit */
  uint64_t released_bytes, released_count;
  bool no_pools;     /* some report was written with no_pools=1 */
  char *python_note; /* the first report's why Python frames are missing */
};

/* The ordinal of a view's device row, -1 for NONE (host memory). */
int cmg__view_ordinal(const struct cmg__view *v, uint32_t device);

/* An empty view over ix; by_uuid picks how devices of reports match. */
void cmg__view_init(struct cmg__view *v, struct cmg__index *ix, bool by_uuid);
void cmg__view_free(struct cmg__view *v);

/* Adds a report: interns its stacks, adds its leaks into the groups of
 * equal (stack, API, kind, device), its devices into the rows of the same
 * device, and keeps its peaks and first denials.  Returns 0 or -ENOMEM. */
int cmg__view_add(struct cmg__view *v, const struct cmg__model_report *r);

/* Sorts the leak groups by bytes, largest first, stable otherwise; after
 * the last cmg__view_add(). */
void cmg__view_sort(struct cmg__view *v);

#endif /* CMG_READER_MODEL_VIEW_H */
