/*
 * Joining a group (or the user's registry) and leaving it: the segment
 * opened or created, set up, checked and mapped, a slot taken, and at exit
 * given back (group.c counts in it).
 *
 * Joining and leaving take flock(2) on the segment.  The kernel drops the
 * lock of a process that dies, so it cannot be left held.  It orders
 * setting the segment up (whoever holds it and finds no magic does it, so a
 * creator killed half way leaves nothing stuck), adopting the joiner's
 * limits when no member is left (limits are not frozen for good at first
 * creation, as HAMi-core's are), and removing the segment when the last
 * member leaves.  A member also holds a read lock on the segment's first
 * byte for its life, so that a joiner that finds the segment emptied or
 * zeroed can tell tampering from a creator that died half way
 * (group_segment.c).
 *
 * A process that closes its descriptors may open its own files where the
 * segment's was: its descriptor is checked to be the segment (its device
 * and inode) before it is locked or closed, and opened again by name to
 * leave.  A forked child opens the segment again at its first reservation
 * to take a slot of its own.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "core/conf.h"
#include "runtime/group/group_join.h"
#include "runtime/group/group_gpus.h"
#include "runtime/group/group_reclaim.h"
#include "runtime/group/group_member.h"
#include "core/log.h"
#include "runtime/group/group_segment.h"

static bool said_mismatch;

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
  cmg__seg_adopt(s, cmg__gs.own, cmg__gs.own_gpu, cmg__gs.n_own_gpu,
                 cmg__gs.self_pid);
  atomic_store_explicit(&s->h.magic, SEG_MAGIC, memory_order_release);
}

/* Says once per process (a forked child inherits having said it) that our
 * options differ from the group's. */
static void
compare(const struct seg *s)
{
  struct seg_limit theirs[SEG_DEVICES + 1];
  char a[1024], b[1024];
  bool same = s->h.n_limit_gpu == cmg__gs.n_own_gpu;

  if (said_mismatch)
    return;
  memcpy(theirs, s->h.limit_dev, sizeof(s->h.limit_dev));
  theirs[SEG_DEVICES] = s->h.limit;
  for (int d = 0; d <= SEG_DEVICES; d++)
    same = same && cmg__seg_is_same_limit(&cmg__gs.own[d], &theirs[d]);
  for (unsigned g = 0; same && g < cmg__gs.n_own_gpu; g++) {
    const struct seg_limit *l =
        cmg__seg_gpu_limit(&s->h, cmg__gs.own_gpu[g].uuid);
    same = l != NULL && cmg__seg_is_same_limit(&cmg__gs.own_gpu[g].limit, l);
  }
  if (!same) {
    cmg__log("group=%s: group_limit here is %s, but the group's is %s, "
             "set by its first member (pid %d); the group's stands",
             cmg__gs.group,
             cmg__seg_describe(cmg__gs.own, cmg__gs.own_gpu, cmg__gs.n_own_gpu,
                               a, sizeof(a)),
             cmg__seg_describe(theirs, s->h.limit_gpu, s->h.n_limit_gpu, b,
                               sizeof(b)),
             (int)s->h.creator);
    said_mismatch = true;
  }
}

/* With the lock held: reclaims the dead, adopts our limits if nobody is
 * left, and takes a slot. */
static int
join_locked(struct seg *s, char *err, size_t errlen)
{
  struct cmg__member m = cmg__group_member();

  m.locked = true;
  cmg__group_scan(s, &m);
  atomic_store(&s->h.scan_ns, cmg__group_clock_ns(CLOCK_MONOTONIC_COARSE));
  if (cmg__seg_members(s) == 0)
    cmg__seg_adopt(s, cmg__gs.own, cmg__gs.own_gpu, cmg__gs.n_own_gpu,
                   cmg__gs.self_pid);
  else if (!cmg__gs.registry)
    compare(s);
  memcpy(cmg__gs.caps, s->h.limit_dev, sizeof(s->h.limit_dev));
  cmg__gs.caps[SEG_DEVICES] = s->h.limit;
  cmg__group_forget_names();
  struct seg_slot *sl = cmg__seg_claim(s, cmg__gs.self_pid, cmg__gs.self_start,
                                       cmg__gs.self_pidns, cmg__gs.self_comm);
  if (sl == NULL)
    return cmg__seg_fail(err, errlen, NULL, -EUSERS,
                         "all %u member slots of %s "
                         "are taken",
                         SEG_SLOTS, cmg__gs.shm_path);
  for (int d = 0; d < SEG_DEVICES; d++)
    atomic_store_explicit(
        &sl->dev[d].context,
        atomic_load_explicit(&cmg__gs.noted[d], memory_order_relaxed),
        memory_order_relaxed);
  cmg__gs.mine = sl;
  return 0;
}

/* Whether fd, locked, is still the file the segment's name leads to: a
 * joiner that waited for the lock may find that its holder removed it. */
static bool
is_named(int fd)
{
  struct stat ours, named;
  return fstat(fd, &ours) == 0 && stat(cmg__gs.shm_path, &named) == 0 &&
         ours.st_dev == named.st_dev && ours.st_ino == named.st_ino;
}

/* A segment that could not be given its memory is still empty (nobody set
 * it up, nobody holds it): it goes, so that a full /dev/shm is not left
 * with a file of ours in it. */
static void
remove_empty(int fd)
{
  struct stat st;
  if (fstat(fd, &st) == 0 && st.st_size == 0 && !cmg__seg_is_held(fd) &&
      is_named(fd))
    shm_unlink(cmg__gs.shm_name);
}

/* The line for a lock not taken.  Held past its bound, the group's caps
 * are still known from the header, for the memory views meanwhile
 * (group.c), or else ours are. */
static void
locked_out(int fd, int rc, char *err, size_t errlen)
{
  if (rc == -ETIMEDOUT && cmg__seg_peek_limits(fd, cmg__gs.caps) != 0)
    memcpy(cmg__gs.caps, cmg__gs.own, sizeof(cmg__gs.caps));
  cmg__seg_fail(err, errlen, NULL, rc, "cannot lock %s: %s", cmg__gs.shm_path,
                rc == -ETIMEDOUT ? "another process held it for 2 s "
                                   "(a member stopped while joining?)"
                                 : strerror(-rc));
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

    int fd = shm_open(cmg__gs.shm_name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
      created = false;
      fd = shm_open(cmg__gs.shm_name, O_RDWR, 0);
      if (fd < 0 && errno == ENOENT)
        continue; /* its last member removed it meanwhile */
    }
    if (fd < 0) {
      rc = errno;
      return cmg__seg_fail(err, errlen, NULL, -rc, "cannot open %s: %s",
                           cmg__gs.shm_path, strerror(rc));
    }
    /* The umask may have taken bits the other members need. */
    rc = created && fchmod(fd, 0600) != 0 ? -errno : 0;
    if (rc == 0)
      rc = cmg__seg_check_file(fd, cmg__gs.shm_path, NULL, err, errlen);
    if (rc == 0 && (rc = cmg__seg_lock(fd, LOCK_TIMEOUT_NS)) != 0)
      locked_out(fd, rc, err, errlen);
    if (rc == 0 && !is_named(fd))
      rc = -EAGAIN;
    if (rc == 0)
      rc = cmg__seg_map(fd, cmg__gs.shm_path, &s, &fresh, err, errlen);
    if (rc == -ENOSPC)
      remove_empty(fd);
    if (rc == 0 && fresh)
      init_segment(s);
    if (rc == 0)
      rc = join_locked(s, err, errlen);
    /* A registry of another layout, left by a killed process: replaced. */
    if (rc == -EPROTO && cmg__gs.registry &&
        cmg__seg_remove_abandoned(fd, cmg__gs.shm_name, cmg__gs.shm_path,
                                  cmg__gs.self_pidns))
      rc = -EAGAIN;
    struct stat st;
    if (rc == 0 && fstat(fd, &st) == 0) {
      cmg__seg_hold(fd);
      cmg__gs.seg = s;
      cmg__gs.seg_fd = fd;
      cmg__gs.seg_dev = st.st_dev;
      cmg__gs.seg_ino = st.st_ino;
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
                       cmg__gs.shm_path);
}

/* Who this process is, for its slot. */
static void
identify_self(void)
{
  char letter;

  cmg__gs.self_pid = getpid();
  if (cmg__seg_proc_stat(cmg__gs.self_pid, &letter, &cmg__gs.self_start) != 0)
    cmg__gs.self_start = 0;
  cmg__gs.self_pidns = cmg__seg_pidns_of("/proc/self/ns/pid");
  memset(cmg__gs.self_comm, 0, sizeof(cmg__gs.self_comm));
  int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = read(fd, cmg__gs.self_comm, sizeof(cmg__gs.self_comm) - 1);
    close(fd);
    if (n > 0 && cmg__gs.self_comm[n - 1] == '\n')
      cmg__gs.self_comm[n - 1] = '\0';
  }
}

int
cmg__group_join(const struct cmg__config *cfg, char *err, size_t errlen)
{
  int expected = CMG__GS_OFF;

  if (err != NULL && errlen > 0)
    err[0] = '\0';
  if (!atomic_compare_exchange_strong(&cmg__gs.state, &expected,
                                      CMG__GS_JOINING))
    return -EALREADY;
  cmg__gs.registry = cfg->group[0] == '\0';
  snprintf(cmg__gs.group, sizeof(cmg__gs.group), "%s",
           cmg__gs.registry ? REGISTRY_NAME : cfg->group);
  if (!cmg__gs.registry && !cmg__seg_is_valid_name(cfg->group)) {
    atomic_store(&cmg__gs.state, CMG__GS_BROKEN);
    return cmg__seg_fail(err, errlen, NULL, -EINVAL,
                         "bad group name: expected 1 "
                         "to 63 letters, digits, '-', '_' or '.'");
  }
  for (int d = 0; d < SEG_DEVICES; d++)
    cmg__gs.own[d] =
        (struct seg_limit){ .kind = cfg->group_limit_dev[d].kind,
                            .ppm = cfg->group_limit_dev[d].ppm,
                            .bytes = cfg->group_limit_dev[d].bytes };
  cmg__gs.own[SEG_DEVICES] =
      (struct seg_limit){ .kind = cfg->group_limit.kind,
                          .ppm = cfg->group_limit.ppm,
                          .bytes = cfg->group_limit.bytes };
  cmg__gs.n_own_gpu = 0;
  for (unsigned k = 0; k < cfg->n_gpu && k < SEG_GPU_LIMITS; k++) {
    const struct cmg__limit *l = &cfg->gpu[k].group_limit;
    if (l->kind == CMG__LIMIT_NONE)
      continue;
    struct seg_gpu_limit *g = &cmg__gs.own_gpu[cmg__gs.n_own_gpu++];
    memcpy(g->uuid, cfg->gpu[k].uuid, sizeof(g->uuid));
    g->limit =
        (struct seg_limit){ .kind = l->kind, .ppm = l->ppm, .bytes = l->bytes };
  }
  /* Ours until the group's are read: what a group that cannot be joined
   * shows as its cap. */
  memcpy(cmg__gs.caps, cmg__gs.own, sizeof(cmg__gs.caps));
  snprintf(cmg__gs.shm_name, sizeof(cmg__gs.shm_name), "/cumemguard.%u.%s",
           (unsigned)geteuid(), cmg__gs.group);
  snprintf(cmg__gs.shm_path, sizeof(cmg__gs.shm_path), SHM_DIR "%s",
           cmg__gs.shm_name);
  identify_self();
  int rc = attach(err, errlen);
  if (cmg__gs.registry) {
    /* Being seen is not worth failing for: no registry, no slot.  Only
     * a full /dev/shm, which the user can do something about, is said. */
    if (rc == -ENOSPC)
      snprintf(cmg__gs.why, sizeof(cmg__gs.why), "%s", err);
    atomic_store_explicit(&cmg__gs.state,
                          rc == 0         ? CMG__GS_JOINED
                          : rc == -ENOSPC ? CMG__GS_UNSEEN
                                          : CMG__GS_OFF,
                          memory_order_release);
    if (err != NULL && errlen > 0)
      err[0] = '\0';
    return 0;
  }
  if (rc == -ETIMEDOUT) {
    /* Delayed, not disabled: the next reservation tries again. */
    snprintf(cmg__gs.why, sizeof(cmg__gs.why), "%s", err);
    atomic_store_explicit(&cmg__gs.state, CMG__GS_PENDING,
                          memory_order_release);
    err[0] = '\0';
    return 0;
  }
  atomic_store_explicit(&cmg__gs.state,
                        rc == 0 ? CMG__GS_JOINED : CMG__GS_BROKEN,
                        memory_order_release);
  return rc;
}

/* Whether fd is the segment's file (dev, ino) still: a program may close
 * every descriptor and open its own files, which must never be locked,
 * read or closed by us. */
static bool
is_ours(int fd, dev_t dev, ino_t ino)
{
  struct stat st;
  return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* A forked child's first use: a slot of its own, through its own open
 * file (the parent's lock is on the parent's).  Also a joiner's next try
 * after the lock was held too long. */
int
cmg__group_rejoin(void)
{
  struct seg *old = cmg__gs.seg;
  int old_fd = cmg__gs.seg_fd;
  dev_t old_dev = cmg__gs.seg_dev;
  ino_t old_ino = cmg__gs.seg_ino;
  char err[256];

  identify_self();
  int rc = attach(err, sizeof(err));
  if (rc == -ETIMEDOUT && !cmg__gs.registry) {
    snprintf(cmg__gs.why, sizeof(cmg__gs.why), "%s", err);
    return rc;
  }
  if (rc != 0 && !cmg__gs.registry) {
    cmg__log("group=%s: %s; no device allocation will succeed", cmg__gs.group,
             err);
    return rc;
  }
  if (old != NULL && old != cmg__gs.seg)
    munmap(old, sizeof(*old));
  if (old_fd >= 0 && old_fd != cmg__gs.seg_fd &&
      is_ours(old_fd, old_dev, old_ino))
    close(old_fd);
  return 0;
}

void
cmg__group_after_fork(void)
{
  int st = atomic_load(&cmg__gs.state);

  cmg__group_unhold();
  if (st == CMG__GS_JOINED || st == CMG__GS_JOINING || st == CMG__GS_FORKED ||
      st == CMG__GS_PENDING) {
    cmg__gs.mine = NULL;
    atomic_store(&cmg__gs.state, CMG__GS_FORKED);
  }
}

/* A descriptor of the segment to lock for leaving: seg_fd, or where the
 * program closed it, the segment opened again by name if it is the same
 * file; -1 when it is gone (its last member is then left to status). */
static int
leave_fd(void)
{
  if (is_ours(cmg__gs.seg_fd, cmg__gs.seg_dev, cmg__gs.seg_ino))
    return cmg__gs.seg_fd;
  int fd = shm_open(cmg__gs.shm_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd >= 0 && !is_ours(fd, cmg__gs.seg_dev, cmg__gs.seg_ino)) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* Until no thread of ours is changing our bytes, for LEAVE_WAIT_NS at
 * most: after our state says we left, none begins another (group.c). */
static void
wait_still(const struct seg_slot *sl)
{
  struct seg_still at;
  uint64_t deadline = cmg__group_clock_ns(CLOCK_MONOTONIC) + LEAVE_WAIT_NS;

  while (!cmg__seg_is_still(sl, &at) &&
         cmg__group_clock_ns(CLOCK_MONOTONIC) < deadline)
    nanosleep(&(struct timespec){ 0, 20000 }, NULL);
}

/* Gives back what this process holds (the driver frees its memory at
 * exit) and removes the segment if no member is left.  The slot is marked
 * gone, not freed: a thread that passed the state check before us may
 * still write it.  The next scan after the process is gone frees it. */
void
cmg__group_leave(void)
{
  int expected = CMG__GS_JOINED;
  struct seg *s = cmg__gs.seg;
  struct stat ours, named;

  if (!atomic_compare_exchange_strong(&cmg__gs.state, &expected,
                                      CMG__GS_LEFT)) {
    expected = CMG__GS_FORKED;
    atomic_compare_exchange_strong(&cmg__gs.state, &expected, CMG__GS_LEFT);
    return;
  }
  atomic_thread_fence(memory_order_seq_cst);
  wait_still(cmg__gs.mine);
  atomic_store(&cmg__gs.mine->gone, 1);
  /* The lock is held for a scan at most, by a member joining or leaving;
   * if it stays taken, that member is not gone and removes the segment,
   * and our bytes go back when the process is found gone. */
  int fd = leave_fd();
  if (fd < 0 || cmg__seg_lock(fd, LEAVE_LOCK_NS) != 0) {
    if (fd >= 0 && fd != cmg__gs.seg_fd)
      close(fd);
    cmg__seg_wake_all(s);
    return;
  }
  struct cmg__member m = cmg__group_member();
  m.locked = true;
  m.leaving = true;
  cmg__group_scan(s, &m);
  if (cmg__seg_members(s) == 0 && fstat(fd, &ours) == 0 &&
      stat(cmg__gs.shm_path, &named) == 0 && ours.st_ino == named.st_ino &&
      ours.st_dev == named.st_dev) {
    atomic_store(&s->h.retired, 1);
    shm_unlink(cmg__gs.shm_name);
  }
  flock(fd, LOCK_UN);
  if (fd != cmg__gs.seg_fd)
    close(fd);
}
