/*
 * devices.c: a report's devices[], each member checked as read.c checks
 * the rest, with each device's graph_memory and footprint.
 */
#ifndef CMG_READER_DEVICES_H
#define CMG_READER_DEVICES_H

struct cJSON;
struct cmg__tool_reader;
struct cmg__tool_report;

/* Fills r->devices and r->n_devices; 0, or -EINVAL with the line in rd,
 * or -ENOMEM.  What it filled is freed by cmg__tool_report_free(). */
int cmg__tool_read_devices(struct cmg__tool_reader *rd,
                           const struct cJSON *root,
                           struct cmg__tool_report *r);

#endif /* CMG_READER_DEVICES_H */
