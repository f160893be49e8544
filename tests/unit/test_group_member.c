/*
 * The process's side of its group: what it is before joining, and the
 * member it shows to the functions that reclaim slots.  Those lock the
 * segment through the member's descriptor only once it is proven the
 * segment's file, and count its slot out when it leaves, so every field
 * must be this process's own: its pid and pid namespace, its slot in the
 * segment, the descriptor with the device and inode it had when opened, and
 * the group's name as joined.  A forked child has no slot until its first
 * reservation, then one of its own under its own pid.  Each scenario runs
 * in a forked child, since a process joins once.
 */
#include "config.h"

#include "group_harness.h"
#include "runtime/group/group_member.h"

static void
test_before(void)
{
  struct cmg__member m = cmg__group_member();
  is_int(atomic_load(&cmg__gs.state), CMG__GS_OFF, "no group at first");
  is_int(cmg__gs.seg_fd, -1, "no descriptor");
  ok(cmg__gs.seg == NULL && cmg__gs.mine == NULL, "no segment, no slot");
  ok(m.slot == NULL && m.pid == 0 && m.pidns == 0 && !m.registry,
     "the member: no slot, no pid, not the registry");
  is_int(m.fd, -1, "nothing to lock");
  ok(m.group == cmg__gs.group && m.group[0] == '\0', "no name");
  ok(!m.locked && !m.leaving, "neither locked nor leaving");
}

/* Each field from its own, so none is taken for another. */
static void
copied(void)
{
  struct seg_slot slot;
  cmg__gs.mine = &slot;
  cmg__gs.self_pid = 4242;
  cmg__gs.self_pidns = 0x4026531836ull;
  cmg__gs.registry = true;
  snprintf(cmg__gs.group, sizeof(cmg__gs.group), "train");
  cmg__gs.seg_fd = 17;
  cmg__gs.seg_dev = 0x2d;
  cmg__gs.seg_ino = 991;
  struct cmg__member m = cmg__group_member();
  ok(m.slot == &slot, "the slot");
  is_int(m.pid, 4242, "the pid");
  is_u64(m.pidns, 0x4026531836ull, "the pid namespace");
  ok(m.registry, "the registry");
  is_int(m.fd, 17, "the descriptor");
  ok(m.dev == 0x2d && m.ino == 991, "the file it was");
  ok(!m.locked && !m.leaving, "the caller says whether it locked or leaves");
  snprintf(cmg__gs.group, sizeof(cmg__gs.group), "eval");
  is_str(m.group, "eval", "the name is the process's, not a copy");
}

/* The member as joining leaves it, checked against the segment and the
 * system's own answers. */
static void
is_this_process(const char *name, const char *what)
{
  struct cmg__member m = cmg__group_member();
  struct seg *s = cmg__gs.seg;
  char path[128], letter;
  uint64_t start = 0;
  struct stat by_fd = { 0 }, by_name = { 0 };

  path_of(name, path, sizeof(path));
  ok(m.slot != NULL && m.slot == cmg__gs.mine && m.slot >= s->slot &&
         m.slot < s->slot + SEG_SLOTS,
     "%s: its slot is in the segment", what);
  is_int(m.pid, getpid(), "%s: its pid", what);
  is_u64(atomic_load(&m.slot->owner),
         (uint64_t)(uint32_t)getpid() << 32 | SLOT_CLAIMED,
         "%s: which owns the slot", what);
  cmg__seg_proc_stat(getpid(), &letter, &start);
  ok(start != 0 && atomic_load(&m.slot->start) == start,
     "%s: with its start time", what);
  ok(m.pidns != 0 && m.pidns == cmg__seg_pidns_of("/proc/self/ns/pid"),
     "%s: its pid namespace", what);
  is_str(m.group, name, "%s: the group's name", what);
  ok(fstat(m.fd, &by_fd) == 0 && stat(path, &by_name) == 0 &&
         by_fd.st_ino == by_name.st_ino && by_fd.st_dev == by_name.st_dev,
     "%s: its descriptor is the segment %s", what, path);
  ok(m.dev == by_fd.st_dev && m.ino == by_fd.st_ino,
     "%s: and the file it was when opened", what);
  ok(!m.locked && !m.leaving, "%s: neither locked nor leaving", what);
}

static struct seg_slot *parent_slot;
static int parent_fd;

/* A forked child: no slot until it reserves, then its own. */
static void
child(void)
{
  const char *name = name_of("join");
  uint64_t used, limit;

  cmg__group_after_fork();
  struct cmg__member m = cmg__group_member();
  is_int(atomic_load(&cmg__gs.state), CMG__GS_FORKED, "forked: a child");
  ok(m.slot == NULL, "forked: without a slot");
  is_int(m.fd, parent_fd, "forked: the parent's descriptor until then");
  is_int(cmg__group_reserve(0, MiB, PHYS, &used, &limit), 0,
         "forked: a reservation");
  is_this_process(name, "forked");
  ok(cmg__gs.mine != parent_slot, "forked: not the parent's slot");
  cmg__group_leave();
}

static void
joined(void)
{
  const char *name = name_of("join");
  char err[256];

  is_int(join("group=%s,group_limit=8M", name, err, sizeof(err)), 0,
         "joined: join");
  is_int(atomic_load(&cmg__gs.state), CMG__GS_JOINED, "joined: joined");
  ok(!cmg__group_member().registry, "joined: not the registry");
  is_this_process(name, "joined");
  parent_slot = cmg__gs.mine;
  parent_fd = cmg__gs.seg_fd;
  scenario(child, "forked");
  cmg__group_leave();
  is_int(atomic_load(&cmg__gs.state), CMG__GS_LEFT, "joined: left");
}

/* A group name as long as one can be: whole in the member's name. */
static void
longest(void)
{
  char name[64], err[256];
  size_t n = strlen(name_of(""));
  memcpy(name, name_of(""), n);
  memset(name + n, 'n', 63 - n);
  name[63] = '\0';
  char want[128];
  is_int(join("group=%s", name, err, sizeof(err)), 0, "longest: join");
  path_of(name, want, sizeof(want));
  is_str(cmg__gs.shm_path, want, "longest: the segment's path whole");
  is_this_process(name, "longest");
  cmg__group_leave();
}

/* No group named: the user's registry, under its own name. */
static void
registry(void)
{
  char err[256];
  is_int(join("", "", err, sizeof(err)), 0, "registry: join");
  struct cmg__member m = cmg__group_member();
  ok(m.registry, "registry: the member says so");
  is_int(atomic_load(&cmg__gs.state), CMG__GS_JOINED, "registry: joined");
  is_this_process(REGISTRY_NAME, "registry");
  cmg__group_leave();
}

int
main(void)
{
  group_start();
  test_before();
  scenario(copied, "copied");
  scenario(joined, "joined");
  scenario(longest, "longest");
  scenario(registry, "registry");
  group_cleanup();
  return done_testing();
}
