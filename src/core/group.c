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
 * Reserving is one compare-and-swap of the device's group counter against
 * the cap, then an add to the process's own slot; releasing is the reverse.
 * No lock is on that path, so nothing a killed process leaves behind can
 * stop the others (HAMi-core's semaphore can: Project-HAMi/HAMi#2500).  A
 * member that dies keeps its slot until another member finds it gone and
 * reclaims it (group_reclaim.c).  Members look for the
 * dead when they join, at most once a second on the allocation path (one
 * relaxed load of a shared time stamp otherwise), and before refusing an
 * allocation (at most every 100 ms, group-wide).  The order of the updates
 * makes a SIGKILL between two of them err toward counting too much, never
 * too little: the cap can shrink by one allocation, never be passed.
 *
 * Joining and leaving take flock(2) on the segment.  The kernel drops the
 * lock of a process that dies, so it cannot be left held.  It orders
 * setting the segment up (whoever holds it and finds no magic does it, so a
 * creator killed half way leaves nothing stuck), adopting the joiner's
 * limits when no member is left (limits are not frozen for good at first
 * creation, as HAMi-core's are), and removing the segment when the last
 * member leaves.
 *
 * The segment is untrusted input (segment.c checks it); a bad one is one
 * line and the process fails closed.  Counters are clamped, never
 * underflowed.
 * Truncating a live segment, which only its own user can do, would fault
 * the members' mappings as a kill would; that is outside what is guarded.
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
 * allocation, no stdio, no CUDA.  The first reservation of a forked child
 * opens the segment again to take a slot of its own.
 */
#include "config.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "core/conf.h"
#include "core/group.h"
#include "core/group_reclaim.h"
#include "core/segment.h"
#include "core/log.h"
#include "core/size.h"
#include "core/tally.h"

/* The process's side.  OFF: no group; FORKED: a child that has not taken
 * a slot yet; BROKEN: every reservation fails; LEFT: after exit. */
enum { OFF, JOINING, JOINED, FORKED, BROKEN, LEFT };

static _Atomic int state = OFF;
static bool registry; /* in the registry, not in a group */
static struct seg *seg;
static int seg_fd = -1;
static struct seg_slot *mine;
/* What the process's contexts take, kept for a slot claimed later:
 * contexts are made before the first allocation joins the group. */
static _Atomic uint64_t noted[SEG_DEVICES];
static char group[64];
static char shm_name[96];  /* "/cumemguard.<uid>.<group>" */
static char shm_path[112]; /* the same under /dev/shm, for messages */
static struct seg_limit own[SEG_DEVICES + 1];  /* ours; [SEG_DEVICES] all */
static struct seg_limit caps[SEG_DEVICES + 1]; /* the group's */
static _Atomic uint64_t physical_seen[SEG_DEVICES];
static _Atomic bool said_broken;
static bool said_mismatch;
static pid_t self_pid;
static uint64_t self_start, self_pidns;
static char self_comm[16];

/* The member this process is, for the functions that reclaim slots. */
static struct cmg__member
member(void)
{
  return (struct cmg__member){ mine, self_pid, self_pidns, registry, group };
}

/* Sets up a segment nobody has: under the lock, magic last. */
static void
init_segment(struct seg *s)
{
  memset((char *)s + sizeof(s->h.magic), 0, sizeof(*s) - sizeof(s->h.magic));
  s->h.version = SEG_VERSION;
  s->h.header_size = sizeof(s->h);
  s->h.slot_size = sizeof(struct seg_slot);
  s->h.slot_count = SEG_SLOTS;
  s->h.device_count = SEG_DEVICES;
  s->h.total_size = sizeof(struct seg);
  cmg__seg_adopt(s, own, self_pid);
  atomic_store_explicit(&s->h.magic, SEG_MAGIC, memory_order_release);
}

/* Says once per process (a forked child inherits having said it) that our
 * options differ from the group's. */
static void
compare(const struct seg *s)
{
  struct seg_limit theirs[SEG_DEVICES + 1];
  const char *visible = getenv("CUDA_VISIBLE_DEVICES");
  char a[160], b[160];
  bool same = true;

  if (said_mismatch)
    return;
  memcpy(theirs, s->h.limit_dev, sizeof(s->h.limit_dev));
  theirs[SEG_DEVICES] = s->h.limit;
  for (int d = 0; d <= SEG_DEVICES; d++)
    same = same && cmg__seg_is_same_limit(&own[d], &theirs[d]);
  if (!same) {
    cmg__log("group=%s: group_limit here is %s, but the group's is %s, "
             "set by its first member (pid %d); the group's stands",
             group, cmg__seg_describe(own, a, sizeof(a)),
             cmg__seg_describe(theirs, b, sizeof(b)), (int)s->h.creator);
    said_mismatch = true;
  }
  if ((visible != NULL) != (s->h.visible_set != 0) ||
      (visible != NULL &&
       strncmp(visible, s->h.visible, sizeof(s->h.visible) - 1) != 0)) {
    cmg__log("group=%s: CUDA_VISIBLE_DEVICES is '%.64s' here but was "
             "'%.64s' for the group's first member (pid %d); the group "
             "counts by device ordinal, which may name different GPUs",
             group, visible ? visible : "(unset)",
             s->h.visible_set ? s->h.visible : "(unset)", (int)s->h.creator);
    said_mismatch = true;
  }
}

/* With the lock held: reclaims the dead, adopts our limits if nobody is
 * left, and takes a slot. */
static int
join_locked(struct seg *s, char *err, size_t errlen)
{
  struct cmg__member m = member();

  cmg__group_scan(s, &m);
  atomic_store(&s->h.scan_ns, cmg__group_clock_ns(CLOCK_MONOTONIC_COARSE));
  if (cmg__seg_members(s) == 0)
    cmg__seg_adopt(s, own, self_pid);
  else if (!registry)
    compare(s);
  memcpy(caps, s->h.limit_dev, sizeof(s->h.limit_dev));
  caps[SEG_DEVICES] = s->h.limit;
  struct seg_slot *sl =
      cmg__seg_claim(s, self_pid, self_start, self_pidns, self_comm);
  if (sl == NULL)
    return cmg__seg_fail(err, errlen, NULL, -EUSERS,
                         "all %u member slots of %s "
                         "are taken",
                         SEG_SLOTS, shm_path);
  for (int d = 0; d < SEG_DEVICES; d++)
    atomic_store_explicit(&sl->dev[d].context,
                          atomic_load_explicit(&noted[d], memory_order_relaxed),
                          memory_order_relaxed);
  mine = sl;
  return 0;
}

/* Opens or creates the segment and joins it: 0 with seg, seg_fd and mine
 * set, or a negative errno with one line in err. */
static int
attach(char *err, size_t errlen)
{
  for (int tries = 0; tries < ATTACH_TRIES; tries++) {
    struct seg *s = NULL;
    bool created = true, fresh = false;
    int rc;

    int fd = shm_open(shm_name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
      created = false;
      fd = shm_open(shm_name, O_RDWR, 0);
      if (fd < 0 && errno == ENOENT)
        continue; /* its last member removed it meanwhile */
    }
    if (fd < 0) {
      rc = errno;
      return cmg__seg_fail(err, errlen, NULL, -rc, "cannot open %s: %s",
                           shm_path, strerror(rc));
    }
    /* The umask may have taken bits the other members need. */
    rc = created && fchmod(fd, 0600) != 0 ? -errno : 0;
    if (rc == 0)
      rc = cmg__seg_check_file(fd, shm_path, NULL, err, errlen);
    if (rc == 0 && (rc = cmg__seg_lock(fd, LOCK_TIMEOUT_NS)) != 0)
      cmg__seg_fail(err, errlen, NULL, rc, "cannot lock %s: %s", shm_path,
                    rc == -ETIMEDOUT ? "another process held it for 2 s "
                                       "(is a member stopped while joining?)"
                                     : strerror(-rc));
    if (rc == 0)
      rc = cmg__seg_map(fd, shm_path, &s, &fresh, err, errlen);
    if (rc == 0 && fresh)
      init_segment(s);
    if (rc == 0)
      rc = join_locked(s, err, errlen);
    /* A registry of another layout, left by a killed process: replaced. */
    if (rc == -EPROTO && registry &&
        cmg__seg_remove_abandoned(fd, shm_name, shm_path, self_pidns))
      rc = -EAGAIN;
    if (rc == 0) {
      seg = s;
      seg_fd = fd;
      flock(fd, LOCK_UN);
      return 0;
    }
    if (s != NULL)
      munmap(s, sizeof(*s));
    close(fd);
    if (rc != -EAGAIN)
      return rc;
  }
  return cmg__seg_fail(err, errlen, NULL, -EAGAIN,
                       "%s kept being removed while "
                       "joining",
                       shm_path);
}

/* Who this process is, for its slot. */
static void
identify_self(void)
{
  char letter;

  self_pid = getpid();
  if (cmg__seg_proc_stat(self_pid, &letter, &self_start) != 0)
    self_start = 0;
  self_pidns = cmg__seg_pidns_of("/proc/self/ns/pid");
  memset(self_comm, 0, sizeof(self_comm));
  int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = read(fd, self_comm, sizeof(self_comm) - 1);
    close(fd);
    if (n > 0 && self_comm[n - 1] == '\n')
      self_comm[n - 1] = '\0';
  }
}

int
cmg__group_join(const struct cmg__config *cfg, char *err, size_t errlen)
{
  int expected = OFF;

  if (err != NULL && errlen > 0)
    err[0] = '\0';
  if (!atomic_compare_exchange_strong(&state, &expected, JOINING))
    return -EALREADY;
  registry = cfg->group[0] == '\0';
  snprintf(group, sizeof(group), "%s", registry ? REGISTRY_NAME : cfg->group);
  if (!registry && !cmg__seg_is_valid_name(cfg->group)) {
    atomic_store(&state, BROKEN);
    return cmg__seg_fail(err, errlen, NULL, -EINVAL,
                         "bad group name: expected 1 "
                         "to 63 letters, digits, '-', '_' or '.'");
  }
  for (int d = 0; d < SEG_DEVICES; d++)
    own[d] = (struct seg_limit){ .kind = cfg->group_limit_dev[d].kind,
                                 .ppm = cfg->group_limit_dev[d].ppm,
                                 .bytes = cfg->group_limit_dev[d].bytes };
  own[SEG_DEVICES] = (struct seg_limit){ .kind = cfg->group_limit.kind,
                                         .ppm = cfg->group_limit.ppm,
                                         .bytes = cfg->group_limit.bytes };
  snprintf(shm_name, sizeof(shm_name), "/cumemguard.%u.%s", (unsigned)geteuid(),
           group);
  snprintf(shm_path, sizeof(shm_path), SHM_DIR "%s", shm_name);
  identify_self();
  int rc = attach(err, errlen);
  if (registry) {
    /* Being seen is not worth failing for: no registry, no slot. */
    atomic_store_explicit(&state, rc == 0 ? JOINED : OFF, memory_order_release);
    return 0;
  }
  atomic_store_explicit(&state, rc == 0 ? JOINED : BROKEN,
                        memory_order_release);
  return rc;
}

/* A forked child's first use: a slot of its own, through its own open
 * file (the parent's lock is on the parent's). */
static int
rejoin(void)
{
  struct seg *old = seg;
  int old_fd = seg_fd;
  char err[256];

  identify_self();
  int rc = attach(err, sizeof(err));
  if (rc != 0 && !registry) {
    cmg__log("group=%s: %s; no device allocation will succeed", group, err);
    return rc;
  }
  if (old != NULL && old != seg)
    munmap(old, sizeof(*old));
  if (old_fd >= 0 && old_fd != seg_fd)
    close(old_fd);
  return 0;
}

static void
break_group(const char *why)
{
  int expected = JOINED;

  atomic_compare_exchange_strong(&state, &expected, registry ? OFF : BROKEN);
  if (!registry && !atomic_exchange(&said_broken, true))
    cmg__log("group=%s: %s %s; no device allocation will succeed", group,
             shm_path, why);
}

/* The segment to count in: 0 with *out set, 1 when there is no group to
 * count in, -EPERM when the group is broken. */
static int
ready(struct seg **out)
{
  for (;;) {
    int st = atomic_load_explicit(&state, memory_order_acquire);
    int expected = FORKED;

    switch (st) {
    case JOINED:
      *out = seg;
      if (cmg__unlikely(
              atomic_load_explicit(&(*out)->h.magic, memory_order_relaxed) !=
              SEG_MAGIC)) {
        break_group("was overwritten (bad magic)");
        return -EPERM;
      }
      return 0;
    case FORKED:
      if (atomic_compare_exchange_strong(&state, &expected, JOINING))
        atomic_store_explicit(&state,
                              rejoin() == 0 ? JOINED
                              : registry    ? OFF
                                            : BROKEN,
                              memory_order_release);
      continue;
    case JOINING:
      sched_yield();
      continue;
    case BROKEN:
      return -EPERM;
    default:
      return 1;
    }
  }
}

/* The cap of device d for a device of `physical` bytes. */
static uint64_t
cap_of(int d, uint64_t physical)
{
  return cmg__seg_limit_bytes(cmg__seg_limit_entry(caps, d), physical);
}

/* One compare-and-swap against the cap: 0, or -ENOMEM with *used_out. */
static int
add(struct seg *s, int d, uint64_t bytes, uint64_t limit, uint64_t *used_out)
{
  _Atomic uint64_t *u = &s->dev[d].used;
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
  uint64_t peak = atomic_load_explicit(&s->dev[d].peak, memory_order_relaxed);
  while (next > peak && !atomic_compare_exchange_weak_explicit(
                            &s->dev[d].peak, &peak, next, memory_order_relaxed,
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
  _Atomic uint64_t *w = lane < SEG_LANES ? &mine->lane[lane].held[d] : NULL;
  uint64_t had;

  if (cmg__likely(w != NULL))
    atomic_store_explicit(w,
                          atomic_load_explicit(w, memory_order_relaxed) +
                              (add ? bytes : -bytes),
                          memory_order_relaxed);
  else if (add)
    atomic_fetch_add_explicit(&mine->dev[d].used, bytes, memory_order_relaxed);
  else if ((had = atomic_fetch_sub_explicit(&mine->dev[d].used, bytes,
                                            memory_order_relaxed)) < bytes)
    atomic_fetch_add_explicit(&mine->dev[d].used, bytes - had,
                              memory_order_relaxed);
}

static inline bool
is_solo(int device)
{
  return registry && device >= 0 && device < SEG_DEVICES &&
         atomic_load_explicit(&state, memory_order_acquire) == JOINED;
}

bool
cmg__group_solo_add(int device, uint64_t bytes)
{
  if (!is_solo(device))
    return false;
  solo_count(device, bytes, true);
  return true;
}

void
cmg__group_solo_peak(int device, uint64_t used)
{
  if (!is_solo(device))
    return;
  _Atomic uint64_t *p = &mine->dev[device].peak;
  uint64_t peak = atomic_load_explicit(p, memory_order_relaxed);
  while (used > peak &&
         !atomic_compare_exchange_weak_explicit(
             p, &peak, used, memory_order_relaxed, memory_order_relaxed))
    ;
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
  if (registry) {
    solo_count(d, bytes, true);
    return 0;
  }
  if (physical != 0 &&
      atomic_load_explicit(&physical_seen[d], memory_order_relaxed) == 0) {
    uint64_t none = 0;
    atomic_store_explicit(&physical_seen[d], physical, memory_order_relaxed);
    atomic_compare_exchange_strong(&s->dev[d].physical, &none, physical);
  }
  uint64_t limit = force ? CMG__NO_LIMIT : cap_of(d, physical);
  *limit_out = limit;
  struct cmg__member m = member();
  cmg__group_maybe_scan(s, &m, SCAN_PERIOD_NS);
  rc = add(s, d, bytes, limit, used_out);
  if (rc != 0 && cmg__group_maybe_scan(s, &m, SCAN_DENIAL_NS))
    rc = add(s, d, bytes, limit, used_out);
  if (rc != 0)
    return rc;
  uint64_t held = atomic_fetch_add_explicit(&mine->dev[d].used, bytes,
                                            memory_order_relaxed) +
                  bytes;
  if (held > atomic_load_explicit(&mine->dev[d].peak, memory_order_relaxed))
    atomic_store_explicit(&mine->dev[d].peak, held, memory_order_relaxed);
  return 0;
}

int
cmg__group_reserve(int device, uint64_t bytes, uint64_t physical,
                   uint64_t *used_out, uint64_t *limit_out)
{
  int rc = reserve(device, bytes, physical, false, used_out, limit_out);

  return rc == -EPERM ? -ENOMEM : rc;
}

void
cmg__group_note_context(int device, uint64_t bytes)
{
  if (device < 0 || device >= SEG_DEVICES)
    return;
  atomic_store_explicit(&noted[device], bytes, memory_order_relaxed);
  if (mine != NULL &&
      atomic_load_explicit(&state, memory_order_acquire) == JOINED)
    atomic_store_explicit(&mine->dev[device].context, bytes,
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
      atomic_load_explicit(&state, memory_order_acquire) != JOINED)
    return;
  struct seg *s = seg;
  if (registry) {
    solo_count(device, bytes, false);
    return;
  }
  /* The slot first: a kill in between leaves the group counting more. */
  cmg__group_sub(&mine->dev[device].used, bytes, NULL);
  cmg__group_sub(&s->dev[device].used, bytes, group);
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
    struct seg *s = seg;
    struct seg_slot *sl = mine;
    uint64_t now = cmg__group_clock_ns(CLOCK_MONOTONIC);

    if (rc != -ENOMEM)
      return rc == -EPERM ? -ENOMEM : rc;
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
      return rc == -EPERM ? -ENOMEM : rc;
  }
}

int
cmg__group_cap_used(int device, uint64_t physical, uint64_t *limit,
                    uint64_t *used)
{
  struct seg *s;

  if (device < 0 || device >= SEG_DEVICES)
    return 1;
  int rc = ready(&s);
  if (rc != 0 || registry)
    return rc < 0 ? rc : 1;
  const struct seg_limit *l = cmg__seg_limit_entry(caps, device);
  if (l->kind == CMG__LIMIT_NONE ||
      (l->kind == CMG__LIMIT_PERCENT && physical == 0))
    return 1;
  struct cmg__member m = member();
  cmg__group_maybe_scan(s, &m, SCAN_PERIOD_NS);
  *limit = cap_of(device, physical);
  *used = atomic_load_explicit(&s->dev[device].used, memory_order_relaxed);
  return 0;
}

void
cmg__group_after_fork(void)
{
  int st = atomic_load(&state);

  if (st == JOINED || st == JOINING || st == FORKED) {
    mine = NULL;
    atomic_store(&state, FORKED);
  }
}

/* Gives back what this process holds (the driver frees its memory at
 * exit), frees its slot, and removes the segment if no member is left. */
void
cmg__group_leave(void)
{
  int expected = JOINED;
  struct seg *s = seg;
  struct stat ours, named;

  if (!atomic_compare_exchange_strong(&state, &expected, LEFT)) {
    expected = FORKED;
    atomic_compare_exchange_strong(&state, &expected, LEFT);
    return;
  }
  /* mine keeps pointing at the slot: a thread that passed the state check
   * before us may still count into it, and those bytes are also in the
   * group's counters, to be given back by the slot's next owner. */
  struct cmg__member m = member();
  if (cmg__group_empty_slot(s, mine, &m))
    cmg__seg_wake_all(s);
  /* The lock is held for a scan at most, by a member joining or leaving;
   * if it stays taken, that member is not gone and removes the segment. */
  if (cmg__seg_lock(seg_fd, LEAVE_LOCK_NS) != 0)
    return;
  cmg__group_scan(s, &m);
  if (cmg__seg_members(s) == 0 && fstat(seg_fd, &ours) == 0 &&
      stat(shm_path, &named) == 0 && ours.st_ino == named.st_ino &&
      ours.st_dev == named.st_dev) {
    atomic_store(&s->h.retired, 1);
    shm_unlink(shm_name);
  }
  flock(seg_fd, LOCK_UN);
}

bool
cmg__group_active(void)
{
  return !registry && atomic_load(&state) != OFF;
}

bool
cmg__group_counting(void)
{
  return atomic_load_explicit(&state, memory_order_relaxed) != OFF;
}

void
cmg__group_count_denial(void)
{
  struct seg_slot *sl = mine;

  if (atomic_load_explicit(&state, memory_order_acquire) == JOINED &&
      sl != NULL)
    atomic_fetch_add_explicit(&sl->denials, 1, memory_order_relaxed);
}

const char *
cmg__group_name(void)
{
  return cmg__group_active() ? group : NULL;
}

int
cmg__group_usage(int device, struct cmg__group_usage *out)
{
  int st = atomic_load_explicit(&state, memory_order_acquire);
  struct seg *s = seg;
  struct seg_slot *sl = mine;

  if (device < 0 || device >= SEG_DEVICES || s == NULL || registry ||
      (st != JOINED && st != LEFT))
    return -ENOENT;
  uint64_t physical = atomic_load(&physical_seen[device]);
  if (physical == 0)
    physical = atomic_load(&s->dev[device].physical);
  const struct seg_limit *l = cmg__seg_limit_entry(caps, device);
  out->limit = l->kind == CMG__LIMIT_PERCENT && physical == 0
                   ? CMG__NO_LIMIT
                   : cmg__seg_limit_bytes(l, physical);
  out->used = atomic_load_explicit(&s->dev[device].used, memory_order_relaxed);
  out->mine =
      st == JOINED && sl != NULL
          ? atomic_load_explicit(&sl->dev[device].used, memory_order_relaxed)
          : 0;
  return 0;
}

unsigned
cmg__group_members(void)
{
  int st = atomic_load(&state);

  return seg != NULL && !registry && (st == JOINED || st == LEFT)
             ? cmg__seg_members(seg)
             : 0;
}
