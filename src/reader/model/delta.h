/*
 * delta.c: what grew and what shrank between two views over one index,
 * group by group, for diff and for the html page of BASE NEW.
 */
#ifndef CMG_READER_MODEL_DELTA_H
#define CMG_READER_MODEL_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/model/leak_class.h"

struct cmg__view;
struct cmg__view_device;

/* One key (stack, device ordinal, API, kind) and its counts on each side. */
struct cmg__delta {
  uint32_t stack;
  int device; /* ordinal, -1 for none */
  const char *api, *kind;
  enum cmg__leak_class class; /* graph, context, or leaked or other */
  uint64_t base_count, base_bytes, new_count, new_bytes;
  int64_t delta_count, delta_bytes;
};

/* What a group did: the order they are listed in. */
enum cmg__delta_what { CMG__DELTA_GREW, CMG__DELTA_HELD, CMG__DELTA_SHRANK };

enum cmg__delta_what cmg__delta_what(const struct cmg__delta *c);

/* Both views' unsuppressed groups, merged by key and sorted by change:
 * what grew, then what is held unchanged, then what shrank.  A malloc'd
 * array of *n_out, or NULL when out of memory. */
struct cmg__delta *cmg__delta_of(const struct cmg__view *base,
                                 const struct cmg__view *now, size_t *n_out);

/* Whether --min-bytes shows a change: by its size, or by what is held. */
bool cmg__delta_shown(const struct cmg__delta *c, uint64_t min_bytes);

/* The device of ordinal `ordinal` in v, or NULL. */
const struct cmg__view_device *cmg__delta_device(const struct cmg__view *v,
                                                 int ordinal);

#endif /* CMG_READER_MODEL_DELTA_H */
