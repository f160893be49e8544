/*
 * The report's "devices", "host" and "group" members: what the ledger,
 * the policy and the group segment say of each device as the report is
 * written (docs/report-format.md).
 */
#include "config.h"

#include <stdbool.h>

#include "core/base.h"
#include "core/jsonw.h"
#include "runtime/group/group.h"
#include "runtime/ledger/driver_held.h"
#include "runtime/ledger/history.h"
#include "runtime/ledger/ledger.h"
#include "runtime/limits/policy.h"
#include "runtime/report/report_devices.h"
#include "runtime/report/report_options.h"

/* Shorthands for a member and its value. */
#define KEY(name) cmg__jsonw_key(w, name)

bool
cmg__is_report_device(int device)
{
  return device >= 0 && device < CMG__MAX_DEVICES;
}

void
cmg__report_device(struct cmg__jsonw *w, int device)
{
  if (cmg__is_report_device(device))
    cmg__jsonw_uint(w, (uint64_t)device);
  else
    cmg__jsonw_null(w);
}

/* null for a device whose graph memory pool was never used. */
static void
graph_memory(struct cmg__jsonw *w, int device)
{
  struct cmg__graphmem g;
  if (cmg__graphmem_get(device, &g) < 0) {
    cmg__jsonw_null(w);
    return;
  }
  cmg__jsonw_object(w);
  cmg__jsonw_uint(KEY("reserved_bytes"), g.reserved);
  cmg__jsonw_uint(KEY("reserved_high_bytes"), g.reserved_high);
  cmg__jsonw_uint(KEY("used_bytes"), g.used);
  cmg__jsonw_uint(KEY("used_high_bytes"), g.used_high);
  cmg__jsonw_string(KEY("source"), g.from_driver ? "driver" : "estimate");
  cmg__jsonw_uint(KEY("launches"), g.launches);
  cmg__jsonw_uint(KEY("uploads"), g.uploads);
  cmg__jsonw_uint(KEY("trims"), g.trims);
  cmg__jsonw_uint(KEY("denied"), g.denied);
  cmg__jsonw_object_end(w);
}

static void
bytes_or_null(struct cmg__jsonw *w, bool known, uint64_t bytes)
{
  if (known)
    cmg__jsonw_uint(w, bytes);
  else
    cmg__jsonw_null(w);
}

/* footprint.cross_check: NVML's and the driver's figures for the contexts
 * both measured, or null where none was. */
static void
cross_check(struct cmg__jsonw *w, const struct cmg__footprint *f)
{
  if (f->checked == 0) {
    cmg__jsonw_null(w);
    return;
  }
  cmg__jsonw_object(w);
  cmg__jsonw_uint(KEY("contexts"), f->checked);
  cmg__jsonw_number(KEY("nvml_bytes"), (double)f->checked_nvml);
  cmg__jsonw_number(KEY("driver_bytes"), (double)f->checked_driver);
  cmg__jsonw_object_end(w);
}

/* What the process takes on the card: its allocations (live_bytes less the
 * contexts it counts), its contexts and modules, and what NVML says of the
 * whole; null for a device none of whose contexts was seen. */
static void
footprint(struct cmg__jsonw *w, int device, uint64_t live)
{
  struct cmg__footprint f;
  if (cmg__footprint_get(device, &f) < 0) {
    cmg__jsonw_null(w);
    return;
  }
  static const char *const sources[] = { NULL, "nvml", "driver" };
  bool measured = f.source != CMG__FOOTPRINT_NONE;
  uint64_t counted = f.counted ? f.context_bytes : 0;
  uint64_t allocated = live > counted ? live - counted : 0;
  uint64_t explained = allocated + (measured ? f.context_bytes : 0);
  cmg__jsonw_object(w);
  cmg__jsonw_uint(KEY("contexts"), f.contexts);
  bytes_or_null(KEY("context_bytes"), measured, f.context_bytes);
  cmg__jsonw_string_or_null(KEY("source"), measured ? sources[f.source] : NULL);
  cmg__jsonw_string_or_null(KEY("why"), f.why[0] ? f.why : NULL);
  cmg__jsonw_uint(KEY("allocated_bytes"), allocated);
  bytes_or_null(KEY("process_bytes"), f.has_process, f.process_bytes);
  bytes_or_null(KEY("unexplained_bytes"), f.has_process && measured,
                f.process_bytes > explained ? f.process_bytes - explained : 0);
  cmg__jsonw_bool(KEY("counted"), f.counted);
  cross_check(KEY("cross_check"), &f);
  cmg__jsonw_object_end(w);
}

static bool
is_device_used(int d, const struct cmg_device_stats *s)
{
  return cmg__policy_is_device_set(d) || s->allocations || s->denials;
}

static void
device(struct cmg__jsonw *w, int d, const struct cmg_device_stats *s,
       const struct cmg__device_history *h)
{
  cmg__jsonw_object(w);
  cmg__jsonw_uint(KEY("ordinal"), (uint64_t)d);
  cmg__jsonw_string(KEY("name"), h->name);
  cmg__jsonw_string(KEY("uuid"), h->uuid);
  cmg__jsonw_uint(KEY("physical_bytes"), cmg__policy_physical(d));
  cmg__report_bytes(KEY("limit_bytes"), cmg__policy_is_device_set(d)
                                            ? cmg__policy_limit(d)
                                            : CMG__NO_LIMIT);
  cmg__jsonw_uint(KEY("live_bytes"), s->live_bytes);
  cmg__jsonw_uint(KEY("peak_bytes"), s->peak_bytes);
  cmg__jsonw_uint(KEY("allocations"), s->allocations);
  cmg__jsonw_uint(KEY("frees"), s->frees);
  cmg__jsonw_uint(KEY("released"), s->released);
  cmg__jsonw_uint(KEY("denied"), s->denials);
  graph_memory(KEY("graph_memory"), d);
  footprint(KEY("footprint"), d, s->live_bytes);
  cmg__jsonw_object_end(w);
}

void
cmg__report_devices(struct cmg__jsonw *w)
{
  cmg__jsonw_array(w);
  for (int d = 0; d < CMG__MAX_DEVICES; d++) {
    struct cmg_device_stats s;
    struct cmg__device_history h;
    cmg__ledger_stats(d, &s);
    if (!is_device_used(d, &s) || cmg__history_device(d, &h) < 0)
      continue;
    device(w, d, &s, &h);
    cmg__history_device_free(&h);
  }
  cmg__jsonw_array_end(w);
}

void
cmg__report_host(struct cmg__jsonw *w)
{
  struct cmg_device_stats s;
  cmg__ledger_stats(CMG__HOST, &s);
  cmg__jsonw_object(w);
  cmg__report_bytes(KEY("limit_bytes"), cmg__policy_limit(CMG__HOST));
  cmg__jsonw_uint(KEY("live_bytes"), s.live_bytes);
  cmg__jsonw_uint(KEY("peak_bytes"), s.peak_bytes);
  cmg__jsonw_uint(KEY("allocations"), s.allocations);
  cmg__jsonw_uint(KEY("frees"), s.frees);
  cmg__jsonw_uint(KEY("denied"), s.denials);
  cmg__jsonw_object_end(w);
}

void
cmg__report_group(struct cmg__jsonw *w)
{
  if (!cmg__group_active()) {
    cmg__jsonw_null(w);
    return;
  }
  cmg__jsonw_object(w);
  cmg__jsonw_string(KEY("name"), cmg__group_name());
  cmg__jsonw_uint(KEY("members"), (uint64_t)cmg__group_members());
  cmg__jsonw_array(KEY("devices"));
  for (int d = 0; d < CMG__MAX_DEVICES; d++) {
    struct cmg__group_usage u;
    if (cmg__group_usage(d, &u) < 0 ||
        (u.used == 0 && u.mine == 0 && !cmg__policy_is_device_set(d)))
      continue;
    cmg__jsonw_object(w);
    cmg__report_device(KEY("device"), d);
    cmg__report_bytes(KEY("limit_bytes"), u.limit);
    cmg__jsonw_uint(KEY("used_bytes"), u.used);
    cmg__jsonw_uint(KEY("process_bytes"), u.mine);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
  cmg__jsonw_object_end(w);
}
