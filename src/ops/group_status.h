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
 * it was asked for by name).  A group asked for by name that cannot be
 * read is an error, for which JSON still gives *text_out: the document,
 * with no group while there is none (-ENOENT, or -EINPROGRESS while its
 * first member sets it up), else with the group as {"name", "uid",
 * "error"}; other formats give none. */
int cmg__group_status(const char *name, enum cmg__status_format format,
                      char **text_out, size_t *len_out, char *err,
                      size_t errlen);

#endif /* CMG_OPS_GROUP_STATUS_H */
