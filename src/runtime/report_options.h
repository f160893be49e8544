/*
 * The report's "options" member, and how the report writes a size that
 * may be unlimited (report_options.c).
 */
#ifndef CMG_RUNTIME_REPORT_OPTIONS_H
#define CMG_RUNTIME_REPORT_OPTIONS_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "runtime/report.h"

/* A size, or null for CMG__NO_LIMIT. */
cJSON *cmg__report_bytes(uint64_t v);

/* The options the process ran with, as the report shows them. */
cJSON *cmg__report_options_json(const struct cmg__process *p);

#endif /* CMG_RUNTIME_REPORT_OPTIONS_H */
