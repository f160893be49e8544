/*
 * The largest frees kept for the timeline, one thread at a time (the
 * timeline's test races threads on them): every free kept until the table
 * is full, then only one larger than the smallest kept, which it displaces;
 * the floor that spares the free path the lock, exact at each step, so a
 * free it lets through is one that is kept; each free as it went in, with
 * when it was freed; the order a timeline draws them in, whatever order
 * they came; and a forked child that can start over even when the parent
 * was inside the table's lock at the fork.
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "runtime/ledger/freed_largest.h"
#include "../tap.h"

#define KEEP CMG__FREED_KEEP

static struct cmg__freed got[KEEP + 4];

static struct cmg__alloc
freed_of(uint64_t size, uint64_t seq)
{
  return (struct cmg__alloc){ .addr = 0x7f0000000000 + seq * 0x1000,
                              .size = size,
                              .seq = seq,
                              .time_ns = 1000 * seq };
}

static void
note(uint64_t size, uint64_t seq)
{
  struct cmg__alloc a = freed_of(size, seq);
  cmg__freed_note(&a, 5000 + seq);
}

static uint64_t
floor_now(void)
{
  return atomic_load(&cmg__freed_floor);
}

/* Whether the n got are the sizes want[], in that order. */
static bool
sizes_are(size_t n, const uint64_t *want)
{
  for (size_t i = 0; i < n; i++)
    if (got[i].a.size != want[i])
      return false;
  return true;
}

static void
test_empty(void)
{
  cmg__freed_reset();
  is_u64(cmg__freed_get(got, KEEP), 0, "nothing freed, nothing kept");
  is_u64(floor_now(), 0, "and no floor");
  note(0, 1);
  is_u64(cmg__freed_get(got, KEEP), 0, "a free of nothing is not kept");
}

/* Sizes in no order, the smallest first and a run of equals in the
 * middle: all are kept while there is room, and come back sorted. */
static void
test_filling(void)
{
  static const uint64_t in[KEEP] = { 1,  900, 40, 7,   7,  7,  5000, 33,
                                     12, 64,  2,  100, 64, 81, 3,    7 };
  uint64_t want[KEEP];
  cmg__freed_reset();
  for (size_t i = 0; i < KEEP - 1; i++)
    note(in[i], i + 1);
  is_u64(floor_now(), 0, "no floor until the table is full");
  is_u64(cmg__freed_get(got, KEEP), KEEP - 1, "every free kept while room");
  note(in[KEEP - 1], KEEP);
  is_u64(floor_now(), 1, "full: the floor is the smallest kept");
  is_u64(cmg__freed_get(got, KEEP + 4), KEEP, "no more than %d", KEEP);
  for (size_t i = 0; i < KEEP; i++)
    want[i] = in[i];
  for (size_t i = 1; i < KEEP; i++)
    for (size_t j = i; j > 0 && want[j] > want[j - 1]; j--) {
      uint64_t t = want[j];
      want[j] = want[j - 1];
      want[j - 1] = t;
    }
  ok(sizes_are(KEEP, want), "largest first");
  /* The four of 7 went in as frees 4, 5, 6 and 16. */
  ok(got[9].a.size == 7 && got[9].a.seq == 4 && got[10].a.seq == 5 &&
         got[11].a.seq == 6 && got[12].a.seq == 16,
     "equals in the order they were made");
  is_u64(cmg__freed_get(got, 3), 3, "fewer when fewer are asked for");
  ok(got[0].a.size == 5000 && got[1].a.size == 900 && got[2].a.size == 100,
     "and those are the largest");
  got[0].a.size = 0xdead;
  is_u64(cmg__freed_get(got, 0), 0, "none when none are asked for");
  is_u64(got[0].a.size, 0xdead, "and nothing written");
  is_u64(cmg__freed_get(got, KEEP), KEEP, "reading takes nothing away");
}

/* A full table of 100, 200, ... 1600: what displaces what, and the floor
 * after each. */
static void
test_displacing(void)
{
  cmg__freed_reset();
  for (uint64_t i = 1; i <= KEEP; i++)
    note(100 * i, i);
  is_u64(floor_now(), 100, "the floor is the smallest");
  note(100, 50);
  note(99, 51);
  cmg__freed_get(got, KEEP);
  ok(got[KEEP - 1].a.size == 100 && got[KEEP - 1].a.seq == 1,
     "a free no larger than the floor displaces nothing");
  struct cmg__alloc same = freed_of(100, 52);
  cmg__freed_add(&same, 1);
  cmg__freed_get(got, KEEP);
  is_u64(got[KEEP - 1].a.seq, 1, "nor one that got past a floor since raised");
  note(101, 53);
  is_u64(floor_now(), 101, "a larger one displaces the smallest");
  cmg__freed_get(got, KEEP);
  ok(got[KEEP - 1].a.size == 101 && got[KEEP - 2].a.size == 200,
     "which is gone, the rest kept");
  note(5000, 54);
  is_u64(floor_now(), 200, "the largest yet raises the floor to the next");
  cmg__freed_get(got, KEEP);
  ok(got[0].a.size == 5000 && got[0].a.seq == 54 &&
         got[1].a.size == 100 * KEEP && got[KEEP - 1].a.size == 200,
     "and comes first");
  struct cmg__alloc big = freed_of(UINT64_MAX, 55);
  cmg__freed_note(&big, 9);
  cmg__freed_get(got, 1);
  is_u64(got[0].a.size, UINT64_MAX, "the largest size there is");
}

/* Equals that arrive in the reverse of the order they were made still
 * come back earliest first. */
static void
test_ties(void)
{
  cmg__freed_reset();
  for (uint64_t i = 0; i < 6; i++)
    note(4096, 100 - i);
  note(8192, 200);
  is_u64(cmg__freed_get(got, KEEP), 7, "seven kept");
  bool sorted = got[0].a.seq == 200;
  for (size_t i = 1; i < 7; i++)
    sorted &= got[i].a.size == 4096 && got[i].a.seq == 94 + i;
  ok(sorted, "the larger first, then equals by when they were made");
}

static void
test_fields(void)
{
  struct cmg__alloc a = { .addr = 0xfffffffffffff001ull,
                          .size = 3ull << 40,
                          .seq = (1ull << 42) - 1,
                          .time_ns = 123456789000ull,
                          .stack = UINT32_MAX - 1,
                          .thread = 77,
                          .device = CMG__HOST,
                          .fn = 5,
                          .kind = CMG__KIND_GRAPH,
                          .ctx = 9,
                          .refs = 2 };
  cmg__freed_reset();
  cmg__freed_note(&a, 987654321000ull);
  is_u64(cmg__freed_get(got, 1), 1, "one kept");
  ok(memcmp(&got[0].a, &a, sizeof(a)) == 0, "the allocation as it was");
  is_u64(got[0].free_ns, 987654321000ull, "and when it was freed");
}

static void
test_reset(void)
{
  cmg__freed_reset();
  for (uint64_t i = 1; i <= KEEP; i++)
    note(1ull << 30, i);
  cmg__freed_reset();
  is_u64(floor_now(), 0, "a reset drops the floor");
  note(1, 1);
  is_u64(cmg__freed_get(got, KEEP), 1, "so a small free is kept again");
  is_u64(got[0].a.size, 1, "alone");
}

/* ---- a forked child ----------------------------------------------------- */

static atomic_bool stop;

/* Each free larger than the last, so each takes the lock. */
static void *
churn(void *arg)
{
  (void)arg;
  for (uint64_t i = 1; !atomic_load(&stop); i++)
    note(1000 + i, i);
  return NULL;
}

/* The child's run after its reset: 0 when the table works and is empty. */
static int
child_run(void)
{
  cmg__freed_reset();
  if (cmg__freed_get(got, KEEP) != 0)
    return 1;
  note(7, 1);
  return cmg__freed_get(got, KEEP) == 1 && got[0].a.size == 7 ? 0 : 2;
}

/* 0 when the child exited 0 within a second; a child stuck on the lock
 * it inherited held is killed. */
static int
reap(pid_t pid)
{
  struct timespec ms = { 0, 1000000 };
  int st = 0;
  for (int i = 0; i < 1000; i++) {
    if (waitpid(pid, &st, WNOHANG) == pid)
      return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
    nanosleep(&ms, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  return 101;
}

/* A thread of the parent takes the lock all the time, so some of the
 * forks catch it held: the child's reset must still leave a lock it can
 * take. */
static void
test_fork(void)
{
  pthread_t th;
  int bad = 0, worst = 0;
  cmg__freed_reset();
  pthread_create(&th, NULL, churn, NULL);
  for (int i = 0; i < 12; i++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
      _exit(child_run());
    int rc = reap(pid);
    bad += rc != 0;
    worst = rc > worst ? rc : worst;
  }
  atomic_store(&stop, true);
  pthread_join(th, NULL);
  is_int(bad, 0, "12 forked children start over (worst exit %d)", worst);
  ok(cmg__freed_get(got, KEEP) == KEEP && got[0].a.size > 1000,
     "the parent's kept");
}

int
main(void)
{
  test_empty();
  test_filling();
  test_displacing();
  test_ties();
  test_fields();
  test_reset();
  test_fork();
  return done_testing();
}
