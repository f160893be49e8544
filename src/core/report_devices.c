/*
 * The report's "devices", "host" and "group" members: what the ledger,
 * the policy and the group segment say of each device as the report is
 * written (docs/report-format.md).
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "core/base.h"
#include "core/group.h"
#include "core/history.h"
#include "core/ledger.h"
#include "core/policy.h"
#include "core/report_devices.h"
#include "core/report_options.h"

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
