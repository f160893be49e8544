/*
 * The operator's view of a user's groups (group_status.c), for cumemguard
 * status.
 */
#ifndef CMG_CORE_GROUP_STATUS_H
#define CMG_CORE_GROUP_STATUS_H

#include <stdbool.h>
#include <stddef.h>

/* Writes the operator's view of one group (name) or of all the user's
 * groups (NULL) to fd, as text or JSON; 0, or -errno with one line in err. */
int cmg__group_status(const char *name, bool json, int fd, char *err,
                      size_t errlen);

#endif /* CMG_CORE_GROUP_STATUS_H */
