/*
 * diff_text.c: the difference of two views as text, as diff prints it.
 */
#ifndef CMG_READER_SHOW_DIFF_TEXT_H
#define CMG_READER_SHOW_DIFF_TEXT_H

#include <stddef.h>
#include <stdio.h>

struct cmg__delta;
struct cmg__tool_opts;
struct cmg__view;

/* Prints the changes c[0..n) of NEW - BASE (model/delta.h), two views over
 * one index: the sources, the devices, each change --top and --min-bytes
 * show, and the SUMMARY line. */
void cmg__diff_text_print(FILE *f, const struct cmg__view *base,
                          const struct cmg__view *now,
                          const struct cmg__delta *c, size_t n,
                          const struct cmg__tool_opts *o);

#endif /* CMG_READER_SHOW_DIFF_TEXT_H */
