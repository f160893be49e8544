/*
 * Joining a group of processes that share a cap, or the user's registry,
 * and leaving it (group_join.c).
 */
#ifndef CMG_RUNTIME_GROUP_GROUP_JOIN_H
#define CMG_RUNTIME_GROUP_GROUP_JOIN_H

#include <stddef.h>

#include "core/conf.h"

/* Joins the group cfg->group names, or without one the user's registry
 * (no cap; never an error): opens or creates the user's shared segment for
 * it and takes a slot.  Returns 0, or a negative errno with one line in err
 * (no prefix): the caller fails closed.  A lock held past its bound is no
 * error: the process's reservations try again (group.h). */
int cmg__group_join(const struct cmg__config *cfg, char *err, size_t errlen);

/* A forked child leaves its parent's slot and takes its own on first use. */
void cmg__group_after_fork(void);

/* At exit: gives back what this process holds and frees its slot. */
void cmg__group_leave(void);

/* A forked child's first use: a slot of its own, through its own open
 * file; and a joiner's next try when the lock was held too long.  0,
 * -ETIMEDOUT when the lock was held too long again (why in the group's
 * state, nothing said), or another negative errno after one line (a
 * group; the registry says nothing). */
int cmg__group_rejoin(void);

#endif /* CMG_RUNTIME_GROUP_GROUP_JOIN_H */
