/*
 * group.c called directly, across real processes: each scenario runs in a
 * forked child (a process joins one group, once), which hands its TAP
 * count back to the parent through a pipe.  Four forked processes hammer
 * one cap while a checker samples it; a SIGKILLed member is reclaimed; a
 * waiter is woken by a free and by a death; fork gives a child its own
 * slot; mismatched limits are said once and the first member's stand; bad,
 * foreign and half-made segments; the status view.  Segments are named
 * after this test's pid and removed at the end.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "core/conf.h"
#include "runtime/group.h"
#include "runtime/group_join.h"
#include "ops/group_status.h"
#include "../tap.h"

/* group.c, for the exit path and the launcher. */
void cmg__group_leave(void);

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define PHYS (16 * GiB)
#define WORKERS 4
#define OPS 10000

static pid_t top;

/* The status view of name (NULL: all) written to fd, as the launcher
 * writes it: 0, or cmg__group_status's error. */
static int
status_fd(const char *name, bool json, int fd, char *err, size_t errlen)
{
  char *text = NULL;
  size_t len = 0;
  int rc = cmg__group_status(name, json ? CMG__STATUS_JSON : CMG__STATUS_TEXT,
                             &text, &len, err, errlen);

  if (rc == 0 && write(fd, text, len) != (ssize_t)len)
    rc = -EIO;
  free(text);
  return rc;
}
static char name_buf[64];

/* A group name unique to this run ("t<pid>-tag"), removed at the end. */
static const char *
name_of(const char *tag)
{
  snprintf(name_buf, sizeof(name_buf), "t%d-%s", (int)top, tag);
  return name_buf;
}

static void
path_of(const char *name, char *buf, size_t len)
{
  snprintf(buf, len, "/dev/shm/cumemguard.%u.%s", (unsigned)geteuid(), name);
}

static uint64_t
now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
sleep_ms(unsigned ms)
{
  struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

static int
join(const char *fmt, const char *name, char *err, size_t errlen)
{
  struct cmg__config cfg;
  char opts[256], perr[256];
  snprintf(opts, sizeof(opts), fmt, name);
  if (cmg__config_parse(opts, &cfg, perr, sizeof(perr)) != 0) {
    printf("# bad options '%s': %s\n", opts, perr);
    return -EINVAL;
  }
  return cmg__group_join(&cfg, err, errlen);
}

static pid_t
spawn(void)
{
  fflush(stdout);
  fflush(stderr);
  return fork();
}

/* Runs fn in a child, which continues the TAP numbering. */
static void
scenario(void (*fn)(void), const char *what)
{
  int p[2], v[2] = { 0, 0 }, st = 0;
  ssize_t n;
  pid_t pid;

  if (pipe(p) != 0)
    abort();
  pid = spawn();
  if (pid == 0) {
    close(p[0]);
    fn();
    fflush(stdout);
    v[0] = tap_n;
    v[1] = tap_failed;
    if (write(p[1], v, sizeof(v)) != (ssize_t)sizeof(v))
      _exit(3);
    _exit(0);
  }
  close(p[1]);
  n = read(p[0], v, sizeof(v));
  close(p[0]);
  waitpid(pid, &st, 0);
  if (n == (ssize_t)sizeof(v)) {
    tap_n = v[0];
    tap_failed = v[1];
  }
  ok(n == (ssize_t)sizeof(v) && WIFEXITED(st) && WEXITSTATUS(st) == 0,
     "%s: ran to its end", what);
}

/* stderr into a file, to count the lines group.c writes. */
static int saved_err = -1;
static char err_file[64];

static void
capture_stderr(void)
{
  int fd;
  snprintf(err_file, sizeof(err_file), "/tmp/test_group.%d.err",
           (int)getpid());
  fd = open(err_file, O_RDWR | O_CREAT | O_TRUNC, 0600);
  fflush(stderr);
  saved_err = dup(2);
  dup2(fd, 2);
  close(fd);
}

/* Restores stderr; the captured text in buf, its line count returned. */
static int
captured(char *buf, size_t len)
{
  int fd = open(err_file, O_RDONLY), lines = 0;
  ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
  buf[n > 0 ? n : 0] = '\0';
  if (fd >= 0)
    close(fd);
  unlink(err_file);
  dup2(saved_err, 2);
  close(saved_err);
  for (char *p = buf; *p; p++)
    lines += *p == '\n';
  if (lines > 0)
    printf("# stderr: %s", buf);
  return lines;
}

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

/* A member that holds bytes, says so on `ready`, and waits to be killed. */
static pid_t
holder(uint64_t bytes)
{
  int p[2];
  pid_t pid;
  char x = 0;

  if (pipe(p) != 0)
    abort();
  pid = spawn();
  if (pid == 0) {
    uint64_t used, limit;
    close(p[0]);
    cmg__group_after_fork();
    x = cmg__group_reserve(0, bytes, PHYS, &used, &limit) == 0 ? 'y' : 'n';
    if (write(p[1], &x, 1) != 1)
      _exit(2);
    for (;;)
      pause();
  }
  close(p[1]);
  if (read(p[0], &x, 1) != 1 || x != 'y')
    printf("# the holder could not reserve\n");
  close(p[0]);
  return pid;
}

static void
kill_reclaim(void)
{
  const char *name = name_of("kill");
  struct cmg__group_usage u;
  uint64_t used, limit, t0, took;
  char err[256], text[4096];
  pid_t pid;
  int rc, st, pipefd[2];

  is_int(join("group=%s,group_limit=10M", name, err, sizeof(err)), 0,
         "kill: join");
  pid = holder(6 * MiB);
  ok(cmg__group_usage(0, &u) == 0 && u.used == 6 * MiB, "the holder holds");
  is_int(cmg__group_reserve(0, 6 * MiB, PHYS, &used, &limit), -ENOMEM,
         "no room while it lives");
  kill(pid, SIGKILL);
  sleep_ms(50);
  /* Unreaped, it is a zombie: dead for the group all the same. */
  if (pipe(pipefd) != 0)
    abort();
  status_fd(name, true, pipefd[1], err, sizeof(err));
  close(pipefd[1]);
  memset(text, 0, sizeof(text));
  if (read(pipefd[0], text, sizeof(text) - 1) < 0)
    text[0] = '\0';
  close(pipefd[0]);
  ok(strstr(text, "\"alive\":false") != NULL && strstr(text, "\"dead\":1"),
     "status marks the killed member dead before it is reclaimed");
  t0 = now_ns();
  while ((rc = cmg__group_reserve(0, 6 * MiB, PHYS, &used, &limit)) != 0 &&
         now_ns() - t0 < 3000000000ull)
    sleep_ms(10);
  took = (now_ns() - t0) / 1000000;
  is_int(rc, 0, "its share is reclaimed for the next allocation");
  ok(took < 1100, "within a second (%" PRIu64 " ms)", took);
  waitpid(pid, &st, 0);
  ok(cmg__group_usage(0, &u) == 0 && u.used == 6 * MiB && u.mine == 6 * MiB,
     "only our bytes are counted");
  is_int(cmg__group_members(), 1, "its slot is free");
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
forked(void)
{
  const char *name = name_of("fork");
  struct cmg__group_usage u;
  uint64_t used, limit;
  char err[256];
  int st;

  is_int(join("group=%s,group_limit=4M", name, err, sizeof(err)), 0,
         "fork: join");
  cmg__group_reserve(0, MiB, PHYS, &used, &limit);
  if (spawn() == 0) {
    int bad = 0;
    cmg__group_after_fork();
    bad += cmg__group_reserve(0, 2 * MiB, PHYS, &used, &limit) != 0;
    bad += cmg__group_usage(0, &u) != 0 || u.used != 3 * MiB ||
           u.mine != 2 * MiB;
    bad += cmg__group_members() != 2;
    bad += cmg__group_reserve(0, 2 * MiB, PHYS, &used, &limit) != -ENOMEM;
    cmg__group_leave();
    _exit(bad);
  }
  wait(&st);
  ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
     "a forked child takes its own slot and shares the cap");
  ok(cmg__group_usage(0, &u) == 0 && u.used == MiB && u.mine == MiB,
     "its exit leaves the parent's bytes alone");
  is_int(cmg__group_members(), 1, "and frees its slot");
  cmg__group_leave();
}

static void
mismatch(void)
{
  const char *name = name_of("mismatch");
  uint64_t used, limit;
  char err[256], text[1024];
  int st, lines;
  pid_t first;

  /* The first member, with 8 MiB, stays while a second joins with 4. */
  first = spawn();
  if (first == 0) {
    join("group=%s,group_limit=8M", name, err, sizeof(err));
    for (;;)
      pause();
  }
  sleep_ms(200);
  capture_stderr();
  is_int(join("group=%s,group_limit=4M", name, err, sizeof(err)), 0,
         "mismatch: a second member with another limit joins");
  if (spawn() == 0) {
    cmg__group_after_fork();
    cmg__group_reserve(0, 1, PHYS, &used, &limit);
    cmg__group_leave();
    _exit(0);
  }
  wait(&st);
  lines = captured(text, sizeof(text));
  is_int(lines, 1, "one line, not repeated by a forked child");
  ok(strstr(text, "group_limit here is 4.0 MiB, but the group's is 8.0 "
                  "MiB") != NULL, "naming both limits");
  is_int(cmg__group_reserve(0, 6 * MiB, PHYS, &used, &limit), 0,
         "the first member's 8 MiB stands");
  is_u64(limit, 8 * MiB, "as the cap");
  cmg__group_release(0, 6 * MiB);
  cmg__group_leave();
  kill(first, SIGKILL);
  waitpid(first, &st, 0);
}

/* The first member died: the next to join, finding nobody, sets the
 * group's limits anew, without a word. */
static void
adopt(void)
{
  const char *name = name_of("adopt");
  struct cmg__group_usage u;
  char err[256], text[1024];
  pid_t first;
  int st;

  first = spawn();
  if (first == 0) {
    join("group=%s,group_limit=8M", name, err, sizeof(err));
    for (;;)
      pause();
  }
  sleep_ms(200);
  kill(first, SIGKILL);
  waitpid(first, &st, 0);
  capture_stderr();
  is_int(join("group=%s,group_limit=2M", name, err, sizeof(err)), 0,
         "adopt: join a group whose only member was killed");
  is_int(captured(text, sizeof(text)), 0, "no mismatch is said");
  ok(cmg__group_usage(0, &u) == 0 && u.limit == 2 * MiB,
     "with no member left, the next one's limits are the group's");
  is_int(cmg__group_members(), 1, "the dead member was reclaimed at join");
  cmg__group_leave();
}

/* Writes len bytes at off of the segment of name. */
static void
poke(const char *name, off_t off, const void *p, size_t len)
{
  char path[128];
  int fd;

  path_of(name, path, sizeof(path));
  fd = open(path, O_WRONLY);
  if (fd < 0 || pwrite(fd, p, len, off) != (ssize_t)len)
    printf("# cannot write %s\n", path);
  close(fd);
}

/* Makes a segment of name with a member that stays; returns that member. */
static pid_t
make_group(const char *name)
{
  pid_t pid = spawn();
  char err[256];

  if (pid == 0) {
    join("group=%s,group_limit=8M", name, err, sizeof(err));
    for (;;)
      pause();
  }
  sleep_ms(150);
  return pid;
}

static void
expect_refused(const char *name, const char *want, const char *what)
{
  uint64_t used, limit;
  char err[512];
  int rc;

  rc = join("group=%s,group_limit=8M", name, err, sizeof(err));
  ok(rc < 0 && strstr(err, want) != NULL, "%s: refused", what);
  if (rc >= 0 || strstr(err, want) == NULL)
    printf("#   rc %d, '%s'\n", rc, err);
  ok(strchr(err, '\n') == NULL && strstr(err, "/dev/shm/cumemguard.") &&
     strstr(err, name), "%s: one line naming the segment", what);
  ok(cmg__group_reserve(0, 1, PHYS, &used, &limit) == -EPERM &&
     limit == 0, "%s: no allocation succeeds", what);
}

static void
bad_magic(void)
{
  const char *name = name_of("magic");
  uint64_t junk = 0x1122334455667788ull;
  pid_t pid = make_group(name);

  poke(name, 0, &junk, sizeof(junk));
  expect_refused(name, "is not a cumemguard group segment (bad magic)",
                 "garbage magic");
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

static void
bad_version(void)
{
  const char *name = name_of("version");
  uint32_t v = 99;
  pid_t pid = make_group(name);

  poke(name, 8, &v, sizeof(v));
  expect_refused(name, "incompatible cumemguard (layout 99",
                 "another layout version");
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

static void
bad_slot(void)
{
  const char *name = name_of("slot");
  char path[128];
  uint32_t slot_size = 0;
  uint64_t owner = (uint64_t)1234 << 32 | 7;
  struct stat st;
  pid_t pid = make_group(name);
  int fd;

  path_of(name, path, sizeof(path));
  fd = open(path, O_RDONLY);
  if (fd < 0 || pread(fd, &slot_size, 4, 16) != 4 || fstat(fd, &st) != 0)
    printf("# cannot read %s\n", path);
  close(fd);
  poke(name, st.st_size - 256 * (off_t)slot_size + 3 * (off_t)slot_size,
       &owner, sizeof(owner));
  expect_refused(name, "is corrupt (slot 3)", "a slot in no known state");
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

static void
garbage_file(void)
{
  const char *name = name_of("garbage");
  char path[128], junk[4096];
  int fd;

  for (size_t i = 0; i < sizeof(junk); i++)
    junk[i] = (char)(i * 131 + 7);
  path_of(name, path, sizeof(path));
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || write(fd, junk, sizeof(junk)) != (ssize_t)sizeof(junk))
    printf("# cannot write %s\n", path);
  close(fd);
  expect_refused(name, "is not a cumemguard group segment (4096 bytes",
                 "a file of garbage");
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

static void
foreign_mode(void)
{
  const char *name = name_of("mode");
  char path[128];
  int fd;

  path_of(name, path, sizeof(path));
  fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 || fchmod(fd, 0644) != 0)
    printf("# cannot make %s\n", path);
  close(fd);
  expect_refused(name, "has mode 0644, which lets other users reach it",
                 "a segment others can read");
}

static void
foreign_owner(void)
{
  const char *owner_name = name_of("owner");
  char path[128];
  int fd;

  if (geteuid() != 0) {
    printf("ok %d # SKIP not root: cannot give a segment away\n", ++tap_n);
    return;
  }
  path_of(owner_name, path, sizeof(path));
  fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 || fchown(fd, 65534, 65534) != 0)
    printf("# cannot make %s\n", path);
  close(fd);
  expect_refused(owner_name, "belongs to uid 65534, not to this user "
                 "(uid 0)", "a segment another user made");
}

/* A creator killed between shm_open and setting it up. */
static void
half_empty(void)
{
  const char *name = name_of("empty");
  uint64_t used, limit;
  char path[128], err[256];
  int fd;

  path_of(name, path, sizeof(path));
  fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
  close(fd);
  is_int(join("group=%s,group_limit=8M", name, err, sizeof(err)), 0,
         "an empty segment is set up by the next member");
  is_int(cmg__group_reserve(0, MiB, PHYS, &used, &limit), 0, "and works");
  cmg__group_leave();
}

/* Killed after sizing it, before the magic. */
static void
half_sized(void)
{
  const char *name;
  uint64_t used, limit;
  char path[128], err[256], probe[64];
  struct stat st;
  pid_t pid;
  int fd;

  /* The segment's size, from one made for the purpose. */
  snprintf(probe, sizeof(probe), "%s", name_of("probe"));
  pid = make_group(probe);
  path_of(probe, path, sizeof(path));
  stat(path, &st);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  unlink(path);

  name = name_of("sized");
  path_of(name, path, sizeof(path));
  fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 || ftruncate(fd, st.st_size) != 0)
    printf("# cannot make %s\n", path);
  close(fd);
  is_int(join("group=%s,group_limit=8M", name, err, sizeof(err)), 0,
         "a segment sized but without its magic is set up by the next "
         "member");
  is_int(cmg__group_reserve(0, MiB, PHYS, &used, &limit), 0, "and works");
  cmg__group_leave();
}

static void
status_view(void)
{
  const char *name = name_of("status");
  uint64_t used, limit;
  char err[256], text[8192], path[128];
  int fd, rc;

  is_int(join("group=%s,group_limit=10M", name, err, sizeof(err)), 0,
         "status: join");
  cmg__group_reserve(0, 6 * MiB, PHYS, &used, &limit);
  snprintf(path, sizeof(path), "/tmp/test_group.%d.out", (int)getpid());
  fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  is_int(status_fd(name, false, fd, err, sizeof(err)), 0,
         "status of a group");
  memset(text, 0, sizeof(text));
  lseek(fd, 0, SEEK_SET);
  if (read(fd, text, sizeof(text) - 1) < 0)
    text[0] = '\0';
  ok(strstr(text, "cap 10.0 MiB per device, 1 member") != NULL,
     "text: the cap and the members");
  /* Our own command, as the kernel names it (valgrind's, under valgrind). */
  char comm[32] = "";
  FILE *f = fopen("/proc/self/comm", "r");
  if (f != NULL) {
    if (fgets(comm, sizeof(comm), f) != NULL)
      comm[strcspn(comm, "\n")] = '\0';
    fclose(f);
  }
  ok(comm[0] != '\0' && strstr(text, comm) != NULL &&
         strstr(text, "6.0 MiB") != NULL,
     "text: the member's command and live bytes");
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
    printf("# %s\n", line);
  if (ftruncate(fd, 0) != 0)
    printf("# cannot truncate %s\n", path);
  lseek(fd, 0, SEEK_SET);
  is_int(status_fd(name, true, fd, err, sizeof(err)), 0, "--json");
  lseek(fd, 0, SEEK_SET);
  memset(text, 0, sizeof(text));
  if (read(fd, text, sizeof(text) - 1) < 0)
    text[0] = '\0';
  ok(strstr(text, "\"cap\":10485760") && strstr(text, "\"used\":6291456") &&
     strstr(text, "\"pid\":") && strstr(text, "\"alive\":true"),
     "json: cap, usage and the member");
  close(fd);
  unlink(path);
  rc = status_fd("no-such-group", false, 1, err, sizeof(err));
  ok(rc == -ENOENT && strstr(err, "no such group") != NULL,
     "an unknown group is an error");
  rc = status_fd("../etc", false, 1, err, sizeof(err));
  ok(rc == -EINVAL && strstr(err, "bad group name") != NULL,
     "a bad name is an error");
  cmg__group_leave();
  rc = status_fd(name, false, 1, err, sizeof(err));
  is_int(rc, -ENOENT, "the group is gone with its last member");
}

/* Removes every segment this run made, whatever failed. */
static void
cleanup(void)
{
  char prefix[64], path[512];
  struct dirent *e;
  DIR *dir = opendir("/dev/shm");

  snprintf(prefix, sizeof(prefix), "cumemguard.%u.t%d-", (unsigned)geteuid(),
           (int)top);
  while (dir != NULL && (e = readdir(dir)) != NULL) {
    if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
      continue;
    snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
    unlink(path);
  }
  if (dir != NULL)
    closedir(dir);
}

int
main(void)
{
  top = getpid();
  setvbuf(stdout, NULL, _IOLBF, 0);
  scenario(basic, "basic");
  scenario(no_group, "no group");
  scenario(race, "race");
  scenario(fill, "fill");
  scenario(kill_reclaim, "kill");
  scenario(wait_free, "wait");
  scenario(forked, "fork");
  scenario(mismatch, "mismatch");
  scenario(adopt, "adopt");
  scenario(bad_magic, "bad magic");
  scenario(bad_version, "bad version");
  scenario(bad_slot, "bad slot");
  scenario(garbage_file, "garbage");
  scenario(overwritten_live, "overwritten");
  scenario(foreign_mode, "foreign mode");
  scenario(foreign_owner, "foreign owner");
  scenario(half_empty, "half made, empty");
  scenario(half_sized, "half made, sized");
  scenario(status_view, "status");
  cleanup();
  return done_testing();
}
