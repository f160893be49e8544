/*
 * summary_text.c: the text summary of a view, as summary and merge print
 * it and check prints its leaks.
 */
#ifndef CMG_READER_SHOW_SUMMARY_TEXT_H
#define CMG_READER_SHOW_SUMMARY_TEXT_H

#include <stdbool.h>
#include <stdio.h>

struct cmg__tool_opts;
struct cmg__view;

/* Prints a view as text: sources, devices, leaks, suppressions, the peaks
 * and first denials, SUMMARY.  The check command prints the leaks section
 * only (leaks_only). */
void cmg__summary_text_print(FILE *f, const struct cmg__view *v,
                             const struct cmg__tool_opts *o, bool leaks_only);

#endif /* CMG_READER_SHOW_SUMMARY_TEXT_H */
