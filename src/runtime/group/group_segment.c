/*
 * The group segment as its members write it (core/segment.c has its
 * layout and what every reader needs): opening and sizing it under its
 * lock, setting a new group up, taking a slot, the liveness locks, and
 * the counters its members change.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/size.h"
#include "runtime/group/group_segment.h"

/* Gives every page of the segment its memory before anything touches it:
 * a tmpfs that is full (Docker's 64 MiB /dev/shm, filled by a DataLoader)
 * would otherwise raise SIGBUS at the first write to a page it cannot
 * give, before main.  Also for a segment made by a library that only
 * sized it: its holes are filled, or the join fails here.  0, or a
 * negative errno with one line naming the space needed and free. */
static int
reserve_pages(int fd, const char *path, char *err, size_t errlen)
{
  char need[32], have[32];
  struct statvfs vfs;
  struct rlimit fsize;
  struct stat st;

  if (fstat(fd, &st) == 0 &&
      (uint64_t)st.st_blocks * 512 >= (uint64_t)sizeof(struct seg))
    return 0;
  /* Past the file size limit the kernel sends SIGXFSZ, which kills. */
  if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY &&
      fsize.rlim_cur < (rlim_t)sizeof(struct seg))
    return cmg__seg_fail(err, errlen, NULL, -EFBIG,
                         "cannot size %s: the file size limit (ulimit -f) "
                         "is below its %zu bytes",
                         path, sizeof(struct seg));
  int rc = posix_fallocate(fd, 0, (off_t)sizeof(struct seg));
  if (rc == 0)
    return 0;
  if (rc != ENOSPC && rc != ENOMEM)
    return cmg__seg_fail(err, errlen, NULL, -rc, "cannot size %s: %s", path,
                         strerror(rc));
  cmg__format_size(sizeof(struct seg), need, sizeof(need));
  if (fstatvfs(fd, &vfs) == 0)
    cmg__format_size((uint64_t)vfs.f_bavail * vfs.f_frsize, have, sizeof(have));
  else
    snprintf(have, sizeof(have), "an unknown amount");
  return cmg__seg_fail(err, errlen, NULL, -ENOSPC,
                       SHM_DIR " has no room for %s: it needs %s, and %s "
                               "is free",
                       path, need, have);
}

static int
emptied(const char *path, char *err, size_t errlen)
{
  return cmg__seg_fail(err, errlen, NULL, -EBADMSG,
                       "%s was emptied, truncated or overwritten while "
                       "members of the group hold it; remove it once they "
                       "are gone",
                       path);
}

static uint64_t
monotonic_ns(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The group's limit entry for device d: group_limit.d if set, else
 * group_limit. */
const struct seg_limit *
cmg__seg_limit_entry(const struct seg_limit *limits, int d)
{
  return limits[d].kind != CMG__LIMIT_NONE ? &limits[d] : &limits[SEG_DEVICES];
}

bool
cmg__seg_is_same_limit(const struct seg_limit *a, const struct seg_limit *b)
{
  return a->kind == b->kind &&
         (a->kind != CMG__LIMIT_BYTES || a->bytes == b->bytes) &&
         (a->kind != CMG__LIMIT_PERCENT || a->ppm == b->ppm);
}

/* Refuses a segment that is not a regular file of ours that only we can
 * reach: whatever its contents, another user could change them. */
int
cmg__seg_check_file(int fd, const char *path, const char *name, char *err,
                    size_t errlen)
{
  return cmg__seg_check_owner(fd, path, name, (unsigned)geteuid(), err, errlen);
}

int
cmg__seg_peek_limits(int fd, struct seg_limit out[SEG_DEVICES + 1])
{
  struct seg_header h;

  if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
      h.magic != SEG_MAGIC || h.version != SEG_VERSION ||
      h.header_size != sizeof(h) || h.total_size != sizeof(struct seg) ||
      !cmg__seg_is_sealed(&h))
    return -EINVAL;
  memcpy(out, h.limit_dev, sizeof(h.limit_dev));
  out[SEG_DEVICES] = h.limit;
  return 0;
}

int
cmg__seg_hold(int fd)
{
  struct flock l = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_len = 1 };
  return fcntl(fd, F_OFD_SETLK, &l) == 0 ? 0 : -errno;
}

bool
cmg__seg_is_held(int fd)
{
  struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1 };
  return fcntl(fd, F_OFD_GETLK, &l) == 0 && l.l_type != F_UNLCK;
}

int
cmg__seg_check_live(const struct seg *s, const char *path, uint64_t dev,
                    uint64_t ino, bool *truncated, char *err, size_t errlen)
{
  struct stat st;
  *truncated = false;
  if (stat(path, &st) != 0 || (uint64_t)st.st_dev != dev ||
      (uint64_t)st.st_ino != ino)
    return cmg__seg_fail(err, errlen, NULL, -EBADMSG,
                         "%s was removed or made anew while in use", path);
  if (st.st_size < (off_t)sizeof(struct seg)) {
    *truncated = true;
    return cmg__seg_fail(err, errlen, NULL, -EBADMSG,
                         "%s was truncated while in use", path);
  }
  if (atomic_load_explicit(&s->h.magic, memory_order_acquire) != SEG_MAGIC)
    return cmg__seg_fail(err, errlen, NULL, -EBADMSG,
                         "%s was overwritten (bad magic)", path);
  if (!cmg__seg_is_sealed(&s->h))
    return cmg__seg_fail(err, errlen, NULL, -EBADMSG,
                         "%s was overwritten (its header changed)", path);
  return 0;
}

void
cmg__seg_sub32(_Atomic uint32_t *c, uint32_t n)
{
  uint32_t cur = atomic_load_explicit(c, memory_order_relaxed);

  while (!atomic_compare_exchange_weak(c, &cur, cur >= n ? cur - n : 0))
    ;
}

void
cmg__seg_wake_all(struct seg *s)
{
  atomic_fetch_add(&s->h.wake, 1);
  syscall(SYS_futex, &s->h.wake, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

bool
cmg__seg_is_abandoned(int fd, uint64_t pidns)
{
  struct seg_header h;
  struct stat st;
  size_t prefix = offsetof(struct seg_header, created);

  if (fstat(fd, &st) != 0 || pread(fd, &h, prefix, 0) != (ssize_t)prefix ||
      h.magic != SEG_MAGIC || h.total_size != (uint64_t)st.st_size ||
      h.slot_size < 3 * sizeof(uint64_t) || h.slot_count == 0 ||
      h.slot_count > PID_LIMIT ||
      (uint64_t)h.slot_size * h.slot_count > h.total_size - h.header_size)
    return false;
  off_t first = (off_t)(h.total_size - (uint64_t)h.slot_size * h.slot_count);
  for (uint32_t i = 0; i < h.slot_count; i++) {
    uint64_t w[3]; /* owner, start, pid namespace */
    if (pread(fd, w, sizeof(w), first + (off_t)i * h.slot_size) !=
        (ssize_t)sizeof(w))
      return false;
    if ((uint32_t)w[0] == SLOT_FREE)
      continue;
    /* Another namespace's pid cannot be looked up from here. */
    if ((w[2] != 0 && pidns != 0 && w[2] != pidns) ||
        !cmg__seg_is_dead((pid_t)(w[0] >> 32), w[1]))
      return false;
  }
  return true;
}

bool
cmg__seg_remove_abandoned(int fd, const char *name, const char *path,
                          uint64_t pidns)
{
  struct stat ours, named;

  return cmg__seg_is_abandoned(fd, pidns) && fstat(fd, &ours) == 0 &&
         stat(path, &named) == 0 && ours.st_ino == named.st_ino &&
         ours.st_dev == named.st_dev && shm_unlink(name) == 0;
}

void
cmg__seg_empty_held(struct seg_slot *sl)
{
  for (int i = 0; i < SEG_LANES; i++) {
    for (int d = 0; d < SEG_DEVICES; d++)
      atomic_store_explicit(&sl->lane[i].held[d], 0, memory_order_relaxed);
    atomic_store_explicit(&sl->lane[i].seq, 0, memory_order_relaxed);
  }
  for (int d = 0; d < SEG_DEVICES; d++)
    atomic_store_explicit(&sl->dev[d].used, 0, memory_order_relaxed);
  atomic_store_explicit(&sl->busy, 0, memory_order_relaxed);
}

bool
cmg__seg_is_still(const struct seg_slot *sl, struct seg_still *at)
{
  at->busy = atomic_load_explicit(&sl->busy, memory_order_acquire);
  if ((at->busy & BUSY_RUNNING) != 0)
    return false;
  for (int i = 0; i < SEG_LANES; i++) {
    at->seq[i] = atomic_load_explicit(&sl->lane[i].seq, memory_order_acquire);
    if (at->seq[i] & 1)
      return false;
  }
  return true;
}

void
cmg__seg_adopt(struct seg *s, const struct seg_limit own[SEG_DEVICES + 1],
               const struct seg_gpu_limit *gpu, unsigned n, pid_t creator)
{
  const char *visible = getenv("CUDA_VISIBLE_DEVICES");

  s->h.limit = own[SEG_DEVICES];
  memcpy(s->h.limit_dev, own, sizeof(s->h.limit_dev));
  s->h.creator = creator;
  s->h.created = (int64_t)time(NULL);
  s->h.visible_set = visible != NULL;
  memset(s->h.visible, 0, sizeof(s->h.visible));
  for (size_t i = 0;
       visible != NULL && visible[i] != '\0' && i < sizeof(s->h.visible) - 1;
       i++)
    s->h.visible[i] =
        visible[i] < 0x20 || visible[i] == 0x7f ? '?' : visible[i];
  memset(s->h.limit_gpu, 0, sizeof(s->h.limit_gpu));
  s->h.n_limit_gpu = n < SEG_GPU_LIMITS ? n : SEG_GPU_LIMITS;
  memcpy(s->h.limit_gpu, gpu, sizeof(*gpu) * s->h.n_limit_gpu);
  for (int d = 0; d < SEG_DEVICES; d++) {
    atomic_store(&s->dev[d].used, 0);
    atomic_store(&s->dev[d].peak, 0);
    atomic_store(&s->dev[d].physical, 0);
    atomic_store(&s->name[d].state, NAME_FREE);
    memset(s->name[d].uuid, 0, sizeof(s->name[d].uuid));
  }
  atomic_store(&s->h.waiters, 0);
  atomic_store(&s->h.scan_ns, 0);
  cmg__seg_seal(s);
}

struct seg_slot *
cmg__seg_claim(struct seg *s, pid_t pid, uint64_t start, uint64_t pidns,
               const char comm[16])
{
  uint64_t want = (uint64_t)(uint32_t)pid << 32 | SLOT_CLAIMED;

  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    struct seg_slot *sl = &s->slot[i];
    uint64_t w = SLOT_FREE;

    if (!atomic_compare_exchange_strong(&sl->owner, &w, want))
      continue;
    atomic_store_explicit(&sl->start, start, memory_order_relaxed);
    atomic_store_explicit(&sl->pidns, pidns, memory_order_relaxed);
    memcpy(sl->comm, comm, sizeof(sl->comm));
    atomic_store_explicit(&sl->gone, 0, memory_order_relaxed);
    return sl;
  }
  return NULL;
}

/* flock with a deadline: a member stopped while holding it must not hang
 * the others.  0, -ETIMEDOUT, or another negative errno. */
int
cmg__seg_lock(int fd, uint64_t timeout_ns)
{
  uint64_t deadline = monotonic_ns() + timeout_ns;
  long pause = 100000;

  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR)
      return -errno;
    if (monotonic_ns() >= deadline)
      return -ETIMEDOUT;
    nanosleep(&(struct timespec){ 0, pause }, NULL);
    if (pause < 20000000)
      pause *= 2;
  }
  return 0;
}

int
cmg__seg_map(int fd, const char *path, struct seg **out, bool *fresh_out,
             char *err, size_t errlen)
{
  struct stat st;
  int rc;

  if (fstat(fd, &st) != 0)
    return cmg__seg_fail(err, errlen, NULL, -errno, "cannot stat %s: %s", path,
                         strerror(errno));
  bool fresh = st.st_size == 0;
  if (fresh && cmg__seg_is_held(fd))
    return emptied(path, err, errlen);
  if (!fresh && st.st_size != (off_t)sizeof(struct seg))
    return cmg__seg_is_held(fd) ? emptied(path, err, errlen)
                                : cmg__seg_describe_size(fd, st.st_size, path,
                                                         NULL, err, errlen);
  if ((rc = reserve_pages(fd, path, err, errlen)) != 0)
    return rc;
  void *p =
      mmap(NULL, sizeof(struct seg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    return cmg__seg_fail(err, errlen, NULL, -errno, "cannot map %s: %s", path,
                         strerror(errno));
  /* With the lock held, no magic means nobody is setting it up: its
   * creator died half way, or it is ours.  Given out only once it is
   * kept, since the caller unmaps what it was given. */
  struct seg *s = p;
  uint64_t magic = atomic_load_explicit(&s->h.magic, memory_order_acquire);
  if (magic == 0 && !fresh && cmg__seg_is_held(fd)) {
    munmap(p, sizeof(struct seg));
    return emptied(path, err, errlen);
  }
  *out = s;
  *fresh_out = fresh || magic == 0;
  if (*fresh_out)
    return 0;
  return cmg__seg_validate(*out, path, NULL, err, errlen);
}
