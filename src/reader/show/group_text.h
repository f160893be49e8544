/*
 * group_text.c: how a group's stack reads in the text outputs: where its
 * memory is, its title (one_line.c's), the threads it was made on, and
 * its numbered frames, with the runs of library frames folded.
 */
#ifndef CMG_READER_SHOW_GROUP_TEXT_H
#define CMG_READER_SHOW_GROUP_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cmg__index;
struct cmg__view_leak;

/* Where a group's memory is, for its header line: "device 0", "array,
 * device 1", "pinned host memory", ...; ordinal -1 for none. */
const char *cmg__group_text_where(const char *kind, int ordinal, char *buf,
                                  size_t len);

/* Prints the numbered frames of a stack, four spaces in.  By default the
 * interpreter's frames of a stack with Python frames are left out, and
 * where the user's code is in the stack, each run of library frames is
 * folded into one line but for the frame the user's code called. */
void cmg__group_text_frames(FILE *f, const struct cmg__index *ix,
                            uint32_t stack, bool all_frames);

/* A leak group's stack as the summary prints it under the group's first
 * line: the title, or, where no frame is the user's, the threads it was
 * made on, then the numbered frames. */
void cmg__group_text_print(FILE *f, const struct cmg__index *ix,
                           const struct cmg__view_leak *l, bool all_frames);

#endif /* CMG_READER_SHOW_GROUP_TEXT_H */
