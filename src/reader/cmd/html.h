/*
 * html.c: the html command, one self-contained web page of one report, of
 * BASE and NEW, or of several reports merged.
 */
#ifndef CMG_READER_CMD_HTML_H
#define CMG_READER_CMD_HTML_H

#include <stdbool.h>

struct cmg__tool_opts;
struct cmg__supp;

/* Writes the page of files (one; two, BASE and NEW, unless merged; or
 * several, merged) to output (stdout for NULL or "-"), only once every
 * report was read.  Returns the exit status: 0, or CMG__TOOL_EXIT_ERROR
 * after saying why. */
int cmg__html_main(char *const *files, int n_files, bool merged,
                   struct cmg__supp *supp, const struct cmg__tool_opts *o,
                   const char *output);

#endif /* CMG_READER_CMD_HTML_H */
