/*
 * raw.c: what the commands that draw time (timeline, pprof, plot) share:
 * reports read as they were written, without a view; the output file,
 * created only once every report was read; names of frames.
 */
#ifndef CMG_READER_RAW_H
#define CMG_READER_RAW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cmg__model_report;

/* Reads n files with cmg__read_report_with(what) into a new array *out
 * (free with cmg__tool_raw_free).  Returns 0, or -1 after saying which file
 * is wrong and how. */
int cmg__tool_raw_read(char *const *files, int n, unsigned what,
                       struct cmg__model_report **out);
void cmg__tool_raw_free(struct cmg__model_report *r, int n);

/* Says "FILE: no timeline ..." and returns -1 unless every report has
 * one. */
int cmg__tool_raw_need_timeline(const struct cmg__model_report *r, int n);

/* output, or stdout for NULL and "-"; NULL after saying why. */
FILE *cmg__tool_raw_create(const char *output);

/* Closes what cmg__tool_raw_create gave; the exit status from rc (0 or
 * not) and whether everything was written, said when not. */
int cmg__tool_raw_close(FILE *f, const char *output, int rc);

/* "function" or "module+0xoffset" or "0xaddress" for frame index f. */
const char *cmg__tool_raw_frame(const struct cmg__model_report *r, uint32_t f,
                                char *buf, size_t len);

/* Up to `depth` frame names of stack index s, innermost first, joined by
 * " < " into buf ("" for no stack). */
const char *cmg__tool_raw_stack(const struct cmg__model_report *r, uint32_t s,
                                unsigned depth, char *buf, size_t len);

/* The limit of device `device` in r, or 0 for none. */
uint64_t cmg__tool_raw_limit(const struct cmg__model_report *r, int device);

#endif /* CMG_READER_RAW_H */
