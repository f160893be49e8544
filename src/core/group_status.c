/*
 * cumemguard status: the operator's view of a user's groups, read from
 * private copies of their segments, never from the live mapping: a member
 * may change it, or another process truncate it, while it is printed.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "core/group_status.h"
#include "core/log.h"
#include "core/segment.h"
#include "core/size.h"

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
      return cmg__seg_fail(err, errlen, name, -ENOENT,
                           "no such group for uid %u "
                           "(no %s)",
                           (unsigned)geteuid(), path);
    return cmg__seg_fail(err, errlen, name, -rc, "cannot open %s: %s", path,
                strerror(rc));
  }
  rc = cmg__seg_check_file(fd, path, name, err, errlen);
  if (rc == 0 && fstat(fd, &st) != 0)
    rc = cmg__seg_fail(err, errlen, name, -errno, "cannot stat %s", path);
  if (rc == 0 && st.st_size != (off_t)sizeof(struct seg))
    rc = cmg__seg_describe_size(fd, st.st_size, path, name, err, errlen);
  if (rc == 0) {
    m = mmap(NULL, sizeof(struct seg), PROT_READ, MAP_SHARED, fd, 0);
    c = malloc(sizeof(*c));
    if (m == MAP_FAILED || c == NULL)
      rc = cmg__seg_fail(err, errlen, name, -ENOMEM, "cannot map %s", path);
  }
  close(fd);
  if (rc == 0 && guarded_copy(c, m) != 0)
    rc =
      cmg__seg_fail(err, errlen, name, -EBADMSG, "%s shrank while read", path);
  if (m != MAP_FAILED)
    munmap(m, sizeof(struct seg));
  if (rc == 0)
    rc = cmg__seg_validate(c, path, name, err, errlen);
  if (rc == -EAGAIN)
    rc = cmg__seg_fail(err, errlen, name, -ENOENT,
                       "no such group for uid %u (its "
                       "last member just left)",
                       (unsigned)geteuid());
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
  uint64_t b = cmg__seg_limit_bytes(l, physical);

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
    return cmg__seg_describe_one(l, buf, len);
  cmg__seg_describe_one(l, pct, sizeof(pct));
  cmg__format_size(cmg__seg_limit_bytes(l, physical), buf, len);
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
  uint64_t ns = cmg__seg_pidns_of("/proc/self/ns/pid");
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
        cmg__seg_is_dead(pid, sl->start)) {
      alive[i] = false;
      dead++;
    }
    for (int d = 0; d < SEG_DEVICES; d++)
      shown[d] = shown[d] || sl->used[d] != 0 || sl->peak[d] != 0;
  }

  if (!json) {
    /* The Slurm plugin names a job's group slurm.JOBID: shown as the job. */
    size_t slurm = strlen("slurm.");
    if (strncmp(name, "slurm.", slurm) == 0 && name[slurm] != '\0' &&
        strspn(name + slurm, "0123456789") == strlen(name + slurm))
      fprintf(f, "Slurm job %s", name + slurm);
    else
      fprintf(f, "group %s", name);
    fprintf(f, ": cap %s per device, %u member%s",
            cmg__seg_describe(limits, a, sizeof(a)), members,
            members == 1 ? "" : "s");
    if (dead > 0)
      fprintf(f, " (%u dead, not yet reclaimed)", dead);
    fprintf(f, "\n  %6s %20s %12s %12s\n", "device", "cap", "used", "peak");
    for (int d = 0; d < SEG_DEVICES; d++) {
      if (!shown[d])
        continue;
      fprintf(f, "  %6d %20s", d,
              text_limit(cmg__seg_limit_entry(limits, d), c->dev[d].physical, a,
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
    json_limit(f, cmg__seg_limit_entry(limits, d), c->dev[d].physical);
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
  if (name != NULL && !cmg__seg_is_valid_name(name))
    return cmg__seg_fail(err, errlen, name, -EINVAL,
                         "bad group name: expected 1 to "
                         "63 letters, digits, '-', '_' or '.'");
  if (name != NULL) {
    rc = load_copy(name, &c, err, errlen);
    if (rc != 0)
      return rc;
  } else {
    names = list_groups(&n);
    if (names == NULL)
      return cmg__seg_fail(err, errlen, "*", -ENOMEM, "out of memory");
  }
  f = open_memstream(&text, &size);
  if (f == NULL) {
    rc =
      cmg__seg_fail(err, errlen, name ? name : "*", -ENOMEM, "out of memory");
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
    rc =
      cmg__seg_fail(err, errlen, name ? name : "*", -ENOMEM, "out of memory");
    goto out;
  }
  while (done < size) {
    ssize_t w = write(fd, text + done, size - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      rc = cmg__seg_fail(err, errlen, name ? name : "*", -EIO,
                         "cannot write the "
                         "status: %s",
                         strerror(errno));
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

