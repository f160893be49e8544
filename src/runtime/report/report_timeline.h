/*
 * The report's "timeline": each device's bytes in use over time, and when
 * reports were written (report_timeline.c).
 */
#ifndef CMG_RUNTIME_REPORT_REPORT_TIMELINE_H
#define CMG_RUNTIME_REPORT_REPORT_TIMELINE_H

#include <stdint.h>

#include "runtime/report/report.h"

struct cmg__jsonw;
struct cmg__refs;

/* Writes the "timeline" member's value, closed by a point at now_ns for
 * each device.  reasons[] names enum cmg__reason, api() the API labels of
 * allocations; the freed allocations' stacks are marked in refs. */
void cmg__report_timeline(struct cmg__jsonw *w, uint64_t now_ns,
                          const char *const reasons[CMG__REASONS],
                          struct cmg__refs *refs,
                          const char *(*api)(unsigned fn));

#endif /* CMG_RUNTIME_REPORT_REPORT_TIMELINE_H */
