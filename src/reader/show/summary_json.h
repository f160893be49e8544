/*
 * summary_json.c: the summary of a view as a JSON object, and the frames of
 * a stack as a JSON array.
 */
#ifndef CMG_READER_SHOW_SUMMARY_JSON_H
#define CMG_READER_SHOW_SUMMARY_JSON_H

#include <stdint.h>

struct cmg__index;
struct cmg__tool_opts;
struct cmg__view;

/* The JSON object of one summary (see cumemguard-report(1)); NULL when out
 * of memory.  The cJSON item is returned as void * so that only the files
 * that print JSON include cJSON.h. */
void *cmg__summary_json_of(const struct cmg__view *v,
                           const struct cmg__tool_opts *o);

/* Adds to JSON object obj the "frames" of a stack, and with o->stack_text
 * its "title" (or null) and "lines" as the text summary prints them. */
void cmg__summary_json_stack(void *obj, const struct cmg__index *ix,
                             uint32_t stack, const struct cmg__tool_opts *o);

/* JSON array of frames of a stack (all of them, each marked "hidden"). */
void *cmg__summary_json_frames(const struct cmg__index *ix, uint32_t stack);

#endif /* CMG_READER_SHOW_SUMMARY_JSON_H */
