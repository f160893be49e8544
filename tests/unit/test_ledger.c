/*
 * The ledger called directly: lookups after inserts and removals (against a
 * reference model, through table growth and probe-chain deletions), the
 * counters, restore after a failed free, and the fork reset.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "core/base.h"
#include "runtime/ledger/ledger.h"
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
  is_int(cmg__ledger_lookup(0x7f0000001000, CMG__KIND_DEVICE, &out), 0, "lookup finds it");
  is_u64(out.size, 4096, "size kept");
  is_int(out.device, 1, "device kept");
  is_int(out.fn, 3, "api kept");
  is_int(cmg__ledger_lookup(0x7f0000002000, CMG__KIND_DEVICE, &out), -ENOENT, "other missing");

  struct cmg_device_stats s;
  cmg__ledger_stats(1, &s);
  is_u64(s.live_bytes, 4096, "live bytes");
  is_u64(s.allocations, 1, "allocations");

  is_int(cmg__ledger_remove(0x7f0000001000, CMG__KIND_DEVICE, &out), 0, "remove");
  is_int(cmg__ledger_lookup(0x7f0000001000, CMG__KIND_DEVICE, &out), -ENOENT, "gone");
  cmg__ledger_stats(1, &s);
  is_u64(s.live_bytes, 4096, "counters wait for the real free");
  is_int(cmg__ledger_restore(&out), 0, "restore after a failed free");
  is_int(cmg__ledger_lookup(0x7f0000001000, CMG__KIND_DEVICE, &out), 0, "back");
  cmg__ledger_stats(1, &s);
  is_u64(s.allocations, 1, "restore is not a new allocation");

  is_int(cmg__ledger_remove(0x7f0000001000, CMG__KIND_DEVICE, &out), 0, "remove again");
  cmg__ledger_count_free(&out);
  cmg__ledger_stats(1, &s);
  is_u64(s.live_bytes, 0, "freed");
  is_u64(s.frees, 1, "one free");
  is_int(cmg__ledger_remove(0x7f0000001000, CMG__KIND_DEVICE, &out), -ENOENT, "double free");

  struct cmg__alloc bad = mk(0x1000, 1, CMG__SLOTS);
  is_int(cmg__ledger_insert(&bad, &stale), -EINVAL, "bad device refused");
}

/* A graph memory pool's growth given back in part: the entry keeps the
 * rest, and the device counts only what is left. */
static void
test_shrink(void)
{
  struct cmg__alloc a = mk(0x6a00000000000001, 3 << 20, 2), out, stale;
  a.kind = CMG__KIND_GRAPH;
  is_int(cmg__ledger_insert(&a, &stale), 0, "graph entry");
  is_int(cmg__ledger_shrink(a.addr, CMG__KIND_GRAPH, 1 << 20, &out), 0,
         "shrink by a part");
  is_u64(out.size, 2 << 20, "the rest stays");
  struct cmg_device_stats s;
  cmg__ledger_stats(2, &s);
  is_u64(s.live_bytes, 2 << 20, "the device counts the rest");
  is_u64(s.frees, 0, "a shrink is not a free");
  is_int(cmg__ledger_shrink(a.addr, CMG__KIND_GRAPH, 2 << 20, &out), -EINVAL,
         "shrinking it to nothing is refused");
  is_int(cmg__ledger_shrink(a.addr, CMG__KIND_DEVICE, 1, &out), -ENOENT,
         "another kind at that key is another entry");
  is_int(cmg__ledger_remove(a.addr, CMG__KIND_GRAPH, &out), 0, "remove");
  is_u64(out.size, 2 << 20, "with the size left");
  cmg__ledger_count_free(&out);
  cmg__ledger_stats(2, &s);
  is_u64(s.live_bytes, 0, "all given back");
}

/* Every field comes back as it went in, at the widest each can be. */
static void
test_fields(void)
{
  struct cmg__alloc a = {
    .addr = 0xfffffffffffff001ull, .size = UINT64_MAX - 1,
    .seq = (1ull << 42) - 1, .time_ns = 123456789000ull,
    .stack = UINT32_MAX, .thread = (1u << 22) - 1, .device = CMG__HOST,
    .fn = CMG__LEDGER_FNS - 1, .kind = CMG__KIND_VMM_OTHER,
    .ctx = CMG__MAX_CONTEXTS - 1, .refs = 0,
  }, out, stale;
  is_int(cmg__ledger_insert(&a, &stale), 0, "widest fields: insert");
  is_int(cmg__ledger_lookup(a.addr, a.kind, &out), 0, "and lookup");
  ok(out.addr == a.addr && out.size == a.size && out.seq == a.seq &&
     out.time_ns == a.time_ns && out.stack == a.stack &&
     out.thread == a.thread && out.device == a.device && out.fn == a.fn &&
     out.kind == a.kind && out.ctx == a.ctx && out.refs == 0,
     "every field kept");
  out.time_ns = 1999;
  cmg__ledger_remove(a.addr, a.kind, &out);
  is_u64(out.time_ns, 123456789000ull, "removed with its fields");

  struct cmg__alloc bad = a;
  bad.ctx = CMG__MAX_CONTEXTS;
  is_int(cmg__ledger_insert(&bad, &stale), -EINVAL, "context id too large");
  bad = a;
  bad.time_ns = 1234567;
  cmg__ledger_insert(&bad, &stale);
  cmg__ledger_remove(bad.addr, bad.kind, &out);
  is_u64(out.time_ns, 1234000, "time kept to the microsecond");
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
      if (cmg__ledger_remove(addrs[i], CMG__KIND_DEVICE, &out) != 0 || out.addr != addrs[i])
        mismatches++;
      else
        cmg__ledger_count_free(&out);
      live[i] = false;
      want_live -= 512;
    }
  }
  for (int i = 0; i < N; i++) {
    struct cmg__alloc out;
    int rc = cmg__ledger_lookup(addrs[i], CMG__KIND_DEVICE, &out);
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
  is_int(cmg__ledger_lookup(0x610000000000, CMG__KIND_DEVICE, &out), 0, "lookup");
  is_u64(out.size, 300, "the new record stands");
}

/* Handles of different kinds may hold the same number; imports are never
 * counted; references keep a VMM handle until the last is dropped. */
static void
test_kinds_and_refs(void)
{
  struct cmg__alloc dev = mk(0x620000000000, 100, 6), stale, out;
  struct cmg__alloc arr = dev, imp = dev;
  arr.kind = CMG__KIND_ARRAY;
  arr.size = 40;
  imp.kind = CMG__KIND_IMPORT;
  imp.size = 7;
  is_int(cmg__ledger_insert(&dev, &stale), 0, "device entry");
  is_int(cmg__ledger_insert(&arr, &stale), 0, "array entry, same number");
  is_int(cmg__ledger_insert(&imp, &stale), 0, "import entry, same number");
  struct cmg_device_stats s;
  cmg__ledger_stats(6, &s);
  is_u64(s.live_bytes, 140, "imports are not counted");
  is_int(cmg__ledger_lookup(dev.addr, CMG__KIND_ARRAY, &out), 0, "by kind");
  is_u64(out.size, 40, "the array's own entry");

  struct cmg__alloc vmm = mk(0x5000, 2 << 20, 6);
  vmm.kind = CMG__KIND_VMM;
  cmg__ledger_insert(&vmm, &stale);
  is_int(cmg__ledger_addref(0x5000, CMG__KIND_VMM), 0, "retain");
  is_int(cmg__ledger_unref(0x5000, CMG__KIND_VMM, &out), 0,
         "first release keeps it");
  is_int(cmg__ledger_unref(0x5000, CMG__KIND_VMM, &out), 1,
         "last release removes it");
  is_u64(out.size, 2 << 20, "and hands it back");
  is_int(cmg__ledger_unref(0x5000, CMG__KIND_VMM, &out), -ENOENT, "gone");
  is_int(cmg__ledger_addref(0x5000, CMG__KIND_VMM), -ENOENT,
         "no retain of an unknown handle");
}

/* Context teardown: every entry of one context goes, others stay. */
static bool
keep_not_ctx7(const struct cmg__alloc *a, void *arg)
{
  return a->ctx != 7;
}

static void
count_gone(const struct cmg__alloc *a, void *arg)
{
  (*(uint64_t *)arg)++;
  cmg__ledger_count_release(a);
}

static void
test_remove_if(void)
{
  struct cmg__alloc stale, out;
  for (int i = 0; i < 1000; i++) {
    struct cmg__alloc a = mk(0x630000000000 + (uint64_t)i * 512, 1, 7);
    a.ctx = i % 3 == 0 ? 7 : 8;
    cmg__ledger_insert(&a, &stale);
  }
  uint64_t gone = 0;
  cmg__ledger_remove_if(keep_not_ctx7, count_gone, &gone);
  is_u64(gone, 334, "every entry of context 7 released");
  int left = 0, wrong = 0;
  for (int i = 0; i < 1000; i++) {
    int rc = cmg__ledger_lookup(0x630000000000 + (uint64_t)i * 512,
                                CMG__KIND_DEVICE, &out);
    left += rc == 0;
    wrong += (rc == 0) != (i % 3 != 0);
  }
  is_int(left, 666, "the others stay");
  is_int(wrong, 0, "exactly the others");
  struct cmg_device_stats s;
  cmg__ledger_stats(7, &s);
  is_u64(s.released, 334, "counted as released, not freed");
  is_u64(s.frees, 0, "no frees");
  is_u64(s.live_bytes, 666, "live bytes follow");
}

static void
test_fork_reset(void)
{
  struct cmg__alloc a = mk(0x600000000000, 1 << 20, 3), out, stale;
  cmg__ledger_insert(&a, &stale);
  cmg__ledger_prefork();
  cmg__ledger_postfork(false);
  is_int(cmg__ledger_lookup(a.addr, CMG__KIND_DEVICE, &out), 0, "parent keeps its ledger");
  cmg__ledger_prefork();
  cmg__ledger_postfork(true);
  is_int(cmg__ledger_lookup(a.addr, CMG__KIND_DEVICE, &out), -ENOENT, "child starts empty");
  struct cmg_device_stats s;
  cmg__ledger_stats(3, &s);
  is_u64(s.live_bytes + s.allocations + s.frees, 0, "child counters zero");
  is_u64(cmg__ledger_next_seq(), 1, "child sequence restarts");
  is_int(cmg__ledger_insert(&a, &stale), 0, "child can insert again");
}

int
main(void)
{
  test_basics();
  test_shrink();
  test_fields();
  test_model();
  test_stale();
  test_kinds_and_refs();
  test_remove_if();
  test_fork_reset();
  return done_testing();
}
