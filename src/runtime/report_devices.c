/*
 * The report's "devices", "host" and "group" members: what the ledger,
 * the policy and the group segment say of each device as the report is
 * written (docs/report-format.md).
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "core/base.h"
#include "runtime/held.h"
#include "runtime/group.h"
#include "runtime/history.h"
#include "runtime/ledger.h"
#include "runtime/policy.h"
#include "runtime/report_devices.h"
#include "runtime/report_options.h"

bool
cmg__is_report_device(int device)
{
  return device >= 0 && device < CMG__MAX_DEVICES;
}

cJSON *
cmg__report_device(int device)
{
  return cmg__is_report_device(device) ? cJSON_CreateNumber(device)
                                       : cJSON_CreateNull();
}

/* null for a device whose graph memory pool was never used. */
static cJSON *
graph_memory(int device)
{
  struct cmg__graphmem g;
  if (cmg__graphmem_get(device, &g) < 0)
    return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "reserved_bytes", g.reserved);
  cJSON_AddNumberToObject(o, "reserved_high_bytes", g.reserved_high);
  cJSON_AddNumberToObject(o, "used_bytes", g.used);
  cJSON_AddNumberToObject(o, "used_high_bytes", g.used_high);
  cJSON_AddStringToObject(o, "source", g.from_driver ? "driver" : "estimate");
  cJSON_AddNumberToObject(o, "launches", g.launches);
  cJSON_AddNumberToObject(o, "uploads", g.uploads);
  cJSON_AddNumberToObject(o, "trims", g.trims);
  cJSON_AddNumberToObject(o, "denied", g.denied);
  return o;
}

static cJSON *
bytes_or_null(bool known, uint64_t bytes)
{
  return known ? cJSON_CreateNumber(bytes) : cJSON_CreateNull();
}

/* footprint.cross_check: NVML's and the driver's figures for the contexts
 * both measured, or null where none was. */
static cJSON *
cross_check(const struct cmg__footprint *f)
{
  if (f->checked == 0)
    return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "contexts", f->checked);
  cJSON_AddNumberToObject(o, "nvml_bytes", (double)f->checked_nvml);
  cJSON_AddNumberToObject(o, "driver_bytes", (double)f->checked_driver);
  return o;
}

/* What the process takes on the card: its allocations (live_bytes less the
 * contexts it counts), its contexts and modules, and what NVML says of the
 * whole; null for a device none of whose contexts was seen. */
static cJSON *
footprint(int device, uint64_t live)
{
  struct cmg__footprint f;
  if (cmg__footprint_get(device, &f) < 0)
    return cJSON_CreateNull();
  static const char *const sources[] = { NULL, "nvml", "driver" };
  bool measured = f.source != CMG__FOOTPRINT_NONE;
  uint64_t counted = f.counted ? f.context_bytes : 0;
  uint64_t allocated = live > counted ? live - counted : 0;
  uint64_t explained = allocated + (measured ? f.context_bytes : 0);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "contexts", f.contexts);
  cJSON_AddItemToObject(o, "context_bytes",
                        bytes_or_null(measured, f.context_bytes));
  cJSON_AddItemToObject(o, "source",
                        measured ? cJSON_CreateString(sources[f.source])
                                 : cJSON_CreateNull());
  cJSON_AddItemToObject(
      o, "why", f.why[0] ? cJSON_CreateString(f.why) : cJSON_CreateNull());
  cJSON_AddNumberToObject(o, "allocated_bytes", allocated);
  cJSON_AddItemToObject(o, "process_bytes",
                        bytes_or_null(f.has_process, f.process_bytes));
  cJSON_AddItemToObject(
      o, "unexplained_bytes",
      bytes_or_null(f.has_process && measured, f.process_bytes > explained
                                                   ? f.process_bytes - explained
                                                   : 0));
  cJSON_AddBoolToObject(o, "counted", f.counted);
  cJSON_AddItemToObject(o, "cross_check", cross_check(&f));
  return o;
}

static bool
is_device_used(int d, const struct cmg_device_stats *s)
{
  return cmg__policy_is_device_set(d) || s->allocations || s->denials;
}

cJSON *
cmg__report_devices_json(void)
{
  cJSON *a = cJSON_CreateArray();
  for (int d = 0; d < CMG__MAX_DEVICES; d++) {
    struct cmg_device_stats s;
    struct cmg__device_history h;
    cmg__ledger_stats(d, &s);
    if (!is_device_used(d, &s) || cmg__history_device(d, &h) < 0)
      continue;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "ordinal", d);
    cJSON_AddStringToObject(o, "name", h.name);
    cJSON_AddStringToObject(o, "uuid", h.uuid);
    cJSON_AddNumberToObject(o, "physical_bytes", cmg__policy_physical(d));
    cJSON_AddItemToObject(o, "limit_bytes",
                          cmg__report_bytes(cmg__policy_is_device_set(d)
                                                ? cmg__policy_limit(d)
                                                : CMG__NO_LIMIT));
    cJSON_AddNumberToObject(o, "live_bytes", s.live_bytes);
    cJSON_AddNumberToObject(o, "peak_bytes", s.peak_bytes);
    cJSON_AddNumberToObject(o, "allocations", s.allocations);
    cJSON_AddNumberToObject(o, "frees", s.frees);
    cJSON_AddNumberToObject(o, "released", s.released);
    cJSON_AddNumberToObject(o, "denied", s.denials);
    cJSON_AddItemToObject(o, "graph_memory", graph_memory(d));
    cJSON_AddItemToObject(o, "footprint", footprint(d, s.live_bytes));
    cJSON_AddItemToArray(a, o);
    cmg__history_device_free(&h);
  }
  return a;
}

cJSON *
cmg__report_host_json(void)
{
  struct cmg_device_stats s;
  cmg__ledger_stats(CMG__HOST, &s);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToObject(o, "limit_bytes",
                        cmg__report_bytes(cmg__policy_limit(CMG__HOST)));
  cJSON_AddNumberToObject(o, "live_bytes", s.live_bytes);
  cJSON_AddNumberToObject(o, "peak_bytes", s.peak_bytes);
  cJSON_AddNumberToObject(o, "allocations", s.allocations);
  cJSON_AddNumberToObject(o, "frees", s.frees);
  cJSON_AddNumberToObject(o, "denied", s.denials);
  return o;
}

cJSON *
cmg__report_group_json(void)
{
  if (!cmg__group_active())
    return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", cmg__group_name());
  cJSON_AddNumberToObject(o, "members", cmg__group_members());
  cJSON *a = cJSON_AddArrayToObject(o, "devices");
  for (int d = 0; d < CMG__MAX_DEVICES; d++) {
    struct cmg__group_usage u;
    if (cmg__group_usage(d, &u) < 0 ||
        (u.used == 0 && u.mine == 0 && !cmg__policy_is_device_set(d)))
      continue;
    cJSON *x = cJSON_CreateObject();
    cJSON_AddItemToObject(x, "device", cmg__report_device(d));
    cJSON_AddItemToObject(x, "limit_bytes", cmg__report_bytes(u.limit));
    cJSON_AddNumberToObject(x, "used_bytes", u.used);
    cJSON_AddNumberToObject(x, "process_bytes", u.mine);
    cJSON_AddItemToArray(a, x);
  }
  return o;
}
