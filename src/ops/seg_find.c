/*
 * Where `cumemguard status` finds segments, and how it reads one.  Every
 * guarded process has a slot in some segment (its group's, or its user's
 * registry), so listing the segments lists the processes, with no daemon.
 *
 * A user sees its own segments in /dev/shm.  Root sees every user's, and
 * those of containers: podman, docker and CRI-O give each container (each
 * Kubernetes pod) a private /dev/shm, reachable from the host as
 * /proc/PID/root/dev/shm of any of its processes.  A container is found
 * through a process that has the library mapped (/proc/PID/maps), and each
 * directory is read once however many of its processes are found (compared
 * by device and inode).  Its label is the container id from
 * /proc/PID/cgroup (the 64-hex-digit name docker, podman, containerd and
 * CRI-O give its cgroup), shortened to 12 digits as `docker ps` does, or
 * "pid N" when the cgroup names none.
 *
 * Segments are read into private copies, never used live: a member may
 * change one, or its owner truncate it, while it is printed (a SIGBUS is
 * turned into an error).  A copy whose members hold more than their group
 * counts, which slots copied while members change them can show, is made
 * again, and past a few tries its members' bytes are scaled to the
 * group's: the view never shows processes holding more than the cap.
 *
 * A segment in the host's /dev/shm must belong to the uid its name says
 * with mode 0600, as members require; one in a container may belong to a
 * uid mapped by a user namespace, so only its mode is checked there.
 * Nothing the segment says is used before cmg__seg_validate passes it.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops/seg_find.h"
#include "core/segment.h"

#define PREFIX "cumemguard."

static sigjmp_buf bus_jump;

static void
on_bus(int sig)
{
  (void)sig;
  siglongjmp(bus_jump, 1);
}

/* Copies a live segment word by word, each counter with one atomic load,
 * so that no value in the copy is torn; a member's lanes are added into
 * its dev[d].used.  Only members' counters are read: a read of a page of
 * the segment never written would make tmpfs give it memory. */
static void
copy_seg(struct seg *dst, const struct seg *src)
{
  memcpy(&dst->h, &src->h, sizeof(dst->h));
  for (int d = 0; d < SEG_DEVICES; d++) {
    dst->name[d].state = atomic_load(&src->name[d].state);
    memcpy(dst->name[d].uuid, src->name[d].uuid, sizeof(dst->name[d].uuid));
    dst->dev[d].used = atomic_load(&src->dev[d].used);
    dst->dev[d].peak = atomic_load(&src->dev[d].peak);
    dst->dev[d].physical = atomic_load(&src->dev[d].physical);
  }
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    const struct seg_slot *from = &src->slot[i];
    struct seg_slot *to = &dst->slot[i];
    to->owner = atomic_load(&from->owner);
    /* A process that left is no member: its slot waits to be freed. */
    if (atomic_load(&from->gone) != 0 && (uint32_t)to->owner == SLOT_CLAIMED)
      to->owner = SLOT_FREE;
    to->start = atomic_load(&from->start);
    to->pidns = atomic_load(&from->pidns);
    to->waiting = atomic_load(&from->waiting);
    to->denials = atomic_load(&from->denials);
    memcpy(to->comm, from->comm, sizeof(to->comm));
    bool member = (uint32_t)to->owner == SLOT_CLAIMED;
    for (int d = 0; d < SEG_DEVICES; d++) {
      to->dev[d].used = member ? cmg__seg_held(from, d) : 0;
      to->dev[d].peak = member ? atomic_load(&from->dev[d].peak) : 0;
      to->dev[d].context = member ? atomic_load(&from->dev[d].context) : 0;
    }
  }
}

/* Whether the members of copy c hold more on a device than the group
 * counts there, which no moment of the segment shows (the registry counts
 * nothing of its own). */
static bool
is_over(const struct seg *c)
{
  for (int d = 0; d < SEG_DEVICES; d++) {
    unsigned __int128 sum = 0;

    for (unsigned i = 0; i < SEG_SLOTS; i++)
      sum += c->slot[i].dev[d].used;
    if (sum > c->dev[d].used)
      return true;
  }
  return false;
}

/* Lowers the members' bytes on each device, in proportion, to the group's
 * count there, where they add up to more. */
static void
scale_members(struct seg *c)
{
  for (int d = 0; d < SEG_DEVICES; d++) {
    uint64_t group = c->dev[d].used;
    unsigned __int128 sum = 0;

    for (unsigned i = 0; i < SEG_SLOTS; i++)
      sum += c->slot[i].dev[d].used;
    if (sum <= group)
      continue;
    for (unsigned i = 0; i < SEG_SLOTS; i++)
      c->slot[i].dev[d].used =
          (uint64_t)((unsigned __int128)c->slot[i].dev[d].used * group / sum);
  }
}

#define SCALE_TRIES 16

/* Copies until the members are not over: whether the last copy is. */
static bool
copy_until_under(struct seg *c, const struct seg *m, bool registry)
{
  bool over = false;

  for (int i = 0; i < SCALE_TRIES && (i == 0 || over); i++) {
    copy_seg(c, m);
    over = !registry && is_over(c);
  }
  return over;
}

/*
 * copy_seg, again while the copy's members hold more than the group
 * counts.  A member counts the group's bytes before its own and gives back
 * its own first, so at any moment they hold no more than the group's; but
 * slots copied one after another while members allocate and free can (a
 * sampler of members racing at a group's cap saw them pass it), and no
 * copy can tell the moment it was read: counters that go down and up again
 * read the same, so two copies that agree prove nothing.  After SCALE_TRIES copies over, the members' bytes are
 * scaled down to the group's, and *scaled says so.  A SIGBUS (the file
 * shrank under the mapping) is -EBADMSG.
 */
static int
guarded_copy(struct seg *c, const struct seg *m, bool registry, bool *scaled)
{
  struct sigaction bus = { .sa_handler = on_bus }, old;
  volatile bool over = false;
  volatile int rc = 0;

  sigaction(SIGBUS, &bus, &old);
  if (sigsetjmp(bus_jump, 1) == 0)
    over = copy_until_under(c, m, registry);
  else
    rc = -EBADMSG;
  sigaction(SIGBUS, &old, NULL);
  *scaled = rc == 0 && over;
  if (*scaled)
    scale_members(c);
  return rc;
}

const char *
cmg__seg_label(const struct cmg__seg_entry *e, char *buf, size_t len)
{
  if (e->container[0] != '\0')
    snprintf(buf, len, "container %s: %s (uid %u)", e->container, e->name,
             e->uid);
  else if (e->uid != (unsigned)geteuid())
    snprintf(buf, len, "%s (uid %u)", e->name, e->uid);
  else
    snprintf(buf, len, "%s", e->name);
  return buf;
}

int
cmg__seg_read(const struct cmg__seg_entry *e, struct seg **out, bool *scaled,
              char *err, size_t errlen)
{
  char label[160];
  const char *name = cmg__seg_label(e, label, sizeof(label));
  struct stat st;
  struct seg *c = NULL;
  void *m = MAP_FAILED;
  int rc = 0;

  *scaled = false;
  int fd = open(e->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    rc = errno;
    if (rc == ENOENT)
      return cmg__seg_fail(err, errlen, name, -ENOENT,
                           "no such group for uid %u (no %s)", e->uid, e->path);
    return cmg__seg_fail(err, errlen, name, -rc, "cannot open %s: %s", e->path,
                         strerror(rc));
  }
  if (e->own_dir) {
    rc = cmg__seg_check_owner(fd, e->path, name, e->uid, err, errlen);
  } else if (fstat(fd, &st) == 0 &&
             (!S_ISREG(st.st_mode) || (st.st_mode & 077) != 0)) {
    rc = cmg__seg_fail(err, errlen, name, -EPERM,
                       "%s is not a regular "
                       "file of mode 0600; refusing it",
                       e->path);
  }
  if (rc == 0 && fstat(fd, &st) != 0)
    rc = cmg__seg_fail(err, errlen, name, -errno, "cannot stat %s", e->path);
  /* Made, and not yet sized by its first member (it gives the segment its
   * memory under the lock, which takes a moment). */
  if (rc == 0 && st.st_size == 0)
    rc = cmg__seg_fail(err, errlen, name, -EINPROGRESS,
                       "%s is not set up yet (the next member to join sets "
                       "it up)",
                       e->path);
  if (rc == 0 && st.st_size != (off_t)sizeof(struct seg))
    rc = cmg__seg_describe_size(fd, st.st_size, e->path, name, err, errlen);
  if (rc == 0) {
    m = mmap(NULL, sizeof(struct seg), PROT_READ, MAP_SHARED, fd, 0);
    c = malloc(sizeof(*c));
    if (m == MAP_FAILED || c == NULL)
      rc = cmg__seg_fail(err, errlen, name, -ENOMEM, "cannot map %s", e->path);
  }
  close(fd);
  if (rc == 0 &&
      guarded_copy(c, m, strcmp(e->name, REGISTRY_NAME) == 0, scaled) != 0)
    rc = cmg__seg_fail(err, errlen, name, -EBADMSG, "%s shrank while read",
                       e->path);
  if (m != MAP_FAILED)
    munmap(m, sizeof(struct seg));
  if (rc == 0)
    rc = cmg__seg_validate(c, e->path, name, err, errlen);
  if (rc == -EAGAIN)
    rc = cmg__seg_fail(err, errlen, name, -ENOENT,
                       "no such group for uid %u (its last member just "
                       "left)",
                       e->uid);
  if (rc != 0) {
    free(c);
    return rc;
  }
  *out = c;
  return 0;
}

int
cmg__seg_load(const struct cmg__seg_entry *e, struct seg **out, char *err,
              size_t errlen)
{
  bool scaled;

  return cmg__seg_read(e, out, &scaled, err, errlen);
}

void
cmg__seg_entry_own(const char *name, struct cmg__seg_entry *e)
{
  memset(e, 0, sizeof(*e));
  e->uid = (unsigned)geteuid();
  e->own_dir = true;
  snprintf(e->name, sizeof(e->name), "%s", name);
  snprintf(e->path, sizeof(e->path), SHM_DIR "/" PREFIX "%u.%s", e->uid, name);
}

const char *
cmg__seg_slurm_job(const char *name)
{
  size_t n = strlen("slurm.");

  if (strncmp(name, "slurm.", n) == 0 && name[n] != '\0' &&
      strspn(name + n, "0123456789") == strlen(name + n))
    return name + n;
  return NULL;
}

/* One "key=value" line of a labels file into out (len bytes). */
static void
label_line(const char *line, const char *key, char *out, size_t len)
{
  size_t n = strlen(key);
  if (strncmp(line, key, n) == 0 && line[n] == '=')
    snprintf(out, len, "%.*s", (int)strcspn(line + n + 1, "\n"), line + n + 1);
}

int
cmg__seg_k8s(const char *name, struct cmg__k8s *out)
{
  const char *dir = getenv("CUMEMGUARD_K8S_DIR");
  char path[PATH_MAX], line[512];

  memset(out, 0, sizeof(*out));
  if (strncmp(name, "k8s-", 4) != 0 || strchr(name, '/') != NULL)
    return -ENOENT;
  snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : CMG__K8S_DIR, name);
  FILE *f = fopen(path, "re");
  if (f == NULL)
    return -ENOENT;
  while (fgets(line, sizeof(line), f) != NULL) {
    label_line(line, "namespace", out->ns, sizeof(out->ns));
    label_line(line, "pod", out->pod, sizeof(out->pod));
    label_line(line, "container", out->container, sizeof(out->container));
  }
  fclose(f);
  return out->pod[0] != '\0' ? 0 : -ENOENT;
}

/* A growing array of entries. */
struct list {
  struct cmg__seg_entry *v;
  size_t n, cap;
  bool failed;
};

static struct cmg__seg_entry *
grow(struct list *l)
{
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 16;
    struct cmg__seg_entry *v = realloc(l->v, cap * sizeof(*v));
    if (v == NULL) {
      l->failed = true;
      return NULL;
    }
    l->v = v;
    l->cap = cap;
  }
  memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
  return &l->v[l->n];
}

/* Adds the segments in dir: "cumemguard.UID.NAME", this user's only
 * unless all_users. */
static void
scan_dir(struct list *l, const char *dir, const char *container, bool all_users)
{
  DIR *d = opendir(dir);
  struct dirent *ent;

  while (d != NULL && (ent = readdir(d)) != NULL) {
    const char *p = ent->d_name;
    char *end;
    struct cmg__seg_entry *e;

    if (strncmp(p, PREFIX, strlen(PREFIX)) != 0)
      continue;
    p += strlen(PREFIX);
    if (!isdigit((unsigned char)*p))
      continue;
    unsigned long uid = strtoul(p, &end, 10);
    const char *dot = end;
    if (*dot != '.' || dot[1] == '\0' || uid > UINT32_MAX ||
        strlen(dot + 1) >= sizeof(e->name))
      continue;
    if (!all_users && uid != (unsigned long)geteuid())
      continue;
    if ((e = grow(l)) == NULL)
      break;
    e->uid = (unsigned)uid;
    e->own_dir = container[0] == '\0';
    snprintf(e->name, sizeof(e->name), "%s", dot + 1);
    snprintf(e->container, sizeof(e->container), "%s", container);
    if (snprintf(e->path, sizeof(e->path), "%s/%s", dir, ent->d_name) <
        (int)sizeof(e->path))
      l->n++;
  }
  if (d != NULL)
    closedir(d);
}

/* Whether /proc/PID/maps maps the library. */
static bool
maps_library(const char *pid)
{
  char path[64], line[512];
  bool found = false;

  snprintf(path, sizeof(path), "/proc/%.16s/maps", pid);
  FILE *f = fopen(path, "re");
  while (f != NULL && !found && fgets(line, sizeof(line), f) != NULL)
    found = strstr(line, "/libcumemguard.so") != NULL;
  if (f != NULL)
    fclose(f);
  return found;
}

/* The container of pid: 12 digits of the first 64-hex-digit name in its
 * cgroup path, or "pid N". */
static void
container_of(const char *pid, char *out, size_t len)
{
  char path[64], line[1024];

  snprintf(out, len, "pid %.16s", pid);
  snprintf(path, sizeof(path), "/proc/%.16s/cgroup", pid);
  FILE *f = fopen(path, "re");
  while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
    for (char *p = line; *p != '\0'; p++) {
      size_t n = strspn(p, "0123456789abcdef");
      if (n == 64) {
        snprintf(out, len, "%.12s", p);
        fclose(f);
        return;
      }
      p += n > 0 ? n - 1 : 0;
    }
  }
  if (f != NULL)
    fclose(f);
}

/* Adds the segments of every container's /dev/shm that holds a process
 * with the library mapped, each directory once. */
static void
scan_containers(struct list *l)
{
  struct stat host, seen[256];
  size_t n_seen = 0;
  DIR *proc = opendir("/proc");
  struct dirent *ent;

  if (stat(SHM_DIR, &host) != 0)
    memset(&host, 0, sizeof(host));
  while (proc != NULL && (ent = readdir(proc)) != NULL) {
    char dir[96], label[80];
    struct stat st;
    bool dup = false;

    if (!isdigit((unsigned char)ent->d_name[0]))
      continue;
    snprintf(dir, sizeof(dir), "/proc/%.16s/root" SHM_DIR, ent->d_name);
    if (stat(dir, &st) != 0 ||
        (st.st_dev == host.st_dev && st.st_ino == host.st_ino))
      continue;
    for (size_t i = 0; i < n_seen && !dup; i++)
      dup = seen[i].st_dev == st.st_dev && seen[i].st_ino == st.st_ino;
    if (dup || n_seen == sizeof(seen) / sizeof(seen[0]) ||
        !maps_library(ent->d_name))
      continue;
    seen[n_seen++] = st;
    container_of(ent->d_name, label, sizeof(label));
    scan_dir(l, dir, label, true);
  }
  if (proc != NULL)
    closedir(proc);
}

static int
compare_entries(const void *a, const void *b)
{
  const struct cmg__seg_entry *x = a, *y = b;
  int c = strcmp(x->container, y->container);

  if (c == 0 && x->uid != y->uid)
    c = x->uid < y->uid ? -1 : 1;
  return c != 0 ? c : strcmp(x->name, y->name);
}

struct cmg__seg_entry *
cmg__seg_find(bool all_users, bool containers, size_t *n)
{
  struct list l = { NULL, 0, 0, false };

  scan_dir(&l, SHM_DIR, "", all_users);
  if (containers)
    scan_containers(&l);
  if (l.failed) {
    free(l.v);
    *n = SIZE_MAX;
    return NULL;
  }
  if (l.n > 1)
    qsort(l.v, l.n, sizeof(*l.v), compare_entries);
  *n = l.n;
  return l.v;
}
