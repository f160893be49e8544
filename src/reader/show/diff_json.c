/*
 * The diff as JSON (diff --json, and the html page of BASE NEW): the
 * document described under JSON OUTPUT in cumemguard-report(1), each change
 * with exact counts and its stack as the summary's JSON gives one.
 */
#include "config.h"

#include <cjson/cJSON.h>

#include "reader/model/delta.h"
#include "reader/model/leak_class.h"
#include "reader/model/view.h"
#include "reader/show/diff_json.h"
#include "reader/show/summary_json.h"
#include "reader/tool.h"

static cJSON *
source_json(const struct cmg__view *v)
{
  cJSON *o = cJSON_CreateObject();

  if (v->n_sources > 0) {
    cJSON_AddStringToObject(o, "file", v->sources[0].file);
    cJSON_AddNumberToObject(o, "pid", (double)v->sources[0].pid);
    cJSON_AddStringToObject(o, "command", v->sources[0].command);
  }
  return o;
}

static cJSON *
devices_json(const struct cmg__view *base, const struct cmg__view *now)
{
  cJSON *a = cJSON_CreateArray();

  for (int side = 0; side < 2; side++) {
    const struct cmg__view *v = side == 0 ? base : now;

    for (size_t i = 0; i < v->n_devices; i++) {
      int ord = v->devices[i].ordinal;
      const struct cmg__view_device *x = cmg__delta_device(base, ord);
      const struct cmg__view_device *y = cmg__delta_device(now, ord);

      if (side == 1 && x != NULL)
        continue;
      cJSON *o = cJSON_CreateObject();
      cJSON_AddNumberToObject(o, "ordinal", ord);
      cJSON_AddStringToObject(o, "name", (y != NULL ? y : x)->name);
      cJSON_AddNumberToObject(o, "base_live_bytes",
                              x ? (double)x->live_bytes : 0);
      cJSON_AddNumberToObject(o, "new_live_bytes",
                              y ? (double)y->live_bytes : 0);
      cJSON_AddNumberToObject(o, "base_peak_bytes",
                              x ? (double)x->peak_bytes : 0);
      cJSON_AddNumberToObject(o, "new_peak_bytes",
                              y ? (double)y->peak_bytes : 0);
      cJSON_AddItemToArray(a, o);
    }
  }
  return a;
}

void *
cmg__diff_json_of(const struct cmg__view *base, const struct cmg__view *now,
                  const struct cmg__delta *c, size_t n,
                  const struct cmg__tool_opts *o)
{
  cJSON *d = cJSON_CreateObject(), *a = cJSON_CreateArray();
  cJSON *held = cJSON_CreateArray();
  uint64_t bb, bc, nb, nc;
  size_t shown_of[3] = { 0, 0, 0 };

  cmg__leak_class_total(base, CMG__LEAK_CLASS_LEAKED, &bb, &bc);
  cmg__leak_class_total(now, CMG__LEAK_CLASS_LEAKED, &nb, &nc);
  cJSON_AddStringToObject(d, "format", "cumemguard-report-diff");
  cJSON_AddNumberToObject(d, "version", 1);
  cJSON_AddItemToObject(d, "base", source_json(base));
  cJSON_AddItemToObject(d, "new", source_json(now));
  cJSON_AddItemToObject(d, "devices", devices_json(base, now));
  cJSON_AddNumberToObject(d, "base_leaked_bytes", (double)bb);
  cJSON_AddNumberToObject(d, "new_leaked_bytes", (double)nb);
  cJSON_AddNumberToObject(d, "delta_bytes", (double)nb - (double)bb);
  cJSON_AddNumberToObject(d, "delta_allocations", (double)nc - (double)bc);
  cmg__leak_class_total(base, CMG__LEAK_CLASS_GRAPH, &bb, &bc);
  cmg__leak_class_total(now, CMG__LEAK_CLASS_GRAPH, &nb, &nc);
  cJSON_AddNumberToObject(d, "base_graph_bytes", (double)bb);
  cJSON_AddNumberToObject(d, "new_graph_bytes", (double)nb);
  cmg__leak_class_total(base, CMG__LEAK_CLASS_CONTEXT, &bb, &bc);
  cmg__leak_class_total(now, CMG__LEAK_CLASS_CONTEXT, &nb, &nc);
  cJSON_AddNumberToObject(d, "base_context_bytes", (double)bb);
  cJSON_AddNumberToObject(d, "new_context_bytes", (double)nb);
  for (size_t i = 0; i < n; i++) {
    enum cmg__delta_what w = cmg__delta_what(&c[i]);

    if (!cmg__delta_shown(&c[i], o->min_bytes) ||
        (o->top != 0 && shown_of[w] >= o->top))
      continue;
    shown_of[w]++;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "api", c[i].api);
    cJSON_AddStringToObject(e, "kind", c[i].kind);
    cJSON_AddBoolToObject(e, "device_memory",
                          cmg__leak_class_is_device_kind(c[i].kind));
    if (c[i].device >= 0)
      cJSON_AddNumberToObject(e, "device", c[i].device);
    else
      cJSON_AddNullToObject(e, "device");
    cJSON_AddNumberToObject(e, "base_count", (double)c[i].base_count);
    cJSON_AddNumberToObject(e, "base_bytes", (double)c[i].base_bytes);
    cJSON_AddNumberToObject(e, "new_count", (double)c[i].new_count);
    cJSON_AddNumberToObject(e, "new_bytes", (double)c[i].new_bytes);
    cJSON_AddNumberToObject(e, "delta_count", (double)c[i].delta_count);
    cJSON_AddNumberToObject(e, "delta_bytes", (double)c[i].delta_bytes);
    cmg__summary_json_stack(e, base->ix, c[i].stack, o);
    cJSON_AddItemToArray(w == CMG__DELTA_HELD ? held : a, e);
  }
  cJSON_AddItemToObject(d, "changes", a);
  cJSON_AddItemToObject(d, "held", held);
  return d;
}
