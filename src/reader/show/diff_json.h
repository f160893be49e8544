/*
 * diff_json.c: the difference of two views as a JSON object, as diff
 * --json writes it and the html page of BASE NEW embeds it.
 */
#ifndef CMG_READER_SHOW_DIFF_JSON_H
#define CMG_READER_SHOW_DIFF_JSON_H

#include <stddef.h>

struct cmg__delta;
struct cmg__jsonw;
struct cmg__tool_opts;
struct cmg__view;

/* Writes the JSON object of the changes c[0..n) of NEW - BASE
 * (model/delta.h), two views over one index (see cumemguard-report(1)), as
 * the next value of w. */
void cmg__diff_json_write(struct cmg__jsonw *w, const struct cmg__view *base,
                          const struct cmg__view *now,
                          const struct cmg__delta *c, size_t n,
                          const struct cmg__tool_opts *o);

#endif /* CMG_READER_SHOW_DIFF_JSON_H */
