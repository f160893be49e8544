/*
 * One group of the status view, worked out once from its checked copy and
 * printed as text (group_status_text.c) or as JSON (group_status_json.c).
 */
#ifndef CMG_OPS_GROUP_VIEW_H
#define CMG_OPS_GROUP_VIEW_H

#include <stdbool.h>
#include <stdio.h>

#include "core/segment.h"
#include "ops/seg_find.h"

struct cmg__jsonw;

struct cmg__group_view {
  const struct cmg__seg_entry *e;
  const struct seg *c;
  bool reg;                                 /* the registry: no group, no cap */
  struct seg_limit limits[SEG_DEVICES + 1]; /* per device, then default */
  bool shown[SEG_DEVICES];                  /* a cap, or any use, on it */
  bool alive[SEG_SLOTS];                    /* false: dead, not yet reclaimed */
  unsigned members, dead;
  bool scaled; /* the members' bytes scaled to the group's (cmg__seg_read) */
};

void cmg__group_view(const struct cmg__seg_entry *e, const struct seg *c,
                     bool scaled, struct cmg__group_view *v);

void cmg__group_print_text(FILE *f, const struct cmg__group_view *v);

/* Writes the group as a JSON object. */
void cmg__group_json(struct cmg__jsonw *w, const struct cmg__group_view *v);

/* Writes a segment that could not be read: its name, owner and why. */
void cmg__group_json_error(struct cmg__jsonw *w, const struct cmg__seg_entry *e,
                           const char *error);

#endif /* CMG_OPS_GROUP_VIEW_H */
