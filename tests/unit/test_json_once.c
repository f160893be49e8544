/*
 * Unit tests of json_once.c, the table that keeps each frame and line of
 * a JSON document once and names it by number.  The html page looks
 * frames up by these numbers, so they must be stable: the first frame
 * met is 0, a frame that prints the same as an earlier one gets that
 * one's number, frames and lines are numbered apart, and the table
 * writes them at the end in that order.  Out of memory must not go
 * unnoticed: a number handed out after it is 0, and the document fails.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"

#include "reader/show/json_once.h"
#include "../tap.h"

/* The frame object {"function": name, "line": line} numbered in t. */
static size_t
frame(struct cmg__json_once *t, const char *name, unsigned line)
{
  struct cmg__jsonw *w = cmg__json_once_writer(t);

  cmg__jsonw_object(w);
  cmg__jsonw_member_string(w, "function", name);
  cmg__jsonw_member_uint(w, "line", line);
  cmg__jsonw_object_end(w);
  return cmg__json_once_frame(t);
}

/* The object {"frames": ..., "strings": ...} t writes, malloc'd; NULL when
 * the writer failed, *err its error. */
static char *
written(struct cmg__json_once *t, int *err)
{
  struct cmg__jsonw w;
  char *text;

  if (cmg__jsonw_open(&w, -1, false) != 0)
    return NULL;
  cmg__jsonw_object(&w);
  cmg__json_once_write(t, &w);
  cmg__jsonw_object_end(&w);
  *err = w.err;
  text = cmg__jsonw_take(&w);
  return text;
}

static void
test_empty(void)
{
  struct cmg__json_once t;
  int err = 1;

  is_int(cmg__json_once_init(&t), 0, "an empty table");
  char *text = written(&t, &err);
  is_str(text, "{\"frames\":[],\"strings\":[]}",
         "an empty table writes empty arrays");
  is_int(err, 0, "and does not fail the document");
  free(text);
  cmg__json_once_free(&t);
}

static void
test_frames(void)
{
  struct cmg__json_once t;
  int err = 1;

  cmg__json_once_init(&t);
  is_u64(frame(&t, "alloc_weights", 12), 0, "the first frame is 0");
  is_u64(frame(&t, "load_model", 30), 1, "the next new one 1");
  is_u64(frame(&t, "alloc_weights", 12), 0, "the same object again: 0");
  is_u64(frame(&t, "alloc_weights", 13), 2,
         "another line of one function: another frame");
  is_u64(frame(&t, "load_model", 30), 1, "a repeat keeps its number");
  is_str(cmg__jsonw_text(cmg__json_once_writer(&t)), "",
         "the writer is empty for each frame");
  char *text = written(&t, &err);
  is_str(text,
         "{\"frames\":[{\"function\":\"alloc_weights\",\"line\":12},"
         "{\"function\":\"load_model\",\"line\":30},"
         "{\"function\":\"alloc_weights\",\"line\":13}],\"strings\":[]}",
         "each frame written once, as written, by its number");
  is_int(err, 0, "without a failure");
  free(text);
  cmg__json_once_free(&t);
}

static void
test_lines(void)
{
  struct cmg__json_once t;
  char line[32];
  int err = 1;

  cmg__json_once_init(&t);
  is_u64(frame(&t, "main", 1), 0, "a frame 0");
  snprintf(line, sizeof(line), "#0 main (app.c:1)");
  is_u64(cmg__json_once_line(&t, line), 0, "and a line 0: numbered apart");
  line[1] = '9';
  is_u64(cmg__json_once_line(&t, line), 1, "another line 1");
  is_u64(cmg__json_once_line(&t, "#0 main (app.c:1)"), 0,
         "the first line again: 0, though its buffer was changed since");
  is_u64(cmg__json_once_line(&t, "say \"hi\"\\"), 2, "a line with quotes");
  is_u64(cmg__json_once_line(&t, ""), 3, "an empty line is a line");
  char *text = written(&t, &err);
  is_str(text,
         "{\"frames\":[{\"function\":\"main\",\"line\":1}],\"strings\":"
         "[\"#0 main (app.c:1)\",\"#9 main (app.c:1)\","
         "\"say \\\"hi\\\"\\\\\",\"\"]}",
         "the lines written as JSON strings, escaped, by number");
  free(text);
  cmg__json_once_free(&t);
}

static void
test_out_of_memory(void)
{
  struct cmg__json_once t;
  int err = 0;

  cmg__json_once_init(&t);
  is_u64(cmg__json_once_line(&t, "kept"), 0, "a line");
  is_u64(frame(&t, "kept", 1), 0, "a frame");
  /* A NULL line is what a failed copy gives. */
  is_u64(cmg__json_once_line(&t, NULL), 0, "a line that could not be made: 0");
  is_int(t.err, -ENOMEM, "and the table remembers");
  is_u64(cmg__json_once_line(&t, "new"), 0, "a new line after it: 0 too");
  is_u64(frame(&t, "new", 2), 0, "and a new frame");
  is_u64(t.lines.n + t.frames.n, 2, "nothing is added after it");
  char *text = written(&t, &err);
  ok(text == NULL, "the document is failed");
  is_int(err, -ENOMEM, "with the table's error");
  cmg__json_once_free(&t);

  cmg__json_once_init(&t);
  cmg__jsonw_fail(cmg__json_once_writer(&t), -ENOMEM);
  is_u64(cmg__json_once_frame(&t), 0, "a frame whose writer failed: 0");
  is_int(t.err, -ENOMEM, "and the table is failed");
  is_u64(t.frames.n, 0, "without a frame");
  cmg__json_once_free(&t);
}

int
main(void)
{
  test_empty();
  test_frames();
  test_lines();
  test_out_of_memory();
  return done_testing();
}
