/*
 * user_first.c: a stack read from the user's own code first: which frames
 * a stack's default view leaves out, whether it holds the user's code,
 * and the frames its one-line view names (its headline).
 */
#ifndef CMG_READER_MODEL_USER_FIRST_H
#define CMG_READER_MODEL_USER_FIRST_H

#include <stdbool.h>
#include <stdint.h>

struct cmg__index;

/* The most frames a headline of the FRAMES kind names. */
#define CMG__USER_FIRST_MAX 3

enum cmg__user_first_kind {
  CMG__USER_FIRST_NONE,   /* no stack was recorded */
  CMG__USER_FIRST_TITLE,  /* the user's frame, then the call it made */
  CMG__USER_FIRST_FRAMES, /* the innermost frames that say something */
};

/* What a stack's one-line view names, as frame ids of the index. */
struct cmg__user_first {
  enum cmg__user_first_kind kind;
  /* TITLE: the innermost frame of the user's code, the call it made, and
   * whether frames the capture left out lie between the two (the call is
   * then the nearest that was recorded). */
  uint32_t user, call;
  bool cut;
  /* FRAMES: n frames, innermost first, and whether others follow. */
  uint32_t n, frames[CMG__USER_FIRST_MAX];
  bool more;
};

/* The headline of a stack (an interned id, or CMG__TOOL_NONE), the one
 * rule for every one-line view of a group: a TITLE where the default
 * view holds the user's code below a library's named frame; else FRAMES
 * led by the user's innermost named frame, Python or native, where there
 * is one, or the innermost named frames; with all_frames, FRAMES of the
 * whole stack. */
void cmg__user_first_headline(const struct cmg__index *ix, uint32_t stack,
                              bool all_frames, struct cmg__user_first *h);

/* Whether frame k of the stack is left out of the default view: the
 * interpreter's own frames, when the stack has Python frames (python). */
bool cmg__user_first_is_left_out(const struct cmg__index *ix, uint32_t stack,
                                 uint32_t k, bool python);

/* Whether frames [lo, hi) of the stack hold a Python frame. */
bool cmg__user_first_has_python(const struct cmg__index *ix, uint32_t stack,
                                uint32_t lo, uint32_t hi);

/* Whether the stack's default view holds a frame of the user's code. */
bool cmg__user_first_has_user_frame(const struct cmg__index *ix,
                                    uint32_t stack);

#endif /* CMG_READER_MODEL_USER_FIRST_H */
