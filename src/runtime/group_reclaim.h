/*
 * Finding the members of a group (or of the registry) that are gone and
 * taking their slots back, and giving bytes back to a shared counter
 * without passing below zero (group_reclaim.c).
 */
#ifndef CMG_RUNTIME_GROUP_RECLAIM_H
#define CMG_RUNTIME_GROUP_RECLAIM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "core/segment.h"

/* The process looking: the slot it holds (NULL before it has one), its
 * pid and pid namespace, whether the segment is the registry (no group
 * counters), and the group's name for messages. */
struct cmg__member {
  struct seg_slot *slot;
  pid_t pid;
  uint64_t pidns;
  bool registry;
  const char *group;
};

uint64_t cmg__group_clock_ns(clockid_t clock);

/* Subtracts bytes from a counter, stopping at 0.  For a group counter
 * (group not NULL), stopping is said once: a member gave back more than
 * the group counted. */
void cmg__group_sub(_Atomic uint64_t *c, uint64_t bytes, const char *group);

/* Gives back everything slot sl holds and frees it; the slot is the
 * caller's (its own, or one it won the right to reclaim).  True if it
 * held bytes. */
bool cmg__group_empty_slot(struct seg *s, struct seg_slot *sl,
                           const struct cmg__member *m);

/* Reclaims the slots of dead members; wakes the waiters if that gave
 * bytes back. */
void cmg__group_scan(struct seg *s, const struct cmg__member *m);

/* Scans if no process of the group did in the last `period` ns: true if
 * this call did. */
bool cmg__group_maybe_scan(struct seg *s, const struct cmg__member *m,
                           uint64_t period);

#endif /* CMG_RUNTIME_GROUP_RECLAIM_H */
