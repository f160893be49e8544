/*
 * summary.c: the summary and merge commands.
 */
#ifndef CMG_READER_CMD_SUMMARY_H
#define CMG_READER_CMD_SUMMARY_H

#include <stdbool.h>

struct cmg__tool_opts;
struct cmg__supp;

/* The summary command (each file on its own) and merge (all of them as
 * one view, merged set): text, or with --json one document.  Return the
 * exit status: 0, or CMG__TOOL_EXIT_ERROR after saying why. */
int cmg__summary_main(char *const *files, int n_files, bool merged,
                      struct cmg__supp *supp, const struct cmg__tool_opts *o);

#endif /* CMG_READER_CMD_SUMMARY_H */
