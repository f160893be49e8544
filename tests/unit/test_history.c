/*
 * The history the report tells beyond the live ledger: the clocks every
 * stamp comes from (a coarse stamp never later than a precise one taken
 * after it), the first touch of device memory that makes a report due, each
 * device's name and uuid, the peak compositions and their hysteresis, the
 * policy decisions with the first denial's composition, the table that
 * stops keeping but never stops counting, what context teardowns released,
 * and the fork child's reset that keeps only the devices' identities.
 * Stacks and their live accounts are set by hand, so every composition is
 * known exactly.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "core/base.h"
#include "runtime/ledger/history.h"
#include "runtime/ledger/ledger.h"
#include "runtime/ledger/timeline.h"
#include "runtime/stacks/stacks.h"
#include "../tap.h"

#define MS 1000000ull
#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define THREADS 4

static struct cmg__timeline tl;
static uint32_t stack_a, stack_b, stack_c;

static double
unix_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
test_clocks(void)
{
  double before = unix_now();
  cmg__history_start();
  double after = unix_now();
  /* A double holds today's unix time to a fraction of a microsecond. */
  ok(cmg__start_unix() >= before - 1e-6 && cmg__start_unix() <= after + 1e-6,
     "the start is the unix time of the call");
  ok(cmg__now_ns() < 1000 * MS, "the clock counts from the start");
  uint64_t coarse = 0, precise = 0;
  while ((coarse = cmg__now_coarse_ns()) == 0 && cmg__now_ns() < 200 * MS)
    ;
  ok(coarse > 0, "the coarse clock moves within a few ticks");
  bool ordered = true, close = true;
  uint64_t last = 0;
  for (int i = 0; i < 20000; i++) {
    uint64_t early = cmg__now_ns();
    coarse = cmg__now_coarse_ns();
    precise = cmg__now_ns();
    ordered = ordered && coarse <= precise && precise >= last;
    close = close && coarse + 1000 * MS >= early;
    last = precise;
  }
  ok(ordered, "a coarse stamp is never later than a precise one after it");
  ok(close, "and never far behind one before it");
}

static void *
touch_once(void *arg)
{
  *(bool *)arg = cmg__history_touch();
  return NULL;
}

static void
test_touch(void)
{
  cmg__history_reset();
  ok(!cmg__history_touched(), "untouched at the start");
  ok(cmg__history_touch(), "the first touch says so");
  ok(cmg__history_touched(), "touched after it");
  ok(!cmg__history_touch(), "a later one does not");
  cmg__history_reset();
  pthread_t t[THREADS];
  bool first[THREADS];
  for (int i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, touch_once, &first[i]);
  int n = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    n += first[i];
  }
  is_int(n, 1, "of threads racing, exactly one touches first");
}

static void
test_names(void)
{
  struct cmg__device_history h;
  cmg__history_set_device(3, "NVIDIA H100 80GB HBM3", "GPU-1234-abcd");
  is_int(cmg__history_device(3, &h), 0, "a device's history");
  is_str(h.name, "NVIDIA H100 80GB HBM3", "its name");
  is_str(h.uuid, "GPU-1234-abcd", "its uuid");
  cmg__history_set_device(3, NULL, NULL);
  cmg__history_device(3, &h);
  ok(h.name[0] == '\0' && h.uuid[0] == '\0', "no name and no uuid: empty");

  char name[400], uuid[100];
  memset(name, 'n', sizeof(name) - 1);
  name[sizeof(name) - 1] = '\0';
  memset(uuid, 'u', sizeof(uuid) - 1);
  uuid[sizeof(uuid) - 1] = '\0';
  cmg__history_set_device(CMG__MAX_DEVICES - 1, name, uuid);
  cmg__history_device(CMG__MAX_DEVICES - 1, &h);
  is_u64(strnlen(h.name, sizeof(h.name)), sizeof(h.name) - 1,
         "a long name is cut to fit, terminated");
  is_u64(strnlen(h.uuid, sizeof(h.uuid)), sizeof(h.uuid) - 1,
         "a long uuid too");
  cmg__history_set_device(CMG__MAX_DEVICES, "x", "y");
  cmg__history_set_device(-1, "x", "y");
  is_int(cmg__history_device(CMG__MAX_DEVICES, &h), -EINVAL,
         "the device past the last is refused");
  is_int(cmg__history_device(-1, &h), -EINVAL, "a negative one too");
  cmg__history_device(CMG__MAX_DEVICES - 1, &h);
  ok(h.name[0] == 'n', "the last device is not overwritten by the next");
}

/* Three stacks: a and b live on device 2, c on device 1 only. */
static void
make_stacks(void)
{
  static const uintptr_t a[] = { 0x7000100, 0x7000200 };
  static const uintptr_t b[] = { 0x7000300 };
  static const uintptr_t c[] = { 0x7000400, 0x7000500, 0x7000600 };
  stack_a = cmg__stacks_intern(a, 2, false);
  stack_b = cmg__stacks_intern(b, 1, false);
  stack_c = cmg__stacks_intern(c, 3, false);
  cmg__stacks_add(stack_a, 2, 3000, 3);
  cmg__stacks_add(stack_b, 2, 1000, 1);
  cmg__stacks_add(stack_c, 1, 500, 5);
}

static const struct cmg__share *
share_of(const struct cmg__composition *c, uint32_t stack)
{
  for (size_t i = 0; i < c->n; i++)
    if (c->items[i].stack == stack)
      return &c->items[i];
  return NULL;
}

static uint64_t
peak_bytes(int device)
{
  struct cmg__device_history h;
  cmg__history_device(device, &h);
  uint64_t b = h.has_peak ? h.peak.bytes : UINT64_MAX;
  cmg__history_device_free(&h);
  return b;
}

static void
test_peak_composition(void)
{
  struct cmg__device_history h;
  cmg__history_reset();
  cmg__history_device(2, &h);
  ok(!h.has_peak && h.peak.n == 0 && h.peak.items == NULL,
     "no peak before the first allocation");
  uint64_t t0 = cmg__now_ns();
  cmg__history_peak(2, 4000);
  uint64_t t1 = cmg__now_ns();
  is_int(cmg__history_device(2, &h), 0, "the history after a peak");
  ok(h.has_peak, "has a peak");
  is_u64(h.peak.bytes, 4000, "of the live bytes given");
  ok(h.peak.time_ns >= t0 && h.peak.time_ns <= t1, "stamped when it was seen");
  is_u64(h.peak.n, 2, "two stacks live on the device");
  const struct cmg__share *a = share_of(&h.peak, stack_a);
  const struct cmg__share *b = share_of(&h.peak, stack_b);
  ok(a && a->bytes == 3000 && a->count == 3, "the first stack's share");
  ok(b && b->bytes == 1000 && b->count == 1, "the second's");
  ok(share_of(&h.peak, stack_c) == NULL, "a stack live elsewhere is not in it");

  h.peak.items[0].bytes = 1;
  cmg__history_device_free(&h);
  ok(h.peak.items == NULL && h.first_denial.items == NULL,
     "freeing a copy clears its pointers");
  cmg__history_device_free(&h);
  cmg__stacks_add(stack_b, 2, 2000, 1);
  cmg__history_device(2, &h);
  b = share_of(&h.peak, stack_b);
  a = share_of(&h.peak, stack_a);
  ok(a && a->bytes == 3000, "a copy changed is not the history");
  ok(b && b->bytes == 1000, "the peak keeps what was live at it");
  cmg__history_device_free(&h);
  cmg__history_peak(2, 6000);
  cmg__history_device(2, &h);
  b = share_of(&h.peak, stack_b);
  ok(b && b->bytes == 3000 && b->count == 2, "a higher peak takes it anew");
  cmg__history_device_free(&h);
  cmg__stacks_add(stack_b, 2, -2000, -1);
}

/* A new composition once live bytes pass the last by 1% or 1 MiB, the
 * smaller: small devices by 1%, large ones by 1 MiB. */
static void
test_peak_hysteresis(void)
{
  cmg__history_reset();
  cmg__history_peak(2, 4000);
  cmg__history_peak(2, 4039);
  is_u64(peak_bytes(2), 4000, "less than 1%% above: the same peak");
  cmg__history_peak(2, 4040);
  is_u64(peak_bytes(2), 4040, "1%% above: a new one");
  cmg__history_peak(2, 100);
  is_u64(peak_bytes(2), 4040, "a lower live is no peak");
  cmg__history_peak(2, GiB);
  cmg__history_peak(2, GiB + MiB - 1);
  is_u64(peak_bytes(2), GiB, "a large device: less than 1 MiB above, kept");
  cmg__history_peak(2, GiB + MiB);
  is_u64(peak_bytes(2), GiB + MiB, "1 MiB above: a new one");
  cmg__history_peak(5, 0);
  cmg__history_peak(5, 0);
  is_u64(peak_bytes(5), 0, "nothing live is a peak of its own");
  cmg__history_peak(5, 1);
  is_u64(peak_bytes(5), 1, "and one byte passes it");
  is_u64(peak_bytes(6), UINT64_MAX, "other devices have none");

  struct cmg__device_history h;
  cmg__history_peak(CMG__STACK_DEVICES, 7000);
  cmg__history_device(CMG__STACK_DEVICES, &h);
  ok(h.has_peak && h.peak.bytes == 7000 && h.peak.n == 0,
     "past the devices stacks count on: bytes, no composition");
  cmg__history_device_free(&h);
  cmg__history_peak(CMG__MAX_DEVICES, 1);
  cmg__history_peak(-1, 1);
  is_u64(peak_bytes(CMG__MAX_DEVICES - 1), UINT64_MAX,
         "devices out of range are ignored");
}

static struct cmg__event
ev(enum cmg__event_kind kind, int device, uint64_t live, uint64_t time)
{
  return (struct cmg__event){ .kind = kind,
                              .device = (int16_t)device,
                              .live_bytes = live,
                              .time_ns = time,
                              .requested_bytes = 77,
                              .limit_bytes = 9000,
                              .waited_ns = 5 * MS,
                              .granted = true,
                              .stack = stack_a,
                              .fn = 4 };
}

static bool
same_event(const struct cmg__event *a, const struct cmg__event *b)
{
  return a->kind == b->kind && a->time_ns == b->time_ns &&
         a->requested_bytes == b->requested_bytes &&
         a->live_bytes == b->live_bytes && a->limit_bytes == b->limit_bytes &&
         a->waited_ns == b->waited_ns && a->granted == b->granted &&
         a->stack == b->stack && a->device == b->device && a->fn == b->fn;
}

static void
test_events(void)
{
  struct cmg__event out[CMG__MAX_EVENTS + 2];
  uint64_t totals[4] = { 9, 9, 9, 9 };
  cmg__history_reset();
  cmg__timeline_reset();
  is_u64(cmg__history_events(out, CMG__MAX_EVENTS, totals), 0, "no events");
  ok(!totals[0] && !totals[1] && !totals[2] && !totals[3], "none counted");

  struct cmg__event w = ev(CMG__EVENT_WAIT, 2, 4000, 12 * MS);
  cmg__history_event(&w);
  is_u64(cmg__history_events(out, CMG__MAX_EVENTS, totals), 1, "one event");
  ok(same_event(&out[0], &w), "kept as it was given");
  is_u64(totals[CMG__EVENT_WAIT], 1, "counted by its kind");
  is_u64(totals[CMG__EVENT_DENIAL], 0, "and no other");

  struct cmg__device_history h;
  cmg__history_device(2, &h);
  ok(!h.has_first_denial, "a wait is no denial");
  cmg__history_device_free(&h);
  struct cmg__event d = ev(CMG__EVENT_DENIAL, 2, 4000, 20 * MS);
  cmg__history_event(&d);
  cmg__history_device(2, &h);
  ok(h.has_first_denial, "a denial is the first");
  is_u64(h.first_denial.time_ns, 20 * MS, "at the denial's time");
  is_u64(h.first_denial.bytes, 4000, "with what was live");
  const struct cmg__share *a = share_of(&h.first_denial, stack_a);
  ok(h.first_denial.n == 2 && a && a->bytes == 3000,
     "and the composition at it");
  cmg__history_device_free(&h);
  ok(cmg__timeline_get(2, &tl) && tl.points[tl.n - 1].time_ns == 20 * MS &&
         tl.points[tl.n - 1].live == 4000,
     "a denial marks the timeline exactly");

  struct cmg__event later = ev(CMG__EVENT_DENIAL, 2, 9999, 30 * MS);
  cmg__history_event(&later);
  cmg__history_device(2, &h);
  ok(h.first_denial.time_ns == 20 * MS && h.first_denial.bytes == 4000,
     "a later denial leaves the first");
  cmg__history_device_free(&h);
  struct cmg__event host = ev(CMG__EVENT_DENIAL, CMG__HOST, 1, 40 * MS);
  cmg__history_event(&host);
  is_u64(cmg__history_events(out, CMG__MAX_EVENTS, totals), 4,
         "a host denial is kept too");
  is_u64(totals[CMG__EVENT_DENIAL], 3, "and counted");
  is_int(out[3].device, CMG__HOST, "with its device");

  out[2].requested_bytes = 12345;
  is_u64(cmg__history_events(out, 2, totals), 2, "copies at most max");
  is_u64(out[2].requested_bytes, 12345, "and writes no further");
}

struct burst {
  int kind;
  int n;
};

static void *
burst(void *arg)
{
  const struct burst *b = arg;
  for (int i = 0; i < b->n; i++) {
    struct cmg__event e = ev(b->kind, 9, (uint64_t)i, (uint64_t)i);
    e.requested_bytes = ((uint64_t)b->kind << 32) | (uint64_t)i;
    cmg__history_event(&e);
  }
  return NULL;
}

/* Past the table's size events are counted, not kept, from any thread. */
static void
test_events_full(void)
{
  static struct cmg__event out[CMG__MAX_EVENTS + 1];
  uint64_t totals[4];
  cmg__history_reset();
  struct burst one = { CMG__EVENT_WARN, CMG__MAX_EVENTS - 1 };
  burst(&one);
  is_u64(cmg__history_events(out, CMG__MAX_EVENTS + 1, totals),
         CMG__MAX_EVENTS - 1, "one short of full: all kept");
  one.n = 2;
  burst(&one);
  is_u64(cmg__history_events(out, CMG__MAX_EVENTS + 1, totals), CMG__MAX_EVENTS,
         "full: the table's size");
  is_u64(out[CMG__MAX_EVENTS - 1].requested_bytes,
         (uint64_t)CMG__EVENT_WARN << 32, "the last kept is the first over");
  is_u64(totals[CMG__EVENT_WARN], CMG__MAX_EVENTS + 1, "all counted");

  cmg__history_reset();
  pthread_t t[THREADS];
  struct burst b[THREADS];
  for (int i = 0; i < THREADS; i++) {
    b[i] = (struct burst){ i, 1000 + i };
    pthread_create(&t[i], NULL, burst, &b[i]);
  }
  for (int i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  size_t n = cmg__history_events(out, CMG__MAX_EVENTS + 1, totals);
  is_u64(n, CMG__MAX_EVENTS, "threads fill the table");
  bool counted = true, valid = true;
  for (int k = 0; k < THREADS; k++)
    counted = counted && totals[k] == (uint64_t)(1000 + k);
  for (size_t i = 0; i < n; i++)
    valid =
        valid && (out[i].requested_bytes >> 32) == (uint64_t)out[i].kind &&
        (out[i].requested_bytes & 0xffffffff) < 1000 + (uint64_t)out[i].kind;
  ok(counted, "and each kind is counted exactly");
  ok(valid, "every kept event is one that was given, whole");
}

static struct cmg__alloc
teardown(uint32_t stack, int device, int fn, int kind, uint64_t size)
{
  return (struct cmg__alloc){ .addr = 0x7f0000000000,
                              .size = size,
                              .stack = stack,
                              .device = (int16_t)device,
                              .fn = (uint8_t)fn,
                              .kind = (uint8_t)kind };
}

static const struct cmg__released *
group_of(const struct cmg__released *g, size_t n, struct cmg__alloc a)
{
  for (size_t i = 0; i < n; i++)
    if (g[i].stack == a.stack && g[i].device == a.device && g[i].fn == a.fn &&
        g[i].kind == a.kind)
      return &g[i];
  return NULL;
}

static void
test_released(void)
{
  size_t n = 99;
  cmg__history_reset();
  struct cmg__released *g = cmg__history_released_groups(&n);
  ok(g != NULL && n == 0, "no teardown: an empty copy");
  free(g);

  struct cmg__alloc a = teardown(1, 0, 2, CMG__KIND_DEVICE, 100);
  struct cmg__alloc others[] = {
    teardown(2, 0, 2, CMG__KIND_DEVICE, 1),
    teardown(1, 1, 2, CMG__KIND_DEVICE, 1),
    teardown(1, 0, 3, CMG__KIND_DEVICE, 1),
    teardown(1, 0, 2, CMG__KIND_ARRAY, 1),
  };
  cmg__history_released(&a);
  for (size_t i = 0; i < 4; i++)
    cmg__history_released(&others[i]);
  a.size = 50;
  a.addr++;
  uint64_t t0 = cmg__now_ns();
  cmg__history_released(&a);
  uint64_t t1 = cmg__now_ns();
  g = cmg__history_released_groups(&n);
  is_u64(n, 5, "stack, device, api and kind each make a group");
  const struct cmg__released *r = group_of(g, n, a);
  ok(r && r->count == 2 && r->bytes == 150, "a group adds its allocations");
  ok(r && r->time_ns >= t0 && r->time_ns <= t1,
     "stamped by the last teardown that added to it");
  bool each = true;
  for (size_t i = 0; i < 4; i++) {
    const struct cmg__released *o = group_of(g, n, others[i]);
    each = each && o && o->count == 1 && o->bytes == 1;
  }
  ok(each, "the others one each");
  g[0].count = 0;
  free(g);
  g = cmg__history_released_groups(&n);
  r = group_of(g, n, a);
  ok(r && r->count == 2, "a copy changed is not the groups");
  free(g);

  for (uint32_t s = 100; s < 140; s++) {
    struct cmg__alloc x = teardown(s, 4, 1, CMG__KIND_VMM, s);
    cmg__history_released(&x);
    cmg__history_released(&x);
  }
  g = cmg__history_released_groups(&n);
  is_u64(n, 45, "the table grows past its first size");
  each = true;
  for (uint32_t s = 100; s < 140; s++) {
    r = group_of(g, n, teardown(s, 4, 1, CMG__KIND_VMM, 0));
    each = each && r && r->count == 2 && r->bytes == 2 * s;
  }
  ok(each, "and keeps every group through it");
  free(g);
}

/* A fork child: only the devices' identities survive, and its life starts
 * anew. */
static void
test_reset(void)
{
  struct cmg__event d = ev(CMG__EVENT_DENIAL, 2, 4000, 20 * MS);
  struct cmg__alloc a = teardown(1, 0, 2, CMG__KIND_DEVICE, 100);
  cmg__history_touch();
  cmg__history_event(&d);
  cmg__history_peak(2, 4000);
  cmg__history_released(&a);
  cmg__history_set_device(2, "child's device", "GPU-2");
  double before = unix_now();
  cmg__history_reset();

  struct cmg__event out[2];
  uint64_t totals[4];
  size_t n;
  ok(!cmg__history_touched(), "reset: untouched");
  is_u64(cmg__history_events(out, 2, totals), 0, "no events");
  is_u64(totals[CMG__EVENT_DENIAL], 0, "none counted");
  free(cmg__history_released_groups(&n));
  is_u64(n, 0, "nothing released");
  ok(cmg__start_unix() >= before - 1e-6, "the start is the reset's");
  ok(cmg__now_ns() < 1000 * MS, "the clock counts from it");
  struct cmg__device_history h;
  cmg__history_device(2, &h);
  ok(!h.has_peak && !h.has_first_denial, "no peak, no first denial");
  is_str(h.name, "child's device", "the name is kept");
  is_str(h.uuid, "GPU-2", "the uuid too");
  cmg__history_peak(2, 100);
  d.time_ns = 7 * MS;
  cmg__history_event(&d);
  cmg__history_device(2, &h);
  ok(h.has_peak && h.peak.bytes == 100, "a lower peak is the child's first");
  ok(h.has_first_denial && h.first_denial.time_ns == 7 * MS,
     "so is its first denial");
  cmg__history_device_free(&h);
}

int
main(void)
{
  test_clocks();
  test_touch();
  test_names();
  make_stacks();
  test_peak_composition();
  test_peak_hysteresis();
  test_events();
  test_events_full();
  test_released();
  test_reset();
  return done_testing();
}
