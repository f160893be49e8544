/*
 * group=NAME: one cap per device shared by every process of a user that
 * names the same group, kept in a POSIX shared-memory segment,
 * /dev/shm/cumemguard.<uid>.<name>, mode 0600.
 *
 * The segment (struct seg) is a header, a usage counter per device and one
 * slot per member process.  The header holds the magic (written last, with
 * release order, so a reader that sees it sees the rest), the layout
 * version and sizes, the group's limits as the member that set the group up
 * configured them, that member's CUDA_VISIBLE_DEVICES, and the futex word
 * waiters sleep on.  A slot holds an owner word (pid << 32 | state), the
 * pid's start time from /proc/PID/stat (so that a reused pid is not taken
 * for the old process), its pid namespace, its command, and the bytes it
 * holds and held at most on each device.
 *
 * Reserving is a plain add to the calling thread's lane of the process's
 * slot, then one compare-and-swap of the device's group counter against
 * the cap; releasing is the reverse, and the lane's seq brackets both, so
 * that the bytes of a member killed between the two are known exactly
 * (segment.h, group_reclaim.c).  No lock is on that path, so nothing a
 * killed process leaves behind can stop the others (HAMi-core's semaphore
 * can: Project-HAMi/HAMi#2500).  A member that dies keeps its slot until
 * another member finds it gone and reclaims it, with every byte it had,
 * those in flight included.  Members look for the dead when they join, at
 * most once a second on the allocation path (one relaxed load of a shared
 * time stamp otherwise), and before refusing an allocation (at most every
 * 100 ms, group-wide).
 *
 * Joining and leaving are group_join.c's.
 *
 * The segment is untrusted input (segment.c checks it); a bad one is one
 * line and the process fails closed.  Counters are clamped, never
 * underflowed.  A member checks at most once a second, before it reads
 * the segment, that it is still the file it joined, whole, with the header
 * it had; a segment truncated between two checks faults the member's next
 * read, and the SIGBUS handler (preload/death.c) replaces its pages with
 * zeroed ones of the process's own: either way the member fails closed
 * with one line and never dies of it.
 *
 * A process that names no group takes a slot in the user's registry
 * segment (REGISTRY_NAME) instead, so that `cumemguard status` sees every
 * guarded process without a daemon.  The registry has no cap: reserving
 * there is a plain add to the calling thread's lane of the process's slot
 * (no locked instruction, no scan), and nothing about it fails closed: a
 * registry that cannot be joined, is full or is overwritten only makes the
 * process invisible to status.  One of another layout whose processes are
 * all gone is replaced.
 *
 * From a hook only the reserve, release and wait functions run: no
 * allocation, no stdio, no CUDA.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "runtime/group/group.h"
#include "runtime/group/group_join.h"
#include "runtime/group/group_gpus.h"
#include "runtime/group/group_reclaim.h"
#include "runtime/group/group_member.h"
#include "core/log.h"
#include "runtime/group/group_segment.h"
#include "core/size.h"
#include "runtime/ledger/thread_tally.h"

static _Atomic bool said_broken;
/* The segment was truncated under us and replaced by zeroed pages, in a
 * signal handler that could not say so. */
static _Atomic bool faulted;
static _Atomic uint64_t checked_ns; /* the last is_intact check */

/* The line of a group found broken in a signal handler. */
static void
break_group_said(const char *what)
{
  if (!cmg__gs.registry && !atomic_exchange(&said_broken, true))
    cmg__log("group=%s: %s %s; no device allocation will succeed",
             cmg__gs.group, cmg__gs.shm_path, what);
}

/* The group fails closed for good, said once (why: one line, the path
 * in it, unless the segment was found truncated in a signal handler). */
static void
break_group(const char *why)
{
  int expected = CMG__GS_JOINED;

  atomic_compare_exchange_strong(&cmg__gs.state, &expected,
                                 cmg__gs.registry ? CMG__GS_OFF
                                                  : CMG__GS_BROKEN);
  if (atomic_exchange(&faulted, false))
    break_group_said("was truncated while in use");
  else if (!cmg__gs.registry && !atomic_exchange(&said_broken, true))
    cmg__log("group=%s: %s; no device allocation will succeed", cmg__gs.group,
             why);
}

bool
cmg__group_fault(const void *addr)
{
  struct seg *s = cmg__gs.seg;
  if (s == NULL || (const char *)addr < (const char *)s ||
      (const char *)addr >= (const char *)(s + 1))
    return false;
  /* Zeroed pages of our own in its place, at once and for good: every
   * thread's next read of the segment finds them, never the file's end. */
  if (mmap(s, sizeof(*s), PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
    return false;
  int expected = CMG__GS_JOINED;
  atomic_compare_exchange_strong(&cmg__gs.state, &expected,
                                 cmg__gs.registry ? CMG__GS_OFF
                                                  : CMG__GS_BROKEN);
  atomic_store(&faulted, true);
  return true;
}

/* At most once a second: the member's check that its segment is the one
 * it joined, whole and unchanged (group_segment.c); a truncated one is replaced
 * by zeroed pages before anything reads past its end. */
static bool
is_intact(struct seg *s)
{
  char why[PATH_MAX + 128];
  bool truncated;
  uint64_t now = cmg__group_clock_ns(CLOCK_MONOTONIC_COARSE);
  uint64_t last = atomic_load_explicit(&checked_ns, memory_order_relaxed);

  if (cmg__gs.registry || (last <= now && now - last < SCAN_PERIOD_NS) ||
      !atomic_compare_exchange_strong(&checked_ns, &last, now))
    return true;
  if (cmg__seg_check_live(s, cmg__gs.shm_path, cmg__gs.seg_dev, cmg__gs.seg_ino,
                          &truncated, why, sizeof(why)) == 0)
    return true;
  if (truncated)
    cmg__group_fault(s);
  break_group(why);
  return false;
}

/* The segment to count in: 0 with *out set, 1 when there is no group to
 * count in, -EPERM when the group is broken. */
static int
ready(struct seg **out)
{
  for (;;) {
    int st = atomic_load_explicit(&cmg__gs.state, memory_order_acquire);
    int expected;

    switch (st) {
    case CMG__GS_JOINED:
      *out = cmg__gs.seg;
      /* Checked before a read: a truncated segment faults. */
      if (!is_intact(*out))
        return -EPERM;
      if (cmg__unlikely(
              atomic_load_explicit(&(*out)->h.magic, memory_order_relaxed) !=
              SEG_MAGIC)) {
        char why[PATH_MAX + 64];
        snprintf(why, sizeof(why), "%s was overwritten (bad magic)",
                 cmg__gs.shm_path);
        break_group(why);
        return -EPERM;
      }
      return 0;
    case CMG__GS_FORKED:
    case CMG__GS_PENDING:
      expected = st;
      if (atomic_compare_exchange_strong(&cmg__gs.state, &expected,
                                         CMG__GS_JOINING)) {
        int rc = cmg__group_rejoin();
        atomic_store_explicit(&cmg__gs.state,
                              rc == 0            ? CMG__GS_JOINED
                              : cmg__gs.registry ? CMG__GS_OFF
                              : rc == -ETIMEDOUT ? CMG__GS_PENDING
                                                 : CMG__GS_BROKEN,
                              memory_order_release);
        if (rc == -ETIMEDOUT && !cmg__gs.registry)
          return -EAGAIN;
      }
      continue;
    case CMG__GS_JOINING:
      /* Another thread joins, for up to the lock's bound. */
      nanosleep(&(struct timespec){ 0, 100000 }, NULL);
      continue;
    case CMG__GS_BROKEN:
      if (atomic_exchange(&faulted, false))
        break_group_said("was truncated while in use");
      return -EPERM;
    case CMG__GS_UNSEEN:
      if (atomic_compare_exchange_strong(&cmg__gs.state, &st, CMG__GS_OFF))
        cmg__log("%s; this process runs capped as usual, but `cumemguard "
                 "status` does not list it",
                 cmg__gs.why);
      return 1;
    default:
      return 1;
    }
  }
}

/* The cap of device d for a device of `physical` bytes. */
static uint64_t
cap_of(int d, uint64_t physical)
{
  return cmg__seg_limit_bytes(cmg__group_cap_entry(d), physical);
}

/* One compare-and-swap of counter i against the cap: 0, or -ENOMEM with
 * *used_out. */
static int
add(struct seg *s, int i, uint64_t bytes, uint64_t limit, uint64_t *used_out)
{
  _Atomic uint64_t *u = &s->dev[i].used;
  uint64_t cur = atomic_load_explicit(u, memory_order_relaxed), next;

  do {
    if (bytes > limit || cur > limit - bytes) {
      *used_out = cur;
      return -ENOMEM;
    }
    next = cur + bytes;
  } while (!atomic_compare_exchange_weak_explicit(
      u, &cur, next, memory_order_relaxed, memory_order_relaxed));
  *used_out = next;
  uint64_t peak = atomic_load_explicit(&s->dev[i].peak, memory_order_relaxed);
  while (next > peak && !atomic_compare_exchange_weak_explicit(
                            &s->dev[i].peak, &peak, next, memory_order_relaxed,
                            memory_order_relaxed))
    ;
  return 0;
}

/* Counts bytes (+) or gives them back (-) in our registry slot, no cap,
 * no group counter: in the calling thread's lane, which only it writes and
 * which wraps when it frees what another thread allocated, else in the
 * shared counter.  Only a reclaimer that took the slot for dead can have
 * emptied that under us, and the count is for show: an underflow is put
 * right after the fact. */
static inline void
solo_count(int d, uint64_t bytes, bool add)
{
  unsigned lane = cmg__tally_number() - 1;
  _Atomic uint64_t *w =
      lane < SEG_LANES ? &cmg__gs.mine->lane[lane].held[d] : NULL;
  uint64_t had;

  if (cmg__likely(w != NULL))
    atomic_store_explicit(w,
                          atomic_load_explicit(w, memory_order_relaxed) +
                              (add ? bytes : -bytes),
                          memory_order_relaxed);
  else if (add)
    atomic_fetch_add_explicit(&cmg__gs.mine->dev[d].used, bytes,
                              memory_order_relaxed);
  else if ((had = atomic_fetch_sub_explicit(&cmg__gs.mine->dev[d].used, bytes,
                                            memory_order_relaxed)) < bytes)
    atomic_fetch_add_explicit(&cmg__gs.mine->dev[d].used, bytes - had,
                              memory_order_relaxed);
}

static inline bool
is_solo(int device)
{
  return cmg__gs.registry && device >= 0 && device < SEG_DEVICES &&
         atomic_load_explicit(&cmg__gs.state, memory_order_acquire) ==
             CMG__GS_JOINED;
}

bool
cmg__group_solo_add(int device, uint64_t bytes)
{
  if (!is_solo(device))
    return false;
  int i = cmg__group_index(device);
  if (i >= 0)
    solo_count(i, bytes, true);
  return true;
}

void
cmg__group_peak(int device, uint64_t used)
{
  int i;
  if (device < 0 || device >= SEG_DEVICES || cmg__gs.mine == NULL ||
      atomic_load_explicit(&cmg__gs.state, memory_order_acquire) !=
          CMG__GS_JOINED ||
      (i = cmg__group_index(device)) < 0)
    return;
  _Atomic uint64_t *p = &cmg__gs.mine->dev[i].peak;
  uint64_t peak = atomic_load_explicit(p, memory_order_relaxed);
  while (used > peak &&
         !atomic_compare_exchange_weak_explicit(
             p, &peak, used, memory_order_relaxed, memory_order_relaxed))
    ;
}

/* The calling thread's lane of our slot, which only it writes; NULL for a
 * thread past the lanes, which counts in the slot's shared counters. */
static inline struct seg_lane *
lane_of(struct seg_slot *sl)
{
  unsigned n = cmg__tally_number() - 1;
  return n < SEG_LANES ? &sl->lane[n] : NULL;
}

/* A change of our bytes and the group's counter begins: the lane's seq
 * odd (or busy counting it), before either is written, so that a recount
 * reads no lane in the middle of one (group_reclaim.c). */
static inline void
change_begin(struct seg_slot *sl, struct seg_lane *l)
{
  if (cmg__likely(l != NULL)) {
    atomic_store_explicit(
        &l->seq, atomic_load_explicit(&l->seq, memory_order_relaxed) + 1,
        memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
  } else {
    atomic_fetch_add_explicit(&sl->busy, BUSY_ONE, memory_order_seq_cst);
  }
}

static inline void
change_end(struct seg_slot *sl, struct seg_lane *l)
{
  if (cmg__likely(l != NULL))
    atomic_store_explicit(
        &l->seq, atomic_load_explicit(&l->seq, memory_order_relaxed) + 1,
        memory_order_release);
  else
    atomic_fetch_sub_explicit(&sl->busy, 1, memory_order_release);
}

/* Adds delta (two's complement for a subtraction) to our bytes. */
static inline void
charge(struct seg_slot *sl, struct seg_lane *l, int d, uint64_t delta)
{
  if (cmg__likely(l != NULL))
    atomic_store_explicit(
        &l->held[d],
        atomic_load_explicit(&l->held[d], memory_order_relaxed) + delta,
        memory_order_relaxed);
  else
    atomic_fetch_add_explicit(&sl->dev[d].used, delta, memory_order_relaxed);
}

/* The bytes go into our slot first, then the group's counter: a member
 * killed in between holds them in its slot either way, and the recount
 * that reclaims it tells which (group_reclaim.c). */
static int
charged_add(struct seg *s, int i, uint64_t bytes, uint64_t limit,
            uint64_t *used_out)
{
  struct seg_slot *sl = cmg__gs.mine;
  struct seg_lane *l = lane_of(sl);

  change_begin(sl, l);
  charge(sl, l, i, bytes);
  int rc = add(s, i, bytes, limit, used_out);
  if (rc != 0)
    charge(sl, l, i, -bytes);
  change_end(sl, l);
  return rc;
}

/* reserve, with -EPERM for a broken group; `force` counts past the cap. */
static int
reserve(int d, uint64_t bytes, uint64_t physical, bool force,
        uint64_t *used_out, uint64_t *limit_out)
{
  struct seg *s;

  *used_out = 0;
  *limit_out = CMG__NO_LIMIT;
  if (d < 0 || d >= SEG_DEVICES)
    return 0;
  int rc = ready(&s);
  if (rc > 0)
    return 0;
  if (rc < 0) {
    *limit_out = 0;
    return rc;
  }
  int i = cmg__group_index(d);
  if (cmg__gs.registry) {
    if (i >= 0)
      solo_count(i, bytes, true);
    return 0;
  }
  if (i < 0) {
    *limit_out = 0;
    return -EBUSY;
  }
  if (physical != 0 && atomic_load_explicit(&cmg__gs.physical_seen[d],
                                            memory_order_relaxed) == 0) {
    uint64_t none = 0;
    atomic_store_explicit(&cmg__gs.physical_seen[d], physical,
                          memory_order_relaxed);
    atomic_compare_exchange_strong(&s->dev[i].physical, &none, physical);
  }
  uint64_t limit = force ? CMG__NO_LIMIT : cap_of(d, physical);
  *limit_out = limit;
  struct cmg__member m = cmg__group_member();
  cmg__group_maybe_scan(s, &m, SCAN_PERIOD_NS);
  rc = charged_add(s, i, bytes, limit, used_out);
  if (rc != 0 && cmg__group_maybe_scan(s, &m, SCAN_DENIAL_NS))
    rc = charged_add(s, i, bytes, limit, used_out);
  return rc;
}

int
cmg__group_reserve(int device, uint64_t bytes, uint64_t physical,
                   uint64_t *used_out, uint64_t *limit_out)
{
  int rc = reserve(device, bytes, physical, false, used_out, limit_out);

  return rc;
}

void
cmg__group_note_context(int device, uint64_t bytes)
{
  if (device < 0 || device >= SEG_DEVICES)
    return;
  atomic_store_explicit(&cmg__gs.noted[device], bytes, memory_order_relaxed);
  int i;
  if (cmg__gs.mine != NULL &&
      atomic_load_explicit(&cmg__gs.state, memory_order_acquire) ==
          CMG__GS_JOINED &&
      (i = cmg__group_index(device)) >= 0)
    atomic_store_explicit(&cmg__gs.mine->dev[i].context, bytes,
                          memory_order_relaxed);
}

int
cmg__group_force(int device, uint64_t bytes, uint64_t physical)
{
  uint64_t used, limit;

  return reserve(device, bytes, physical, true, &used, &limit);
}

void
cmg__group_release(int device, uint64_t bytes)
{
  if (device < 0 || device >= SEG_DEVICES || bytes == 0 ||
      atomic_load_explicit(&cmg__gs.state, memory_order_acquire) !=
          CMG__GS_JOINED)
    return;
  struct seg *s = cmg__gs.seg;
  int i = cmg__group_index(device);
  if (i < 0)
    return;
  if (cmg__gs.registry) {
    solo_count(i, bytes, false);
    return;
  }
  struct seg_slot *sl = cmg__gs.mine;
  struct seg_lane *l = lane_of(sl);
  /* The change is seen begun before the state is looked at again, and a
   * process leaving sets its state before it looks for changes that are
   * not done (group_join.c): one of the two sees the other, so a free
   * never takes from the group bytes that leaving gave back already. */
  if (l != NULL)
    atomic_store_explicit(
        &l->seq, atomic_load_explicit(&l->seq, memory_order_relaxed) + 1,
        memory_order_seq_cst);
  else
    atomic_fetch_add_explicit(&sl->busy, BUSY_ONE, memory_order_seq_cst);
  if (atomic_load_explicit(&cmg__gs.state, memory_order_seq_cst) !=
      CMG__GS_JOINED) {
    change_end(sl, l);
    return;
  }
  /* The group's counter first, our bytes after: a member killed in
   * between holds them in its slot either way (charged_add). */
  cmg__group_sub(&s->dev[i].used, bytes, cmg__gs.group);
  charge(sl, l, i, -bytes);
  change_end(sl, l);
  /* Pairs with the fence in cmg__group_wait: either the waiter sees the
   * room, or we see the waiter. */
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&s->h.waiters, memory_order_relaxed) != 0)
    cmg__seg_wake_all(s);
}

int
cmg__group_wait(int device, uint64_t bytes, uint64_t physical,
                uint64_t timeout_ns, uint64_t *used_out, uint64_t *limit_out)
{
  uint64_t deadline = cmg__group_clock_ns(CLOCK_MONOTONIC) + timeout_ns;

  for (;;) {
    int rc = reserve(device, bytes, physical, false, used_out, limit_out);
    struct seg *s = cmg__gs.seg;
    struct seg_slot *sl = cmg__gs.mine;
    uint64_t now = cmg__group_clock_ns(CLOCK_MONOTONIC);

    if (rc != -ENOMEM)
      return rc;
    if (now >= deadline)
      return -ETIMEDOUT;
    uint32_t seq = atomic_load(&s->h.wake);
    atomic_fetch_add(&s->h.waiters, 1);
    atomic_fetch_add(&sl->waiting, 1);
    atomic_thread_fence(memory_order_seq_cst);
    rc = reserve(device, bytes, physical, false, used_out, limit_out);
    if (rc == -ENOMEM) {
      /* Once a second at least, so that this process reclaims a dead
       * member itself when nobody else allocates. */
      uint64_t left = deadline - now < NS ? deadline - now : NS;
      syscall(SYS_futex, &s->h.wake, FUTEX_WAIT, seq,
              &(struct timespec){ (time_t)(left / NS), (long)(left % NS) },
              NULL, 0);
    }
    cmg__seg_sub32(&sl->waiting, 1);
    cmg__seg_sub32(&s->h.waiters, 1);
    if (rc != -ENOMEM)
      return rc;
  }
}

/* The cap of a group that is not joined (yet, or any more), from what is
 * known of its limits: 1 where it sets none. */
static int
unjoined_cap(int device, uint64_t physical, uint64_t *limit)
{
  const struct seg_limit *l = cmg__group_cap_entry(device);
  if (l->kind == CMG__LIMIT_NONE ||
      (l->kind == CMG__LIMIT_PERCENT && physical == 0))
    return 1;
  *limit = cap_of(device, physical);
  return 0;
}

int
cmg__group_cap_used(int device, uint64_t physical, uint64_t *limit,
                    uint64_t *used)
{
  struct seg *s;

  if (device < 0 || device >= SEG_DEVICES)
    return 1;
  /* Not joined: the cap, with no room, and no wait for the lock here. */
  int st = atomic_load_explicit(&cmg__gs.state, memory_order_acquire);
  if (!cmg__gs.registry && (st == CMG__GS_PENDING || st == CMG__GS_BROKEN)) {
    *limit = CMG__NO_LIMIT;
    unjoined_cap(device, physical, limit);
    *used = *limit;
    return -EPERM;
  }
  int rc = ready(&s);
  if (rc != 0 || cmg__gs.registry)
    return rc < 0 ? rc : 1;
  int i = cmg__group_index(device);
  const struct seg_limit *l = cmg__group_cap_entry(device);
  if (i < 0) {
    *limit = cmg__seg_limit_bytes(l, physical);
    *used = *limit;
    return -EPERM;
  }
  if (l->kind == CMG__LIMIT_NONE ||
      (l->kind == CMG__LIMIT_PERCENT && physical == 0))
    return 1;
  struct cmg__member m = cmg__group_member();
  cmg__group_maybe_scan(s, &m, SCAN_PERIOD_NS);
  *limit = cap_of(device, physical);
  *used = atomic_load_explicit(&s->dev[i].used, memory_order_relaxed);
  return 0;
}

bool
cmg__group_active(void)
{
  return !cmg__gs.registry && atomic_load(&cmg__gs.state) != CMG__GS_OFF;
}

bool
cmg__group_counting(void)
{
  return atomic_load_explicit(&cmg__gs.state, memory_order_relaxed) !=
         CMG__GS_OFF;
}

void
cmg__group_count_denial(void)
{
  struct seg_slot *sl = cmg__gs.mine;

  if (atomic_load_explicit(&cmg__gs.state, memory_order_acquire) ==
          CMG__GS_JOINED &&
      sl != NULL)
    atomic_fetch_add_explicit(&sl->denials, 1, memory_order_relaxed);
}

const char *
cmg__group_why(void)
{
  return cmg__gs.why;
}

const char *
cmg__group_name(void)
{
  return cmg__group_active() ? cmg__gs.group : NULL;
}

int
cmg__group_usage(int device, struct cmg__group_usage *out)
{
  int st = atomic_load_explicit(&cmg__gs.state, memory_order_acquire);
  struct seg *s = cmg__gs.seg;
  struct seg_slot *sl = cmg__gs.mine;

  int i;
  if (device < 0 || device >= SEG_DEVICES || s == NULL || cmg__gs.registry ||
      (st != CMG__GS_JOINED && st != CMG__GS_LEFT) ||
      (i = cmg__group_index(device)) < 0)
    return -ENOENT;
  uint64_t physical = atomic_load(&cmg__gs.physical_seen[device]);
  if (physical == 0)
    physical = atomic_load(&s->dev[i].physical);
  const struct seg_limit *l = cmg__group_cap_entry(device);
  out->limit = l->kind == CMG__LIMIT_PERCENT && physical == 0
                   ? CMG__NO_LIMIT
                   : cmg__seg_limit_bytes(l, physical);
  out->used = atomic_load_explicit(&s->dev[i].used, memory_order_relaxed);
  out->mine = st == CMG__GS_JOINED && sl != NULL ? cmg__seg_held(sl, i) : 0;
  return 0;
}

unsigned
cmg__group_members(void)
{
  int st = atomic_load(&cmg__gs.state);

  return cmg__gs.seg != NULL && !cmg__gs.registry &&
                 (st == CMG__GS_JOINED || st == CMG__GS_LEFT)
             ? cmg__seg_members(cmg__gs.seg)
             : 0;
}
