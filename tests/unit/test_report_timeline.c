/*
 * The report's "timeline" member, written alone and read back with cJSON
 * against docs/report-format.md: what `cumemguard-report timeline`, `plot`
 * and `pprof` draw from.  Checked: an empty timeline's exact text; one
 * entry per device with points, by ordinal, the last ordinal included;
 * each point as [time, live, min, max] with times in seconds to the
 * microsecond (truncated, as every report time is); the span, the peak
 * and its time; the point that closes each series at the report's moment
 * with the bytes the policy counts then, or at the last point's time when
 * the clock read for the report is behind it; a denial's exact time; the
 * report writes oldest first, named by reason (an unknown reason as the
 * first name), the first 64 listed and all counted; and the largest frees,
 * largest first and the earliest first among equals, each with its device
 * (null for host memory), API, stack (null for a stack the tables do not
 * hold, and marked in them otherwise), thread and times.
 */
#include "config.h"

#include "core/base.h"
#include "runtime/ledger/freed_largest.h"
#include "runtime/ledger/ledger.h"
#include "runtime/ledger/timeline.h"
#include "runtime/limits/policy.h"
#include "runtime/report/report_refs.h"
#include "runtime/report/report_timeline.h"
#include "runtime/stacks/stacks.h"
#include "report_member.h"
#include "../tap.h"

#define MiB (1024ull * 1024)
#define MS 1000000ull

static const char *const reasons[CMG__REASONS] = {
  "exit", "signal", "request", "soft_limit", "killed", "snapshot",
};

static const char *
api(unsigned fn)
{
  return fn == 1 ? "cudaMalloc" : fn == 2 ? "cudaMallocHost" : "other";
}

/* A time as the report writes it: whole microseconds, in seconds. */
static double
sec(uint64_t ns)
{
  return (double)(ns / 1000) / 1e6;
}

static cJSON *
timeline(uint64_t now_ns, struct cmg__refs *refs)
{
  struct cmg__jsonw w;
  cmg__report_timeline(member_open(&w), now_ns, reasons, refs, api);
  return member_parse(&w);
}

static bool
point_is(const cJSON *p, uint64_t t, double live, double min, double max)
{
  return cJSON_GetArraySize(p) == 4 && nth_num(p, 0) == sec(t) &&
         nth_num(p, 1) == live && nth_num(p, 2) == min && nth_num(p, 3) == max;
}

static void
test_empty(void)
{
  struct cmg__refs r;
  cmg__refs_init(&r);
  cJSON *doc = timeline(5 * MS, &r);
  is_str(member_text,
         "{\"devices\":[],\"dumps\":[],\"dumps_total\":0,\"freed\":[]}",
         "empty: no devices, no report writes, nothing freed");
  member_done(doc);
  cmg__refs_free(&r);
}

/* Device 0: two points, the first widened, and 3 MiB counted by the
 * policy.  Device 5: a denial's point.  Device 63: one change. */
static void
build_series(void)
{
  struct cmg__reservation res;
  uint64_t used;
  cmg__policy_set_device(0, CMG__NO_LIMIT, CMG__NO_LIMIT, 0);
  cmg__policy_prepare(0, 3 * MiB, &res, &used);
  cmg__policy_commit(0);
  cmg__timeline_note(0, 100, 10123456);
  cmg__timeline_note(0, 300, 10123456 + 200000);
  cmg__timeline_note(0, 50, 10123456 + 100000);
  cmg__timeline_note(0, 70, 20 * MS + 999);
  cmg__timeline_mark(5, 777, 12345678);
  cmg__timeline_note(63, 42, 30 * MS);
}

static void
check_device0(const cJSON *d)
{
  const cJSON *p = at(d, "points");
  is_int(num(d, "device"), 0, "device 0: its ordinal");
  ok(num(d, "resolution") > 0.0009 && num(d, "resolution") < 0.0011,
     "device 0: a span of about a millisecond, %g s", num(d, "resolution"));
  is_int(num(d, "peak_bytes"), 300, "device 0: its peak");
  ok(num(d, "peak_time") == sec(10323456),
     "device 0: when the peak was reached, to the microsecond");
  is_int(len(d, "points"), 3, "device 0: its two points and the report's");
  ok(point_is(nth(p, NULL, 0), 10123456, 100, 50, 300),
     "device 0: [time, live, min, max], the first change's live");
  ok(point_is(nth(p, NULL, 1), 20 * MS + 999, 70, 70, 70),
     "device 0: a later change opens a point");
  ok(point_is(nth(p, NULL, 2), 50 * MS, 3 * MiB, 3 * MiB, 3 * MiB),
     "device 0: closed at the report's time, with what the policy counts");
  is_int(len(d, NULL), 5, "device 0: its five members");
}

static void
test_series(void)
{
  struct cmg__refs r;
  cmg__refs_init(&r);
  build_series();
  cJSON *doc = timeline(50 * MS, &r);
  const cJSON *devs = at(doc, "devices");
  is_int(len(devs, NULL), 3, "devices: those with points alone");
  ok(num(nth(devs, NULL, 1), "device") == 5 &&
         num(nth(devs, NULL, 2), "device") == 63,
     "devices: by ordinal, the last one included");
  check_device0(nth(devs, NULL, 0));
  const cJSON *p5 = at(nth(devs, NULL, 1), "points");
  ok(point_is(nth(p5, NULL, 0), 12345678, 777, 777, 777),
     "a denial's point: its exact time and live");
  ok(point_is(nth(p5, NULL, 1), 50 * MS, 0, 0, 0),
     "closed with nothing counted on a device without a policy");
  member_done(doc);

  doc = timeline(1 * MS, &r);
  const cJSON *p63 = at(nth(at(doc, "devices"), NULL, 2), "points");
  ok(point_is(nth(p63, NULL, 1), 30 * MS, 0, 0, 0),
     "a report's clock behind the last point: closed at that point's time");
  ok(point_is(nth(at(nth(at(doc, "devices"), NULL, 0), "points"), NULL, 2),
              20 * MS + 999, 3 * MiB, 3 * MiB, 3 * MiB),
     "on every device");
  member_done(doc);
  cmg__refs_free(&r);
}

static void
test_dumps(void)
{
  struct cmg__refs r;
  cmg__refs_init(&r);
  for (unsigned i = 0; i < 70; i++)
    cmg__timeline_dump(i == 1 ? 9 : i % CMG__REASONS, (60 + i) * MS + 4321);
  cJSON *doc = timeline(200 * MS, &r);
  const cJSON *d = at(doc, "dumps");
  is_int(len(d, NULL), CMG__TIMELINE_DUMPS, "dumps: the first 64 listed");
  is_int(num(doc, "dumps_total"), 70, "dumps: all 70 counted");
  ok(num(nth(d, NULL, 0), "time") == sec(60 * MS + 4321) &&
         num(nth(d, NULL, 63), "time") == sec(123 * MS + 4321),
     "dumps: oldest first, times in seconds");
  int named = 0;
  for (int i = 2; i < 64; i++) {
    const char *s = str(nth(d, NULL, i), "reason");
    named += s != NULL && strcmp(s, reasons[i % CMG__REASONS]) == 0;
  }
  is_int(named, 62, "dumps: each by its reason's name");
  is_str(str(nth(d, NULL, 1), "reason"), "exit",
         "dumps: a reason out of range as the first name");
  is_int(len(nth(d, NULL, 0), NULL), 2, "dumps: time and reason alone");
  member_done(doc);
  cmg__refs_free(&r);
}

static void
freed(uint64_t addr, uint64_t size, int dev, unsigned fn, uint32_t stack,
      uint64_t seq)
{
  struct cmg__alloc a = { .addr = addr,
                          .size = size,
                          .seq = seq,
                          .time_ns = seq * MS + 7654,
                          .stack = stack,
                          .thread = 4242,
                          .device = (int16_t)dev,
                          .fn = (uint8_t)fn,
                          .kind = dev == CMG__HOST ? CMG__KIND_HOST
                                                   : CMG__KIND_DEVICE };
  cmg__freed_add(&a, (seq + 100) * MS + 1234);
}

static void
test_freed(void)
{
  struct cmg__refs r;
  uint32_t s1 = cmg__stacks_intern((uintptr_t[]){ 0x1000 }, 1, false);
  cmg__refs_init(&r);
  uint32_t late = cmg__stacks_intern((uintptr_t[]){ 0x2000 }, 1, false);
  freed(0x7f0000100000, 4 * MiB, 0, 1, s1, 5);
  freed(0x600000, 8 * MiB, CMG__HOST, 2, CMG__STACK_NONE, 6);
  freed(0x7f0000900000, 4 * MiB, 3, 1, late, 2);
  cJSON *doc = timeline(200 * MS, &r);
  const cJSON *f = at(doc, "freed");
  const cJSON *big = nth(f, NULL, 0), *a = nth(f, NULL, 1),
              *b = nth(f, NULL, 2);
  is_int(len(f, NULL), 3, "freed: each kept");
  is_int(num(big, "bytes"), 8 * MiB, "freed: the largest first");
  ok(is_null(big, "device") && is_null(big, "stack"),
     "freed: host memory on no device, no stack");
  is_str(str(big, "api"), "cudaMallocHost", "freed: its API by name");
  ok(num(a, "device") == 3 && num(b, "device") == 0,
     "freed: the earliest first among equal sizes");
  is_str(str(b, "address"), "0x7f0000100000", "freed: its address in hex");
  ok(num(b, "stack") == s1 && r.used[s1], "freed: its stack, marked");
  ok(is_null(a, "stack"), "freed: a stack the tables do not hold is null");
  ok(num(b, "thread") == 4242 && num(b, "time") == sec(5 * MS + 7654) &&
         num(b, "free_time") == sec(105 * MS + 1234),
     "freed: thread, when made and when freed, in seconds");
  is_int(len(b, NULL), 8, "freed: its eight members");
  member_done(doc);
  cmg__refs_free(&r);
}

int
main(void)
{
  test_empty();
  test_series();
  test_dumps();
  test_freed();
  return done_testing();
}
