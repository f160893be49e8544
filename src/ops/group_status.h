/*
 * The operator's view of a user's groups (group_status.c), for cumemguard
 * status.
 */
#ifndef CMG_OPS_GROUP_STATUS_H
#define CMG_OPS_GROUP_STATUS_H

#include <stdbool.h>
#include <stddef.h>

enum cmg__status_format {
  CMG__STATUS_TEXT,
  CMG__STATUS_JSON,
  CMG__STATUS_PROMETHEUS,
};

/* The operator's view of one group of this user (name), or of every
 * segment this user can see (NULL: its own; root: every user's and every
 * container's), as text, JSON or Prometheus metrics.  Returns 0 with a
 * malloc'd *text_out of *len_out bytes, or -errno with one line in err (a
 * segment that cannot be read is a line of the view, not an error, unless
 * it was asked for by name). */
int cmg__group_status(const char *name, enum cmg__status_format format,
                      char **text_out, size_t *len_out, char *err,
                      size_t errlen);

#endif /* CMG_OPS_GROUP_STATUS_H */
