/*
 * Which earlier string equals this one (seen.c): the summary folds groups
 * that read the same into one, and comparing each group with every one
 * folded so far is quadratic (10^8 comparisons for 10^4 stacks).
 */
#ifndef CMG_READER_SEEN_H
#define CMG_READER_SEEN_H

#include <search.h>
#include <stdbool.h>
#include <stddef.h>

struct cmg__tool_seen {
  struct hsearch_data h;
  char **keys; /* the table's own copies, freed with it */
  size_t n, cap;
  bool ok;
};

/* Room for n strings; false when out of memory. */
bool cmg__tool_seen_init(struct cmg__tool_seen *s, size_t n);

/* The index text was first entered with, or `next` when it is new.  -1
 * when out of memory or past the room asked for. */
long cmg__tool_seen_index(struct cmg__tool_seen *s, const char *text,
                          size_t next);

void cmg__tool_seen_free(struct cmg__tool_seen *s);

#endif /* CMG_READER_SEEN_H */
