/*
 * The report's "devices", "host" and "group" members, and how every member
 * names a device, each written alone and read back with cJSON.  A device
 * is listed when the process set a limit on it, allocated on it or was
 * refused there, and only then: a reader takes the list for the devices
 * the process touched.  Its figures come from the ledger and the policy as
 * they are (a limit it never set is null, not 0); its graph memory and
 * footprint are null until the driver was seen using them, and the
 * footprint's sums follow docs/report-format.md: the allocations are the
 * live bytes less the contexts a cap counts (never below 0), a figure
 * not measured is null, and what NVML sees beyond both is unexplained
 * (never below 0).  Host memory is on no device: null.  Outside a group
 * the group is null; in one, it lists the devices it caps or this
 * process uses, with every member's bytes and this process's.
 */
#include "config.h"

#include <unistd.h>

#include "core/base.h"
#include "core/conf.h"
#include "runtime/group/group.h"
#include "runtime/group/group_join.h"
#include "runtime/ledger/driver_held.h"
#include "runtime/ledger/history.h"
#include "runtime/ledger/ledger.h"
#include "runtime/limits/policy.h"
#include "runtime/report/report_devices.h"
#include "report_member.h"
#include "../tap.h"

#define KiB 1024ull
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)

#define UUID0 "GPU-00000000-1111-2222-3333-444444444444"

static cJSON *
written(void (*fn)(struct cmg__jsonw *))
{
  struct cmg__jsonw w;
  fn(member_open(&w));
  return member_parse(&w);
}

/* Recorded and reserved as a wrapper does; a limit refuses nothing here. */
static void
insert(uint64_t addr, uint64_t size, int dev, unsigned kind)
{
  struct cmg__alloc stale, a = { .addr = addr,
                                 .size = size,
                                 .seq = cmg__ledger_next_seq(),
                                 .device = (int16_t)dev,
                                 .fn = 1,
                                 .kind = (uint8_t)kind };
  struct cmg__reservation r;
  uint64_t used;
  cmg__ledger_insert(&a, &stale);
  if (cmg__policy_prepare(dev, size, &r, &used) == 0)
    cmg__policy_commit(dev);
  else
    cmg__policy_force(dev, size, &r);
}

static void
remove_alloc(uint64_t addr, unsigned kind, bool teardown)
{
  struct cmg__alloc out;
  cmg__ledger_remove(addr, kind, &out);
  if (teardown)
    cmg__ledger_count_release(&out);
  else
    cmg__ledger_count_free(&out);
  cmg__policy_release(out.device, out.size);
}

static void
test_device_names(void)
{
  struct cmg__jsonw w;
  static const int devices[] = { 0, 63, 64, CMG__HOST, -1, 1000 };
  cmg__jsonw_array(member_open(&w));
  for (size_t i = 0; i < sizeof(devices) / sizeof(*devices); i++)
    cmg__report_device(&w, devices[i]);
  cmg__jsonw_array_end(&w);
  cJSON *doc = member_parse(&w);
  is_str(member_text, "[0,63,null,null,null,null]",
         "a device by its ordinal; host memory and what is no ordinal null");
  ok(cmg__is_report_device(0) && cmg__is_report_device(CMG__MAX_DEVICES - 1),
     "the first and last ordinals are devices");
  ok(!cmg__is_report_device(CMG__HOST) && !cmg__is_report_device(-1),
     "host memory and -1 are not");
  member_done(doc);
}

static void
test_empty(void)
{
  cJSON *d = written(cmg__report_devices);
  is_str(member_text, "[]", "devices: none used, none listed");
  member_done(d);
  /* The host's limit is set at start-up, before any report. */
  cJSON *h = written(cmg__report_host);
  ok(num(h, "live_bytes") == 0 && num(h, "peak_bytes") == 0 &&
         num(h, "allocations") == 0 && num(h, "frees") == 0 &&
         num(h, "denied") == 0,
     "host: nothing used");
  is_int(len(h, NULL), 6, "host: its six members");
  member_done(h);
  cJSON *g = written(cmg__report_group);
  is_str(member_text, "null", "group: null outside a group");
  member_done(g);
}

/* Device 0: a limit, two allocations, one freed, graph memory and a
 * measured footprint.  1: a limit of none, nothing allocated, a footprint
 * whose contexts outweigh what the process holds.  2: allocations alone,
 * an unmeasured footprint.  3: a denial alone.  4: an allocation a
 * teardown released.  5: nothing.  63: the last ordinal. */
static void
build_state(void)
{
  cmg__history_set_device(0, "Test GPU 0", UUID0);
  cmg__policy_set_device(0, 64 * MiB, CMG__NO_LIMIT, 80 * GiB);
  cmg__policy_set_device(1, CMG__NO_LIMIT, CMG__NO_LIMIT, 40 * GiB);
  insert(0x7f0000100000, 4 * MiB, 0, CMG__KIND_DEVICE);
  insert(0x7f0000800000, 2 * MiB, 0, CMG__KIND_DEVICE);
  remove_alloc(0x7f0000800000, CMG__KIND_DEVICE, false);
  insert(0x7f2000000000, 1 * MiB, 2, CMG__KIND_DEVICE);
  cmg__ledger_count_denial(3);
  insert(0x7f4000000000, 3 * MiB, 4, CMG__KIND_DEVICE);
  remove_alloc(0x7f4000000000, CMG__KIND_DEVICE, true);
  insert(0x7f6300000000, 5 * KiB, 63, CMG__KIND_DEVICE);

  cmg__graphmem_set(0, 8 * MiB, 16 * MiB, 4 * MiB, 12 * MiB, true);
  cmg__graphmem_count(0, CMG__GRAPHMEM_LAUNCH);
  cmg__graphmem_count(0, CMG__GRAPHMEM_LAUNCH);
  cmg__graphmem_count(0, CMG__GRAPHMEM_UPLOAD);
  cmg__graphmem_count(0, CMG__GRAPHMEM_TRIM);
  cmg__graphmem_count(0, CMG__GRAPHMEM_DENIED);
  cmg__graphmem_set(1, 2 * MiB, 2 * MiB, 1 * MiB, 1 * MiB, false);

  cmg__footprint_set(0, &(struct cmg__footprint){ .contexts = 1,
                                                  .context_bytes = 1 * MiB,
                                                  .source = CMG__FOOTPRINT_NVML,
                                                  .counted = true,
                                                  .checked = 2,
                                                  .checked_nvml = 600,
                                                  .checked_driver = 640 });
  cmg__footprint_set_process(0, true, 10 * MiB);
  cmg__footprint_set(1,
                     &(struct cmg__footprint){ .contexts = 2,
                                               .context_bytes = 300 * MiB,
                                               .source = CMG__FOOTPRINT_DRIVER,
                                               .counted = true });
  cmg__footprint_set_process(1, true, 100 * MiB);
  cmg__footprint_set(
      2, &(struct cmg__footprint){ .contexts = 1, .why = "NVML not loaded" });
  cmg__footprint_set_process(2, true, 5 * MiB);

  cmg__policy_set_device(CMG__HOST, 16 * MiB, CMG__NO_LIMIT, 0);
  insert(0x600000, 8 * KiB, CMG__HOST, CMG__KIND_HOST);
  insert(0x700000, 4 * KiB, CMG__HOST, CMG__KIND_HOST);
  remove_alloc(0x700000, CMG__KIND_HOST, false);
  cmg__ledger_count_denial(CMG__HOST);
}

static bool
listed(const cJSON *devs, const int *want, int n)
{
  if (len(devs, NULL) != n)
    return false;
  for (int i = 0; i < n; i++)
    if (num(nth(devs, NULL, i), "ordinal") != want[i])
      return false;
  return true;
}

static void
check_device0(const cJSON *d)
{
  is_str(str(d, "name"), "Test GPU 0", "device 0: its name");
  is_str(str(d, "uuid"), UUID0, "device 0: its UUID");
  is_u64(num(d, "physical_bytes"), 80 * GiB, "device 0: physical_bytes");
  is_u64(num(d, "limit_bytes"), 64 * MiB, "device 0: limit_bytes");
  is_u64(num(d, "live_bytes"), 4 * MiB, "device 0: live_bytes");
  is_u64(num(d, "peak_bytes"), 6 * MiB, "device 0: peak_bytes");
  ok(num(d, "allocations") == 2 && num(d, "frees") == 1 &&
         num(d, "released") == 0 && num(d, "denied") == 0,
     "device 0: allocations, frees, released, denied");
  const cJSON *g = at(d, "graph_memory");
  ok(num(g, "reserved_bytes") == 8 * MiB &&
         num(g, "reserved_high_bytes") == 16 * MiB &&
         num(g, "used_bytes") == 4 * MiB &&
         num(g, "used_high_bytes") == 12 * MiB,
     "graph memory: reserved and used, and their highs");
  is_str(str(g, "source"), "driver", "graph memory: from the driver");
  ok(num(g, "launches") == 2 && num(g, "uploads") == 1 &&
         num(g, "trims") == 1 && num(g, "denied") == 1,
     "graph memory: its counts");
}

static void
check_footprints(const cJSON *d0, const cJSON *d1, const cJSON *d2)
{
  const cJSON *f = at(d0, "footprint");
  ok(num(f, "contexts") == 1 && num(f, "context_bytes") == 1 * MiB,
     "footprint: contexts and what they took");
  ok(str_is(f, "source", "nvml") && is_null(f, "why"),
     "footprint: measured by NVML, no why");
  is_u64(num(f, "allocated_bytes"), 3 * MiB,
         "footprint: the live bytes less the contexts counted in them");
  is_u64(num(f, "process_bytes"), 10 * MiB, "footprint: NVML's figure");
  is_u64(num(f, "unexplained_bytes"), 6 * MiB,
         "footprint: what neither allocations nor contexts explain");
  ok(cJSON_IsTrue(at(f, "counted")), "footprint: counted");
  const cJSON *x = at(f, "cross_check");
  ok(num(x, "contexts") == 2 && num(x, "nvml_bytes") == 600 &&
         num(x, "driver_bytes") == 640,
     "footprint: the cross-check's figures");

  f = at(d1, "footprint");
  is_str(str(f, "source"), "driver", "footprint: measured by the driver");
  is_u64(num(f, "allocated_bytes"), 0,
         "footprint: contexts above the live bytes leave no allocations");
  is_u64(num(f, "unexplained_bytes"), 0,
         "footprint: NVML's figure below the explained leaves nothing");
  ok(is_null(f, "cross_check"), "footprint: no cross-check is null");

  f = at(d2, "footprint");
  ok(is_null(f, "context_bytes") && is_null(f, "source"),
     "footprint: not measured, its bytes and source null");
  is_str(str(f, "why"), "NVML not loaded", "footprint: and why");
  is_u64(num(f, "allocated_bytes"), 1 * MiB,
         "footprint: contexts not counted, all the live bytes");
  ok(num(f, "process_bytes") == 5 * MiB && is_null(f, "unexplained_bytes"),
     "footprint: no unexplained bytes without a measure");
  ok(cJSON_IsFalse(at(f, "counted")), "footprint: not counted");
}

static void
test_devices(void)
{
  cJSON *d = written(cmg__report_devices);
  const cJSON *d1 = nth(d, NULL, 1), *d2 = nth(d, NULL, 2);
  ok(listed(d, (int[]){ 0, 1, 2, 3, 4, 63 }, 6),
     "devices: those with a limit, allocations or a denial, by ordinal");
  check_device0(nth(d, NULL, 0));
  ok(is_null(d1, "limit_bytes") && num(d1, "physical_bytes") == 40 * GiB,
     "device 1: a limit of none is null");
  ok(num(d1, "allocations") == 0 && num(d1, "live_bytes") == 0,
     "device 1: listed for its limit alone");
  is_str(str(at(d1, "graph_memory"), "source"), "estimate",
         "graph memory: the library's estimate");
  ok(num(at(d1, "graph_memory"), "launches") == 0,
     "graph memory: no counts of its own");
  ok(is_null(d2, "limit_bytes") && num(d2, "physical_bytes") == 0,
     "device 2: no limit set, no size known");
  ok(str(d2, "name") && str(d2, "name")[0] == '\0',
     "device 2: no name known, empty");
  ok(is_null(d2, "graph_memory"), "device 2: no graph pool is null");
  check_footprints(nth(d, NULL, 0), d1, d2);
  ok(num(nth(d, NULL, 3), "denied") == 1 &&
         num(nth(d, NULL, 3), "allocations") == 0,
     "device 3: listed for its denial");
  ok(is_null(nth(d, NULL, 3), "footprint"), "device 3: no context seen");
  ok(num(nth(d, NULL, 4), "released") == 1 &&
         num(nth(d, NULL, 4), "frees") == 0 &&
         num(nth(d, NULL, 4), "live_bytes") == 0,
     "device 4: released by a teardown, which is no free");
  is_int(len(nth(d, NULL, 0), NULL), 13, "device: its thirteen members");
  member_done(d);

  cJSON *h = written(cmg__report_host);
  is_u64(num(h, "limit_bytes"), 16 * MiB, "host: its limit");
  ok(num(h, "live_bytes") == 8 * KiB && num(h, "peak_bytes") == 12 * KiB,
     "host: live and peak bytes");
  ok(num(h, "allocations") == 2 && num(h, "frees") == 1 &&
         num(h, "denied") == 1,
     "host: allocations, frees, denied");
  member_done(h);
}

static void
test_group(void)
{
  struct cmg__config cfg;
  char opts[128], err[256];
  uint64_t used, limit;
  snprintf(opts, sizeof(opts), "group=trdev%d,group_limit.0=10M",
           (int)getpid());
  if (cmg__config_parse(opts, &cfg, err, sizeof(err)) != 0 ||
      cmg__group_join(&cfg, err, sizeof(err)) != 0) {
    printf("# cannot join a group: %s\n", err);
    ok(0, "group: joined");
    return;
  }
  is_int(cmg__group_reserve(0, 3 * MiB, 80 * GiB, &used, &limit), 0,
         "group: 3 MiB reserved on device 0");
  cJSON *g = written(cmg__report_group);
  char name[32];
  snprintf(name, sizeof(name), "trdev%d", (int)getpid());
  is_str(str(g, "name"), name, "group: its name");
  is_int(num(g, "members"), 1, "group: one member");
  const cJSON *d0 = nth(g, "devices", 0), *d1 = nth(g, "devices", 1);
  is_int(len(g, "devices"), 2,
         "group: the device it caps, and one with a "
         "limit of the process");
  ok(num(d0, "device") == 0 && num(d0, "limit_bytes") == 10 * MiB,
     "group: device 0 and its cap");
  ok(num(d0, "used_bytes") == 3 * MiB && num(d0, "process_bytes") == 3 * MiB,
     "group: every member's bytes, and this process's");
  ok(num(d1, "device") == 1 && is_null(d1, "limit_bytes") &&
         num(d1, "used_bytes") == 0,
     "group: device 1, uncapped and unused");
  member_done(g);
  cmg__group_release(0, 3 * MiB);
  cmg__group_leave();
}

int
main(void)
{
  cmg__history_start();
  test_device_names();
  test_empty();
  build_state();
  test_devices();
  test_group();
  return done_testing();
}
