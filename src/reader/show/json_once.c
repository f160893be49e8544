/*
 * Frames and lines written once.  On the html page the groups, peaks,
 * denials and changes of every view name the same frames and lines again
 * and again; each is written once, at the end, and a stack names them by
 * number.  Two frames are one when their objects print the same, so a
 * frame is known by its JSON text, written into a writer of its own.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"

#include "reader/model/intern.h"
#include "reader/show/json_once.h"

int
cmg__json_once_init(struct cmg__json_once *t)
{
  cmg__intern_init(&t->frames, true);
  cmg__intern_init(&t->lines, true);
  t->err = 0;
  return cmg__jsonw_open(&t->frame, -1, false);
}

void
cmg__json_once_free(struct cmg__json_once *t)
{
  cmg__intern_free(&t->frames);
  cmg__intern_free(&t->lines);
  cmg__jsonw_close(&t->frame);
}

struct cmg__jsonw *
cmg__json_once_writer(struct cmg__json_once *t)
{
  cmg__jsonw_empty(&t->frame);
  return &t->frame;
}

/* The number of text in table, the table taking a copy of it. */
static size_t
number(struct cmg__json_once *t, struct cmg__intern *table, const char *text)
{
  size_t k = 0;

  if (t->err == 0 &&
      (text == NULL || cmg__intern_add(table, strdup(text), &k) != 0))
    t->err = -ENOMEM;
  return t->err == 0 ? k : 0;
}

size_t
cmg__json_once_frame(struct cmg__json_once *t)
{
  return number(t, &t->frames, cmg__jsonw_text(&t->frame));
}

size_t
cmg__json_once_line(struct cmg__json_once *t, const char *line)
{
  return number(t, &t->lines, line);
}

void
cmg__json_once_write(struct cmg__json_once *t, struct cmg__jsonw *w)
{
  cmg__jsonw_array(cmg__jsonw_key(w, "frames"));
  for (size_t i = 0; i < t->frames.n; i++)
    cmg__jsonw_raw(w, t->frames.keys[i]);
  cmg__jsonw_array_end(w);
  cmg__jsonw_array(cmg__jsonw_key(w, "strings"));
  for (size_t i = 0; i < t->lines.n; i++)
    cmg__jsonw_string(w, t->lines.keys[i]);
  cmg__jsonw_array_end(w);
  if (t->err != 0)
    cmg__jsonw_fail(w, t->err);
}
