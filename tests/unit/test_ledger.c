/*
 * The ledger called directly: lookups after inserts and removals (against a
 * reference model, through table growth and probe-chain deletions), the
 * counters, restore after a failed free, and the fork reset.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "internal.h"
#include "../tap.h"

#define N 20000

static struct cmg__alloc
mk(uint64_t addr, uint64_t size, int dev)
{
  struct cmg__alloc a = { .addr = addr, .size = size, .device = (int16_t)dev,
                          .seq = cmg__ledger_next_seq(), .thread = 7,
                          .fn = 3 };
  return a;
}

static void
test_basics(void)
{
  struct cmg__alloc a = mk(0x7f0000001000, 4096, 1), out, stale;
  is_int(cmg__ledger_insert(&a, &stale), 0, "insert");
  is_int(cmg__ledger_lookup(0x7f0000001000, &out), 0, "lookup finds it");
  is_u64(out.size, 4096, "size kept");
  is_int(out.device, 1, "device kept");
  is_int(out.fn, 3, "api kept");
  is_int(cmg__ledger_lookup(0x7f0000002000, &out), -ENOENT, "other missing");

  struct cmg_device_stats s;
  cmg__ledger_stats(1, &s);
  is_u64(s.live_bytes, 4096, "live bytes");
  is_u64(s.allocations, 1, "allocations");

  is_int(cmg__ledger_remove(0x7f0000001000, &out), 0, "remove");
  is_int(cmg__ledger_lookup(0x7f0000001000, &out), -ENOENT, "gone");
  cmg__ledger_stats(1, &s);
  is_u64(s.live_bytes, 4096, "counters wait for the real free");
  is_int(cmg__ledger_restore(&out), 0, "restore after a failed free");
  is_int(cmg__ledger_lookup(0x7f0000001000, &out), 0, "back");
  cmg__ledger_stats(1, &s);
  is_u64(s.allocations, 1, "restore is not a new allocation");

  is_int(cmg__ledger_remove(0x7f0000001000, &out), 0, "remove again");
  cmg__ledger_count_free(&out);
  cmg__ledger_stats(1, &s);
  is_u64(s.live_bytes, 0, "freed");
  is_u64(s.frees, 1, "one free");
  is_u64(s.peak_bytes, 4096, "peak stays");
  is_int(cmg__ledger_remove(0x7f0000001000, &out), -ENOENT, "double free");

  struct cmg__alloc bad = mk(0x1000, 1, CMG__MAX_DEVICES);
  is_int(cmg__ledger_insert(&bad, &stale), -EINVAL, "bad device refused");
}

/* Random inserts and removals of addresses that collide in the low bits,
 * checked against a plain array, so growth and backward-shift deletion are
 * exercised on long probe chains. */
static void
test_model(void)
{
  static uint64_t addrs[N];
  static bool live[N];
  int mismatches = 0;
  uint64_t want_live = 0;
  srand(42);
  for (int i = 0; i < N; i++)
    addrs[i] = 0x500000000000ull + (uint64_t)i * 7 * 512;
  for (int step = 0; step < 200000; step++) {
    int i = rand() % N;
    struct cmg__alloc out;
    if (!live[i]) {
      struct cmg__alloc a = mk(addrs[i], 512, 2), stale;
      if (cmg__ledger_insert(&a, &stale) != 0)
        mismatches++;
      live[i] = true;
      want_live += 512;
    } else {
      if (cmg__ledger_remove(addrs[i], &out) != 0 || out.addr != addrs[i])
        mismatches++;
      else
        cmg__ledger_count_free(&out);
      live[i] = false;
      want_live -= 512;
    }
  }
  for (int i = 0; i < N; i++) {
    struct cmg__alloc out;
    int rc = cmg__ledger_lookup(addrs[i], &out);
    if ((rc == 0) != live[i])
      mismatches++;
  }
  is_int(mismatches, 0, "200k random operations agree with the model");
  struct cmg_device_stats s;
  cmg__ledger_stats(2, &s);
  is_u64(s.live_bytes, want_live, "live bytes agree with the model");
}

/* An address handed out again while still recorded: its free went by
 * unseen, so the old record counts as freed and is returned to the caller. */
static void
test_stale(void)
{
  struct cmg__alloc a = mk(0x610000000000, 1000, 4), b, stale, out;
  is_int(cmg__ledger_insert(&a, &stale), 0, "first record");
  b = mk(0x610000000000, 300, 4);
  is_int(cmg__ledger_insert(&b, &stale), 1, "same address again: stale");
  is_u64(stale.size, 1000, "the stale record comes back");
  struct cmg_device_stats s;
  cmg__ledger_stats(4, &s);
  is_u64(s.live_bytes, 300, "only the new allocation is live");
  is_u64(s.live_allocations, 1, "one live allocation");
  is_u64(s.frees, 1, "the unseen free is counted");
  is_int(cmg__ledger_lookup(0x610000000000, &out), 0, "lookup");
  is_u64(out.size, 300, "the new record stands");
}

static void
test_fork_reset(void)
{
  struct cmg__alloc a = mk(0x600000000000, 1 << 20, 3), out, stale;
  cmg__ledger_insert(&a, &stale);
  cmg__ledger_prefork();
  cmg__ledger_postfork(false);
  is_int(cmg__ledger_lookup(a.addr, &out), 0, "parent keeps its ledger");
  cmg__ledger_prefork();
  cmg__ledger_postfork(true);
  is_int(cmg__ledger_lookup(a.addr, &out), -ENOENT, "child starts empty");
  struct cmg_device_stats s;
  cmg__ledger_stats(3, &s);
  is_u64(s.live_bytes + s.allocations + s.peak_bytes, 0,
         "child counters zero");
  is_u64(cmg__ledger_next_seq(), 1, "child sequence restarts");
  is_int(cmg__ledger_insert(&a, &stale), 0, "child can insert again");
}

int
main(void)
{
  test_basics();
  test_model();
  test_stale();
  test_fork_reset();
  return done_testing();
}
