/*
 * series.c: what a report says of time: the optional "timeline" member
 * (each device's memory over time, the report writes, the largest
 * allocations freed) and, for a command that draws them, the largest live
 * allocations with their times.
 */
#ifndef CMG_READER_SERIES_H
#define CMG_READER_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct cmg__tool_id;
struct cmg__tool_reader;

/* The largest live allocations series.c keeps. */
#define CMG__TOOL_LARGEST 64

/* [time, live, min, max] of docs/report-format.md. */
struct cmg__tool_rpoint {
  double time;
  uint64_t live, min, max;
};

struct cmg__tool_rseries {
  int device;
  double resolution;
  uint64_t peak_bytes;
  double peak_time;
  size_t n;
  struct cmg__tool_rpoint *points;
};

struct cmg__tool_rdump {
  double time;
  char *reason;
};

/* One of the largest allocations freed, from timeline.freed. */
struct cmg__tool_rfreed {
  uint64_t bytes;
  int device;
  char *api;
  uint32_t stack; /* stack index, or CMG__TOOL_NONE */
  double time, free_time;
};

struct cmg__tool_timeline {
  bool present; /* false for reports written before it existed */
  size_t n_series, n_dumps, n_freed;
  uint64_t dumps_total;
  struct cmg__tool_rseries *series;
  struct cmg__tool_rdump *dumps;
  struct cmg__tool_rfreed *freed;
};

/* A live allocation, from leaks[].allocations. */
struct cmg__tool_ralloc {
  uint64_t bytes;
  double time;
  size_t leak; /* index into the report's leaks */
};

/* Reads root's "timeline" into *t, checked as read.c checks the rest.
 * Returns 0, -EINVAL after writing the problem into rd, or -ENOMEM. */
int cmg__tool_read_series(struct cmg__tool_reader *rd, const struct cJSON *root,
                          const struct cmg__tool_id *ids, size_t n_ids,
                          struct cmg__tool_timeline *t);

/* The CMG__TOOL_LARGEST largest allocations of the first n_leaks groups of
 * leaks[] (those already read), largest first, into *out and *n.  Same
 * returns; *out is the caller's to free, also when this fails. */
int cmg__tool_read_largest(struct cmg__tool_reader *rd,
                           const struct cJSON *root, size_t n_leaks,
                           struct cmg__tool_ralloc **out, size_t *n);

void cmg__tool_series_free(struct cmg__tool_timeline *t);

#endif /* CMG_READER_SERIES_H */
