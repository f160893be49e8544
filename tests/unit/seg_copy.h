/*
 * What the tests of the status view's printers share (test_group_status_json,
 * test_group_status_text, test_metrics): checked copies of a segment built
 * in memory, as cmg__seg_read hands them over (a member's lanes already
 * added into its dev[d].used), and the entries that name them, so that
 * every count, cap and name the printers see is the test's own.  Members
 * are this process, alive or dead by its start time, or a pid of another
 * pid namespace; Kubernetes labels come from a folder of the test's own
 * ($CUMEMGUARD_K8S_DIR).
 */
#ifndef CMG_TEST_SEG_COPY_H
#define CMG_TEST_SEG_COPY_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/segment.h"
#include "core/size.h"
#include "ops/group_view.h"
#include "ops/seg_find.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* A pid above any the kernel gives: dead, unless of another namespace. */
#define FAR_PID (PID_LIMIT + 1)

static inline struct seg_limit
cap_bytes(uint64_t bytes)
{
  return (struct seg_limit){ .kind = CMG__LIMIT_BYTES, .bytes = bytes };
}

static inline struct seg_limit
cap_percent(uint32_t ppm)
{
  return (struct seg_limit){ .kind = CMG__LIMIT_PERCENT, .ppm = ppm };
}

/* An empty copy with the group's cap (zeroed: no cap, no member). */
static inline struct seg *
copy_new(struct seg_limit cap)
{
  struct seg *c = calloc(1, sizeof(*c));
  if (c == NULL)
    abort();
  c->h.limit = cap;
  c->h.creator = 4242;
  c->h.created = 1767225600;
  return c;
}

/* Device counter d counts the GPU whose UUID is 16 bytes of `fill`
 * (0xff first: a driver that gave none). */
static inline void
copy_gpu(struct seg *c, int d, unsigned char fill)
{
  c->name[d].state = NAME_SET;
  memset(c->name[d].uuid, fill, sizeof(c->name[d].uuid));
}

/* A cap on the GPU of 16 bytes of `fill`, as group_limit.GPU-... sets it. */
static inline void
copy_gpu_cap(struct seg *c, unsigned char fill, struct seg_limit cap)
{
  struct seg_gpu_limit *g = &c->h.limit_gpu[c->h.n_limit_gpu++];
  memset(g->uuid, fill, sizeof(g->uuid));
  g->limit = cap;
}

/* The start time (clock ticks after boot) of this process. */
static inline uint64_t
self_start(void)
{
  char letter;
  uint64_t start = 0;
  if (cmg__seg_proc_stat(getpid(), &letter, &start) != 0)
    printf("# cannot read /proc/self/stat\n");
  return start;
}

/* Slot i as a member: pid, its command (16 bytes, NUL-less when that
 * long, as the kernel's may be) and start time (0: unknown). */
static inline struct seg_slot *
copy_member(struct seg *c, unsigned i, pid_t pid, const char *comm,
            uint64_t start)
{
  struct seg_slot *sl = &c->slot[i];
  sl->owner = (uint64_t)(uint32_t)pid << 32 | SLOT_CLAIMED;
  sl->start = start;
  memcpy(sl->comm, comm, strnlen(comm, sizeof(sl->comm)));
  return sl;
}

/* The inode of this process's pid namespace (0: unknown); a slot with
 * another is a member this view cannot judge. */
static inline uint64_t
self_pidns(void)
{
  return cmg__seg_pidns_of("/proc/self/ns/pid");
}

/* What member sl holds on device d. */
static inline void
copy_held(struct seg_slot *sl, int d, uint64_t used, uint64_t peak,
          uint64_t context)
{
  sl->dev[d].used = used;
  sl->dev[d].peak = peak;
  sl->dev[d].context = context;
}

/* The group's counters on device d. */
static inline void
copy_dev(struct seg *c, int d, uint64_t used, uint64_t peak, uint64_t physical)
{
  c->dev[d].used = used;
  c->dev[d].peak = peak;
  c->dev[d].physical = physical;
}

/* The entry of group name of uid, in a container's /dev/shm when
 * container is not "". */
static inline struct cmg__seg_entry
entry_of(const char *name, const char *container, unsigned uid)
{
  struct cmg__seg_entry e;
  memset(&e, 0, sizeof(e));
  snprintf(e.name, sizeof(e.name), "%s", name);
  snprintf(e.container, sizeof(e.container), "%s", container);
  snprintf(e.path, sizeof(e.path), "/dev/shm/cumemguard.%u.%s", uid, name);
  e.uid = uid;
  e.own_dir = container[0] == '\0';
  return e;
}

/* A folder of Kubernetes labels, as the device plugin writes them, made
 * the one the printers read; k8s_label adds a group's. */
static char k8s_dir[64];

static inline void
k8s_start(void)
{
  snprintf(k8s_dir, sizeof(k8s_dir), "/tmp/cmg-k8s.XXXXXX");
  if (mkdtemp(k8s_dir) == NULL)
    abort();
  setenv("CUMEMGUARD_K8S_DIR", k8s_dir, 1);
}

static inline void
k8s_label(const char *group, const char *text)
{
  char path[128];
  snprintf(path, sizeof(path), "%s/%s", k8s_dir, group);
  FILE *f = fopen(path, "w");
  if (f == NULL)
    abort();
  fputs(text, f);
  fclose(f);
}

/* Removes the folder and the labels in it: 0 when nothing is left. */
static inline int
k8s_cleanup(void)
{
  char path[384];
  struct dirent *e;
  DIR *d = opendir(k8s_dir);

  while (d != NULL && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    snprintf(path, sizeof(path), "%s/%s", k8s_dir, e->d_name);
    unlink(path);
  }
  if (d != NULL)
    closedir(d);
  return rmdir(k8s_dir);
}

#endif /* CMG_TEST_SEG_COPY_H */
