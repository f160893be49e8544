/*
 * run.c: what every command does around its own printing: reports read
 * (and their frames named) into a view and the view finished, or two into
 * views over one index; for the commands that draw time, reports read as
 * they were written.
 */
#ifndef CMG_READER_RUN_RUN_H
#define CMG_READER_RUN_RUN_H

#include <stdint.h>

#include "reader/model/index.h"

struct cmg__model_report;
struct cmg__supp;
struct cmg__view;

/* Reads file into view v, its frames named (symbolize.h).  Returns 0, or a
 * negative errno after saying what is wrong with the file. */
int cmg__run_load(struct cmg__view *v, const char *file);

/* Sorts a loaded view and applies the suppressions afresh (their counts
 * start again from zero).  Returns 0, or -ENOMEM after saying so. */
int cmg__run_finish(struct cmg__view *v, struct cmg__supp *supp);

/* cmg__run_load() for each file in turn, stopping at the first problem,
 * then cmg__run_finish(): the one view of folded, flame and check. */
int cmg__run_load_all(struct cmg__view *v, char *const *files, int n_files,
                      struct cmg__supp *supp);

/* Reads the two reports into views over one index (each cmg__run_load()
 * and cmg__run_finish()), devices matched by ordinal, and calls done()
 * with them, saying "out of memory" when it fails.  Returns 0, or -1 after
 * saying why. */
int cmg__run_pair(const char *base_file, const char *new_file,
                  struct cmg__supp *supp,
                  int (*done)(const struct cmg__view *,
                              const struct cmg__view *, void *),
                  void *arg);

/* Reads n files with cmg__read_report_with(what), their frames named, into
 * a new array *out (free with cmg__run_raw_free): reports as they were
 * written, without a view, for the commands that draw time.  Returns 0,
 * or -1 after saying which file is wrong and how. */
int cmg__run_raw_read(char *const *files, int n, unsigned what,
                      struct cmg__model_report **out);
void cmg__run_raw_free(struct cmg__model_report *r, int n);

/* Says "FILE: no timeline ..." and returns -1 unless every report has
 * one. */
int cmg__run_need_timeline(const struct cmg__model_report *r, int n);

/* A report as written, its stacks interned so that they are named in one
 * line as the views name them (show/one_line.c). */
struct cmg__run_stacks {
  struct cmg__index ix;
  uint32_t *ids; /* each stack's id in ix, by its index in the report */
};

/* Interns r's stacks into s.  Returns 0 or -ENOMEM; s is to be freed with
 * cmg__run_stacks_free() either way, as may an s of all zeroes. */
int cmg__run_stacks_init(struct cmg__run_stacks *s,
                         const struct cmg__model_report *r);

/* The one-line view of stack index `stack` of the report (or
 * CMG__TOOL_NONE), malloc'd; NULL when out of memory. */
char *cmg__run_stacks_line(const struct cmg__run_stacks *s, uint32_t stack);

void cmg__run_stacks_free(struct cmg__run_stacks *s);

/* The limit of device `device` in r, or 0 for none. */
uint64_t cmg__run_limit(const struct cmg__model_report *r, int device);

#endif /* CMG_READER_RUN_RUN_H */
