/*
 * read_devices.c: a report's devices[], each member checked as read.c checks
 * the rest, with each device's graph_memory and footprint.
 */
#ifndef CMG_READER_LOAD_READ_DEVICES_H
#define CMG_READER_LOAD_READ_DEVICES_H

struct cJSON;
struct cmg__fields_reader;
struct cmg__model_report;

/* Fills r->devices and r->n_devices; 0, or -EINVAL with the line in rd,
 * or -ENOMEM.  What it filled is freed by cmg__read_report_free(). */
int cmg__read_devices(struct cmg__fields_reader *rd, const struct cJSON *root,
                      struct cmg__model_report *r);

#endif /* CMG_READER_DEVICES_H */
