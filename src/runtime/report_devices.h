/*
 * The report's members on devices, host memory and the group
 * (report_devices.c).
 */
#ifndef CMG_RUNTIME_REPORT_DEVICES_H
#define CMG_RUNTIME_REPORT_DEVICES_H

#include <cjson/cJSON.h>
#include <stdbool.h>

/* A device as every report member names one: its ordinal, 0 to
 * CMG__MAX_DEVICES - 1, or null for memory on no device (host memory,
 * CMG__HOST).  The schema's $defs/device and the reader's
 * cmg__tool_device say the same. */
cJSON *cmg__report_device(int device);
/* Whether the report names `device` by its ordinal (else it writes null). */
bool cmg__is_report_device(int device);

/* Each device the process used or has a limit on. */
cJSON *cmg__report_devices_json(void);

/* Page-locked host memory. */
cJSON *cmg__report_host_json(void);

/* The group this process shares a cap with, and the group's usage as the
 * report is written; null outside a group. */
cJSON *cmg__report_group_json(void);

#endif /* CMG_RUNTIME_REPORT_DEVICES_H */
