/*
 * The report's "options" member, and how the report writes a size that
 * may be unlimited (report_options.c).
 */
#ifndef CMG_RUNTIME_REPORT_REPORT_OPTIONS_H
#define CMG_RUNTIME_REPORT_REPORT_OPTIONS_H

#include <stdint.h>

#include "runtime/report/report.h"

struct cmg__jsonw;

/* A size, or null for CMG__NO_LIMIT. */
void cmg__report_bytes(struct cmg__jsonw *w, uint64_t v);

/* The options the process ran with, as the report shows them. */
void cmg__report_options(struct cmg__jsonw *w, const struct cmg__process *p);

#endif /* CMG_RUNTIME_REPORT_REPORT_OPTIONS_H */
