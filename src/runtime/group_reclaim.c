/*
 * Taking back what dead members held.  A member that dies, however it
 * dies, keeps its slot until another finds it gone (kill(pid, 0) fails, it
 * is a zombie, or its start time differs) and reclaims it: a
 * compare-and-swap of the owner word lets exactly one process do it, and
 * every counter of the slot is taken with an exchange before it is
 * subtracted from the group's, so a reclaimer killed half way leaves
 * nothing to be given back twice.  group.c decides when to look.
 */
#include "config.h"

#include <stdatomic.h>
#include <string.h>

#include "runtime/group_reclaim.h"
#include "core/log.h"

static _Atomic bool said_drift;

uint64_t
cmg__group_clock_ns(clockid_t clock)
{
  struct timespec ts;

  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* Whether the member of a claimed slot is gone.  A slot of another pid
 * namespace cannot be judged from here, so it is left alone; a slot with
 * our own pid that is not ours is from before an exec. */
static bool
is_gone(struct seg_slot *sl, pid_t pid, const struct cmg__member *m)
{
  uint64_t slot_ns = atomic_load_explicit(&sl->pidns, memory_order_relaxed);

  if (slot_ns != 0 && m->pidns != 0 && slot_ns != m->pidns)
    return false;
  if (pid == m->pid)
    return true;
  return cmg__seg_is_dead(
      pid, atomic_load_explicit(&sl->start, memory_order_relaxed));
}

void
cmg__group_sub(_Atomic uint64_t *c, uint64_t bytes, const char *group)
{
  uint64_t cur = atomic_load_explicit(c, memory_order_relaxed), next;

  do {
    next = cur >= bytes ? cur - bytes : 0;
  } while (!atomic_compare_exchange_weak_explicit(
      c, &cur, next, memory_order_seq_cst, memory_order_relaxed));
  if (cur < bytes && group != NULL && !atomic_exchange(&said_drift, true))
    cmg__log("group=%s: a device's group usage was below what a member "
             "gave back; counting it from 0",
             group);
}

bool
cmg__group_empty_slot(struct seg *s, struct seg_slot *sl,
                      const struct cmg__member *m)
{
  bool gave = false;

  for (int d = 0; d < SEG_DEVICES; d++) {
    uint64_t b = atomic_exchange(&sl->dev[d].used, 0);
    /* The registry keeps no group counters: its slots are the count. */
    if (b != 0 && !m->registry) {
      cmg__group_sub(&s->dev[d].used, b, m->group);
      gave = true;
    }
    atomic_store_explicit(&sl->dev[d].peak, 0, memory_order_relaxed);
    atomic_store_explicit(&sl->dev[d].context, 0, memory_order_relaxed);
  }
  cmg__seg_empty_held(sl);
  atomic_store_explicit(&sl->denials, 0, memory_order_relaxed);
  uint32_t waiting = atomic_exchange(&sl->waiting, 0);
  if (waiting != 0)
    cmg__seg_sub32(&s->h.waiters, waiting);
  atomic_store_explicit(&sl->start, 0, memory_order_relaxed);
  atomic_store_explicit(&sl->pidns, 0, memory_order_relaxed);
  memset(sl->comm, 0, sizeof(sl->comm));
  atomic_store_explicit(&sl->owner, SLOT_FREE, memory_order_release);
  return gave;
}

void
cmg__group_scan(struct seg *s, const struct cmg__member *m)
{
  uint64_t me = (uint64_t)(uint32_t)m->pid << 32 | SLOT_RECLAIMING;
  bool gave = false;

  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    struct seg_slot *sl = &s->slot[i];
    uint64_t w = atomic_load_explicit(&sl->owner, memory_order_acquire);
    pid_t pid = (pid_t)(w >> 32);

    if (sl == m->slot)
      continue;
    if ((uint32_t)w == SLOT_CLAIMED) {
      if (!is_gone(sl, pid, m))
        continue;
    } else if ((uint32_t)w == SLOT_RECLAIMING) {
      /* Its reclaimer died half way.  Finishing is safe: each counter
       * was taken with an exchange, so none is given back twice. */
      if (pid == m->pid || !cmg__seg_is_dead(pid, 0))
        continue;
    } else {
      continue;
    }
    if (atomic_compare_exchange_strong(&sl->owner, &w, me))
      gave |= cmg__group_empty_slot(s, sl, m);
  }
  if (gave)
    cmg__seg_wake_all(s);
}

bool
cmg__group_maybe_scan(struct seg *s, const struct cmg__member *m,
                      uint64_t period)
{
  uint64_t now = cmg__group_clock_ns(CLOCK_MONOTONIC_COARSE);
  uint64_t last = atomic_load_explicit(&s->h.scan_ns, memory_order_relaxed);

  /* A stamp from the future (another time namespace) counts as old. */
  if (last <= now && now - last < period)
    return false;
  if (!atomic_compare_exchange_strong_explicit(&s->h.scan_ns, &last, now,
                                               memory_order_relaxed,
                                               memory_order_relaxed))
    return false;
  cmg__group_scan(s, m);
  return true;
}
