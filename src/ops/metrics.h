/*
 * The status view as Prometheus metrics (metrics.c), for `cumemguard
 * status --prometheus` and node_exporter's textfile collector.
 */
#ifndef CMG_OPS_METRICS_H
#define CMG_OPS_METRICS_H

#include <stddef.h>
#include <stdio.h>

#include "ops/seg_find.h"
#include "core/segment.h"

/* Prints the text exposition format for n segments: copies[i] is entry
 * i's checked copy, or NULL when it could not be read (errors[i] says
 * why; such segments are counted, not shown). */
void cmg__metrics_print(FILE *f, const struct cmg__seg_entry *e,
                        const struct seg *const *copies,
                        const char (*errors)[256], size_t n);

#endif /* CMG_OPS_METRICS_H */
