/*
 * summary_held.c: device memory that leak groups hold but that is no leak,
 * what CUDA graph memory pools grew by (kind graph) and what CUDA contexts
 * and their modules took (kind context): the summary's sections on it,
 * apart from the leaks, and the SUMMARY line's words on it.  Its totals
 * are leak_class.c's, the lines under the device table
 * summary_devices.c's.
 */
#ifndef CMG_READER_SHOW_SUMMARY_HELD_H
#define CMG_READER_SHOW_SUMMARY_HELD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct cmg__tool_opts;
struct cmg__view;

/* The graph memory pools' groups, then the contexts', a section per
 * device, each kind closed by why it is no leak; nothing for a kind that
 * has none.  Returns whether a stack had frames hidden, which the leaks'
 * note then covers. */
bool cmg__summary_held_text(FILE *f, const struct cmg__view *v,
                            const struct cmg__tool_opts *o);

/* "; 1.5 GiB (1610612736 bytes) in 2 allocations held by CUDA graph
 * memory pools; 780.0 MiB (817889280 bytes) taken by 2 CUDA contexts and
 * their modules" for the SUMMARY line, without the kinds that held
 * nothing. */
void cmg__summary_held_line(FILE *f, const struct cmg__view *v);

#endif /* CMG_READER_SHOW_SUMMARY_HELD_H */
