/*
 * Every one-line view of a group's stack is printed here, from the frames
 * the user-first rule picked (model/user_first.c), so that a group reads
 * the same in its title, at a peak or a denial, in the diff, on the page
 * and in the charts' marks.  A title names a Python file from its package
 * down ("torch/nn/modules/linear.py"), as people know a library's file;
 * the innermost frames are named by their short labels (frame_name.c).
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "reader/model/code.h"
#include "reader/model/index.h"
#include "reader/model/user_first.h"
#include "reader/show/frame_name.h"
#include "reader/show/one_line.h"

/* A frame as a title names it: a Python file from its package down. */
static void
put_title_frame(FILE *f, const struct cmg__index *ix, uint32_t frame)
{
  const struct cmg__index_frame *fr = &ix->frames[frame];

  if (!fr->python || fr->file == NULL) {
    cmg__frame_name_put_label(f, ix, frame);
    return;
  }
  fprintf(f, "%s (%s", fr->function != NULL ? fr->function : "?",
          cmg__code_short_path(fr->file));
  if (fr->line > 0)
    fprintf(f, ":%" PRIu64, fr->line);
  fputc(')', f);
}

static void
put_title(FILE *f, const struct cmg__index *ix, const struct cmg__user_first *h)
{
  put_title_frame(f, ix, h->user);
  fputs(h->cut ? " > ... > " : " > ", f);
  put_title_frame(f, ix, h->call);
}

void
cmg__one_line_put(FILE *f, const struct cmg__index *ix, uint32_t stack,
                  bool all_frames)
{
  struct cmg__user_first h;

  cmg__user_first_headline(ix, stack, all_frames, &h);
  if (h.kind == CMG__USER_FIRST_NONE) {
    fputs("(no stack)", f);
    return;
  }
  if (h.kind == CMG__USER_FIRST_TITLE) {
    put_title(f, ix, &h);
    return;
  }
  for (uint32_t i = 0; i < h.n; i++) {
    if (i > 0)
      fputs(" < ", f);
    cmg__frame_name_put_label(f, ix, h.frames[i]);
  }
  if (h.more)
    fputs(" < ...", f);
}

char *
cmg__one_line_text(const struct cmg__index *ix, uint32_t stack, bool all_frames)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);

  if (f == NULL)
    return NULL;
  cmg__one_line_put(f, ix, stack, all_frames);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

bool
cmg__one_line_title(FILE *f, const char *prefix, const struct cmg__index *ix,
                    uint32_t stack)
{
  struct cmg__user_first h;

  cmg__user_first_headline(ix, stack, false, &h);
  if (h.kind != CMG__USER_FIRST_TITLE)
    return false;
  fputs(prefix, f);
  put_title(f, ix, &h);
  return true;
}
