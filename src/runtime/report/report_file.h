/*
 * The file a report is written to: a temporary beside the final path,
 * locked while it is written and renamed over the path once complete; the
 * leftovers of writers that died; and what a dying process's handler may
 * ask of a report being written (report_file.c).
 */
#ifndef CMG_RUNTIME_REPORT_REPORT_FILE_H
#define CMG_RUNTIME_REPORT_REPORT_FILE_H

#include <limits.h>
#include <stdint.h>

#include "core/conf.h"

struct cmg__report_file {
  int fd;
  const char *path;
  char tmp[PATH_MAX + CMG__REPORT_MAX + 64]; /* "" when writing path itself */
};

/* Opens f for writing the report at `path`: a fresh temporary file in the
 * same directory, or path itself when it exists and is not a regular file
 * (renaming over /dev/null or a pipe would replace it).  The first call of
 * a process also removes the temporary files that writers which died left
 * in that directory.  Returns 0 or a negative errno. */
int cmg__report_file_open(struct cmg__report_file *f, const char *path);

/* Ends the writing that err says how it went: with err 0, makes the report
 * durable and puts it at its path; otherwise removes the temporary file.
 * Returns err, or the error that finishing met. */
int cmg__report_file_close(struct cmg__report_file *f, int err);

/* Counts a step of a report being written (a part built, a buffer
 * written), for the handler that waits for it. */
void cmg__report_step(void);

/* The steps counted so far; async-signal-safe. */
uint64_t cmg__report_progress(void);

/* From a handler whose process dies before the report it waits for is
 * written: removes the report's temporary file; async-signal-safe. */
void cmg__report_abandon(void);

#endif /* CMG_RUNTIME_REPORT_REPORT_FILE_H */
