/*
 * The report's members on devices, host memory and the group
 * (report_devices.c).
 */
#ifndef CMG_CORE_REPORT_DEVICES_H
#define CMG_CORE_REPORT_DEVICES_H

#include <cjson/cJSON.h>

/* Each device the process used or has a limit on. */
cJSON *cmg__report_devices_json(void);

/* Page-locked host memory. */
cJSON *cmg__report_host_json(void);

/* The group this process shares a cap with, and the group's usage as the
 * report is written; null outside a group. */
cJSON *cmg__report_group_json(void);

#endif /* CMG_CORE_REPORT_DEVICES_H */
