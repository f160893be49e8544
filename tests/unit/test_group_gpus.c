/*
 * Unit tests of group_gpus.c: the group counts each GPU once, by its
 * UUID, whatever ordinal each member gives it.  Two members that see the
 * GPUs in another order (CUDA_VISIBLE_DEVICES=1,0 in one) must put one
 * GPU's bytes in one counter, and a GPU's cap must follow it to whatever
 * ordinal it has; members that agree on the ordinals keep their numbers,
 * members that race to name the same new GPU agree on its entry, a driver
 * that gives no UUID leaves the ordinal counting as itself, a full table
 * or a lock that cannot be taken fails with a line saying why, and a name
 * already in the table is found without the lock.  Each member is a
 * forked process told its GPUs' UUIDs directly, as CUDA would tell the
 * library.
 */
#include "config.h"

#include <pthread.h>
#include <sys/file.h>

#include "group_harness.h"
#include "runtime/group/group_gpus.h"
#include "runtime/group/group_member.h"

/* A GPU's UUID: k picks it, and none starts with the no-UUID key's 0xff. */
static void
uuid_of(int k, unsigned char u[CMG__UUID_BYTES])
{
  for (int i = 0; i < CMG__UUID_BYTES; i++)
    u[i] = (unsigned char)(0x3c + 7 * i);
  u[CMG__UUID_BYTES - 2] = (unsigned char)(k >> 8);
  u[CMG__UUID_BYTES - 1] = (unsigned char)k;
}

static void
know(int ordinal, int k)
{
  unsigned char u[CMG__UUID_BYTES];
  uuid_of(k, u);
  cmg__group_know_device(ordinal, u);
}

/* Whether entry i of the segment's name table names GPU k. */
static bool
names(int i, int k)
{
  unsigned char u[CMG__UUID_BYTES];
  const struct seg_name *n = &cmg__gs.seg->name[i];
  uuid_of(k, u);
  return atomic_load(&n->state) == NAME_SET &&
         memcmp(n->uuid, u, CMG__UUID_BYTES) == 0;
}

static int
named_entries(void)
{
  int n = 0;
  for (int i = 0; i < SEG_DEVICES; i++)
    n += atomic_load(&cmg__gs.seg->name[i].state) == NAME_SET;
  return n;
}

static uint64_t
cap_bytes(int ordinal)
{
  return cmg__seg_limit_bytes(cmg__group_cap_entry(ordinal), PHYS);
}

static uint64_t
group_used(int ordinal)
{
  struct cmg__group_usage u;
  return cmg__group_usage(ordinal, &u) == 0 ? u.used : UINT64_MAX;
}

/* ---- another member ----------------------------------------------------- */

/* A member forked before this process met its GPUs (so it knows none),
 * which waits for `go`, joins, runs fn and writes its n results back. */
struct member {
  pid_t pid;
  int go, back, hold;
};

/* The ends this process keeps of the members it started: a later member
 * closes them, or an earlier one would never see its `hold` close. */
static int kept[16], n_kept;

static struct member
member(void (*fn)(int *out), int n)
{
  int go[2], back[2], hold[2];
  struct member m;

  if (pipe(go) != 0 || pipe(back) != 0 || pipe(hold) != 0)
    abort();
  m.pid = spawn();
  if (m.pid == 0) {
    int out[SEG_DEVICES] = { 0 };
    char x;
    close(go[1]);
    close(back[0]);
    close(hold[1]);
    for (int i = 0; i < n_kept; i++)
      close(kept[i]);
    cmg__group_after_fork();
    if (read(go[0], &x, 1) != 1)
      _exit(2);
    fn(out);
    if (write(back[1], out, sizeof(int) * (size_t)n) !=
        (ssize_t)(sizeof(int) * (size_t)n))
      _exit(2);
    /* Holds what it reserved until the parent has looked. */
    if (read(hold[0], &x, 1) != 0)
      _exit(2);
    cmg__group_leave();
    _exit(0);
  }
  close(go[0]);
  close(back[1]);
  close(hold[0]);
  m.go = kept[n_kept++] = go[1];
  m.back = kept[n_kept++] = back[0];
  m.hold = kept[n_kept++] = hold[1];
  return m;
}

static void
start(struct member *m)
{
  if (write(m->go, "g", 1) != 1)
    abort();
  close(m->go);
}

/* Its results into out: whether they all came. */
static bool
results(struct member *m, int *out, int n)
{
  size_t want = sizeof(int) * (size_t)n, got = 0;
  ssize_t r;
  while (got < want && (r = read(m->back, (char *)out + got, want - got)) > 0)
    got += (size_t)r;
  return got == want;
}

static void
finish(struct member *m)
{
  int st;
  close(m->hold);
  close(m->back);
  waitpid(m->pid, &st, 0);
}

/* ---- before any group --------------------------------------------------- */

static void
unjoined(void)
{
  unsigned char a[CMG__UUID_BYTES];

  is_int(cmg__group_name_device(0), -1, "no segment: no name");
  is_int(cmg__group_index(0), -1, "no segment: no counter");
  know(-1, 1);
  know(SEG_DEVICES, 1);
  ok(!cmg__gs.uuid_known[0] && !cmg__gs.uuid_known[SEG_DEVICES - 1],
     "ordinals out of range are not recorded");
  know(2, 1);
  know(2, 2);
  uuid_of(1, a);
  ok(cmg__gs.uuid_known[2] && memcmp(cmg__gs.uuid[2], a, sizeof(a)) == 0,
     "an ordinal keeps the first UUID it was given");
  ok(!cmg__gs.uuid_known[1] && !cmg__gs.uuid_known[3],
     "and only that ordinal has one");
}

/* ---- one member --------------------------------------------------------- */

static void
one_member(void)
{
  const char *name = name_of("one");
  char err[256], path[128], text[CMG__UUID_TEXT], shown[CMG__UUID_TEXT];
  unsigned char c[CMG__UUID_BYTES];
  uint64_t used, limit;

  is_int(join("group=%s,group_limit=64M", name, err, sizeof(err)), 0,
         "one: join");
  know(0, 10);
  know(1, 11);
  is_int(cmg__group_index(1), 1, "a GPU takes the entry of its ordinal");
  ok(names(1, 11), "which names its UUID");
  is_int(cmg__group_index(0), 0, "the next takes its own");
  ok(names(0, 10) && named_entries() == 2, "two entries named");
  is_int(cmg__gs.at[0], 1, "the ordinal remembers its counter");
  is_int(cmg__group_name_device(SEG_DEVICES), -1, "an ordinal past the table");
  is_int(cmg__group_name_device(-1), -1, "a negative ordinal");

  /* The lock was given back: another open file of the segment takes it. */
  path_of(name, path, sizeof(path));
  int fd = open(path, O_RDWR);
  is_int(flock(fd, LOCK_EX | LOCK_NB), 0, "the segment's lock is free");
  flock(fd, LOCK_UN);
  close(fd);
  ok(cmg__group_hold(), "and so is the process's hold");
  cmg__group_unhold();

  /* With the lock out of reach: what is named is found, nothing new. */
  int seg_fd = cmg__gs.seg_fd;
  cmg__gs.seg_fd = -1;
  cmg__group_forget_names();
  ok(cmg__gs.at[0] == 0 && cmg__gs.at[1] == 0, "forgotten");
  is_int(cmg__group_index(0), 0, "a named GPU is found without the lock");
  is_int(cmg__gs.at[0], 1, "and remembered again");
  know(2, 12);
  is_int(cmg__group_index(2), -1, "a new one cannot be named");
  uuid_of(12, c);
  cmg__uuid_format(c, text);
  ok(strstr(cmg__group_why(), "cannot lock ") &&
         strstr(cmg__group_why(), path) && strstr(cmg__group_why(), text) &&
         strstr(cmg__group_why(), strerror(EBADF)),
     "why: the segment, the GPU and the error");
  is_int(cmg__group_index(3), -1, "nor an ordinal with no UUID");
  ok(strstr(cmg__group_why(), "to count the device there") != NULL,
     "why: the device, no UUID to name");
  ok(cmg__gs.at[2] == 0 && named_entries() == 2, "nothing named meanwhile");
  is_int(cmg__group_reserve(2, MiB, PHYS, &used, &limit), -EBUSY,
         "a reservation there waits for a name");
  ok(cmg__group_hold(), "a failed lock gives the hold back");
  cmg__group_unhold();
  cmg__gs.seg_fd = seg_fd;

  is_int(cmg__group_index(2), 2, "with the lock back, it is named");
  is_int(cmg__group_index(3), 3, "an ordinal with no UUID counts as itself");
  const unsigned char *k = cmg__gs.seg->name[3].uuid;
  ok(k[0] == 0xff && memcmp(k + 1, "ord", 3) == 0 && k[15] == 3,
     "keyed by its number");
  ok(!cmg__seg_gpu_of(cmg__gs.seg, 3, shown), "which is no GPU to status");
  ok(cmg__seg_gpu_of(cmg__gs.seg, 2, shown) && strcmp(shown, text) == 0,
     "the other is its GPU");
  is_int(cmg__group_reserve(1, 5 * MiB, PHYS, &used, &limit), 0, "reserve");
  is_u64(cmg__gs.seg->dev[1].used, 5 * MiB, "in its GPU's counter");
  cmg__group_release(1, 5 * MiB);
  cmg__group_leave();
}

/* ---- members that number the GPUs differently --------------------------- */

/* Sees GPU 11 as 0 and 10 as 1, then two the first member lacks. */
static void
reordered_member(int *out)
{
  uint64_t used, limit;
  know(0, 11);
  know(1, 10);
  know(3, 14);
  know(2, 13);
  out[0] = cmg__group_reserve(0, 3 * MiB, PHYS, &used, &limit);
  out[1] = cmg__group_reserve(1, 1 * MiB, PHYS, &used, &limit);
  out[2] = cmg__group_index(0);
  out[3] = cmg__group_index(1);
  out[4] = cmg__group_index(3);
  out[5] = cmg__group_index(2);
  out[6] = cmg__group_index(5);
}

static void
reordered(void)
{
  const char *name = name_of("order");
  char err[256];
  uint64_t used, limit;
  int r[7];

  is_int(join("group=%s,group_limit=64M", name, err, sizeof(err)), 0,
         "order: join");
  struct member m = member(reordered_member, 7);
  know(0, 10);
  know(1, 11);
  know(3, 15);
  ok(cmg__group_index(0) == 0 && cmg__group_index(1) == 1 &&
         cmg__group_index(3) == 3 && cmg__group_index(5) == 5,
     "the first member names GPUs 10, 11, 15 and ordinal 5");
  start(&m);
  ok(results(&m, r, 7), "the second member ran");
  ok(r[0] == 0 && r[1] == 0, "and reserved on its ordinals 0 and 1");
  is_int(r[2], 1, "its ordinal 0, GPU 11, counts in entry 1");
  is_int(r[3], 0, "its ordinal 1, GPU 10, in entry 0");
  is_int(r[4], 2, "GPU 14 on ordinal 3, taken: the first free entry");
  is_int(r[5], 4, "GPU 13 on ordinal 2, taken now: the next free one");
  ok(names(2, 14) && names(4, 13), "each named in the table");
  is_int(r[6], 5, "ordinal 5 without a UUID: the same counter as ours");
  is_u64(group_used(1), 3 * MiB, "its GPU 11 bytes are ours on ordinal 1");
  is_u64(group_used(0), 1 * MiB, "its GPU 10 bytes ours on ordinal 0");
  is_int(cmg__group_reserve(1, 61 * MiB, PHYS, &used, &limit), 0,
         "GPU 11 has room for the rest of the cap");
  is_int(cmg__group_reserve(1, 1, PHYS, &used, &limit), -ENOMEM,
         "and not a byte more: one counter for both members");
  is_u64(used, 64 * MiB, "both members' bytes in it");
  is_int(named_entries(), 6, "six entries for five GPUs and an ordinal");
  cmg__group_release(1, 61 * MiB);
  finish(&m);
  cmg__group_leave();
}

/* ---- many members racing ------------------------------------------------ */

#define RACERS 4
#define RACE_GPUS 6

static int racer_no;

static void *
name_one(void *arg)
{
  int o = (int)(intptr_t)arg;
  return (void *)(intptr_t)cmg__group_index(o);
}

/* Ordinal o is GPU 20 + (o + racer) % RACE_GPUS; all named at once by
 * threads of its own.  out[k]: the entry of GPU 20 + k. */
static void
racer(int *out)
{
  pthread_t th[RACE_GPUS];
  uint64_t used, limit;

  for (int o = 0; o < RACE_GPUS; o++)
    know(o, 20 + (o + racer_no) % RACE_GPUS);
  /* Its slot first, through an ordinal none of the six is. */
  cmg__group_reserve(RACE_GPUS, 0, PHYS, &used, &limit);
  for (int o = 0; o < RACE_GPUS; o++)
    pthread_create(&th[o], NULL, name_one, (void *)(intptr_t)o);
  for (int o = 0; o < RACE_GPUS; o++) {
    void *i;
    pthread_join(th[o], &i);
    out[(o + racer_no) % RACE_GPUS] = (int)(intptr_t)i;
  }
}

static void
race(void)
{
  const char *name = name_of("race");
  struct member m[RACERS];
  int r[RACERS][RACE_GPUS], agree = 0, got = 0;
  char err[256];
  bool seen[SEG_DEVICES] = { false }, distinct = true, table = true;

  is_int(join("group=%s,group_limit=64M", name, err, sizeof(err)), 0,
         "race: join");
  for (racer_no = 0; racer_no < RACERS; racer_no++)
    m[racer_no] = member(racer, RACE_GPUS);
  for (int p = 0; p < RACERS; p++)
    start(&m[p]);
  for (int p = 0; p < RACERS; p++)
    got += results(&m[p], r[p], RACE_GPUS);
  is_int(got, RACERS, "four members named six GPUs at once");
  for (int p = 0; p < RACERS; p++)
    for (int k = 0; k < RACE_GPUS; k++)
      agree += r[p][k] == r[0][k];
  is_int(agree, RACERS * RACE_GPUS, "every member has each GPU in one entry");
  for (int k = 0; k < RACE_GPUS; k++) {
    int i = r[0][k];
    distinct &= i >= 0 && i < SEG_DEVICES && !seen[i];
    if (i >= 0 && i < SEG_DEVICES) {
      seen[i] = true;
      table &= names(i, 20 + k);
    }
  }
  ok(distinct, "and each GPU its own entry");
  ok(table && named_entries() == RACE_GPUS + 1,
     "the table names those six and the ordinal with no UUID");
  for (int p = 0; p < RACERS; p++)
    finish(&m[p]);
  cmg__group_leave();
}

/* ---- a full table ------------------------------------------------------- */

/* Ordinal 1 is a GPU the full table lacks, ordinal 2 one it has. */
static void
late_member(int *out)
{
  uint64_t used, limit;
  know(1, 999);
  know(2, 102);
  out[0] = cmg__group_reserve(1, MiB, PHYS, &used, &limit);
  out[1] = cmg__group_index(1);
  out[2] = strstr(cmg__group_why(), "all 64 device counters of ") != NULL &&
           strstr(cmg__group_why(), "count other GPUs") != NULL;
  out[3] = cmg__group_index(2);
  out[4] = cmg__group_reserve(2, MiB, PHYS, &used, &limit);
}

static void
full(void)
{
  const char *name = name_of("full");
  char err[256];
  int r[5], right = 0;

  is_int(join("group=%s,group_limit=64M", name, err, sizeof(err)), 0,
         "full: join");
  struct member m = member(late_member, 5);
  for (int o = 0; o < SEG_DEVICES; o++) {
    know(o, 100 + o);
    right += cmg__group_index(o) == o && names(o, 100 + o);
  }
  is_int(right, SEG_DEVICES, "%d GPUs fill the table, each at its ordinal",
         SEG_DEVICES);
  start(&m);
  ok(results(&m, r, 5), "a member with another GPU ran");
  is_int(r[0], -EBUSY, "its reservation there is refused");
  is_int(r[1], -1, "no entry is left for that GPU");
  ok(r[2], "why: every counter counts another GPU");
  is_int(r[3], 2, "a GPU the table has is still found");
  is_int(r[4], 0, "and counts");
  is_u64(group_used(2), MiB, "in the same counter as ours");
  finish(&m);
  cmg__group_leave();
}

/* ---- caps keyed by GPU -------------------------------------------------- */

#define CAP_A 40
#define CAP_B 41
#define CAP_C 42

/* GPU A on ordinal 1 here, where group_limit.1 is 20M; C on ordinal 0. */
static void
cap_member(int *out)
{
  uint64_t used, limit;
  know(1, CAP_A);
  know(0, CAP_C);
  out[0] = cap_bytes(1) == 30 * MiB;
  out[1] = cmg__group_reserve(1, 1, PHYS, &used, &limit);
  out[2] = limit == 30 * MiB && used == 30 * MiB;
  out[3] = cap_bytes(0) == 10 * MiB;
  out[4] = cmg__group_index(1);
}

static void
caps(void)
{
  const char *name = name_of("caps");
  unsigned char a[CMG__UUID_BYTES], b[CMG__UUID_BYTES];
  char ta[CMG__UUID_TEXT], tb[CMG__UUID_TEXT], fmt[256], err[256];
  uint64_t used, limit;
  int r[5];

  uuid_of(CAP_A, a);
  uuid_of(CAP_B, b);
  cmg__uuid_format(a, ta);
  cmg__uuid_format(b, tb);
  snprintf(fmt, sizeof(fmt),
           "group=%%s,group_limit=10M,group_limit.1=20M,"
           "group_limit.%s=30M,group_limit.%s=50%%%%",
           ta, tb);
  is_int(join(fmt, name, err, sizeof(err)), 0, "caps: join");
  struct member m = member(cap_member, 5);
  know(0, CAP_A);
  know(1, CAP_C);
  know(2, CAP_B);
  know(4, CAP_C + 1);
  is_u64(cap_bytes(0), 30 * MiB, "before naming: GPU A's own cap");
  is_u64(cap_bytes(1), 20 * MiB, "a GPU with none: group_limit.1");
  is_u64(cap_bytes(2), 8 * GiB, "GPU B's percentage of its memory");
  is_u64(cap_bytes(3), 10 * MiB, "an ordinal with no UUID: group_limit");
  is_u64(cap_bytes(4), 10 * MiB, "a GPU with none, no group_limit.4");
  for (int o = 0; o < 5; o++)
    cmg__group_index(o);
  ok(cmg__group_cap_entry(0) == &cmg__gs.cap_at[0], "named: its entry kept");
  ok(cap_bytes(0) == 30 * MiB && cap_bytes(1) == 20 * MiB &&
         cap_bytes(2) == 8 * GiB && cap_bytes(3) == 10 * MiB &&
         cap_bytes(4) == 10 * MiB,
     "the same caps once named");
  is_int(cmg__group_reserve(0, 30 * MiB, PHYS, &used, &limit), 0,
         "GPU A to its cap");
  is_int(cmg__group_reserve(0, 1, PHYS, &used, &limit), -ENOMEM,
         "not a byte more");
  start(&m);
  ok(results(&m, r, 5), "a member with GPU A on ordinal 1 ran");
  ok(r[0], "its cap there is GPU A's, not group_limit.1");
  is_int(r[1], -ENOMEM, "and A is full");
  ok(r[2], "of both members' bytes, under A's cap");
  ok(r[3], "GPU C on its ordinal 0: group_limit");
  is_int(r[4], 0, "A's counter is ours");
  cmg__group_release(0, 30 * MiB);
  finish(&m);
  cmg__group_leave();
}

int
main(void)
{
  group_start();
  scenario(unjoined, "unjoined");
  scenario(one_member, "one member");
  scenario(reordered, "reordered");
  scenario(race, "race");
  scenario(full, "full");
  scenario(caps, "caps");
  group_cleanup();
  return done_testing();
}
