/*
 * one_line.c: a group's stack in one line, as the user-first rule
 * (model/user_first.c) picks its frames: the title, or the innermost
 * frames.
 */
#ifndef CMG_READER_SHOW_ONE_LINE_H
#define CMG_READER_SHOW_ONE_LINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct cmg__index;

/* Prints the one-line view of a stack (an interned id, or
 * CMG__TOOL_NONE): "train_step (train.py:42) > Linear.forward
 * (torch/nn/modules/linear.py:134)", "train_step (train.py:42) > ... >
 * dispatch (pkg/__init__.py:4)" where frames were not recorded between,
 * "alloc_weights < load_model < main < ...", or "(no stack)". */
void cmg__one_line_put(FILE *f, const struct cmg__index *ix, uint32_t stack,
                       bool all_frames);

/* The same in a malloc'd string; NULL when out of memory. */
char *cmg__one_line_text(const struct cmg__index *ix, uint32_t stack,
                         bool all_frames);

/* Prints prefix and the one-line view when it is a title, the line a leak
 * group's numbered frames are headed with; false, printing nothing, when
 * it is not (the group's first shown frame says where already). */
bool cmg__one_line_title(FILE *f, const char *prefix,
                         const struct cmg__index *ix, uint32_t stack);

#endif /* CMG_READER_SHOW_ONE_LINE_H */
