/*
 * Finding the members of a group (or of the registry) that are gone,
 * taking their slots back and their bytes out of the group's counters,
 * and giving bytes back to a shared counter without passing below zero
 * (group_reclaim.c).
 */
#ifndef CMG_RUNTIME_GROUP_GROUP_RECLAIM_H
#define CMG_RUNTIME_GROUP_GROUP_RECLAIM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "core/segment.h"

/* The process looking: the slot it holds (NULL before it has one), its
 * pid and pid namespace, whether the segment is the registry (no group
 * counters), the group's name for messages; the segment's descriptor to
 * lock (-1 for none), whether the caller holds that lock already, and
 * whether the process is leaving (its own slot is then counted out). */
struct cmg__member {
  struct seg_slot *slot;
  pid_t pid;
  uint64_t pidns;
  bool registry;
  const char *group;
  int fd; /* checked to be the file (dev, ino) before it is locked */
  dev_t dev;
  ino_t ino;
  bool locked;
  bool leaving;
};

uint64_t cmg__group_clock_ns(clockid_t clock);

/* Whether the calling thread may now use the segment's lock for the
 * process (no other thread of it does); cmg__group_unhold gives it back.
 * A forked child starts with it given back. */
bool cmg__group_hold(void);
void cmg__group_unhold(void);

/* Subtracts bytes from a counter, stopping at 0.  For a group counter
 * (group not NULL), stopping is said once: a member gave back more than
 * the group counted. */
void cmg__group_sub(_Atomic uint64_t *c, uint64_t bytes, const char *group);

/* Empties slot sl, which the caller won the right to free (the group's
 * counters were set without it), and frees it. */
void cmg__group_free_slot(struct seg *s, struct seg_slot *sl);

/* Takes back the slots of members that are gone: in a group, under the
 * segment's lock, each device's counter is set to what the members left
 * hold, read while none of them was changing it, so that the bytes of a
 * member killed half way through a change are given back exactly; then
 * their slots are freed.  Wakes the waiters if that gave bytes back. */
void cmg__group_scan(struct seg *s, const struct cmg__member *m);

/* Scans if no process of the group did in the last `period` ns: true if
 * this call did. */
bool cmg__group_maybe_scan(struct seg *s, const struct cmg__member *m,
                           uint64_t period);

#endif /* CMG_RUNTIME_GROUP_GROUP_RECLAIM_H */
