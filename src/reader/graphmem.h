/*
 * graphmem.c: what the summary says under its device table about CUDA
 * graph memory, the device memory that each device's graph memory pool
 * reserved (devices[].graph_memory); its groups are held.c's.
 */
#ifndef CMG_READER_GRAPHMEM_H
#define CMG_READER_GRAPHMEM_H

#include <stdio.h>

struct cmg__view;

/* One line per device that has graph_memory, for under the device table:
 * reserved and used bytes with their highs, whose count they are, and the
 * launches, uploads, trims and denials.  Nothing for the others. */
void cmg__tool_graph_devices(FILE *f, const struct cmg__view *v);

#endif /* CMG_READER_GRAPHMEM_H */
