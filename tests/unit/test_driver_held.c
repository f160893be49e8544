/*
 * What the driver holds beside the ledger, per device, for the report: the
 * graph memory pool's figures, replaced whole while its launch, upload, trim
 * and denial counts go on; the contexts' footprint, whose figure of the whole
 * process is set apart and only for a device a context was seen on (a
 * refresh of it must neither be lost to nor resurrect a footprint); devices
 * never set read as unknown, devices out of range as never set, and a fork
 * child's reset forgets both.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/base.h"
#include "runtime/ledger/driver_held.h"
#include "../tap.h"

#define THREADS 4
#define COUNTS 100000

static void
test_graphmem(void)
{
  struct cmg__graphmem g;
  cmg__held_reset();
  is_int(cmg__graphmem_get(1, &g), -ENOENT, "no graph memory yet");
  cmg__graphmem_set(1, 10, 20, 5, 8, true);
  is_int(cmg__graphmem_get(1, &g), 0, "figures once set");
  ok(g.reserved == 10 && g.reserved_high == 20 && g.used == 5 &&
         g.used_high == 8,
     "reserved and used with their highs");
  ok(g.from_driver, "from the driver");
  ok(!g.launches && !g.uploads && !g.trims && !g.denied, "nothing counted");
  is_int(cmg__graphmem_get(2, &g), -ENOENT, "another device is still unknown");

  for (int i = 0; i < 3; i++)
    cmg__graphmem_count(1, CMG__GRAPHMEM_LAUNCH);
  for (int i = 0; i < 2; i++)
    cmg__graphmem_count(1, CMG__GRAPHMEM_UPLOAD);
  cmg__graphmem_count(1, CMG__GRAPHMEM_TRIM);
  for (int i = 0; i < 4; i++)
    cmg__graphmem_count(1, CMG__GRAPHMEM_DENIED);
  cmg__graphmem_get(1, &g);
  ok(g.launches == 3 && g.uploads == 2 && g.trims == 1 && g.denied == 4,
     "each count apart");
  is_u64(g.reserved, 10, "counting leaves the figures");

  cmg__graphmem_set(1, 1, 2, 0, 3, false);
  cmg__graphmem_get(1, &g);
  ok(g.reserved == 1 && g.reserved_high == 2 && g.used == 0 && g.used_high == 3,
     "a set replaces the figures, highs too");
  ok(!g.from_driver, "an estimate says so");
  ok(g.launches == 3 && g.uploads == 2 && g.trims == 1 && g.denied == 4,
     "and keeps the counts");

  cmg__graphmem_set(CMG__MAX_DEVICES - 1, UINT64_MAX, UINT64_MAX,
                    UINT64_MAX - 1, UINT64_MAX, true);
  cmg__graphmem_get(CMG__MAX_DEVICES - 1, &g);
  ok(g.reserved == UINT64_MAX && g.used == UINT64_MAX - 1,
     "the widest figures on the last device");
}

static void
test_graphmem_count_first(void)
{
  struct cmg__graphmem g;
  cmg__held_reset();
  cmg__graphmem_count(3, CMG__GRAPHMEM_DENIED);
  is_int(cmg__graphmem_get(3, &g), 0,
         "a denial before any figure makes the device known");
  ok(g.denied == 1 && g.launches == 0, "with that count");
  ok(g.reserved == 0 && g.used == 0 && !g.from_driver, "and no figures");
}

static void
test_graphmem_range(void)
{
  struct cmg__graphmem g = { .reserved = 42 };
  cmg__held_reset();
  cmg__graphmem_set(CMG__MAX_DEVICES, 1, 1, 1, 1, true);
  cmg__graphmem_set(-1, 1, 1, 1, 1, true);
  cmg__graphmem_count(CMG__MAX_DEVICES, CMG__GRAPHMEM_LAUNCH);
  cmg__graphmem_count(-1, CMG__GRAPHMEM_LAUNCH);
  is_int(cmg__graphmem_get(CMG__MAX_DEVICES, &g), -ENOENT,
         "the device past the last is never known");
  is_int(cmg__graphmem_get(-1, &g), -ENOENT, "nor a negative one");
  is_u64(g.reserved, 42, "and nothing is written for them");
  is_int(cmg__graphmem_get(CMG__MAX_DEVICES - 1, &g), -ENOENT,
         "the last device is not touched by the next");
  is_int(cmg__graphmem_get(0, &g), -ENOENT, "nor the first by -1");
}

static struct cmg__footprint
footprint(unsigned contexts, uint64_t bytes)
{
  struct cmg__footprint f = {
    .contexts = contexts,
    .context_bytes = bytes,
    .source = CMG__FOOTPRINT_NVML,
    .has_process = true,
    .process_bytes = 999,
    .counted = true,
    .checked = 2,
    .checked_nvml = 600,
    .checked_driver = 640,
  };
  snprintf(f.why, sizeof(f.why), "%u contexts", contexts);
  return f;
}

static void
test_footprint(void)
{
  struct cmg__footprint f = footprint(2, 1 << 29), got;
  cmg__held_reset();
  is_int(cmg__footprint_get(0, &got), -ENOENT, "no context seen yet");
  cmg__footprint_set(0, &f);
  is_int(cmg__footprint_get(0, &got), 0, "a footprint once set");
  ok(got.contexts == 2 && got.context_bytes == 1 << 29 &&
         got.source == CMG__FOOTPRINT_NVML && got.counted,
     "its contexts, bytes, source and whether the caps count them");
  ok(got.checked == 2 && got.checked_nvml == 600 && got.checked_driver == 640,
     "the cross-check");
  is_str(got.why, "2 contexts", "the reason");
  ok(!got.has_process && got.process_bytes == 0,
     "the process's figure is not the footprint's to set");
  is_int(cmg__footprint_get(1, &got), -ENOENT, "another device is unknown");

  cmg__footprint_set_process(0, true, 1234);
  cmg__footprint_get(0, &got);
  ok(got.has_process && got.process_bytes == 1234, "the process's figure");
  is_u64(got.context_bytes, 1 << 29, "beside the footprint");
  f = footprint(3, 100);
  f.has_process = false;
  f.source = CMG__FOOTPRINT_DRIVER;
  cmg__footprint_set(0, &f);
  cmg__footprint_get(0, &got);
  ok(got.contexts == 3 && got.context_bytes == 100 &&
         got.source == CMG__FOOTPRINT_DRIVER,
     "a new footprint replaces the old");
  ok(got.has_process && got.process_bytes == 1234,
     "and keeps the process's figure");
  cmg__footprint_set_process(0, false, 0);
  cmg__footprint_get(0, &got);
  ok(!got.has_process && got.process_bytes == 0, "which can be unset");
  is_u64(got.contexts, 3, "leaving the footprint");
}

static void
test_footprint_unseen(void)
{
  struct cmg__footprint f = footprint(1, 10), got;
  cmg__held_reset();
  cmg__footprint_set_process(5, true, 777);
  is_int(cmg__footprint_get(5, &got), -ENOENT,
         "the process's figure alone makes no footprint");
  cmg__footprint_set(5, &f);
  cmg__footprint_get(5, &got);
  ok(!got.has_process && got.process_bytes == 0,
     "nor is it kept for a context seen later");

  f.source = CMG__FOOTPRINT_NONE;
  snprintf(f.why, sizeof(f.why), "%s", "NVML not loaded");
  cmg__footprint_set(6, &f);
  cmg__footprint_get(6, &got);
  ok(got.source == CMG__FOOTPRINT_NONE, "not measured");
  is_str(got.why, "NVML not loaded", "and why");
}

static void
test_footprint_range(void)
{
  struct cmg__footprint f = footprint(1, 10), got = { .contexts = 42 };
  cmg__held_reset();
  cmg__footprint_set(CMG__MAX_DEVICES, &f);
  cmg__footprint_set(-1, &f);
  cmg__footprint_set_process(CMG__MAX_DEVICES, true, 1);
  cmg__footprint_set_process(-1, true, 1);
  is_int(cmg__footprint_get(CMG__MAX_DEVICES, &got), -ENOENT,
         "no footprint past the last device");
  is_int(cmg__footprint_get(-1, &got), -ENOENT, "nor before the first");
  is_u64(got.contexts, 42, "and nothing is written for them");
  is_int(cmg__footprint_get(CMG__MAX_DEVICES - 1, &got), -ENOENT,
         "the last device is not touched by the next");
  is_int(cmg__footprint_get(0, &got), -ENOENT, "nor the first by -1");
}

static void
test_reset(void)
{
  struct cmg__footprint f = footprint(1, 10), got;
  struct cmg__graphmem g;
  cmg__graphmem_set(2, 1, 1, 1, 1, true);
  cmg__graphmem_count(2, CMG__GRAPHMEM_LAUNCH);
  cmg__footprint_set(2, &f);
  cmg__footprint_set_process(2, true, 5);
  cmg__held_reset();
  is_int(cmg__graphmem_get(2, &g), -ENOENT, "reset: the pool is forgotten");
  is_int(cmg__footprint_get(2, &got), -ENOENT, "the footprint too");
  cmg__footprint_set_process(2, true, 5);
  is_int(cmg__footprint_get(2, &got), -ENOENT, "and no context counts as seen");
  cmg__graphmem_count(2, CMG__GRAPHMEM_TRIM);
  cmg__graphmem_get(2, &g);
  ok(g.trims == 1 && g.launches == 0, "counts start again from nothing");
}

static pthread_barrier_t start;

/* Every thread counts every kind, so that a lost update would show. */
static void *
count_many(void *arg)
{
  pthread_barrier_wait(&start);
  for (int i = 0; i < COUNTS; i++)
    cmg__graphmem_count(7, (enum cmg__graphmem_count)(i % 4));
  return NULL;
}

/* Two footprints that differ in every field a torn copy would mix. */
static struct cmg__footprint
one_of(unsigned n)
{
  struct cmg__footprint f = footprint(n, n * 1000);
  f.checked_driver = n;
  return f;
}

static bool
is_whole(const struct cmg__footprint *f)
{
  unsigned n = f->contexts;
  char why[32];
  snprintf(why, sizeof(why), "%u contexts", n);
  return (n == 1 || n == 2) && f->context_bytes == n * 1000 &&
         f->checked_driver == n && strcmp(f->why, why) == 0;
}

static void *
refresh_many(void *arg)
{
  struct cmg__footprint f[2] = { one_of(1), one_of(2) };
  pthread_barrier_wait(&start);
  for (int i = 0; i < COUNTS; i++) {
    cmg__footprint_set(7, &f[i % 2]);
    cmg__footprint_set_process(7, true, (uint64_t)i);
  }
  return NULL;
}

/* Counts from every thread at once are none of them lost, and a footprint
 * read while it is rewritten is always one that was written whole. */
static void
test_threads(void)
{
  struct cmg__footprint f = one_of(1), got;
  struct cmg__graphmem g;
  cmg__held_reset();
  cmg__footprint_set(7, &f);
  pthread_barrier_init(&start, NULL, THREADS + 2);
  pthread_t t[THREADS], writer;
  for (int i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, count_many, NULL);
  pthread_create(&writer, NULL, refresh_many, NULL);
  pthread_barrier_wait(&start);
  bool whole = true;
  for (int i = 0; i < COUNTS; i++) {
    cmg__footprint_get(7, &got);
    whole = whole && is_whole(&got);
  }
  for (int i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  pthread_join(writer, NULL);
  pthread_barrier_destroy(&start);
  cmg__graphmem_get(7, &g);
  uint64_t each = (uint64_t)THREADS * COUNTS / 4;
  ok(g.launches == each && g.uploads == each && g.trims == each &&
         g.denied == each,
     "no count lost among threads");
  ok(whole, "every footprint read whole");
  cmg__footprint_get(7, &got);
  ok(got.contexts == 2 && got.process_bytes == COUNTS - 1,
     "the last writes win");
}

int
main(void)
{
  test_graphmem();
  test_graphmem_count_first();
  test_graphmem_range();
  test_footprint();
  test_footprint_unseen();
  test_footprint_range();
  test_reset();
  test_threads();
  return done_testing();
}
