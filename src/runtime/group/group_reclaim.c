/*
 * Taking back what gone members held.  A member that dies, however it
 * dies, keeps its slot until another finds it gone (kill(pid, 0) fails, it
 * is a zombie, or its start time differs) and reclaims it; a member that
 * leaves marks its slot gone and gives its bytes back the same way.
 * group.c decides when to look.
 *
 * A member's slot cannot tell how much of a change it was killed in the
 * middle of had reached the group's counter: its thread puts the bytes in
 * its lane before it reserves them in the group (and takes them out after
 * giving them back), so its lane holds them either way.  What the gone
 * members hold is therefore never read from their slots.  The counter of
 * each device is set to what the members left hold instead, read at a
 * moment when none of them was changing its bytes: every lane's seq even
 * and the same before and after the group's counters are read, and no
 * change of a thread without a lane running (segment.h).  Their changes
 * go on meanwhile, each moving the counter and its member's bytes alike,
 * so the difference, what the gone held, is taken off the counter
 * whenever it is.  A reclaimer killed after that and before freeing the
 * slots leaves nothing to take off twice: the next one finds no
 * difference.  Recounts of one group are one at a time: under the
 * segment's lock (flock, dropped by the kernel when its holder dies), and
 * a flag within the process, whose threads share the lock's open file
 * (cmg__group_hold, which naming devices takes too).
 * A recount that never finds the members still (a member stopped half
 * way through a change) is tried again at the next scan.
 *
 * The registry keeps no group counters: its gone members' slots are
 * freed, nothing else.  A slot is freed only once its process is gone,
 * with every count emptied, so a slot claimed again starts at zero.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "runtime/group/group_reclaim.h"
#include "runtime/group/group_segment.h"
#include "core/log.h"

/* A recount reads the members this many times, 20 us apart, before it
 * leaves them to the next scan. */
#define RECOUNT_TRIES 500
#define RECOUNT_PAUSE_NS 20000

static _Atomic bool said_drift;
/* A thread of the process works under the segment's lock (its threads
 * share the lock's open file, so the lock alone does not keep them
 * apart). */
static _Atomic bool holding;

bool
cmg__group_hold(void)
{
  return !atomic_exchange(&holding, true);
}

void
cmg__group_unhold(void)
{
  atomic_store(&holding, false);
}

uint64_t
cmg__group_clock_ns(clockid_t clock)
{
  struct timespec ts;

  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* Whether the member of a claimed slot is dead.  A slot of another pid
 * namespace cannot be judged from here, so it is left alone; a slot with
 * our own pid that is not ours is from before an exec. */
static bool
is_dead(struct seg_slot *sl, pid_t pid, const struct cmg__member *m)
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

void
cmg__group_free_slot(struct seg *s, struct seg_slot *sl)
{
  for (int d = 0; d < SEG_DEVICES; d++) {
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
  atomic_store_explicit(&sl->gone, 0, memory_order_relaxed);
  atomic_store_explicit(&sl->owner, SLOT_FREE, memory_order_release);
}

/* Which slots count for nothing (out[]: a dead member's, one whose
 * process left, ours when leaving) and which of those may be freed
 * (dead[]: their process is gone).  Returns how many count for nothing,
 * or -1 when another process is freeing slots right now. */
static int
find_gone(struct seg *s, const struct cmg__member *m, bool out[SEG_SLOTS],
          bool dead[SEG_SLOTS])
{
  int n = 0;

  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    struct seg_slot *sl = &s->slot[i];
    uint64_t w = atomic_load_explicit(&sl->owner, memory_order_acquire);
    pid_t pid = (pid_t)(w >> 32);
    bool left = atomic_load_explicit(&sl->gone, memory_order_relaxed) != 0;

    out[i] = dead[i] = false;
    if (sl == m->slot) {
      out[i] = m->leaving;
    } else if ((uint32_t)w == SLOT_CLAIMED) {
      dead[i] = is_dead(sl, pid, m);
      out[i] = left || dead[i];
    } else if ((uint32_t)w == SLOT_RECLAIMING) {
      /* Its reclaimer died half way (finishing it is safe), or is at
       * work. */
      if (pid != m->pid && !cmg__seg_is_dead(pid, 0))
        return -1;
      out[i] = dead[i] = true;
    }
    n += out[i];
  }
  return n;
}

/* Each device's bytes over the members that count, read while none of
 * them was changing its own: false when one was. */
static bool
sum_members(const struct seg *s, const bool out[SEG_SLOTS],
            uint64_t sum[SEG_DEVICES], struct seg_still at[SEG_SLOTS])
{
  memset(sum, 0, sizeof(uint64_t) * SEG_DEVICES);
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    const struct seg_slot *sl = &s->slot[i];
    if (out[i] || (uint32_t)atomic_load_explicit(
                      &sl->owner, memory_order_acquire) != SLOT_CLAIMED)
      continue;
    if (!cmg__seg_is_still(sl, &at[i]))
      return false;
    for (int d = 0; d < SEG_DEVICES; d++)
      sum[d] += cmg__seg_held(sl, d);
  }
  return true;
}

/* Whether every member that counts is where sum_members found it. */
static bool
is_unmoved(const struct seg *s, const bool out[SEG_SLOTS],
           const struct seg_still at[SEG_SLOTS])
{
  atomic_thread_fence(memory_order_acquire);
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    const struct seg_slot *sl = &s->slot[i];
    struct seg_still now;
    if (out[i] || (uint32_t)atomic_load_explicit(
                      &sl->owner, memory_order_acquire) != SLOT_CLAIMED)
      continue;
    if (!cmg__seg_is_still(sl, &now) || memcmp(&now, &at[i], sizeof(now)))
      return false;
  }
  return true;
}

/* Sets each device's group counter to what the members that count hold
 * (out[] the others): 1 if that gave bytes back, 0 if not, -EAGAIN when
 * the members were never still. */
static int
recount(struct seg *s, const struct cmg__member *m, const bool out[SEG_SLOTS])
{
  static struct seg_still at[SEG_SLOTS]; /* while holding */
  uint64_t sum[SEG_DEVICES], seen[SEG_DEVICES];
  int gave = 0;

  for (int t = 0; t < RECOUNT_TRIES; t++) {
    if (t > 0)
      nanosleep(&(struct timespec){ 0, RECOUNT_PAUSE_NS }, NULL);
    if (!sum_members(s, out, sum, at))
      continue;
    for (int d = 0; d < SEG_DEVICES; d++)
      seen[d] = atomic_load_explicit(&s->dev[d].used, memory_order_seq_cst);
    if (!is_unmoved(s, out, at))
      continue;
    for (int d = 0; d < SEG_DEVICES; d++) {
      if (seen[d] > sum[d]) {
        cmg__group_sub(&s->dev[d].used, seen[d] - sum[d], m->group);
        gave = 1;
      } else if (seen[d] < sum[d]) {
        atomic_fetch_add(&s->dev[d].used, sum[d] - seen[d]);
      }
    }
    return gave;
  }
  return -EAGAIN;
}

/* The recount's lock: the flag, then the segment's lock unless the caller
 * holds it. */
static bool
take_lock(const struct cmg__member *m)
{
  struct stat st;

  if (!cmg__group_hold())
    return false;
  /* A program may have closed the descriptor and opened its own file at
   * its number, which must never be locked. */
  if (m->locked ||
      (m->fd >= 0 && fstat(m->fd, &st) == 0 && st.st_dev == m->dev &&
       st.st_ino == m->ino && flock(m->fd, LOCK_EX | LOCK_NB) == 0))
    return true;
  cmg__group_unhold();
  return false;
}

static void
drop_lock(const struct cmg__member *m)
{
  if (!m->locked)
    flock(m->fd, LOCK_UN);
  cmg__group_unhold();
}

/* Marks the dead slots (found in dead[]) as being freed by us: those whose
 * mark was taken by another meanwhile are left to it. */
static void
mark_dead(struct seg *s, const struct cmg__member *m, bool dead[SEG_SLOTS],
          uint64_t was[SEG_SLOTS])
{
  uint64_t me = (uint64_t)(uint32_t)m->pid << 32 | SLOT_RECLAIMING;

  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    was[i] = atomic_load_explicit(&s->slot[i].owner, memory_order_acquire);
    if (dead[i] && (uint32_t)was[i] != SLOT_FREE &&
        !atomic_compare_exchange_strong(&s->slot[i].owner, &was[i], me))
      dead[i] = false;
  }
}

void
cmg__group_scan(struct seg *s, const struct cmg__member *m)
{
  bool out[SEG_SLOTS], dead[SEG_SLOTS];
  uint64_t was[SEG_SLOTS];
  int gave = 0;

  if (find_gone(s, m, out, dead) <= 0 || !take_lock(m))
    return;
  mark_dead(s, m, dead, was);
  if (!m->registry)
    gave = recount(s, m, out);
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    if (!dead[i])
      continue;
    if (gave >= 0)
      cmg__group_free_slot(s, &s->slot[i]);
    else /* to be recounted at the next scan */
      atomic_store_explicit(&s->slot[i].owner, was[i], memory_order_release);
  }
  drop_lock(m);
  if (gave > 0)
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
