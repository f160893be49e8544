/*
 * json_once.c: the frames and lines of the stacks of a JSON document, each
 * kept once, numbered in the order first met, and written at its end.
 */
#ifndef CMG_READER_SHOW_JSON_ONCE_H
#define CMG_READER_SHOW_JSON_ONCE_H

#include <stddef.h>

#include "core/jsonw.h"

#include "reader/model/intern.h"

struct cmg__json_once {
  struct cmg__intern frames; /* each frame's JSON text */
  struct cmg__intern lines;
  struct cmg__jsonw frame; /* where the next frame is written */
  int err;
};

/* An empty table; 0 or -ENOMEM. */
int cmg__json_once_init(struct cmg__json_once *t);
void cmg__json_once_free(struct cmg__json_once *t);

/* The writer, empty, that the next frame's object is written into for
 * cmg__json_once_frame(). */
struct cmg__jsonw *cmg__json_once_writer(struct cmg__json_once *t);

/* The number of the frame just written into cmg__json_once_writer(t), and
 * of a line: the one it was first given.  0 when out of memory, which
 * cmg__json_once_write() reports. */
size_t cmg__json_once_frame(struct cmg__json_once *t);
size_t cmg__json_once_line(struct cmg__json_once *t, const char *line);

/* Writes into the object open in w "frames", the frames' objects, and
 * "strings", the lines, each by its number; fails w if t ran out of
 * memory. */
void cmg__json_once_write(struct cmg__json_once *t, struct cmg__jsonw *w);

#endif /* CMG_READER_SHOW_JSON_ONCE_H */
