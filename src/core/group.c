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
 * member that dies, however it dies, keeps its slot until another member
 * finds it gone (kill(pid, 0) fails, it is a zombie, or its start time
 * differs) and reclaims it: a compare-and-swap of the owner word lets
 * exactly one process do it, and every counter of the slot is taken with an
 * exchange before it is subtracted from the group's.  Members look for the
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
 * The segment is untrusted input: its owner and mode are checked (a
 * segment another user made, or can reach, is refused), then the magic,
 * layout, sizes, limits and slot states; a bad one is one line and the
 * process fails closed.  Counters are clamped, never underflowed.
 * Truncating a live segment, which only its own user can do, would fault
 * the members' mappings as a kill would; that is outside what is guarded.
 *
 * From a hook only the reserve, release and wait functions run: no
 * allocation, no stdio, no CUDA.  The first reservation of a forked child
 * opens the segment again to take a slot of its own.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
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
#include "core/log.h"
#include "core/size.h"

/* A counter that needed a lock would take a process-local one. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
               "counters shared between processes must be lock-free");

#define SEG_MAGIC 0x70756f7267676d63ull /* "cmggroup" */
#define SEG_VERSION 1u
#define SEG_SLOTS 256u
#define SEG_DEVICES CMG__MAX_DEVICES
#define SHM_DIR "/dev/shm"
#define PID_LIMIT 4194304 /* PID_MAX_LIMIT on 64-bit Linux */
#define NS 1000000000ull
#define SCAN_PERIOD_NS NS
#define SCAN_DENIAL_NS (NS / 10)
#define LOCK_TIMEOUT_NS (2 * NS)
#define LEAVE_LOCK_NS (NS / 10)
#define ATTACH_TRIES 8
#define PPM 1000000u

enum { SLOT_FREE, SLOT_CLAIMED, SLOT_RECLAIMING };

struct seg_limit {
  uint32_t kind; /* enum cmg__limit_kind */
  uint32_t ppm;
  uint64_t bytes;
};

struct seg_device {
  _Atomic uint64_t used;
  _Atomic uint64_t peak;
  _Atomic uint64_t physical; /* as the first member to use it saw it */
  uint64_t spare[5];
};

struct seg_slot {
  _Atomic uint64_t owner;    /* pid << 32 | SLOT_* */
  _Atomic uint64_t start;    /* /proc/PID/stat field 22; 0 unknown */
  _Atomic uint64_t pidns;    /* inode of /proc/PID/ns/pid; 0 unknown */
  _Atomic uint32_t waiting;  /* its threads in cmg__group_wait */
  uint32_t spare;
  char comm[16];
  _Atomic uint64_t used[SEG_DEVICES];
  _Atomic uint64_t peak[SEG_DEVICES];
} __attribute__((aligned(64)));

struct seg_header {
  _Atomic uint64_t magic;
  uint32_t version;
  uint32_t header_size;
  uint32_t slot_size;
  uint32_t slot_count;
  uint32_t device_count;
  _Atomic uint32_t retired; /* removed by its last member: join again */
  uint64_t total_size;
  int64_t created;          /* unix time the limits were set */
  int32_t creator;          /* pid of the member that set them */
  uint32_t visible_set;     /* whether it had CUDA_VISIBLE_DEVICES */
  char visible[256];
  struct seg_limit limit;   /* group_limit */
  struct seg_limit limit_dev[SEG_DEVICES]; /* group_limit.N */
  _Atomic uint32_t wake __attribute__((aligned(64))); /* the futex word */
  _Atomic uint32_t waiters;
  _Atomic uint64_t scan_ns; /* CLOCK_MONOTONIC_COARSE of the last scan */
};

struct seg {
  struct seg_header h;
  struct seg_device dev[SEG_DEVICES] __attribute__((aligned(64)));
  struct seg_slot slot[SEG_SLOTS];
};

/* The process's side.  OFF: no group; FORKED: a child that has not taken
 * a slot yet; BROKEN: every reservation fails; LEFT: after exit. */
enum { OFF, JOINING, JOINED, FORKED, BROKEN, LEFT };

static _Atomic int state = OFF;
static struct seg *seg;
static int seg_fd = -1;
static struct seg_slot *mine;
static char group[64];
static char shm_name[96];       /* "/cumemguard.<uid>.<group>" */
static char shm_path[112];      /* the same under /dev/shm, for messages */
static struct seg_limit own[SEG_DEVICES + 1];  /* ours; [SEG_DEVICES] all */
static struct seg_limit caps[SEG_DEVICES + 1]; /* the group's */
static _Atomic uint64_t physical_seen[SEG_DEVICES];
static _Atomic bool said_broken, said_drift;
static bool said_mismatch;
static pid_t self_pid;
static uint64_t self_start, self_pidns;
static char self_comm[16];

/* ---- small helpers ------------------------------------------------------ */

static bool
is_name_char(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

static bool
is_valid_name(const char *s)
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
static int __attribute__((format(printf, 5, 6)))
fail(char *err, size_t errlen, const char *name, int rc, const char *fmt,
     ...)
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

static uint64_t
clock_ns(clockid_t clock)
{
  struct timespec ts;

  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/*
 * The state letter and start time (field 22, clock ticks after boot) of pid
 * from /proc/PID/stat.  Returns 0, -ENOENT when there is no such process,
 * or another negative errno when /proc cannot tell.
 */
static int
proc_stat(pid_t pid, char *letter, uint64_t *start)
{
  char path[32], buf[1024], *p;
  ssize_t n;
  int fd, field;

  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return -EIO;
  buf[n] = '\0';
  /* The command may hold spaces and parentheses; it ends at the last ')'. */
  p = strrchr(buf, ')');
  if (p == NULL || p[1] != ' ')
    return -EIO;
  p += 2;
  *letter = *p;
  for (field = 3; field < 22; field++) {
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

static uint64_t
pidns_of(const char *path)
{
  struct stat st;

  return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Whether pid no longer names the process that started at `start` (0:
 * unknown, then only existence counts).  A zombie's memory is gone. */
static bool
is_dead(pid_t pid, uint64_t start)
{
  uint64_t now_start = 0;
  char letter = '\0';  /* set when proc_stat returns 0 */
  int rc;

  if (pid <= 0 || pid > PID_LIMIT)
    return true;
  if (kill(pid, 0) != 0 && errno == ESRCH)
    return true;
  rc = proc_stat(pid, &letter, &now_start);
  if (rc == -ENOENT)
    return true;
  if (rc != 0)
    return false;
  return letter == 'Z' || letter == 'X' ||
         (start != 0 && now_start != start);
}

/* Whether the member of a claimed slot is gone.  A slot of another pid
 * namespace cannot be judged from here, so it is left alone; a slot with
 * our own pid that is not ours is from before an exec. */
static bool
is_gone(struct seg_slot *sl, pid_t pid, uint64_t ns)
{
  uint64_t slot_ns = atomic_load_explicit(&sl->pidns, memory_order_relaxed);

  if (slot_ns != 0 && ns != 0 && slot_ns != ns)
    return false;
  if (pid == self_pid)
    return true;
  return is_dead(pid, atomic_load_explicit(&sl->start, memory_order_relaxed));
}

static uint64_t
resolve(const struct seg_limit *l, uint64_t physical)
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
static const struct seg_limit *
limit_entry(const struct seg_limit *limits, int d)
{
  return limits[d].kind != CMG__LIMIT_NONE ? &limits[d]
                                           : &limits[SEG_DEVICES];
}

static bool
is_same_limit(const struct seg_limit *a, const struct seg_limit *b)
{
  return a->kind == b->kind &&
         (a->kind != CMG__LIMIT_BYTES || a->bytes == b->bytes) &&
         (a->kind != CMG__LIMIT_PERCENT || a->ppm == b->ppm);
}

static const char *
describe_one(const struct seg_limit *l, char *buf, size_t len)
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

/* "4.0 GiB", "50%", "none", then " (device 1: 2.0 GiB, ...)". */
static const char *
describe(const struct seg_limit *limits, char *buf, size_t len)
{
  char one[32];
  size_t n;
  bool any = false;

  describe_one(&limits[SEG_DEVICES], buf, len);
  for (int d = 0; d < SEG_DEVICES; d++) {
    if (limits[d].kind == CMG__LIMIT_NONE)
      continue;
    n = strlen(buf);
    snprintf(buf + n, len - n, "%s device %d: %s", any ? "," : " (", d,
             describe_one(&limits[d], one, sizeof(one)));
    any = true;
  }
  n = strlen(buf);
  if (any)
    snprintf(buf + n, len - n, ")");
  return buf;
}

/* Subtracts bytes from a counter, stopping at 0. */
static void
sub_clamped(_Atomic uint64_t *c, uint64_t bytes, bool is_group)
{
  uint64_t cur = atomic_load_explicit(c, memory_order_relaxed), next;

  do {
    next = cur >= bytes ? cur - bytes : 0;
  } while (!atomic_compare_exchange_weak_explicit(
      c, &cur, next, memory_order_seq_cst, memory_order_relaxed));
  if (cur < bytes && is_group && !atomic_exchange(&said_drift, true))
    cmg__log("group=%s: a device's group usage was below what a member "
             "gave back; counting it from 0", group);
}

static void
sub32_clamped(_Atomic uint32_t *c, uint32_t n)
{
  uint32_t cur = atomic_load_explicit(c, memory_order_relaxed);

  while (!atomic_compare_exchange_weak(c, &cur, cur >= n ? cur - n : 0))
    ;
}

static void
wake_all(struct seg *s)
{
  atomic_fetch_add(&s->h.wake, 1);
  syscall(SYS_futex, &s->h.wake, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* ---- slots -------------------------------------------------------------- */

/* Gives back everything a slot holds and frees it.  The slot is ours (our
 * own, or one we won the right to reclaim).  True if it held bytes. */
static bool
empty_slot(struct seg *s, struct seg_slot *sl)
{
  bool gave = false;
  uint32_t waiting;

  for (int d = 0; d < SEG_DEVICES; d++) {
    uint64_t b = atomic_exchange(&sl->used[d], 0);
    if (b != 0) {
      sub_clamped(&s->dev[d].used, b, true);
      gave = true;
    }
    atomic_store_explicit(&sl->peak[d], 0, memory_order_relaxed);
  }
  waiting = atomic_exchange(&sl->waiting, 0);
  if (waiting != 0)
    sub32_clamped(&s->h.waiters, waiting);
  atomic_store_explicit(&sl->start, 0, memory_order_relaxed);
  atomic_store_explicit(&sl->pidns, 0, memory_order_relaxed);
  memset(sl->comm, 0, sizeof(sl->comm));
  atomic_store_explicit(&sl->owner, SLOT_FREE, memory_order_release);
  return gave;
}

/* Reclaims the slots of dead members; wakes the waiters if that gave
 * bytes back. */
static void
scan(struct seg *s)
{
  uint64_t me = (uint64_t)(uint32_t)self_pid << 32 | SLOT_RECLAIMING;
  bool gave = false;

  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    struct seg_slot *sl = &s->slot[i];
    uint64_t w = atomic_load_explicit(&sl->owner, memory_order_acquire);
    pid_t pid = (pid_t)(w >> 32);

    if (sl == mine)
      continue;
    if ((uint32_t)w == SLOT_CLAIMED) {
      if (!is_gone(sl, pid, self_pidns))
        continue;
    } else if ((uint32_t)w == SLOT_RECLAIMING) {
      /* Its reclaimer died half way.  Finishing is safe: each counter
       * was taken with an exchange, so none is given back twice. */
      if (pid == self_pid || !is_dead(pid, 0))
        continue;
    } else {
      continue;
    }
    if (atomic_compare_exchange_strong(&sl->owner, &w, me))
      gave |= empty_slot(s, sl);
  }
  if (gave)
    wake_all(s);
}

/* Scans if no process of the group did in the last `period`: true if
 * this call did. */
static bool
maybe_scan(struct seg *s, uint64_t period)
{
  uint64_t now = clock_ns(CLOCK_MONOTONIC_COARSE);
  uint64_t last = atomic_load_explicit(&s->h.scan_ns, memory_order_relaxed);

  /* A stamp from the future (another time namespace) counts as old. */
  if (last <= now && now - last < period)
    return false;
  if (!atomic_compare_exchange_strong_explicit(&s->h.scan_ns, &last, now,
                                               memory_order_relaxed,
                                               memory_order_relaxed))
    return false;
  scan(s);
  return true;
}

static unsigned
count_members(const struct seg *s)
{
  unsigned n = 0;

  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    uint64_t w = atomic_load_explicit(&s->slot[i].owner,
                                      memory_order_relaxed);
    n += (uint32_t)w != SLOT_FREE;
  }
  return n;
}

/* Takes a free slot for this process.  Bytes a leaving process counted
 * into it after emptying it (a thread racing its exit) are also in the
 * group's counters, so they are kept, to be given back with the slot. */
static struct seg_slot *
claim(struct seg *s)
{
  uint64_t want = (uint64_t)(uint32_t)self_pid << 32 | SLOT_CLAIMED;

  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    struct seg_slot *sl = &s->slot[i];
    uint64_t w = SLOT_FREE;

    if (!atomic_compare_exchange_strong(&sl->owner, &w, want))
      continue;
    atomic_store_explicit(&sl->start, self_start, memory_order_relaxed);
    atomic_store_explicit(&sl->pidns, self_pidns, memory_order_relaxed);
    memcpy(sl->comm, self_comm, sizeof(sl->comm));
    for (int d = 0; d < SEG_DEVICES; d++)
      atomic_store_explicit(&sl->peak[d],
                            atomic_load_explicit(&sl->used[d],
                                                 memory_order_relaxed),
                            memory_order_relaxed);
    return sl;
  }
  return NULL;
}

/* ---- the segment -------------------------------------------------------- */

/* Refuses a segment that is not a regular file of ours that only we can
 * reach: whatever its contents, another user could change them. */
static int
check_file(int fd, const char *path, const char *name, char *err,
           size_t errlen)
{
  struct stat st;

  if (fstat(fd, &st) != 0)
    return fail(err, errlen, name, -errno, "cannot stat %s: %s", path,
                strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail(err, errlen, name, -EPERM, "%s is not a regular file; "
                "refusing it", path);
  if (st.st_uid != geteuid())
    return fail(err, errlen, name, -EPERM, "%s belongs to uid %u, not to "
                "this user (uid %u); refusing to share a cap through it",
                path, (unsigned)st.st_uid, (unsigned)geteuid());
  if ((st.st_mode & 077) != 0)
    return fail(err, errlen, name, -EPERM, "%s has mode %04o, which lets "
                "other users reach it; refusing it", path,
                (unsigned)(st.st_mode & 07777));
  return 0;
}

/* The line for a segment of the wrong size: another layout, or not ours. */
static int
describe_size(int fd, off_t size, const char *path, const char *name,
              char *err, size_t errlen)
{
  struct { uint64_t magic; uint32_t version; } head = { 0, 0 };

  if (pread(fd, &head, sizeof(head), 0) == (ssize_t)sizeof(head) &&
      head.magic == SEG_MAGIC)
    return fail(err, errlen, name, -EPROTO, "%s was made by an "
                "incompatible cumemguard (layout %u, %lld bytes; this one "
                "reads layout %u, %zu bytes); run the group with one "
                "version", path, head.version, (long long)size, SEG_VERSION,
                sizeof(struct seg));
  return fail(err, errlen, name, -EBADMSG, "%s is not a cumemguard group "
              "segment (%lld bytes, bad magic); remove it once no member "
              "of the group runs", path, (long long)size);
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
static int
validate(const struct seg *s, const char *path, const char *name, char *err,
         size_t errlen)
{
  const struct seg_header *h = &s->h;
  uint64_t magic = atomic_load_explicit(&h->magic, memory_order_acquire);

  if (magic == 0)
    return fail(err, errlen, name, -EINPROGRESS, "%s is not set up yet "
                "(the next member to join sets it up)", path);
  if (magic != SEG_MAGIC)
    return fail(err, errlen, name, -EBADMSG, "%s is not a cumemguard group "
                "segment (bad magic); remove it once no member of the "
                "group runs", path);
  if (h->version != SEG_VERSION || h->header_size != sizeof(*h) ||
      h->slot_size != sizeof(struct seg_slot) ||
      h->slot_count != SEG_SLOTS || h->device_count != SEG_DEVICES ||
      h->total_size != sizeof(struct seg))
    return fail(err, errlen, name, -EPROTO, "%s was made by an incompatible "
                "cumemguard (layout %u, %u slots, %u devices; this one reads "
                "layout %u, %u, %u); run the group with one version", path,
                h->version, h->slot_count, h->device_count, SEG_VERSION,
                SEG_SLOTS, SEG_DEVICES);
  if (atomic_load_explicit(&h->retired, memory_order_acquire) != 0)
    return -EAGAIN;
  bool limits_ok = is_valid_limit(&h->limit);
  for (int d = 0; d < SEG_DEVICES; d++)
    limits_ok = limits_ok && is_valid_limit(&h->limit_dev[d]);
  if (!limits_ok || h->creator <= 0 || h->creator > PID_LIMIT ||
      memchr(h->visible, '\0', sizeof(h->visible)) == NULL)
    return fail(err, errlen, name, -EBADMSG, "%s is corrupt (bad header); "
                "remove it once no member of the group runs", path);
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    uint64_t w = atomic_load_explicit(&s->slot[i].owner,
                                      memory_order_relaxed);
    uint32_t st = (uint32_t)w;
    int64_t pid = (int64_t)(w >> 32);
    if (st > SLOT_RECLAIMING ||
        (st != SLOT_FREE && (pid <= 0 || pid > PID_LIMIT)) ||
        (st == SLOT_FREE && pid != 0))
      return fail(err, errlen, name, -EBADMSG, "%s is corrupt (slot %u); "
                  "remove it once no member of the group runs", path, i);
  }
  return 0;
}

/* Makes our limits the group's, with everything counted from nothing.
 * Only under the lock, and only when no member is left. */
static void
adopt(struct seg *s)
{
  const char *visible = getenv("CUDA_VISIBLE_DEVICES");

  s->h.limit = own[SEG_DEVICES];
  memcpy(s->h.limit_dev, own, sizeof(s->h.limit_dev));
  s->h.creator = self_pid;
  s->h.created = (int64_t)time(NULL);
  s->h.visible_set = visible != NULL;
  memset(s->h.visible, 0, sizeof(s->h.visible));
  for (size_t i = 0; visible != NULL && visible[i] != '\0' &&
                     i < sizeof(s->h.visible) - 1; i++)
    s->h.visible[i] = visible[i] < 0x20 || visible[i] == 0x7f ? '?'
                                                              : visible[i];
  for (int d = 0; d < SEG_DEVICES; d++) {
    atomic_store(&s->dev[d].used, 0);
    atomic_store(&s->dev[d].peak, 0);
    atomic_store(&s->dev[d].physical, 0);
  }
  atomic_store(&s->h.waiters, 0);
  atomic_store(&s->h.scan_ns, 0);
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
  adopt(s);
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
    same = same && is_same_limit(&own[d], &theirs[d]);
  if (!same) {
    cmg__log("group=%s: group_limit here is %s, but the group's is %s, "
             "set by its first member (pid %d); the group's stands",
             group, describe(own, a, sizeof(a)),
             describe(theirs, b, sizeof(b)), (int)s->h.creator);
    said_mismatch = true;
  }
  if ((visible != NULL) != (s->h.visible_set != 0) ||
      (visible != NULL && strncmp(visible, s->h.visible,
                                  sizeof(s->h.visible) - 1) != 0)) {
    cmg__log("group=%s: CUDA_VISIBLE_DEVICES is '%.64s' here but was "
             "'%.64s' for the group's first member (pid %d); the group "
             "counts by device ordinal, which may name different GPUs",
             group, visible ? visible : "(unset)",
             s->h.visible_set ? s->h.visible : "(unset)",
             (int)s->h.creator);
    said_mismatch = true;
  }
}

/* flock with a deadline: a member stopped while holding it must not hang
 * the others.  0, -ETIMEDOUT, or another negative errno. */
static int
lock_segment(int fd, uint64_t timeout_ns)
{
  uint64_t deadline = clock_ns(CLOCK_MONOTONIC) + timeout_ns;
  long pause = 100000;

  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR)
      return -errno;
    if (clock_ns(CLOCK_MONOTONIC) >= deadline)
      return -ETIMEDOUT;
    nanosleep(&(struct timespec){ 0, pause }, NULL);
    if (pause < 20000000)
      pause *= 2;
  }
  return 0;
}

/* Maps the locked segment, setting it up if nobody has: 0 with *out set,
 * or validate()'s errors (*out may be set: the caller unmaps it). */
static int
map_segment(int fd, struct seg **out, char *err, size_t errlen)
{
  struct stat st;
  bool fresh;
  void *p;
  uint64_t magic;

  if (fstat(fd, &st) != 0)
    return fail(err, errlen, NULL, -errno, "cannot stat %s: %s", shm_path,
                strerror(errno));
  fresh = st.st_size == 0;
  if (fresh && ftruncate(fd, (off_t)sizeof(struct seg)) != 0)
    return fail(err, errlen, NULL, -errno, "cannot size %s: %s", shm_path,
                strerror(errno));
  if (!fresh && st.st_size != (off_t)sizeof(struct seg))
    return describe_size(fd, st.st_size, shm_path, NULL, err, errlen);
  p = mmap(NULL, sizeof(struct seg), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
           0);
  if (p == MAP_FAILED)
    return fail(err, errlen, NULL, -errno, "cannot map %s: %s", shm_path,
                strerror(errno));
  *out = p;
  /* With the lock held, no magic means nobody is setting it up: its
   * creator died half way, or it is ours. */
  magic = atomic_load_explicit(&(*out)->h.magic, memory_order_acquire);
  if (fresh || magic == 0) {
    init_segment(*out);
    return 0;
  }
  return validate(*out, shm_path, NULL, err, errlen);
}

/* With the lock held: reclaims the dead, adopts our limits if nobody is
 * left, and takes a slot. */
static int
join_locked(struct seg *s, char *err, size_t errlen)
{
  struct seg_slot *sl;

  scan(s);
  atomic_store(&s->h.scan_ns, clock_ns(CLOCK_MONOTONIC_COARSE));
  if (count_members(s) == 0)
    adopt(s);
  else
    compare(s);
  memcpy(caps, s->h.limit_dev, sizeof(s->h.limit_dev));
  caps[SEG_DEVICES] = s->h.limit;
  sl = claim(s);
  if (sl == NULL)
    return fail(err, errlen, NULL, -EUSERS, "all %u member slots of %s "
                "are taken", SEG_SLOTS, shm_path);
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
    bool created = true;
    int fd, rc;

    fd = shm_open(shm_name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
      created = false;
      fd = shm_open(shm_name, O_RDWR, 0);
      if (fd < 0 && errno == ENOENT)
        continue; /* its last member removed it meanwhile */
    }
    if (fd < 0) {
      rc = errno;
      return fail(err, errlen, NULL, -rc, "cannot open %s: %s", shm_path,
                  strerror(rc));
    }
    /* The umask may have taken bits the other members need. */
    rc = created && fchmod(fd, 0600) != 0 ? -errno : 0;
    if (rc == 0)
      rc = check_file(fd, shm_path, NULL, err, errlen);
    if (rc == 0 && (rc = lock_segment(fd, LOCK_TIMEOUT_NS)) != 0)
      fail(err, errlen, NULL, rc, "cannot lock %s: %s", shm_path,
           rc == -ETIMEDOUT ? "another process held it for 2 s (is a "
                              "member stopped while joining?)"
                            : strerror(-rc));
    if (rc == 0)
      rc = map_segment(fd, &s, err, errlen);
    if (rc == 0)
      rc = join_locked(s, err, errlen);
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
  return fail(err, errlen, NULL, -EAGAIN, "%s kept being removed while "
              "joining", shm_path);
}

/* Who this process is, for its slot. */
static void
identify_self(void)
{
  char letter;
  int fd;
  ssize_t n;

  self_pid = getpid();
  if (proc_stat(self_pid, &letter, &self_start) != 0)
    self_start = 0;
  self_pidns = pidns_of("/proc/self/ns/pid");
  memset(self_comm, 0, sizeof(self_comm));
  fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    n = read(fd, self_comm, sizeof(self_comm) - 1);
    close(fd);
    if (n > 0 && self_comm[n - 1] == '\n')
      self_comm[n - 1] = '\0';
  }
}

/* ---- the process's side -------------------------------------------------- */

int
cmg__group_join(const struct cmg__config *cfg, char *err, size_t errlen)
{
  int expected = OFF, rc;

  if (err != NULL && errlen > 0)
    err[0] = '\0';
  if (cfg->group[0] == '\0')
    return 0;
  if (!atomic_compare_exchange_strong(&state, &expected, JOINING))
    return -EALREADY;
  snprintf(group, sizeof(group), "%s", cfg->group);
  if (!is_valid_name(cfg->group)) {
    atomic_store(&state, BROKEN);
    return fail(err, errlen, NULL, -EINVAL, "bad group name: expected 1 "
                "to 63 letters, digits, '-', '_' or '.'");
  }
  for (int d = 0; d < SEG_DEVICES; d++)
    own[d] = (struct seg_limit){ .kind = cfg->group_limit_dev[d].kind,
                                 .ppm = cfg->group_limit_dev[d].ppm,
                                 .bytes = cfg->group_limit_dev[d].bytes };
  own[SEG_DEVICES] = (struct seg_limit){ .kind = cfg->group_limit.kind,
                                         .ppm = cfg->group_limit.ppm,
                                         .bytes = cfg->group_limit.bytes };
  snprintf(shm_name, sizeof(shm_name), "/cumemguard.%u.%s",
           (unsigned)geteuid(), group);
  snprintf(shm_path, sizeof(shm_path), SHM_DIR "%s", shm_name);
  identify_self();
  rc = attach(err, errlen);
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
  int rc;

  identify_self();
  rc = attach(err, sizeof(err));
  if (rc != 0) {
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

  atomic_compare_exchange_strong(&state, &expected, BROKEN);
  if (!atomic_exchange(&said_broken, true))
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
      if (cmg__unlikely(atomic_load_explicit(&(*out)->h.magic,
                                             memory_order_relaxed) !=
                        SEG_MAGIC)) {
        break_group("was overwritten (bad magic)");
        return -EPERM;
      }
      return 0;
    case FORKED:
      if (atomic_compare_exchange_strong(&state, &expected, JOINING))
        atomic_store_explicit(&state, rejoin() == 0 ? JOINED : BROKEN,
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
  return resolve(limit_entry(caps, d), physical);
}

/* One compare-and-swap against the cap: 0, or -ENOMEM with *used_out. */
static int
add(struct seg *s, int d, uint64_t bytes, uint64_t limit, uint64_t *used_out)
{
  _Atomic uint64_t *u = &s->dev[d].used;
  uint64_t cur = atomic_load_explicit(u, memory_order_relaxed), next, peak;

  do {
    if (bytes > limit || cur > limit - bytes) {
      *used_out = cur;
      return -ENOMEM;
    }
    next = cur + bytes;
  } while (!atomic_compare_exchange_weak_explicit(
      u, &cur, next, memory_order_relaxed, memory_order_relaxed));
  *used_out = next;
  peak = atomic_load_explicit(&s->dev[d].peak, memory_order_relaxed);
  while (next > peak &&
         !atomic_compare_exchange_weak_explicit(&s->dev[d].peak, &peak, next,
                                                memory_order_relaxed,
                                                memory_order_relaxed))
    ;
  return 0;
}

/* reserve, with -EPERM for a broken group. */
static int
reserve(int d, uint64_t bytes, uint64_t physical, uint64_t *used_out,
        uint64_t *limit_out)
{
  struct seg *s;
  uint64_t limit, held;
  int rc;

  *used_out = 0;
  *limit_out = CMG__NO_LIMIT;
  if (d < 0 || d >= SEG_DEVICES)
    return 0;
  rc = ready(&s);
  if (rc > 0)
    return 0;
  if (rc < 0) {
    *limit_out = 0;
    return rc;
  }
  if (physical != 0 &&
      atomic_load_explicit(&physical_seen[d], memory_order_relaxed) == 0) {
    uint64_t none = 0;
    atomic_store_explicit(&physical_seen[d], physical, memory_order_relaxed);
    atomic_compare_exchange_strong(&s->dev[d].physical, &none, physical);
  }
  limit = cap_of(d, physical);
  *limit_out = limit;
  maybe_scan(s, SCAN_PERIOD_NS);
  rc = add(s, d, bytes, limit, used_out);
  if (rc != 0 && maybe_scan(s, SCAN_DENIAL_NS))
    rc = add(s, d, bytes, limit, used_out);
  if (rc != 0)
    return rc;
  held = atomic_fetch_add_explicit(&mine->used[d], bytes,
                                   memory_order_relaxed) + bytes;
  if (held > atomic_load_explicit(&mine->peak[d], memory_order_relaxed))
    atomic_store_explicit(&mine->peak[d], held, memory_order_relaxed);
  return 0;
}

int
cmg__group_reserve(int device, uint64_t bytes, uint64_t physical,
                   uint64_t *used_out, uint64_t *limit_out)
{
  int rc = reserve(device, bytes, physical, used_out, limit_out);

  return rc == -EPERM ? -ENOMEM : rc;
}

void
cmg__group_release(int device, uint64_t bytes)
{
  struct seg *s;

  if (device < 0 || device >= SEG_DEVICES || bytes == 0 ||
      atomic_load_explicit(&state, memory_order_acquire) != JOINED)
    return;
  s = seg;
  /* The slot first: a kill in between leaves the group counting more. */
  sub_clamped(&mine->used[device], bytes, false);
  sub_clamped(&s->dev[device].used, bytes, true);
  /* Pairs with the fence in cmg__group_wait: either the waiter sees the
   * room, or we see the waiter. */
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&s->h.waiters, memory_order_relaxed) != 0)
    wake_all(s);
}

int
cmg__group_wait(int device, uint64_t bytes, uint64_t physical,
                uint64_t timeout_ns, uint64_t *used_out, uint64_t *limit_out)
{
  uint64_t deadline = clock_ns(CLOCK_MONOTONIC) + timeout_ns;

  for (;;) {
    int rc = reserve(device, bytes, physical, used_out, limit_out);
    struct seg *s = seg;
    struct seg_slot *sl = mine;
    uint64_t now = clock_ns(CLOCK_MONOTONIC), left;
    uint32_t seq;

    if (rc != -ENOMEM)
      return rc == -EPERM ? -ENOMEM : rc;
    if (now >= deadline)
      return -ETIMEDOUT;
    seq = atomic_load(&s->h.wake);
    atomic_fetch_add(&s->h.waiters, 1);
    atomic_fetch_add(&sl->waiting, 1);
    atomic_thread_fence(memory_order_seq_cst);
    rc = reserve(device, bytes, physical, used_out, limit_out);
    if (rc == -ENOMEM) {
      /* Once a second at least, so that this process reclaims a dead
       * member itself when nobody else allocates. */
      left = deadline - now < NS ? deadline - now : NS;
      syscall(SYS_futex, &s->h.wake, FUTEX_WAIT, seq,
              &(struct timespec){ (time_t)(left / NS), (long)(left % NS) },
              NULL, 0);
    }
    sub32_clamped(&sl->waiting, 1);
    sub32_clamped(&s->h.waiters, 1);
    if (rc != -ENOMEM)
      return rc == -EPERM ? -ENOMEM : rc;
  }
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
  if (empty_slot(s, mine))
    wake_all(s);
  /* The lock is held for a scan at most, by a member joining or leaving;
   * if it stays taken, that member is not gone and removes the segment. */
  if (lock_segment(seg_fd, LEAVE_LOCK_NS) != 0)
    return;
  scan(s);
  if (count_members(s) == 0 && fstat(seg_fd, &ours) == 0 &&
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
  return atomic_load(&state) != OFF;
}

const char *
cmg__group_name(void)
{
  return atomic_load(&state) != OFF ? group : NULL;
}

int
cmg__group_usage(int device, struct cmg__group_usage *out)
{
  int st = atomic_load_explicit(&state, memory_order_acquire);
  struct seg *s = seg;
  const struct seg_limit *l;
  uint64_t physical;
  struct seg_slot *sl = mine;

  if (device < 0 || device >= SEG_DEVICES || s == NULL ||
      (st != JOINED && st != LEFT))
    return -ENOENT;
  physical = atomic_load(&physical_seen[device]);
  if (physical == 0)
    physical = atomic_load(&s->dev[device].physical);
  l = limit_entry(caps, device);
  out->limit = l->kind == CMG__LIMIT_PERCENT && physical == 0
                   ? CMG__NO_LIMIT
                   : resolve(l, physical);
  out->used = atomic_load_explicit(&s->dev[device].used,
                                   memory_order_relaxed);
  out->mine = st == JOINED && sl != NULL
                  ? atomic_load_explicit(&sl->used[device],
                                         memory_order_relaxed)
                  : 0;
  return 0;
}

unsigned
cmg__group_members(void)
{
  int st = atomic_load(&state);

  return seg != NULL && (st == JOINED || st == LEFT) ? count_members(seg)
                                                     : 0;
}

/* ---- cumemguard status --------------------------------------------------- */

static sigjmp_buf bus_jump;

static void
on_bus(int sig)
{
  siglongjmp(bus_jump, 1);
}

/* Copies a live segment word by word, each counter with one atomic load,
 * so that no value in the copy is torn. */
static void
copy_seg(struct seg *dst, const struct seg *src)
{
  memcpy(&dst->h, &src->h, sizeof(dst->h));
  for (int d = 0; d < SEG_DEVICES; d++) {
    dst->dev[d].used = atomic_load(&src->dev[d].used);
    dst->dev[d].peak = atomic_load(&src->dev[d].peak);
    dst->dev[d].physical = atomic_load(&src->dev[d].physical);
  }
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    const struct seg_slot *from = &src->slot[i];
    struct seg_slot *to = &dst->slot[i];
    to->owner = atomic_load(&from->owner);
    to->start = atomic_load(&from->start);
    to->pidns = atomic_load(&from->pidns);
    to->waiting = atomic_load(&from->waiting);
    memcpy(to->comm, from->comm, sizeof(to->comm));
    for (int d = 0; d < SEG_DEVICES; d++) {
      to->used[d] = atomic_load(&from->used[d]);
      to->peak[d] = atomic_load(&from->peak[d]);
    }
  }
}

/* copy_seg, with a SIGBUS (the file shrank under the mapping) turned into
 * -EBADMSG. */
static int
guarded_copy(struct seg *c, const struct seg *m)
{
  struct sigaction bus = { .sa_handler = on_bus }, old;
  volatile int rc = 0;

  sigaction(SIGBUS, &bus, &old);
  if (sigsetjmp(bus_jump, 1) == 0)
    copy_seg(c, m);
  else
    rc = -EBADMSG;
  sigaction(SIGBUS, &old, NULL);
  return rc;
}

/*
 * Reads the segment of group `name` into a private copy, checked: nothing
 * the segment says is used before it is validated.  A segment truncated
 * while it is read (its user can) is an error, not a SIGBUS.
 */
static int
load_copy(const char *name, struct seg **out, char *err, size_t errlen)
{
  char shm[96], path[112];
  struct stat st;
  struct seg *c = NULL;
  void *m = MAP_FAILED;
  int fd, rc;

  snprintf(shm, sizeof(shm), "/cumemguard.%u.%s", (unsigned)geteuid(), name);
  snprintf(path, sizeof(path), SHM_DIR "%s", shm);
  fd = shm_open(shm, O_RDONLY, 0);
  if (fd < 0) {
    rc = errno;
    if (rc == ENOENT)
      return fail(err, errlen, name, -ENOENT, "no such group for uid %u "
                  "(no %s)", (unsigned)geteuid(), path);
    return fail(err, errlen, name, -rc, "cannot open %s: %s", path,
                strerror(rc));
  }
  rc = check_file(fd, path, name, err, errlen);
  if (rc == 0 && fstat(fd, &st) != 0)
    rc = fail(err, errlen, name, -errno, "cannot stat %s", path);
  if (rc == 0 && st.st_size != (off_t)sizeof(struct seg))
    rc = describe_size(fd, st.st_size, path, name, err, errlen);
  if (rc == 0) {
    m = mmap(NULL, sizeof(struct seg), PROT_READ, MAP_SHARED, fd, 0);
    c = malloc(sizeof(*c));
    if (m == MAP_FAILED || c == NULL)
      rc = fail(err, errlen, name, -ENOMEM, "cannot map %s", path);
  }
  close(fd);
  if (rc == 0 && guarded_copy(c, m) != 0)
    rc = fail(err, errlen, name, -EBADMSG, "%s shrank while read", path);
  if (m != MAP_FAILED)
    munmap(m, sizeof(struct seg));
  if (rc == 0)
    rc = validate(c, path, name, err, errlen);
  if (rc == -EAGAIN)
    rc = fail(err, errlen, name, -ENOENT, "no such group for uid %u (its "
              "last member just left)", (unsigned)geteuid());
  if (rc != 0) {
    free(c);
    return rc;
  }
  *out = c;
  return 0;
}

/* A JSON string: quotes, backslashes and every byte outside printable
 * ASCII escaped, so that a command name cannot break the document. */
static void
json_str(FILE *f, const char *s, size_t max)
{
  fputc('"', f);
  for (size_t i = 0; i < max && s[i] != '\0'; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20 || ch >= 0x7f)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

/* A command name for the text view: printable ASCII only. */
static const char *
printable(const char *s, char *buf, size_t len)
{
  size_t i;

  for (i = 0; i + 1 < len && s[i] != '\0'; i++)
    buf[i] = s[i] > 0x20 && s[i] < 0x7f ? s[i] : '?';
  buf[i] = '\0';
  return buf;
}

static void
json_limit(FILE *f, const struct seg_limit *l, uint64_t physical)
{
  uint64_t b = resolve(l, physical);

  if (l->kind == CMG__LIMIT_NONE ||
      (l->kind == CMG__LIMIT_PERCENT && physical == 0))
    fprintf(f, "\"cap\":null,");
  else
    fprintf(f, "\"cap\":%" PRIu64 ",", b);
  if (l->kind == CMG__LIMIT_PERCENT)
    fprintf(f, "\"cap_percent\":%g", l->ppm / 10000.0);
  else
    fprintf(f, "\"cap_percent\":null");
}

static const char *
text_limit(const struct seg_limit *l, uint64_t physical, char *buf,
           size_t len)
{
  char pct[32];

  if (l->kind != CMG__LIMIT_PERCENT || physical == 0)
    return describe_one(l, buf, len);
  describe_one(l, pct, sizeof(pct));
  cmg__format_size(resolve(l, physical), buf, len);
  snprintf(buf + strlen(buf), len - strlen(buf), " (%s)", pct);
  return buf;
}

/* Prints one group from its checked copy, as text or as a JSON object. */
static void
print_group(FILE *f, const char *name, const struct seg *c, bool json)
{
  struct seg_limit limits[SEG_DEVICES + 1];
  bool shown[SEG_DEVICES] = { false };
  bool alive[SEG_SLOTS];
  unsigned members = 0, dead = 0;
  uint64_t ns = pidns_of("/proc/self/ns/pid");
  char a[200], b[32], cc[32], comm[17];
  const char *sep = "";

  memcpy(limits, c->h.limit_dev, sizeof(c->h.limit_dev));
  limits[SEG_DEVICES] = c->h.limit;
  for (int d = 0; d < SEG_DEVICES; d++)
    shown[d] = c->h.limit_dev[d].kind != CMG__LIMIT_NONE ||
               c->dev[d].used != 0 || c->dev[d].peak != 0;
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    const struct seg_slot *sl = &c->slot[i];
    pid_t pid = (pid_t)(sl->owner >> 32);
    alive[i] = true;
    if ((uint32_t)sl->owner != SLOT_CLAIMED)
      continue;
    members++;
    if ((sl->pidns == 0 || ns == 0 || sl->pidns == ns) &&
        is_dead(pid, sl->start)) {
      alive[i] = false;
      dead++;
    }
    for (int d = 0; d < SEG_DEVICES; d++)
      shown[d] = shown[d] || sl->used[d] != 0 || sl->peak[d] != 0;
  }

  if (!json) {
    fprintf(f, "group %s: cap %s per device, %u member%s", name,
            describe(limits, a, sizeof(a)), members, members == 1 ? "" : "s");
    if (dead > 0)
      fprintf(f, " (%u dead, not yet reclaimed)", dead);
    fprintf(f, "\n  %6s %20s %12s %12s\n", "device", "cap", "used", "peak");
    for (int d = 0; d < SEG_DEVICES; d++) {
      if (!shown[d])
        continue;
      fprintf(f, "  %6d %20s", d,
              text_limit(limit_entry(limits, d), c->dev[d].physical, a,
                         sizeof(a)));
      fprintf(f, " %12s", cmg__format_size(c->dev[d].used, b, sizeof(b)));
      fprintf(f, " %12s\n", cmg__format_size(c->dev[d].peak, b, sizeof(b)));
    }
    fprintf(f, "  %8s  %-16s %6s %12s %12s\n", "pid", "command", "device",
            "live", "peak");
    for (unsigned i = 0; i < SEG_SLOTS; i++) {
      const struct seg_slot *sl = &c->slot[i];
      bool any = false;
      if ((uint32_t)sl->owner != SLOT_CLAIMED)
        continue;
      printable(sl->comm, comm, sizeof(comm));
      for (int d = 0; d <= SEG_DEVICES; d++) {
        if (d < SEG_DEVICES && sl->used[d] == 0 && sl->peak[d] == 0)
          continue;
        if (d == SEG_DEVICES && any)
          break;
        fprintf(f, "  %8d  %-16s ", (int)(sl->owner >> 32), comm);
        if (d == SEG_DEVICES)
          fprintf(f, "%6s %12s %12s", "-", "0 B", "0 B");
        else
          fprintf(f, "%6d %12s %12s", d,
                  cmg__format_size(sl->used[d], b, sizeof(b)),
                  cmg__format_size(sl->peak[d], cc, sizeof(cc)));
        fprintf(f, "%s\n", alive[i] ? "" : "  dead");
        any = true;
      }
    }
    return;
  }

  fprintf(f, "{\"name\":");
  json_str(f, name, 64);
  fprintf(f, ",\"creator\":%d,\"created\":%" PRId64 ",",
          (int)c->h.creator, c->h.created);
  json_limit(f, &c->h.limit, 0);
  fprintf(f, ",\"members\":%u,\"dead\":%u,\"devices\":[", members, dead);
  for (int d = 0; d < SEG_DEVICES; d++) {
    if (!shown[d])
      continue;
    fprintf(f, "%s{\"device\":%d,", sep, d);
    json_limit(f, limit_entry(limits, d), c->dev[d].physical);
    fprintf(f, ",\"physical\":");
    if (c->dev[d].physical != 0)
      fprintf(f, "%" PRIu64, (uint64_t)c->dev[d].physical);
    else
      fprintf(f, "null");
    fprintf(f, ",\"used\":%" PRIu64 ",\"peak\":%" PRIu64 "}",
            (uint64_t)c->dev[d].used, (uint64_t)c->dev[d].peak);
    sep = ",";
  }
  fprintf(f, "],\"processes\":[");
  sep = "";
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    const struct seg_slot *sl = &c->slot[i];
    const char *dsep = "";
    uint64_t live = 0;
    if ((uint32_t)sl->owner != SLOT_CLAIMED)
      continue;
    for (int d = 0; d < SEG_DEVICES; d++)
      live += sl->used[d];
    fprintf(f, "%s{\"pid\":%d,\"command\":", sep, (int)(sl->owner >> 32));
    json_str(f, sl->comm, sizeof(sl->comm));
    fprintf(f, ",\"alive\":%s,\"live\":%" PRIu64 ",\"devices\":[",
            alive[i] ? "true" : "false", live);
    for (int d = 0; d < SEG_DEVICES; d++) {
      if (sl->used[d] == 0 && sl->peak[d] == 0)
        continue;
      fprintf(f, "%s{\"device\":%d,\"live\":%" PRIu64 ",\"peak\":%" PRIu64
              "}", dsep, d, (uint64_t)sl->used[d], (uint64_t)sl->peak[d]);
      dsep = ",";
    }
    fprintf(f, "]}");
    sep = ",";
  }
  fprintf(f, "]}");
}

static int
compare_names(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of this user's groups in /dev/shm, sorted; NULL-terminated,
 * malloc'd (names and array), or NULL when out of memory. */
static char **
list_groups(size_t *n)
{
  char prefix[32];
  size_t cap = 16, len;
  char **names = malloc(cap * sizeof(*names));
  struct dirent *e;
  DIR *dir;

  *n = 0;
  if (names == NULL)
    return NULL;
  snprintf(prefix, sizeof(prefix), "cumemguard.%u.", (unsigned)geteuid());
  len = strlen(prefix);
  dir = opendir(SHM_DIR);
  while (dir != NULL && (e = readdir(dir)) != NULL) {
    if (strncmp(e->d_name, prefix, len) != 0)
      continue;
    if (*n + 1 >= cap) {
      char **more = realloc(names, (cap *= 2) * sizeof(*names));
      if (more == NULL)
        break;
      names = more;
    }
    names[*n] = strdup(e->d_name + len);
    if (names[*n] != NULL)
      (*n)++;
  }
  if (dir != NULL)
    closedir(dir);
  qsort(names, *n, sizeof(*names), compare_names);
  names[*n] = NULL;
  return names;
}

/* cumemguard status [GROUP] [--json]: see the launcher.  Prints to fd;
 * returns 0, or a negative errno with one line in err for a bad, unknown
 * or unreadable GROUP.  Listing every group, a bad one is shown in the
 * list with its error and does not fail the listing. */
int
cmg__group_status(const char *name, bool json, int fd, char *err,
                  size_t errlen);

int
cmg__group_status(const char *name, bool json, int fd, char *err,
                  size_t errlen)
{
  char *text = NULL, **names = NULL, one[256];
  size_t size = 0, n = 0, done = 0;
  struct seg *c;
  FILE *f;
  int rc = 0;

  if (err != NULL && errlen > 0)
    err[0] = '\0';
  if (name != NULL && !is_valid_name(name))
    return fail(err, errlen, name, -EINVAL, "bad group name: expected 1 to "
                "63 letters, digits, '-', '_' or '.'");
  if (name != NULL) {
    rc = load_copy(name, &c, err, errlen);
    if (rc != 0)
      return rc;
  } else {
    names = list_groups(&n);
    if (names == NULL)
      return fail(err, errlen, "*", -ENOMEM, "out of memory");
  }
  f = open_memstream(&text, &size);
  if (f == NULL) {
    rc = fail(err, errlen, name ? name : "*", -ENOMEM, "out of memory");
    goto out;
  }
  if (json)
    fprintf(f, "{\"uid\":%u,\"groups\":[", (unsigned)geteuid());
  if (name != NULL) {
    print_group(f, name, c, json);
    free(c);
  }
  for (size_t i = 0; i < n; i++) {
    if (json && i > 0)
      fputc(',', f);
    if (load_copy(names[i], &c, one, sizeof(one)) == 0) {
      print_group(f, names[i], c, json);
      free(c);
    } else if (json) {
      fprintf(f, "{\"name\":");
      json_str(f, names[i], 64);
      fprintf(f, ",\"error\":");
      json_str(f, one, sizeof(one));
      fputc('}', f);
    } else {
      fprintf(f, "%s\n", one);
    }
  }
  if (json)
    fprintf(f, "]}\n");
  else if (name == NULL && n == 0)
    fprintf(f, "no groups for uid %u\n", (unsigned)geteuid());
  if (fclose(f) != 0) {
    rc = fail(err, errlen, name ? name : "*", -ENOMEM, "out of memory");
    goto out;
  }
  while (done < size) {
    ssize_t w = write(fd, text + done, size - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      rc = fail(err, errlen, name ? name : "*", -EIO, "cannot write the "
                "status: %s", strerror(errno));
      break;
    }
    done += (size_t)w;
  }
out:
  free(text);
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
  return rc;
}
