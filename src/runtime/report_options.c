/*
 * The report's "options": the option string as given and every option as
 * the process applied it, the framework pool switches with who set them,
 * and whether the process failed closed (docs/report-format.md).
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

#include "core/base.h"
#include "core/conf.h"
#include "core/conf_report.h"
#include "runtime/policy.h"
#include "core/pools.h"
#include "runtime/report.h"
#include "runtime/report_options.h"
#include "core/size.h"
#include "runtime/text.h"

cJSON *
cmg__report_bytes(uint64_t v)
{
  return v == CMG__NO_LIMIT ? cJSON_CreateNull() : cJSON_CreateNumber(v);
}

static cJSON *
limit_json(const struct cmg__limit *l)
{
  if (l->kind == CMG__LIMIT_NONE)
    return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  if (l->kind == CMG__LIMIT_BYTES)
    cJSON_AddNumberToObject(o, "bytes", l->bytes);
  else
    cJSON_AddNumberToObject(o, "percent", l->ppm / 10000.0);
  return o;
}

/* Each framework switch with its value at start-up and who set it, so a
 * reader can tell a pool block from a tensor (docs/report-format.md). */
static cJSON *
pool_switches_json(const struct cmg__pools *pools)
{
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; pools != NULL && pools->is_read && i < CMG__POOLS_N; i++) {
    const struct cmg__pools_seen *s = &pools->seen[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", cmg__pools_switches[i].name);
    cJSON_AddItemToObject(
        o, "value", s->is_set ? cmg__text_json(s->value) : cJSON_CreateNull());
    const char *who = !s->is_set ? NULL : s->by_us ? "cumemguard" : "user";
    cJSON_AddItemToObject(o, "set_by",
                          who ? cJSON_CreateString(who) : cJSON_CreateNull());
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

cJSON *
cmg__report_options_json(const struct cmg__process *p)
{
  const struct cmg__config *c = p->cfg;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToObject(o, "string",
                        p->options ? cmg__text_json(p->options)
                                   : cJSON_CreateNull());
  cJSON_AddItemToObject(o, "limit", limit_json(&c->limit));
  cJSON *per = cJSON_AddObjectToObject(o, "limits");
  for (int i = 0; i < CMG__MAX_DEVICES; i++) {
    if (c->limit_dev[i].kind == CMG__LIMIT_NONE)
      continue;
    char key[8];
    snprintf(key, sizeof(key), "%d", i);
    cJSON_AddItemToObject(per, key, limit_json(&c->limit_dev[i]));
  }
  cJSON_AddItemToObject(o, "report", cmg__text_json(c->report));
  cJSON_AddNumberToObject(o, "stack_depth", c->stack_depth);
  static const char *const stack_mode[] = { "auto", "fp", "dwarf" };
  cJSON_AddStringToObject(o, "stack_mode", stack_mode[c->stack_mode]);
  cJSON_AddBoolToObject(o, "python_frames", c->python_frames);
  cJSON_AddBoolToObject(o, "signal_report", c->signal_report);
  cJSON_AddNumberToObject(o, "snapshot", c->snapshot_ns / 1e9);
  cJSON_AddBoolToObject(o, "count_context", c->count_context);
  const char *sig = cmg__signal_name(c->dump_signal);
  cJSON_AddItemToObject(o, "dump_signal",
                        sig ? cJSON_CreateString(sig) : cJSON_CreateNull());
  cJSON_AddItemToObject(o, "leak_exitcode",
                        c->leak_exitcode ? cJSON_CreateNumber(c->leak_exitcode)
                                         : cJSON_CreateNull());
  static const char *const on_exceed[] = { "fail", "warn", "wait" };
  cJSON_AddStringToObject(o, "on_exceed", on_exceed[c->on_exceed]);
  cJSON_AddNumberToObject(o, "wait_timeout", c->wait_timeout_ns / 1e9);
  cJSON_AddItemToObject(o, "soft_limit", limit_json(&c->soft_limit));
  per = cJSON_AddObjectToObject(o, "soft_limits");
  for (int i = 0; i < CMG__MAX_DEVICES; i++) {
    if (c->soft_limit_dev[i].kind == CMG__LIMIT_NONE)
      continue;
    char key[8];
    snprintf(key, sizeof(key), "%d", i);
    cJSON_AddItemToObject(per, key, limit_json(&c->soft_limit_dev[i]));
  }
  cJSON_AddItemToObject(o, "max_alloc", cmg__report_bytes(c->max_alloc));
  cJSON_AddItemToObject(o, "host_limit", cmg__report_bytes(c->host_limit));
  cJSON_AddBoolToObject(o, "failed_closed", cmg__policy_is_failed_closed());
  cJSON_AddBoolToObject(o, "no_pools", c->no_pools);
  cJSON_AddBoolToObject(o, "timeline", c->timeline);
  cJSON_AddItemToObject(o, "pool_switches", pool_switches_json(p->pools));
  return o;
}
