/*
 * frame_name.c: how an interned frame is named when printed, short or in
 * full.
 */
#ifndef CMG_READER_SHOW_FRAME_NAME_H
#define CMG_READER_SHOW_FRAME_NAME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct cmg__index;

/* Prints a frame's short name: its function, else "module+0xOFFSET", else
 * its address; a Python frame's is "function (file.py:LINE)", with the
 * file's base name. */
void cmg__frame_name_put_label(FILE *f, const struct cmg__index *ix,
                               uint32_t frame);

/* The same in a malloc'd string; NULL when out of memory. */
char *cmg__frame_name_label(const struct cmg__index *ix, uint32_t frame);

/* Prints a frame as the numbered frames show it: "function+0x12
 * (module+0x1a2b)"; with a source line "function (file.cc:LINE)", and with
 * all (--all-frames) the full name, path and place, "function(int)+0x12
 * (/path/file.cc:LINE, module+0x1a2b)"; ", inlined" when the call was
 * inlined; for a Python frame "function (/path/file.py:LINE)". */
void cmg__frame_name_put_frame(FILE *f, const struct cmg__index *ix,
                               uint32_t frame, bool all);

#endif /* CMG_READER_SHOW_FRAME_NAME_H */
