/*
 * The report's "options" member (report_options.c).
 */
#ifndef CMG_CORE_REPORT_OPTIONS_H
#define CMG_CORE_REPORT_OPTIONS_H

#include <cjson/cJSON.h>

#include "core/report.h"

/* The options the process ran with, as the report shows them. */
cJSON *cmg__report_options_json(const struct cmg__process *p);

#endif /* CMG_CORE_REPORT_OPTIONS_H */
