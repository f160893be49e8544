/*
 * The timeline: points per bucket of time, exact at denials, the peak
 * kept through any number of merges, bounded however long the run, and
 * right under threads; and the largest frees kept beside it.  The clock is the caller's, so a run of hours is
 * simulated in a moment.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "runtime/ledger/freed_largest.h"
#include "runtime/ledger/timeline.h"
#include "../tap.h"

#define MS 1000000ull
#define S (1000 * MS)

static struct cmg__timeline t;

/* Times in order, each point's live between its least and most. */
static bool
is_well_formed(const struct cmg__timeline *tl)
{
  for (size_t i = 0; i < tl->n; i++) {
    const struct cmg__timeline_point *p = &tl->points[i];
    if (p->min > p->live || p->live > p->max)
      return false;
    if (i > 0 && p->time_ns < tl->points[i - 1].time_ns)
      return false;
  }
  return true;
}

static uint64_t
series_max(const struct cmg__timeline *tl)
{
  uint64_t m = 0;
  for (size_t i = 0; i < tl->n; i++)
    if (tl->points[i].max > m)
      m = tl->points[i].max;
  return m;
}

static void
test_buckets(void)
{
  cmg__timeline_reset();
  ok(!cmg__timeline_get(0, &t), "no point before the first change");
  cmg__timeline_note(0, 100, 0);
  cmg__timeline_note(0, 300, 100);
  cmg__timeline_note(0, 50, 200);
  ok(cmg__timeline_get(0, &t), "a point after the first change");
  is_u64(t.n, 1, "changes within a millisecond make one point");
  is_u64(t.points[0].live, 100, "its live is the first change's");
  is_u64(t.points[0].min, 50, "its least");
  is_u64(t.points[0].max, 300, "its most");
  cmg__timeline_note(0, 70, 5 * MS);
  cmg__timeline_get(0, &t);
  is_u64(t.n, 2, "a change in a later bucket opens a point");
  is_u64(t.points[1].time_ns, 5 * MS, "at the change's time");
  cmg__timeline_note(0, 80, 4 * MS);
  cmg__timeline_get(0, &t);
  is_u64(t.n, 2, "a late clock read widens the last point");
  is_u64(t.points[1].max, 80, "to its value");
  is_u64(t.peak_bytes, 300, "the peak");
  is_u64(t.peak_time_ns, 100, "and when it was reached");
  cmg__timeline_note(64, 1, 0);
  cmg__timeline_note(-1, 1, 0);
  ok(!cmg__timeline_get(64, &t), "devices out of range are ignored");
}

static void
test_mark(void)
{
  cmg__timeline_reset();
  cmg__timeline_note(1, 1000, 10 * MS);
  cmg__timeline_mark(1, 1000, 10 * MS + 123);
  cmg__timeline_note(1, 2000, 10 * MS + 200);
  cmg__timeline_mark(1, 900, 3 * MS);
  cmg__timeline_get(1, &t);
  is_u64(t.n, 2, "a denial opens a point of its own");
  is_u64(t.points[1].time_ns, 10 * MS + 123, "at its exact time");
  is_u64(t.points[1].live, 1000, "with its exact value");
  is_u64(t.points[1].max, 2000, "later changes in the bucket widen it");
  is_u64(t.points[1].min, 900,
         "a second denial in its bucket, on an earlier clock, widens it");
  ok(is_well_formed(&t), "the series is well formed");
  cmg__timeline_reset();
  for (uint64_t i = 0; i < 1000000; i++)
    cmg__timeline_mark(3, 5000 + i % 7, i * 1000);
  cmg__timeline_get(3, &t);
  ok(t.n <= CMG__TIMELINE_POINTS, "a million retries fit (%zu points)", t.n);
  is_u64(t.points[0].live, 5000, "the first denial is exact");
  is_u64(series_max(&t), 5006, "the others widen it");
}

/* Hours of a sawtooth with rare spikes: bounded, in order, the spikes and
 * the troughs kept. */
static void
test_long_run(void)
{
  cmg__timeline_reset();
  uint64_t want_max = 0, want_min = UINT64_MAX, now = 0;
  srand(7);
  for (long i = 0; i < 3000000; i++) {
    now += (uint64_t)(rand() % 7) * MS;     /* about 3 hours in all */
    uint64_t live = (uint64_t)(i % 1000) << 20;
    if (rand() % 100000 == 0)
      live += (uint64_t)(rand() % 1000 + 1) << 30;
    if (i == 2000000)
      cmg__timeline_mark(0, live, now);
    want_max = live > want_max ? live : want_max;
    want_min = live < want_min ? live : want_min;
    cmg__timeline_note(0, live, now);
  }
  cmg__timeline_get(0, &t);
  ok(t.n <= CMG__TIMELINE_POINTS && t.n >= CMG__TIMELINE_POINTS / 4,
     "3 hours in %zu points", t.n);
  ok(t.resolution_ns >= 8 * S, "at %.1f s a point", t.resolution_ns / 1e9);
  is_u64(series_max(&t), want_max, "the highest spike survives the merges");
  is_u64(t.peak_bytes, want_max, "the peak is exact");
  ok(is_well_formed(&t), "the series is well formed");
  uint64_t least = UINT64_MAX;
  for (size_t i = 0; i < t.n; i++)
    least = t.points[i].min < least ? t.points[i].min : least;
  is_u64(least, want_min, "the troughs survive too");
  ok(t.points[t.n - 1].time_ns <= now &&
     t.points[t.n - 1].time_ns + t.resolution_ns > now,
     "the last point is the last bucket");
}

#define THREADS 4
#define CHANGES 200000

static _Atomic uint64_t clock_ns;

static void *
churn(void *arg)
{
  uint64_t base = (uint64_t)(uintptr_t)arg << 30;
  for (int i = 0; i < CHANGES; i++) {
    uint64_t now = atomic_fetch_add(&clock_ns, 50000);
    cmg__timeline_note(2, base + (uint64_t)(i % 4096), now);
  }
  return NULL;
}

static void
test_threads(void)
{
  cmg__timeline_reset();
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++)
    pthread_create(&th[i], NULL, churn, (void *)(uintptr_t)(i + 1));
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  cmg__timeline_get(2, &t);
  uint64_t want = ((uint64_t)THREADS << 30) + 4095;
  is_u64(t.peak_bytes, want, "threads: the peak is exact");
  ok(series_max(&t) >= want, "threads: the series reaches it");
  ok(t.n <= CMG__TIMELINE_POINTS, "threads: bounded (%zu points)", t.n);
}

static void
test_dumps(void)
{
  cmg__timeline_reset();
  for (unsigned i = 0; i < CMG__TIMELINE_DUMPS + 5; i++)
    cmg__timeline_dump(i % 4, i * S);
  struct cmg__timeline_dump d[CMG__TIMELINE_DUMPS];
  uint64_t total;
  size_t n = cmg__timeline_dumps(d, CMG__TIMELINE_DUMPS, &total);
  is_u64(n, CMG__TIMELINE_DUMPS, "the first report writes are kept");
  is_u64(total, CMG__TIMELINE_DUMPS + 5, "all are counted");
  is_u64(d[3].reason, 3, "with their reason");
  is_u64(d[3].time_ns, 3 * S, "and time");
  cmg__timeline_reset();
  cmg__timeline_dumps(d, CMG__TIMELINE_DUMPS, &total);
  is_u64(total, 0, "a reset forgets them");
}

/* Each thread frees FREES allocations of distinct sizes: size = thread +
 * THREADS * i, so the largest CMG__FREED_KEEP of all are known. */
#define FREES 5000

static void *
free_many(void *arg)
{
  unsigned thread = (unsigned)(uintptr_t)arg;
  for (unsigned i = 0; i < FREES; i++) {
    /* Sizes rise and fall, so the floor is raised while others race. */
    unsigned k = i % 2 ? i : FREES - i;
    struct cmg__alloc a = { .size = thread + THREADS * (uint64_t)k,
                            .seq = i };
    cmg__freed_note(&a, i);
  }
  return NULL;
}

static void
test_freed(void)
{
  cmg__freed_reset();
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++)
    pthread_create(&th[i], NULL, free_many, (void *)(uintptr_t)i);
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  struct cmg__freed f[CMG__FREED_KEEP + 1];
  size_t n = cmg__freed_get(f, CMG__FREED_KEEP + 1);
  is_u64(n, CMG__FREED_KEEP, "freed: %d are kept", CMG__FREED_KEEP);
  uint64_t top = THREADS - 1 + THREADS * (uint64_t)FREES;
  bool right = true;
  for (size_t i = 0; i < n; i++)
    right &= f[i].a.size == top - i;
  ok(right, "freed: the largest of all threads, largest first");

  cmg__freed_reset();
  for (unsigned i = 0; i < 3 * CMG__FREED_KEEP; i++) {
    struct cmg__alloc a = { .size = 4096, .seq = i };
    cmg__freed_note(&a, i);
  }
  n = cmg__freed_get(f, 4);
  is_u64(n, 4, "freed: no more than asked for");
  is_u64(f[0].a.seq + f[3].a.seq, 3, "freed: among equals the earliest");
  cmg__freed_reset();
  is_u64(cmg__freed_get(f, 4), 0, "freed: a reset forgets them");
}

int
main(void)
{
  test_buckets();
  test_mark();
  test_long_run();
  test_threads();
  test_dumps();
  test_freed();
  return done_testing();
}
