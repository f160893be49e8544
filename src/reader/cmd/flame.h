/*
 * flame.c: folded stacks and the SVG flame graph, and the folded and flame
 * commands.
 */
#ifndef CMG_READER_CMD_FLAME_H
#define CMG_READER_CMD_FLAME_H

#include <stdbool.h>
#include <stdio.h>

struct cmg__supp;
struct cmg__view;

enum cmg__flame_weight {
  CMG__FLAME_WEIGHT_LIVE,
  CMG__FLAME_WEIGHT_PEAK,
  CMG__FLAME_WEIGHT_DENIAL,
};

struct cmg__flame_opts {
  enum cmg__flame_weight weight;
  bool all_frames;
  const char *title; /* NULL: a title from the weight */
  unsigned width;    /* pixels */
};

/* Writes "root;...;leaf BYTES" lines, sorted, one per distinct stack. */
int cmg__flame_folded(FILE *f, const struct cmg__view *v,
                      const struct cmg__flame_opts *o);

/* Writes a self-contained SVG flame graph. */
int cmg__flame_svg(FILE *f, const struct cmg__view *v,
                   const struct cmg__flame_opts *o);

/* The folded command: the folded stacks of all files as one view, on
 * stdout.  Returns the exit status: 0, or CMG__TOOL_EXIT_ERROR after saying
 * why. */
int cmg__flame_folded_main(char *const *files, int n_files,
                           struct cmg__supp *supp,
                           const struct cmg__flame_opts *o);

/* The flame command: the same view as an SVG, into output (NULL or "-":
 * stdout), which is created only after every file was read.  Returns the
 * exit status: 0, or CMG__TOOL_EXIT_ERROR after saying why. */
int cmg__flame_main(char *const *files, int n_files, struct cmg__supp *supp,
                    const struct cmg__flame_opts *o, const char *output);

#endif /* CMG_READER_CMD_FLAME_H */
