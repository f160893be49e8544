/*
 * Per-thread tallies: sums stay exact while threads come and go and take
 * over each other's blocks, a thread counting from a destructor that runs
 * after its block went back still counts, and a fork child starts at zero.
 * Two counters added at once count as two adds would.
 */
#include "config.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/ledger/thread_tally.h"
#include "../tap.h"

#define THREADS 8
#define ROUNDS 20
#define ADDS 10000

static pthread_key_t late_key;

static void *
adder(void *arg)
{
  unsigned i = (unsigned)(uintptr_t)arg;
  for (int k = 0; k < ADDS; k++)
    cmg__tally_add(i, 1);
  return NULL;
}

static void
test_threads(void)
{
  for (int r = 0; r < ROUNDS; r++) {
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
      pthread_create(&t[i], NULL, adder, (void *)(uintptr_t)(i % 3));
    for (int i = 0; i < THREADS; i++)
      pthread_join(t[i], NULL);
  }
  uint64_t want[3] = { 0 };
  for (int i = 0; i < THREADS; i++)
    want[i % 3] += (uint64_t)ROUNDS * ADDS;
  for (unsigned i = 0; i < 3; i++)
    is_u64(cmg__tally_sum(i), want[i], "counter %u: every add of every thread",
           i);
}

static void *
pair_adder(void *arg)
{
  for (int k = 0; k < ADDS; k++)
    cmg__tally_add2(7, 1, 8, 4096);
  return NULL;
}

static void
test_pairs(void)
{
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, pair_adder, NULL);
  for (int i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  is_u64(cmg__tally_sum(7), (uint64_t)THREADS * ADDS, "a pair's first counter");
  is_u64(cmg__tally_sum(8), (uint64_t)THREADS * ADDS * 4096,
         "a pair's second counter");
}

/* Runs after the tally's own destructor: its key was made first. */
static void
late(void *arg)
{
  cmg__tally_add(5, 7);
  cmg__tally_add2(10, 1, 11, 5);
}

static void *
counts_late(void *arg)
{
  cmg__tally_add(5, 1);
  pthread_setspecific(late_key, (void *)1);
  return NULL;
}

static void
test_late(void)
{
  pthread_key_create(&late_key, late);
  pthread_t t;
  pthread_create(&t, NULL, counts_late, NULL);
  pthread_join(t, NULL);
  is_u64(cmg__tally_sum(5), 8, "a count after the thread's block went back");
  is_u64(cmg__tally_sum(10), 1, "a pair counted after it: the first");
  is_u64(cmg__tally_sum(11), 5, "and the second");
}

static void
test_fork(void)
{
  cmg__tally_add(6, 3);
  fflush(stdout);  /* or the child may print the parent's lines again */
  cmg__tally_prefork();
  pid_t pid = fork();
  if (pid == 0) {
    cmg__tally_postfork(true);
    cmg__tally_add(6, 1);
    _exit(cmg__tally_sum(6) == 1 && cmg__tally_sum(0) == 0 ? 0 : 1);
  }
  cmg__tally_postfork(false);
  int status = -1;
  waitpid(pid, &status, 0);
  ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
     "the child counts from zero");
  is_u64(cmg__tally_sum(6), 3, "the parent keeps its counts");
}

int
main(void)
{
  cmg__tally_add(CMG__TALLIES - 1, 1);  /* makes the tally's key first */
  test_threads();
  test_pairs();
  test_late();
  test_fork();
  is_u64(cmg__tally_sum(CMG__TALLIES - 1), 1, "the last counter");
  return done_testing();
}
