/*
 * summary_devices.c: what the summary says under its device table about
 * each process's footprint on the card beyond its allocations, with the
 * device memory its CUDA contexts and their modules took
 * (devices[].footprint), and about each device's CUDA graph memory
 * (devices[].graph_memory); the groups of both are summary_held.c's.
 */
#ifndef CMG_READER_SHOW_SUMMARY_DEVICES_H
#define CMG_READER_SHOW_SUMMARY_DEVICES_H

#include <stdio.h>

struct cmg__view;

/* One line per device that has a footprint, for under the device table:
 * what NVML says the process holds on the card, as allocations, contexts
 * and the unexplained rest, or why the contexts were not measured; and
 * whether the caps count them.  Nothing for the others. */
void cmg__summary_devices_footprint(FILE *f, const struct cmg__view *v);

/* One line per device that has graph_memory, for under the device table:
 * reserved and used bytes with their highs, whose count they are, and the
 * launches, uploads, trims and denials.  Nothing for the others. */
void cmg__summary_devices_graph(FILE *f, const struct cmg__view *v);

#endif /* CMG_READER_SHOW_SUMMARY_DEVICES_H */
