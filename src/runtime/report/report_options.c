/*
 * The report's "options": the option string as given and every option as
 * the process applied it, the framework pool switches with who set them,
 * and whether the process failed closed (docs/report-format.md).
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>

#include "core/base.h"
#include "core/conf.h"
#include "core/conf_gpu.h"
#include "core/conf_report.h"
#include "core/jsonw.h"
#include "core/pools.h"
#include "runtime/limits/policy.h"
#include "runtime/report/report.h"
#include "runtime/report/report_options.h"
#include "runtime/report/report_text.h"

#define KEY(name) cmg__jsonw_key(w, name)

void
cmg__report_bytes(struct cmg__jsonw *w, uint64_t v)
{
  if (v == CMG__NO_LIMIT)
    cmg__jsonw_null(w);
  else
    cmg__jsonw_uint(w, v);
}

static void
limit(struct cmg__jsonw *w, const struct cmg__limit *l)
{
  if (l->kind == CMG__LIMIT_NONE) {
    cmg__jsonw_null(w);
    return;
  }
  cmg__jsonw_object(w);
  if (l->kind == CMG__LIMIT_BYTES)
    cmg__jsonw_uint(KEY("bytes"), l->bytes);
  else
    cmg__jsonw_number(KEY("percent"), l->ppm / 10000.0);
  cmg__jsonw_object_end(w);
}

/* A limit per device, keyed by ordinal. */
static void
limits(struct cmg__jsonw *w, const struct cmg__limit dev[CMG__MAX_DEVICES])
{
  cmg__jsonw_object(w);
  for (int i = 0; i < CMG__MAX_DEVICES; i++) {
    if (dev[i].kind == CMG__LIMIT_NONE)
      continue;
    char key[8];
    snprintf(key, sizeof(key), "%d", i);
    limit(KEY(key), &dev[i]);
  }
  cmg__jsonw_object_end(w);
}

/* What the options set for each GPU named by its UUID, in the order the
 * options named them: the limits that come before an ordinal's. */
static void
gpu_limits(struct cmg__jsonw *w, const struct cmg__config *c)
{
  cmg__jsonw_object(w);
  for (unsigned k = 0; k < c->n_gpu; k++) {
    const struct cmg__gpu_limits *g = &c->gpu[k];
    char key[CMG__UUID_TEXT];
    cmg__uuid_format(g->uuid, key);
    cmg__jsonw_object(KEY(key));
    limit(KEY("limit"), &g->limit);
    limit(KEY("soft_limit"), &g->soft_limit);
    limit(KEY("group_limit"), &g->group_limit);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_object_end(w);
}

/* Each framework switch with its value at start-up and who set it, so a
 * reader can tell a pool block from a tensor (docs/report-format.md). */
static void
pool_switches(struct cmg__jsonw *w, const struct cmg__pools *pools)
{
  cmg__jsonw_array(w);
  for (size_t i = 0; pools != NULL && pools->is_read && i < CMG__POOLS_N; i++) {
    const struct cmg__pools_seen *s = &pools->seen[i];
    cmg__jsonw_object(w);
    cmg__jsonw_string(KEY("name"), cmg__pools_switches[i].name);
    if (s->is_set)
      cmg__text_string(KEY("value"), s->value);
    else
      cmg__jsonw_null(KEY("value"));
    cmg__jsonw_string_or_null(KEY("set_by"), !s->is_set ? NULL
                                             : s->by_us ? "cumemguard"
                                                        : "user");
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

/* How the process handles a denial, and its other limits. */
static void
on_exceed(struct cmg__jsonw *w, const struct cmg__config *c)
{
  static const char *const names[] = { "fail", "warn", "wait" };
  cmg__jsonw_string(KEY("on_exceed"), names[c->on_exceed]);
  cmg__jsonw_number(KEY("wait_timeout"), c->wait_timeout_ns / 1e9);
  limit(KEY("soft_limit"), &c->soft_limit);
  limits(KEY("soft_limits"), c->soft_limit_dev);
  cmg__report_bytes(KEY("max_alloc"), c->max_alloc);
  cmg__report_bytes(KEY("host_limit"), c->host_limit);
}

void
cmg__report_options(struct cmg__jsonw *w, const struct cmg__process *p)
{
  static const char *const stack_mode[] = { "auto", "fp", "dwarf" };
  const struct cmg__config *c = p->cfg;
  cmg__jsonw_object(w);
  if (p->options)
    cmg__text_string(KEY("string"), p->options);
  else
    cmg__jsonw_null(KEY("string"));
  limit(KEY("limit"), &c->limit);
  limits(KEY("limits"), c->limit_dev);
  gpu_limits(KEY("gpu_limits"), c);
  cmg__text_string(KEY("report"), c->report);
  cmg__jsonw_number(KEY("stack_depth"), c->stack_depth);
  cmg__jsonw_string(KEY("stack_mode"), stack_mode[c->stack_mode]);
  cmg__jsonw_bool(KEY("python_frames"), c->python_frames);
  cmg__jsonw_bool(KEY("signal_report"), c->signal_report);
  cmg__jsonw_number(KEY("snapshot"), c->snapshot_ns / 1e9);
  cmg__jsonw_bool(KEY("count_context"), c->count_context);
  cmg__jsonw_string_or_null(KEY("dump_signal"),
                            cmg__signal_name(c->dump_signal));
  if (c->leak_exitcode)
    cmg__jsonw_number(KEY("leak_exitcode"), c->leak_exitcode);
  else
    cmg__jsonw_null(KEY("leak_exitcode"));
  on_exceed(w, c);
  cmg__jsonw_bool(KEY("failed_closed"), cmg__policy_is_failed_closed());
  cmg__jsonw_bool(KEY("no_pools"), c->no_pools);
  cmg__jsonw_bool(KEY("timeline"), c->timeline);
  pool_switches(KEY("pool_switches"), p->pools);
  cmg__jsonw_object_end(w);
}
