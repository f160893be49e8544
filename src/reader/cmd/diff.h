/*
 * diff.c: the diff command.
 */
#ifndef CMG_READER_CMD_DIFF_H
#define CMG_READER_CMD_DIFF_H

#include <stdio.h>

struct cmg__tool_opts;
struct cmg__supp;
struct cmg__view;

/* Prints the difference NEW - BASE of two views over one index, as text
 * or, with o->json, as JSON written on f's descriptor as it is made.
 * Returns 0, -ENOMEM, or the negative errno of a failed write. */
int cmg__diff_print(FILE *f, const struct cmg__view *base,
                    const struct cmg__view *now,
                    const struct cmg__tool_opts *o);

/* The diff command: the two reports read into views over one index,
 * devices matched by ordinal, and their difference on stdout.  Returns the
 * exit status: 0, or CMG__TOOL_EXIT_ERROR after saying why. */
int cmg__diff_main(const char *base_file, const char *new_file,
                   struct cmg__supp *supp, const struct cmg__tool_opts *o);

#endif /* CMG_READER_CMD_DIFF_H */
