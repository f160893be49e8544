/*
 * Unit tests of group.c, the process's side of a cap shared by a group:
 * reserving, forcing and releasing against the cap, with and without a
 * group; four forked processes hammering one cap while a checker samples
 * it, and racing to fill it; a waiter woken by a free, by a death and by
 * its timeout; a segment overwritten while in use failing closed.
 */
#include "config.h"

#include <sched.h>

#include "group_harness.h"

#define WORKERS 4
#define OPS 10000

static uint64_t
rnd(uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* ---- scenarios ---------------------------------------------------------- */

static void
basic(void)
{
  const char *name = name_of("basic");
  struct cmg__group_usage u;
  uint64_t used, limit;
  char err[256], path[128], text[512];
  struct stat st;

  is_int(join("group=%s,group_limit=10M,group_limit.1=50%%", name, err,
              sizeof(err)), 0, "join creates the group");
  ok(cmg__group_active(), "active");
  is_str(cmg__group_name(), name, "named");
  path_of(name, path, sizeof(path));
  ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 &&
     st.st_uid == geteuid(), "the segment is %s, mode 0600, ours", path);
  is_int(cmg__group_reserve(0, 6 * MiB, PHYS, &used, &limit), 0, "6 MiB");
  is_int(cmg__group_reserve(0, 5 * MiB, PHYS, &used, &limit), -ENOMEM,
         "5 MiB more does not fit 10 MiB");
  is_u64(used, 6 * MiB, "the denial says what is used");
  is_u64(limit, 10 * MiB, "and the cap");
  is_int(cmg__group_reserve(0, 4 * MiB, PHYS, &used, &limit), 0,
         "exactly to the cap");
  ok(cmg__group_usage(0, &u) == 0 && u.used == 10 * MiB &&
     u.mine == 10 * MiB && u.limit == 10 * MiB, "usage: group and mine");
  is_int(cmg__group_members(), 1, "one member");
  is_int(cmg__group_force(0, 3 * MiB, PHYS), 0,
         "memory the driver already took counts past the cap");
  ok(cmg__group_usage(0, &u) == 0 && u.used == 13 * MiB && u.mine == 13 * MiB,
     "and shows in the group and in the process's slot");
  is_int(cmg__group_reserve(0, 1, PHYS, &used, &limit), -ENOMEM,
         "then nothing more fits");
  cmg__group_release(0, 13 * MiB);
  ok(cmg__group_usage(0, &u) == 0 && u.used == 0 && u.mine == 0,
     "released");
  is_int(cmg__group_reserve(1, 8 * GiB, PHYS, &used, &limit), 0,
         "group_limit.1=50%% of 16 GiB takes 8 GiB");
  is_int(cmg__group_reserve(1, 1, PHYS, &used, &limit), -ENOMEM,
         "and not a byte more");
  is_u64(limit, 8 * GiB, "the percentage resolves against physical");
  cmg__group_release(1, 8 * GiB);
  is_int(cmg__group_reserve(CMG__HOST, 1ull << 50, PHYS, &used, &limit), 0,
         "host memory is not the group's");
  capture_stderr();
  cmg__group_release(0, 1); /* more than held: clamped, no underflow */
  ok(cmg__group_usage(0, &u) == 0 && u.used == 0, "no underflow");
  is_int(captured(text, sizeof(text)), 1, "said once");
  cmg__group_leave();
  ok(stat(path, &st) != 0 && errno == ENOENT,
     "the last member's exit removes the segment");
  is_int(cmg__group_reserve(0, 20 * MiB, PHYS, &used, &limit), 0,
         "after leaving, nothing is counted");
}

static void
no_group(void)
{
  uint64_t used, limit;
  char err[64];

  is_int(join("stack_depth=1%s", "", err, sizeof(err)), 0, "no group: join");
  ok(!cmg__group_active() && cmg__group_name() == NULL, "not active");
  is_int(cmg__group_reserve(0, 1ull << 60, PHYS, &used, &limit), 0,
         "no group, no cap");
  is_u64(limit, CMG__NO_LIMIT, "and no limit");
}

struct counts {
  uint64_t ok, denied, frees, bad, shared;
};

/* One of four processes making OPS random reservations and releases. */
static void
hammer(uint64_t cap, int out, int go)
{
  static const uint64_t sizes[] = { 4 * KiB, 64 * KiB, 1 * MiB,
                                    3 * MiB, 7 * MiB, 13 * MiB };
  uint64_t held[64], s = (uint64_t)getpid() * 2654435761u + 1, used, limit;
  struct counts c = { 0, 0, 0, 0, 0 };
  uint64_t mine = 0;
  int n = 0;
  char x;

  cmg__group_after_fork();
  cmg__group_reserve(0, 0, PHYS, &used, &limit);
  if (read(go, &x, 1) != 1)
    _exit(2);
  for (int i = 0; i < OPS; i++) {
    /* One operation is far shorter than a time slice: yield, so that the
     * four interleave even on one or two CPUs. */
    sched_yield();
    if (n > 0 && (n == 64 || rnd(&s) % 3 == 0)) {
      int j = (int)(rnd(&s) % (uint64_t)n);
      cmg__group_release(0, held[j]);
      mine -= held[j];
      held[j] = held[--n];
      c.frees++;
      continue;
    }
    uint64_t size = sizes[rnd(&s) % 6];
    int rc = cmg__group_reserve(0, size, PHYS, &used, &limit);
    if (rc == 0) {
      held[n++] = size;
      mine += size;
      c.ok++;
      c.bad += used > cap;
      /* The group held more than we do: another process held the rest. */
      c.shared += used > mine;
    } else {
      c.denied++;
      c.bad += rc != -ENOMEM || limit != cap || used + size <= cap;
    }
  }
  while (n > 0)
    cmg__group_release(0, held[--n]);
  cmg__group_leave();
  if (write(out, &c, sizeof(c)) != (ssize_t)sizeof(c))
    _exit(2);
}

static void
race(void)
{
  const char *name = name_of("race");
  const uint64_t cap = 32 * MiB;
  struct cmg__group_usage u;
  struct counts all = { 0, 0, 0, 0, 0 }, c;
  uint64_t samples = 0, over = 0, top_used = 0;
  pid_t kids[WORKERS];
  int p[2], go[2], done = 0, st;
  char err[256];

  is_int(join("group=%s,group_limit=32M", name, err, sizeof(err)), 0,
         "race: the checker joins");
  if (pipe(p) != 0 || pipe(go) != 0)
    abort();
  for (int i = 0; i < WORKERS; i++) {
    kids[i] = spawn();
    if (kids[i] == 0) {
      close(p[0]);
      close(go[1]);
      hammer(cap, p[1], go[0]);
      _exit(0);
    }
  }
  close(p[1]);
  close(go[0]);
  /* All four start at once, while this process samples. */
  if (write(go[1], "xxxx", WORKERS) != WORKERS)
    abort();
  close(go[1]);
  /* Sample the group's counter until every worker has exited. */
  while (done < WORKERS) {
    if (cmg__group_usage(0, &u) == 0) {
      samples++;
      over += u.used > cap;
      if (u.used > top_used)
        top_used = u.used;
    }
    if (waitpid(-1, &st, WNOHANG) > 0)
      done++;
  }
  while (read(p[0], &c, sizeof(c)) == (ssize_t)sizeof(c)) {
    all.ok += c.ok;
    all.denied += c.denied;
    all.frees += c.frees;
    all.bad += c.bad;
    all.shared += c.shared;
  }
  close(p[0]);
  printf("# %d x %d operations: %" PRIu64 " reserved (%" PRIu64 " while "
         "others held some), %" PRIu64 " denied, %" PRIu64 " released; %"
         PRIu64 " samples, highest %" PRIu64 "\n", WORKERS, OPS, all.ok,
         all.shared, all.denied, all.frees, samples, top_used);
  is_u64(all.ok + all.denied + all.frees, (uint64_t)WORKERS * OPS,
         "every operation accounted for");
  ok(all.denied > 0 && all.shared > 0,
     "the processes shared the cap and were refused");
  is_u64(all.bad, 0, "no reservation passed the cap, no denial was wrong");
  is_u64(over, 0, "the sampled group usage never passed the cap");
  ok(samples > 0, "the checker sampled while they ran");
  ok(cmg__group_usage(0, &u) == 0 && u.used == 0,
     "every byte came back: the counter is exact");
  is_int(cmg__group_members(), 1, "the workers' slots are free");
  cmg__group_leave();
}

/* Four processes take 1 MiB at a time until refused: together exactly the
 * cap, never more. */
static void
fill(void)
{
  const char *name = name_of("fill");
  struct cmg__group_usage u;
  uint64_t used, limit, total = 0, got;
  int p[2], go[2], hold[2], st;
  char err[256];

  is_int(join("group=%s,group_limit=64M", name, err, sizeof(err)), 0,
         "fill: join");
  if (pipe(p) != 0 || pipe(go) != 0 || pipe(hold) != 0)
    abort();
  for (int i = 0; i < WORKERS; i++) {
    if (spawn() == 0) {
      char x;
      close(p[0]);
      close(go[1]);
      close(hold[1]);
      cmg__group_after_fork();
      /* Each takes its slot first, then all start together. */
      cmg__group_reserve(0, 0, PHYS, &used, &limit);
      if (read(go[0], &x, 1) != 1)
        _exit(2);
      got = 0;
      while (cmg__group_reserve(0, MiB, PHYS, &used, &limit) == 0)
        got++;
      if (write(p[1], &got, sizeof(got)) != (ssize_t)sizeof(got))
        _exit(2);
      /* Hold until the parent has looked: its close is our EOF. */
      if (read(hold[0], &x, 1) != 0)
        _exit(2);
      cmg__group_leave();
      _exit(0);
    }
  }
  close(p[1]);
  close(go[0]);
  close(hold[0]);
  if (write(go[1], "xxxx", WORKERS) != WORKERS)
    abort();
  for (int i = 0; i < WORKERS; i++)
    if (read(p[0], &got, sizeof(got)) == (ssize_t)sizeof(got))
      total += got;
  ok(cmg__group_usage(0, &u) == 0 && u.used == 64 * MiB,
     "the group holds exactly its cap");
  is_u64(total, 64, "four racing processes got 64 x 1 MiB between them");
  is_int(cmg__group_members(), WORKERS + 1, "five members");
  close(hold[1]);
  close(go[1]);
  for (int i = 0; i < WORKERS; i++)
    wait(&st);
  close(p[0]);
  ok(cmg__group_usage(0, &u) == 0 && u.used == 0,
     "their exits gave everything back");
  cmg__group_leave();
}

static void
wait_free(void)
{
  const char *name = name_of("wait");
  uint64_t used, limit, t0, took;
  char err[256];
  int p[2], st;
  pid_t pid;

  is_int(join("group=%s,group_limit=4M", name, err, sizeof(err)), 0,
         "wait: join");
  if (pipe(p) != 0)
    abort();
  pid = spawn();
  if (pid == 0) {
    close(p[0]);
    cmg__group_after_fork();
    cmg__group_reserve(0, 3 * MiB, PHYS, &used, &limit);
    if (write(p[1], "y", 1) != 1)
      _exit(2);
    sleep_ms(300);
    cmg__group_release(0, 3 * MiB);
    sleep_ms(300);
    cmg__group_leave();
    _exit(0);
  }
  close(p[1]);
  if (read(p[0], err, 1) != 1)
    abort();
  close(p[0]);
  t0 = now_ns();
  is_int(cmg__group_wait(0, 2 * MiB, PHYS, 5000000000ull, &used, &limit), 0,
         "a waiter gets its room");
  took = (now_ns() - t0) / 1000000;
  ok(took >= 250 && took < 990,
     "when the other process frees, not at a poll (%" PRIu64 " ms)", took);
  waitpid(pid, &st, 0);
  cmg__group_release(0, 2 * MiB);

  /* Woken by a death: the waiter reclaims it at its once-a-second look. */
  pid = holder(3 * MiB);
  if (spawn() == 0) {
    sleep_ms(300);
    kill(pid, SIGKILL);
    _exit(0);
  }
  t0 = now_ns();
  is_int(cmg__group_wait(0, 2 * MiB, PHYS, 5000000000ull, &used, &limit), 0,
         "a waiter gets the room of a member killed meanwhile");
  took = (now_ns() - t0) / 1000000;
  ok(took >= 250 && took < 1600, "within about a second (%" PRIu64 " ms)",
     took);
  while (wait(&st) > 0)
    ;
  t0 = now_ns();
  is_int(cmg__group_wait(0, 3 * MiB, PHYS, 200000000ull, &used, &limit),
         -ETIMEDOUT, "nobody frees: the wait times out");
  took = (now_ns() - t0) / 1000000;
  ok(took >= 190 && took < 600, "after wait_timeout (%" PRIu64 " ms)", took);
  ok(used == 2 * MiB && limit == 4 * MiB, "saying what is used");
  cmg__group_leave();
}

static void
overwritten_live(void)
{
  const char *name = name_of("live");
  uint64_t used, limit, junk = 42;
  char err[256], text[1024];

  is_int(join("group=%s,group_limit=8M", name, err, sizeof(err)), 0,
         "live: join");
  is_int(cmg__group_reserve(0, MiB, PHYS, &used, &limit), 0, "allocates");
  poke(name, 0, &junk, sizeof(junk));
  capture_stderr();
  ok(cmg__group_reserve(0, MiB, PHYS, &used, &limit) == -EPERM &&
     limit == 0, "a segment overwritten while in use fails closed");
  cmg__group_reserve(0, MiB, PHYS, &used, &limit);
  is_int(captured(text, sizeof(text)), 1, "with one line");
  ok(strstr(text, "was overwritten (bad magic)") != NULL, "saying why");
  cmg__group_leave();
}

int
main(void)
{
  group_start();
  scenario(basic, "basic");
  scenario(no_group, "no group");
  scenario(race, "race");
  scenario(fill, "fill");
  scenario(wait_free, "wait");
  scenario(overwritten_live, "overwritten");
  group_cleanup();
  return done_testing();
}
