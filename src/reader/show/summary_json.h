/*
 * summary_json.c: the summary of a view as a JSON object, and the frames of
 * a stack as JSON members, written as they are made.
 */
#ifndef CMG_READER_SHOW_SUMMARY_JSON_H
#define CMG_READER_SHOW_SUMMARY_JSON_H

#include <stdint.h>

struct cmg__index;
struct cmg__jsonw;
struct cmg__tool_opts;
struct cmg__view;

/* Writes the JSON object of one summary (see cumemguard-report(1)) as the
 * next value of w. */
void cmg__summary_json_write(struct cmg__jsonw *w, const struct cmg__view *v,
                             const struct cmg__tool_opts *o);

/* Writes into the object open in w the "frames" of a stack (all of them,
 * each marked "hidden"), and with o->stack_text its "title" (or null),
 * "line" and "lines" as the text summary prints them.  With o->once, each
 * frame and line is its number in that table, and "shown" follows: the
 * range [first, end) of the frames the default view shows. */
void cmg__summary_json_stack(struct cmg__jsonw *w, const struct cmg__index *ix,
                             uint32_t stack, const struct cmg__tool_opts *o);

#endif /* CMG_READER_SHOW_SUMMARY_JSON_H */
