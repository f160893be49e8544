/*
 * The report's members on devices, host memory and the group
 * (report_devices.c).
 */
#ifndef CMG_RUNTIME_REPORT_REPORT_DEVICES_H
#define CMG_RUNTIME_REPORT_REPORT_DEVICES_H

#include <stdbool.h>

struct cmg__jsonw;

/* A device as every report member names one: its ordinal, 0 to
 * CMG__MAX_DEVICES - 1, or null for memory on no device (host memory,
 * CMG__HOST).  The schema's $defs/device and the reader's
 * cmg__tool_device say the same. */
void cmg__report_device(struct cmg__jsonw *w, int device);
/* Whether the report names `device` by its ordinal (else it writes null). */
bool cmg__is_report_device(int device);

/* Each device the process used or has a limit on. */
void cmg__report_devices(struct cmg__jsonw *w);

/* Page-locked host memory. */
void cmg__report_host(struct cmg__jsonw *w);

/* The group this process shares a cap with, and the group's usage as the
 * report is written; null outside a group. */
void cmg__report_group(struct cmg__jsonw *w);

#endif /* CMG_RUNTIME_REPORT_REPORT_DEVICES_H */
