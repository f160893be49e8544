/*
 * summary.c: the text summary of a view, and the summary and merge
 * commands.
 */
#ifndef CMG_READER_CMD_SUMMARY_H
#define CMG_READER_CMD_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>

struct cmg__run_opts;
struct cmg__supp;
struct cmg__view;

/* Prints a view as text: sources, devices, leaks, suppressions, the peaks
 * and first denials, SUMMARY.  The check command prints the leaks section
 * only (leaks_only). */
void cmg__summary_text(FILE *f, const struct cmg__view *v,
                       const struct cmg__run_opts *o, bool leaks_only);

/* The summary command (each file on its own) and merge (all of them as
 * one view, merged set): text, or with --json one document.  Return the
 * exit status: 0, or CMG__TOOL_EXIT_ERROR after saying why. */
int cmg__summary_main(char *const *files, int n_files, bool merged,
                      struct cmg__supp *supp, const struct cmg__run_opts *o);

#endif /* CMG_READER_CMD_SUMMARY_H */
