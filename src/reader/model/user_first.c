/*
 * The user-first rule, the one place that decides how a group's stack
 * reads in one line: the leak groups' titles, the lines of the peaks and
 * the denials, the diff's groups, the page's rows and the charts' marks
 * all print what it picks (show/one_line.c).
 *
 * Where the default view of a stack holds a frame of the user's code
 * (code.c) with a named frame of a library inside it, the line is a
 * title: the innermost frame of the user's, then the call it made, the
 * nearest named frame inside it, as pytest and Python's tracebacks point
 * at the user's line.  The interpreter's own frames between Python frames
 * are never that call.  Where the capture left frames out between the
 * two (a cut), the call the user's line made is not known: the title says
 * so, and names the nearest frame recorded inside the cut instead, so that
 * a deep stack still reads from the user's line and never from a library's
 * frame.  When the user's frame is the innermost shown (it says where
 * already), the line leads with it, Python or native (a Python program's
 * own extension, called through an installed package, is named before the
 * package's frames), then names the frames outside it that say something;
 * without a user's frame, the innermost frames that say something: the
 * Python frames of a stack that has some (the native frames between them
 * are the same for every allocation a Python program makes), the named
 * ones of a stack that has any, since "app+0x3f2b" says little at a
 * glance.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "reader/model/code.h"
#include "reader/model/index.h"
#include "reader/model/user_first.h"
#include "reader/tool.h"

static const struct cmg__index_frame *
frame_at(const struct cmg__index *ix, uint32_t stack, uint32_t k)
{
  return &ix->frames[ix->stacks[stack].frames[k]];
}

bool
cmg__user_first_is_left_out(const struct cmg__index *ix, uint32_t stack,
                            uint32_t k, bool python)
{
  return python && frame_at(ix, stack, k)->code == CMG__CODE_INTERP;
}

bool
cmg__user_first_has_python(const struct cmg__index *ix, uint32_t stack,
                           uint32_t lo, uint32_t hi)
{
  for (uint32_t k = lo; k < hi; k++)
    if (frame_at(ix, stack, k)->python)
      return true;
  return false;
}

bool
cmg__user_first_has_user_frame(const struct cmg__index *ix, uint32_t stack)
{
  uint32_t lo, hi;

  if (stack == CMG__TOOL_NONE)
    return false;
  cmg__index_stack_range(ix, stack, false, &lo, &hi);
  for (uint32_t k = lo; k < hi; k++)
    if (frame_at(ix, stack, k)->code == CMG__CODE_USER)
      return true;
  return false;
}

/* The title of the default view into *h; false when it has none. */
static bool
title(const struct cmg__index *ix, uint32_t stack, struct cmg__user_first *h)
{
  uint32_t lo, hi, u, call = UINT32_MAX;
  bool cut = false;

  cmg__index_stack_range(ix, stack, false, &lo, &hi);
  bool python = cmg__user_first_has_python(ix, stack, lo, hi);
  for (u = lo; u < hi && frame_at(ix, stack, u)->code != CMG__CODE_USER; u++) {
    const struct cmg__index_frame *fr = frame_at(ix, stack, u);

    if (fr->cut != 0) {
      cut = true;
    } else if (!cmg__user_first_is_left_out(ix, stack, u, python) &&
               fr->function != NULL) {
      call = u;
      cut = false;
    }
  }
  if (u == hi || call == UINT32_MAX)
    return false;
  h->kind = CMG__USER_FIRST_TITLE;
  h->user = ix->stacks[stack].frames[u];
  h->call = ix->stacks[stack].frames[call];
  h->cut = cut;
  return true;
}

/* The innermost named frame of the user's code in [lo, hi), or hi. */
static uint32_t
first_user(const struct cmg__index *ix, uint32_t stack, uint32_t lo,
           uint32_t hi)
{
  while (lo < hi && (frame_at(ix, stack, lo)->code != CMG__CODE_USER ||
                     frame_at(ix, stack, lo)->function == NULL))
    lo++;
  return lo;
}

/* The innermost frames that say something, of the shown range: from the
 * user's innermost frame on where the default view has one, that frame
 * first whatever it is (a native extension of a Python program too). */
static void
frames(const struct cmg__index *ix, uint32_t stack, bool all_frames,
       struct cmg__user_first *h)
{
  uint32_t lo, hi, named = 0, python = 0;

  h->kind = CMG__USER_FIRST_FRAMES;
  cmg__index_stack_range(ix, stack, all_frames, &lo, &hi);
  uint32_t u = all_frames ? hi : first_user(ix, stack, lo, hi);
  if (u < hi) {
    h->frames[h->n++] = ix->stacks[stack].frames[u];
    lo = u + 1;
  }
  for (uint32_t k = lo; k < hi; k++) {
    named += frame_at(ix, stack, k)->function != NULL;
    python += frame_at(ix, stack, k)->python;
  }
  for (uint32_t k = lo; k < hi; k++) {
    const struct cmg__index_frame *fr = frame_at(ix, stack, k);

    if ((python > 0 && !fr->python) || (named > 0 && fr->function == NULL))
      continue;
    if (h->n == CMG__USER_FIRST_MAX) {
      h->more = true;
      break;
    }
    h->frames[h->n++] = ix->stacks[stack].frames[k];
  }
}

void
cmg__user_first_headline(const struct cmg__index *ix, uint32_t stack,
                         bool all_frames, struct cmg__user_first *h)
{
  memset(h, 0, sizeof(*h));
  if (stack == CMG__TOOL_NONE)
    return;
  if (!all_frames && title(ix, stack, h))
    return;
  frames(ix, stack, all_frames, h);
}
