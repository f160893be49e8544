/*
 * The group segment, /dev/shm/cumemguard.<uid>.<name>: its layout (see
 * segment.h), and what every reader of one needs: checking that a file is
 * ours alone and holds a segment of this layout, the liveness of a member's
 * pid, and the group's limits in bytes and in words.
 *
 * The segment is untrusted input: its owner and mode are checked (a
 * segment another user made, or can reach, is refused), then the magic,
 * layout, sizes, limits and slot states; a bad one is one line.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "core/segment.h"
#include "core/size.h"

static bool
is_name_char(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

bool
cmg__seg_is_valid_name(const char *s)
{
  size_t n;

  for (n = 0; s[n] != '\0'; n++) {
    if (n >= 63 || !is_name_char(s[n]))
      return false;
  }
  return n > 0;
}

/* Writes the message into err, after "group 'NAME': " when a name is
 * given (the status view; the library's caller names the group itself);
 * returns rc. */
int
cmg__seg_fail(char *err, size_t errlen, const char *name, int rc,
              const char *fmt, ...)
{
  va_list ap;
  int n = 0;

  if (err == NULL || errlen == 0)
    return rc;
  err[0] = '\0';
  if (name != NULL)
    n = snprintf(err, errlen, "group '%s': ", name);
  if (n >= 0 && (size_t)n < errlen) {
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return rc;
}

/*
 * The state letter and start time (field 22, clock ticks after boot) of pid
 * from /proc/PID/stat.  Returns 0, -ENOENT when there is no such process,
 * or another negative errno when /proc cannot tell.
 */
int
cmg__seg_proc_stat(pid_t pid, char *letter, uint64_t *start)
{
  char path[32], buf[1024];

  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return -EIO;
  buf[n] = '\0';
  /* The command may hold spaces and parentheses; it ends at the last ')'. */
  char *p = strrchr(buf, ')');
  if (p == NULL || p[1] != ' ')
    return -EIO;
  p += 2;
  *letter = *p;
  for (int field = 3; field < 22; field++) {
    p = strchr(p, ' ');
    if (p == NULL)
      return -EIO;
    p++;
  }
  if (*p < '0' || *p > '9')
    return -EIO;
  for (*start = 0; *p >= '0' && *p <= '9'; p++)
    *start = *start * 10 + (uint64_t)(*p - '0');
  return 0;
}

uint64_t
cmg__seg_pidns_of(const char *path)
{
  struct stat st;

  return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Whether pid no longer names the process that started at `start` (0:
 * unknown, then only existence counts).  A zombie's memory is gone. */
bool
cmg__seg_is_dead(pid_t pid, uint64_t start)
{
  uint64_t now_start = 0;
  char letter = '\0'; /* set when proc_stat returns 0 */

  if (pid <= 0 || pid > PID_LIMIT)
    return true;
  if (kill(pid, 0) != 0 && errno == ESRCH)
    return true;
  int rc = cmg__seg_proc_stat(pid, &letter, &now_start);
  if (rc == -ENOENT)
    return true;
  if (rc != 0)
    return false;
  return letter == 'Z' || letter == 'X' || (start != 0 && now_start != start);
}

uint64_t
cmg__seg_limit_bytes(const struct seg_limit *l, uint64_t physical)
{
  switch (l->kind) {
  case CMG__LIMIT_BYTES:
    return l->bytes;
  case CMG__LIMIT_PERCENT:
    return (uint64_t)((unsigned __int128)physical * l->ppm / PPM);
  default:
    return CMG__NO_LIMIT;
  }
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

const char *
cmg__seg_describe_one(const struct seg_limit *l, char *buf, size_t len)
{
  if (l->kind == CMG__LIMIT_BYTES)
    return cmg__format_size(l->bytes, buf, len);
  if (l->kind == CMG__LIMIT_PERCENT) {
    snprintf(buf, len, "%g%%", l->ppm / 10000.0);
    return buf;
  }
  snprintf(buf, len, "none");
  return buf;
}

/* "4.0 GiB", "50%", "none", then " (device 1: 2.0 GiB, ..., GPU-...: 3.0
 * GiB)". */
const char *
cmg__seg_describe(const struct seg_limit *limits,
                  const struct seg_gpu_limit *gpu, unsigned n_gpu, char *buf,
                  size_t len)
{
  char one[32], uuid[CMG__UUID_TEXT];
  size_t n;
  bool any = false;

  cmg__seg_describe_one(&limits[SEG_DEVICES], buf, len);
  for (int d = 0; d < SEG_DEVICES; d++) {
    if (limits[d].kind == CMG__LIMIT_NONE)
      continue;
    n = strlen(buf);
    snprintf(buf + n, len - n, "%s device %d: %s", any ? "," : " (", d,
             cmg__seg_describe_one(&limits[d], one, sizeof(one)));
    any = true;
  }
  for (unsigned g = 0; g < n_gpu; g++) {
    n = strlen(buf);
    cmg__uuid_format(gpu[g].uuid, uuid);
    snprintf(buf + n, len - n, "%s%s: %s", any ? ", " : " (", uuid,
             cmg__seg_describe_one(&gpu[g].limit, one, sizeof(one)));
    any = true;
  }
  n = strlen(buf);
  if (any)
    snprintf(buf + n, len - n, ")");
  return buf;
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
cmg__seg_check_owner(int fd, const char *path, const char *name, unsigned uid,
                     char *err, size_t errlen)
{
  struct stat st;

  if (fstat(fd, &st) != 0)
    return cmg__seg_fail(err, errlen, name, -errno, "cannot stat %s: %s", path,
                         strerror(errno));
  if (!S_ISREG(st.st_mode))
    return cmg__seg_fail(err, errlen, name, -EPERM,
                         "%s is not a regular file; "
                         "refusing it",
                         path);
  if (st.st_uid != uid)
    return cmg__seg_fail(
        err, errlen, name, -EPERM,
        "%s belongs to uid %u, not to "
        "this user (uid %u); refusing to share a cap through it",
        path, (unsigned)st.st_uid, uid);
  if ((st.st_mode & 077) != 0)
    return cmg__seg_fail(err, errlen, name, -EPERM,
                         "%s has mode %04o, which lets "
                         "other users reach it; refusing it",
                         path, (unsigned)(st.st_mode & 07777));
  return 0;
}

/* The line for a segment of the wrong size: another layout, or not ours. */
int
cmg__seg_describe_size(int fd, off_t size, const char *path, const char *name,
                       char *err, size_t errlen)
{
  struct {
    uint64_t magic;
    uint32_t version;
  } head = { 0, 0 };

  if (pread(fd, &head, sizeof(head), 0) == (ssize_t)sizeof(head) &&
      head.magic == SEG_MAGIC)
    return cmg__seg_fail(
        err, errlen, name, -EPROTO,
        "%s was made by an "
        "incompatible cumemguard (layout %u, %lld bytes; this one "
        "reads layout %u, %zu bytes); run the group with one "
        "version",
        path, head.version, (long long)size, SEG_VERSION, sizeof(struct seg));
  return cmg__seg_fail(
      err, errlen, name, -EBADMSG,
      "%s is not a cumemguard group "
      "segment (%lld bytes, bad magic); remove it once no member "
      "of the group runs",
      path, (long long)size);
}

static uint64_t
fnv(uint64_t h, const void *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ull;
  return h;
}

/* FNV-1a over the fields set up with the group, one at a time (the
 * padding between them is no field). */
static uint64_t
checksum(const struct seg_header *h)
{
  uint64_t x = 0xcbf29ce484222325ull;
  x = fnv(x, &h->version, sizeof(h->version));
  x = fnv(x, &h->header_size, sizeof(h->header_size));
  x = fnv(x, &h->slot_size, sizeof(h->slot_size));
  x = fnv(x, &h->slot_count, sizeof(h->slot_count));
  x = fnv(x, &h->device_count, sizeof(h->device_count));
  x = fnv(x, &h->total_size, sizeof(h->total_size));
  x = fnv(x, &h->created, sizeof(h->created));
  x = fnv(x, &h->creator, sizeof(h->creator));
  x = fnv(x, &h->visible_set, sizeof(h->visible_set));
  x = fnv(x, h->visible, sizeof(h->visible));
  for (int d = 0; d <= SEG_DEVICES + SEG_GPU_LIMITS; d++) {
    const struct seg_limit *l = d < SEG_DEVICES ? &h->limit_dev[d]
                                : d == SEG_DEVICES
                                    ? &h->limit
                                    : &h->limit_gpu[d - SEG_DEVICES - 1].limit;
    x = fnv(x, &l->kind, sizeof(l->kind));
    x = fnv(x, &l->ppm, sizeof(l->ppm));
    x = fnv(x, &l->bytes, sizeof(l->bytes));
  }
  x = fnv(x, &h->n_limit_gpu, sizeof(h->n_limit_gpu));
  for (int g = 0; g < SEG_GPU_LIMITS; g++)
    x = fnv(x, h->limit_gpu[g].uuid, sizeof(h->limit_gpu[g].uuid));
  return x;
}

void
cmg__seg_seal(struct seg *s)
{
  s->h.checksum = checksum(&s->h);
}

int
cmg__seg_peek_limits(int fd, struct seg_limit out[SEG_DEVICES + 1])
{
  struct seg_header h;

  if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
      h.magic != SEG_MAGIC || h.version != SEG_VERSION ||
      h.header_size != sizeof(h) || h.total_size != sizeof(struct seg) ||
      h.checksum != checksum(&h))
    return -EINVAL;
  memcpy(out, h.limit_dev, sizeof(h.limit_dev));
  out[SEG_DEVICES] = h.limit;
  return 0;
}

static bool
is_valid_limit(const struct seg_limit *l)
{
  return l->kind == CMG__LIMIT_NONE || l->kind == CMG__LIMIT_BYTES ||
         (l->kind == CMG__LIMIT_PERCENT && l->ppm > 0 && l->ppm <= PPM);
}

/*
 * Checks a segment (mapped, or a copy): 0, -EAGAIN when its last member
 * removed it, -EINPROGRESS when it was never set up, -EPROTO for another
 * layout, -EBADMSG when it is corrupt; one line in err.
 */
int
cmg__seg_validate(const struct seg *s, const char *path, const char *name,
                  char *err, size_t errlen)
{
  const struct seg_header *h = &s->h;
  uint64_t magic = atomic_load_explicit(&h->magic, memory_order_acquire);

  if (magic == 0)
    return cmg__seg_fail(err, errlen, name, -EINPROGRESS,
                         "%s is not set up yet "
                         "(the next member to join sets it up)",
                         path);
  if (magic != SEG_MAGIC)
    return cmg__seg_fail(err, errlen, name, -EBADMSG,
                         "%s is not a cumemguard group "
                         "segment (bad magic); remove it once no member of the "
                         "group runs",
                         path);
  if (h->version != SEG_VERSION || h->header_size != sizeof(*h) ||
      h->slot_size != sizeof(struct seg_slot) || h->slot_count != SEG_SLOTS ||
      h->device_count != SEG_DEVICES || h->total_size != sizeof(struct seg))
    return cmg__seg_fail(
        err, errlen, name, -EPROTO,
        "%s was made by an incompatible "
        "cumemguard (layout %u, %u slots, %u devices; this one reads "
        "layout %u, %u, %u); run the group with one version",
        path, h->version, h->slot_count, h->device_count, SEG_VERSION,
        SEG_SLOTS, SEG_DEVICES);
  if (atomic_load_explicit(&h->retired, memory_order_acquire) != 0)
    return -EAGAIN;
  bool limits_ok =
      is_valid_limit(&h->limit) && h->n_limit_gpu <= SEG_GPU_LIMITS;
  for (int d = 0; d < SEG_DEVICES; d++)
    limits_ok = limits_ok && is_valid_limit(&h->limit_dev[d]);
  for (int g = 0; g < SEG_GPU_LIMITS; g++)
    limits_ok = limits_ok && is_valid_limit(&h->limit_gpu[g].limit);
  for (int d = 0; d < SEG_DEVICES; d++)
    limits_ok = limits_ok &&
                atomic_load_explicit(&s->name[d].state, memory_order_acquire) <=
                    NAME_SET;
  if (!limits_ok || h->creator <= 0 || h->creator > PID_LIMIT ||
      memchr(h->visible, '\0', sizeof(h->visible)) == NULL ||
      h->checksum != checksum(h))
    return cmg__seg_fail(err, errlen, name, -EBADMSG,
                         "%s is corrupt (bad header); "
                         "remove it once no member of the group runs",
                         path);
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    uint64_t w = atomic_load_explicit(&s->slot[i].owner, memory_order_relaxed);
    uint32_t st = (uint32_t)w;
    int64_t pid = (int64_t)(w >> 32);
    if (st > SLOT_RECLAIMING ||
        (st != SLOT_FREE && (pid <= 0 || pid > PID_LIMIT)) ||
        (st == SLOT_FREE && pid != 0))
      return cmg__seg_fail(err, errlen, name, -EBADMSG,
                           "%s is corrupt (slot %u); "
                           "remove it once no member of the group runs",
                           path, i);
  }
  return 0;
}

/* ---- slots -------------------------------------------------------------- */

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

unsigned
cmg__seg_members(const struct seg *s)
{
  unsigned n = 0;

  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    uint64_t w = atomic_load_explicit(&s->slot[i].owner, memory_order_relaxed);
    n += (uint32_t)w != SLOT_FREE &&
         atomic_load_explicit(&s->slot[i].gone, memory_order_relaxed) == 0;
  }
  return n;
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

uint64_t
cmg__seg_held(const struct seg_slot *sl, int d)
{
  uint64_t sum = atomic_load_explicit(&sl->dev[d].used, memory_order_relaxed);
  for (int i = 0; i < SEG_LANES; i++)
    sum += atomic_load_explicit(&sl->lane[i].held[d], memory_order_relaxed);
  /* Below zero: a reclaimer emptied the slot under a live thread. */
  return sum > UINT64_MAX / 2 ? 0 : sum;
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

/* ---- opening ------------------------------------------------------------ */

static uint64_t
monotonic_ns(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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

static int
emptied(const char *path, char *err, size_t errlen)
{
  return cmg__seg_fail(err, errlen, NULL, -EBADMSG,
                       "%s was emptied, truncated or overwritten while "
                       "members of the group hold it; remove it once they "
                       "are gone",
                       path);
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
  if (s->h.checksum != checksum(&s->h))
    return cmg__seg_fail(err, errlen, NULL, -EBADMSG,
                         "%s was overwritten (its header changed)", path);
  return 0;
}

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
  *out = p;
  /* With the lock held, no magic means nobody is setting it up: its
   * creator died half way, or it is ours. */
  uint64_t magic = atomic_load_explicit(&(*out)->h.magic, memory_order_acquire);
  *fresh_out = fresh || magic == 0;
  if (magic == 0 && !fresh && cmg__seg_is_held(fd)) {
    munmap(p, sizeof(struct seg));
    return emptied(path, err, errlen);
  }
  if (*fresh_out)
    return 0;
  return cmg__seg_validate(*out, path, NULL, err, errlen);
}

const struct seg_limit *
cmg__seg_gpu_limit(const struct seg_header *h, const unsigned char *uuid)
{
  for (uint32_t g = 0; uuid != NULL && g < h->n_limit_gpu && g < SEG_GPU_LIMITS;
       g++)
    if (memcmp(h->limit_gpu[g].uuid, uuid, CMG__UUID_BYTES) == 0)
      return &h->limit_gpu[g].limit;
  return NULL;
}

const struct seg_limit *
cmg__seg_cap_of(const struct seg *s, int i)
{
  const struct seg_limit *g = NULL;
  if (atomic_load_explicit(&s->name[i].state, memory_order_acquire) == NAME_SET)
    g = cmg__seg_gpu_limit(&s->h, s->name[i].uuid);
  if (g != NULL)
    return g;
  return s->h.limit_dev[i].kind != CMG__LIMIT_NONE ? &s->h.limit_dev[i]
                                                   : &s->h.limit;
}

bool
cmg__seg_gpu_of(const struct seg *s, int i, char out[CMG__UUID_TEXT])
{
  if (atomic_load_explicit(&s->name[i].state, memory_order_acquire) !=
          NAME_SET ||
      s->name[i].uuid[0] == 0xff)
    return false;
  cmg__uuid_format(s->name[i].uuid, out);
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
