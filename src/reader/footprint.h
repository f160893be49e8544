/*
 * footprint.c: what the summary says under its device table about each
 * process's footprint on the card beyond its allocations, with the device
 * memory its CUDA contexts and their modules took (devices[].footprint);
 * the contexts' groups are held.c's.
 */
#ifndef CMG_READER_FOOTPRINT_H
#define CMG_READER_FOOTPRINT_H

#include <stdio.h>

struct cmg__view;

/* One line per device that has a footprint, for under the device table:
 * what NVML says the process holds on the card, as allocations, contexts
 * and the unexplained rest, or why the contexts were not measured; and
 * whether the caps count them.  Nothing for the others. */
void cmg__tool_footprint_devices(FILE *f, const struct cmg__view *v);

#endif /* CMG_READER_FOOTPRINT_H */
