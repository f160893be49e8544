/*
 * frame_name.c: how a frame is named when printed, short or in full, and
 * which modules keep the report's names.
 */
#ifndef CMG_READER_SHOW_FRAME_NAME_H
#define CMG_READER_SHOW_FRAME_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cmg__index;
struct cmg__model_report;

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

/* Says which modules were not read on this machine, and why, so that a
 * frame named only by its module and offset is not taken for our failing:
 * one paragraph, nothing when every module was read. */
void cmg__frame_name_put_unread(FILE *f, const struct cmg__index *ix);

/* A frame of a report as it was written, without an index: "function" or
 * "module+0xoffset" or "0xaddress" for frame index f, into buf. */
const char *cmg__frame_name_raw(const struct cmg__model_report *r, uint32_t f,
                                char *buf, size_t len);

/* Up to `depth` such names of stack index s, innermost first, joined by
 * " < " into buf ("" for no stack). */
const char *cmg__frame_name_raw_stack(const struct cmg__model_report *r,
                                      uint32_t s, unsigned depth, char *buf,
                                      size_t len);

#endif /* CMG_READER_SHOW_FRAME_NAME_H */
