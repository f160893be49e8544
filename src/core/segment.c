/*
 * The group segment, /dev/shm/cumemguard.<uid>.<name>: its layout (see
 * segment.h), and what every reader of one needs: checking that a file is
 * ours alone and holds a segment of this layout, the liveness of a member's
 * pid, and the group's limits in bytes and in words.  Its members' side,
 * opening, setting up and counting, is the library's alone
 * (runtime/group/group_segment.c).
 *
 * The segment is untrusted input: its owner and mode are checked (a
 * segment another user made, or can reach, is refused), then the magic,
 * layout, sizes, limits and slot states; a bad one is one line.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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
    snprintf(buf + n, len - n, "%sdevice %d: %s", any ? ", " : " (", d,
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

bool
cmg__seg_is_sealed(const struct seg_header *h)
{
  return h->checksum == checksum(h);
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

uint64_t
cmg__seg_held(const struct seg_slot *sl, int d)
{
  uint64_t sum = atomic_load_explicit(&sl->dev[d].used, memory_order_relaxed);
  for (int i = 0; i < SEG_LANES; i++)
    sum += atomic_load_explicit(&sl->lane[i].held[d], memory_order_relaxed);
  /* Below zero: a reclaimer emptied the slot under a live thread. */
  return sum > UINT64_MAX / 2 ? 0 : sum;
}

/* ---- the caps by GPU ---------------------------------------------------- */

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
