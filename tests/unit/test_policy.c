/*
 * The limit decision called directly, and the ledger and policy together
 * under two threads racing for the last bytes under a cap: counters exact,
 * never past the cap.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "core/base.h"
#include "runtime/ledger/ledger.h"
#include "runtime/limits/policy.h"
#include "../tap.h"

#define GiB (1ull << 30)
#define MiB (1ull << 20)

static void
test_limits(void)
{
  struct cmg__reservation r;
  uint64_t used = 0;
  is_int(cmg__policy_prepare(0, 1, &r, &used), -ENOMEM,
         "a device never set up has no room");
  is_int(cmg__policy_set_device(0, 4 * GiB, CMG__NO_LIMIT, 16 * GiB), 0, "set device 0");
  is_int(cmg__policy_set_device(0, 1 * GiB, CMG__NO_LIMIT, 16 * GiB), -EALREADY,
         "first limit stands");
  is_u64(cmg__policy_limit(0), 4 * GiB, "limit");
  is_u64(cmg__policy_physical(0), 16 * GiB, "physical");

  is_int(cmg__policy_prepare(0, 3 * GiB, &r, &used), 0, "3 GiB fits");
  is_u64(r.bytes, 3 * GiB, "reservation size");
  is_int(cmg__policy_prepare(0, GiB + 1, &r, &used), -ENOMEM,
         "1 GiB + 1 does not");
  is_u64(used, 3 * GiB, "denial reports usage");
  struct cmg__reservation r2;
  is_int(cmg__policy_prepare(0, GiB, &r2, &used), 0, "exactly to the limit");
  is_int(cmg__policy_grow(&r2, 1), -ENOMEM, "no growth past the limit");
  is_u64(r2.bytes, GiB, "failed growth leaves the reservation");
  is_u64(cmg__policy_release(0, GiB), 3 * GiB,
         "a release says what is in use after it");
  is_int(cmg__policy_grow(&r, 512), 0, "growth within the limit");
  is_u64(cmg__policy_used(0), 3 * GiB + 512, "used after growth");
  is_u64(cmg__policy_release(0, 3 * GiB + 512), 0, "the last release: 0");
  is_u64(cmg__policy_used(0), 0, "all released");

  is_int(cmg__policy_prepare(0, UINT64_MAX, &r, &used), -ENOMEM,
         "no overflow on a huge request");

  cmg__policy_set_device(1, CMG__NO_LIMIT, CMG__NO_LIMIT, 8 * GiB);
  is_int(cmg__policy_prepare(1, 100 * GiB, &r, &used), 0,
         "no limit: the driver decides");
  cmg__policy_release(1, 100 * GiB);

  cmg__policy_set_device(2, 0, CMG__NO_LIMIT, 8 * GiB);
  is_int(cmg__policy_prepare(2, 1, &r, &used), -ENOMEM, "limit=0 denies");
  is_int(cmg__policy_prepare(2, 0, &r, &used), 0, "zero bytes fit limit=0");
  is_int(cmg__policy_set_device(CMG__SLOTS, 0, CMG__NO_LIMIT, 0), -EINVAL,
         "bad ordinal");
}

#define THREADS 2
#define PAIRS 100000
#define CAP (64 * 4096ull)

static _Atomic uint64_t denied;
static _Atomic uint64_t granted;
static _Atomic uint64_t overshoot;
static _Atomic uint64_t next_addr = 0x700000000000ull;

/* Each thread holds up to 48 allocations of 4 KiB against a 64-allocation
 * cap, so the two threads together keep bumping into it.  Each keeps what
 * it holds until both are done, so the cap is reached even when the
 * threads happen to run one after the other. */
static pthread_barrier_t done;

static void *
worker(void *arg)
{
  uint64_t held[48];
  int n = 0;
  (void)arg;
  for (int i = 0; i < PAIRS; i++) {
    struct cmg__reservation r;
    uint64_t used;
    if (cmg__policy_prepare(5, 4096, &r, &used) == 0) {
      if (cmg__policy_used(5) > CAP)
        atomic_fetch_add(&overshoot, 1);
      struct cmg__alloc a = { .addr = atomic_fetch_add(&next_addr, 4096),
                              .size = 4096, .device = 5 };
      struct cmg__alloc stale;
      cmg__ledger_insert(&a, &stale);
      cmg__policy_commit(5);
      held[n++] = a.addr;
      atomic_fetch_add(&granted, 1);
    } else {
      cmg__ledger_count_denial(5);
      atomic_fetch_add(&denied, 1);
    }
    if (n == 48 || (n > 0 && (i & 1))) {
      struct cmg__alloc out;
      if (cmg__ledger_remove(held[--n], CMG__KIND_DEVICE, &out) == 0) {
        cmg__ledger_count_free(&out);
        cmg__policy_release(5, out.size);
      }
    }
  }
  pthread_barrier_wait(&done);
  while (n > 0) {
    struct cmg__alloc out;
    if (cmg__ledger_remove(held[--n], CMG__KIND_DEVICE, &out) == 0) {
      cmg__ledger_count_free(&out);
      cmg__policy_release(5, out.size);
    }
  }
  return NULL;
}

static void
test_threads(void)
{
  pthread_t t[THREADS];
  cmg__policy_set_device(5, CAP, CMG__NO_LIMIT, 8 * GiB);
  pthread_barrier_init(&done, NULL, THREADS);
  for (int i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  struct cmg_device_stats s;
  cmg__ledger_stats(5, &s);
  is_u64(atomic_load(&overshoot), 0, "never past the cap");
  is_u64(s.allocations, atomic_load(&granted), "allocations exact");
  is_u64(s.frees, atomic_load(&granted), "frees exact");
  is_u64(s.denials, atomic_load(&denied), "denials exact");
  is_u64(s.allocations + s.denials, THREADS * PAIRS, "every attempt counted");
  is_u64(s.live_bytes, 0, "nothing live");
  is_u64(cmg__policy_used(5), 0, "nothing reserved");
  ok(s.peak_bytes <= CAP && s.peak_bytes >= 4096,
     "peak %llu within the cap", (unsigned long long)s.peak_bytes);
  ok(s.denials > 0, "the cap was reached (%llu denials)",
     (unsigned long long)s.denials);
}

/* max_alloc, on_exceed=warn's forced reservation, and soft limits. */
static void
test_growth(void)
{
  struct cmg__reservation r;
  uint64_t used;
  cmg__policy_set_device(10, 100 * MiB, 60 * MiB, 8 * GiB);
  cmg__policy_set_max_alloc(50 * MiB);
  is_int(cmg__policy_prepare(10, 51 * MiB, &r, &used), -E2BIG,
         "max_alloc refuses a larger single allocation");
  is_int(cmg__policy_prepare(10, 50 * MiB, &r, &used), 0, "max_alloc itself");
  ok(!cmg__policy_soft_crossed(10), "50 MiB: under the 60 MiB soft limit");
  is_int(cmg__policy_prepare(10, 20 * MiB, &r, &used), 0, "70 MiB");
  ok(cmg__policy_soft_crossed(10), "crossing the soft limit fires");
  ok(!cmg__policy_soft_crossed(10), "once per crossing");
  cmg__policy_force(10, 40 * MiB, &r);
  is_u64(cmg__policy_used(10), 110 * MiB, "a forced reservation passes the limit");
  cmg__policy_release(10, 40 * MiB);
  cmg__policy_release(10, 20 * MiB);
  is_int(cmg__policy_prepare(10, 20 * MiB, &r, &used), 0, "back over it");
  ok(cmg__policy_soft_crossed(10), "dropping below re-arms the soft limit");
  cmg__policy_release(10, 70 * MiB);
  cmg__policy_set_max_alloc(CMG__NO_LIMIT);
}

struct waiter {
  uint64_t timeout_ns;
  int rc;
};

static void *
wait_for_room(void *arg)
{
  struct waiter *w = arg;
  struct cmg__reservation r;
  uint64_t used;
  w->rc = cmg__policy_wait(11, 60 * MiB, w->timeout_ns, &r, &used);
  return NULL;
}

/* on_exceed=wait: a waiter is woken by a free, and times out without one. */
static void
test_wait(void)
{
  struct cmg__reservation r;
  uint64_t used;
  cmg__policy_set_device(11, 100 * MiB, CMG__NO_LIMIT, 8 * GiB);
  cmg__policy_prepare(11, 80 * MiB, &r, &used);
  struct waiter w = { 10ull * 1000000000ull, 1 };
  pthread_t t;
  pthread_create(&t, NULL, wait_for_room, &w);
  struct timespec pause = { 0, 50 * 1000000 };
  nanosleep(&pause, NULL);
  is_int(w.rc, 1, "the waiter is still waiting");
  cmg__policy_release(11, 80 * MiB);
  pthread_join(t, NULL);
  is_int(w.rc, 0, "a free wakes it and it gets its 60 MiB");
  is_u64(cmg__policy_used(11), 60 * MiB, "reserved");
  struct waiter late = { 100 * 1000000ull, 1 };
  wait_for_room(&late);
  is_int(late.rc, -ETIMEDOUT, "no free: it times out");
  cmg__policy_release(11, 60 * MiB);
}

/* The peak is raised when an allocation is committed, to all that is in
 * use then, another reservation in flight included. */
static void
test_peak(void)
{
  struct cmg__reservation r;
  uint64_t used;
  cmg__policy_set_device(6, 10 * MiB, CMG__NO_LIMIT, 8 * GiB);
  cmg__policy_prepare(6, 1000, &r, &used);
  is_u64(cmg__policy_peak(6), 0, "a reservation alone is no peak");
  is_u64(cmg__policy_commit(6), 1000, "commit returns what is in use");
  is_u64(cmg__policy_peak(6), 1000, "peak after the first");
  cmg__policy_prepare(6, 500, &r, &used);
  cmg__policy_release(6, 500);
  is_u64(cmg__policy_peak(6), 1000, "a failed allocation raises nothing");
  cmg__policy_prepare(6, 300, &r, &used);
  cmg__policy_prepare(6, 200, &r, &used);
  is_u64(cmg__policy_commit(6), 1500, "another in flight counts");
  cmg__policy_release(6, 1500);
  is_u64(cmg__policy_used(6), 0, "all given back");
  is_u64(cmg__policy_commit(6), 0, "commit never lowers the peak");
  is_u64(cmg__policy_peak(6), 1500, "the peak stays");
  cmg__policy_reset_usage();
  is_u64(cmg__policy_peak(6), 0, "a fork child starts without a peak");
  is_u64(cmg__policy_limit(6), 10 * MiB, "and with its limits");
}

static void
test_fail_closed(void)
{
  struct cmg__reservation r;
  uint64_t used;
  ok(cmg__policy_take_why() == NULL && !cmg__policy_is_failed_closed(),
     "no reason before a configuration error");
  cmg__policy_fail_closed("first reason");
  cmg__policy_fail_closed("second reason");
  ok(cmg__policy_is_failed_closed(), "failed closed");
  is_int(cmg__policy_prepare(1, 1, &r, &used), -EPERM,
         "nothing succeeds after a configuration error");
  const char *why = cmg__policy_take_why();
  ok(why != NULL && strcmp(why, "first reason") == 0,
     "the first reason is kept: %s", why ? why : "(null)");
  ok(cmg__policy_take_why() == NULL, "and given only once");
}

int
main(void)
{
  test_limits();
  test_threads();
  test_growth();
  test_wait();
  test_peak();
  test_fail_closed();
  return done_testing();
}
