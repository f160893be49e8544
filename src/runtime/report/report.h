/*
 * The JSON report, version 1 (docs/report-format.md), written through a
 * temporary file and a rename (report.c).
 */
#ifndef CMG_RUNTIME_REPORT_REPORT_H
#define CMG_RUNTIME_REPORT_REPORT_H

#include <stdint.h>

#include "core/conf.h"
#include "core/pools.h"

enum cmg__reason {
  CMG__REASON_EXIT,
  CMG__REASON_SIGNAL,
  CMG__REASON_REQUEST,
  CMG__REASON_SOFT_LIMIT,
  CMG__REASON_KILLED,   /* as a signal's default action ends the process */
  CMG__REASON_SNAPSHOT, /* every snapshot=TIME while the process runs */
};

#define CMG__REASONS 6

/* What the report says of the process; filled by the caller. */
struct cmg__process {
  long pid;
  long ppid;
  const char *exe;
  const char *const *argv; /* NULL-terminated, may be NULL */
  const char *hostname;
  const char *options;           /* CUMEMGUARD_OPTIONS as given, may be NULL */
  const struct cmg__config *cfg; /* the options in effect */
  /* The frameworks' pool switches at start-up; NULL writes none. */
  const struct cmg__pools *pools;
  /* The name of an API label (struct cmg__alloc's fn); the labels are the
   * library's own numbering. */
  const char *(*api_name)(unsigned fn);
  enum cmg__reason reason;
  /* How the process ends: its exit status (CMG__REASON_EXIT, -1 when not
   * known) or the signal that kills it (CMG__REASON_KILLED). */
  int status;
};

/* Writes the report to `path` through a temporary file in the same
 * directory and a rename, so the path never holds a partial report.
 * Returns 0 or a negative errno; on success fills the totals of the live
 * device allocations, not counting what graph memory pools and contexts
 * hold. */
int cmg__report_write(const char *path, const struct cmg__process *proc,
                      uint64_t *live_allocations, uint64_t *live_bytes);

#endif /* CMG_RUNTIME_REPORT_REPORT_H */
