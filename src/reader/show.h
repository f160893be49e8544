/*
 * show.c: what the printers of leak groups share: the listing options,
 * which groups they list, the totals, the numbered frames, plurals.
 */
#ifndef CMG_READER_SHOW_H
#define CMG_READER_SHOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cmg__index;
struct cmg__view_leak;
struct cmg__supp;
struct cmg__view;

struct cmg__tool_opts {
  size_t top; /* leak groups and composition lines; 0 = all */
  uint64_t min_bytes;
  bool all_frames;
  bool json;
  bool stack_text; /* JSON groups carry the text's title and lines */
  const struct cmg__supp *supp;
};

/* Says which modules were not read on this machine, and why, so that a
 * frame named only by its module and offset is not taken for our failing:
 * one paragraph, nothing when every module was read. */
void cmg__tool_print_unread(FILE *f, const struct cmg__index *ix);

/* "train_step (train.py:42) > Linear.forward (torch/nn/modules/linear.py:
 * 134)": the innermost frame of the user's code in stack and the library
 * call it made, as a title after prefix; false, printing nothing, when the stack's
 * first shown frame is the user's (it says it already) or none is. */
bool cmg__tool_put_title(FILE *f, const char *prefix,
                         const struct cmg__index *ix, uint32_t stack);

/* Whether the stack's default view holds a frame of the user's code. */
bool cmg__tool_has_user_frame(const struct cmg__index *ix, uint32_t stack);

/* Prints the numbered frames of a stack, four spaces in.  By default the
 * interpreter's frames of a stack with Python frames are left out, and
 * where the user's code is in the stack, each run of library frames is
 * folded into one line but for the frame the user's code called. */
void cmg__tool_print_frames(FILE *f, const struct cmg__index *ix,
                            uint32_t stack, bool all_frames);

/* A leak group's stack as the summary prints it under the group's first
 * line: the title, or, where no frame is the user's, the threads it was
 * made on, then the numbered frames. */
void cmg__tool_print_group(FILE *f, const struct cmg__index *ix,
                           const struct cmg__view_leak *l, bool all_frames);

/* "1 allocation" / "3 allocations". */
const char *cmg__tool_plural(uint64_t n, const char *one, const char *many);

#endif /* CMG_READER_SHOW_H */
