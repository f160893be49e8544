/*
 * diff.c: what grew and what shrank between two reports, and the diff
 * command.
 */
#ifndef CMG_READER_CMD_DIFF_H
#define CMG_READER_CMD_DIFF_H

#include <stdio.h>

struct cmg__run_opts;
struct cmg__supp;
struct cmg__view;

/* Prints the difference NEW - BASE of two views over one index. */
int cmg__diff_print(FILE *f, const struct cmg__view *base,
                    const struct cmg__view *now, const struct cmg__run_opts *o);

/* diff --json of two reports, read as the diff command reads them (a
 * cJSON item, as void *); NULL after saying why. */
void *cmg__diff_json(const char *base_file, const char *new_file,
                     struct cmg__supp *supp, const struct cmg__run_opts *o);

/* The diff command: the two reports read into views over one index,
 * devices matched by ordinal, and their difference on stdout.  Returns the
 * exit status: 0, or CMG__TOOL_EXIT_ERROR after saying why. */
int cmg__diff_main(const char *base_file, const char *new_file,
                   struct cmg__supp *supp, const struct cmg__run_opts *o);

#endif /* CMG_READER_CMD_DIFF_H */
