/*
 * The diff as JSON (diff --json, and the html page of BASE NEW): the
 * document described under JSON OUTPUT in cumemguard-report(1), each change
 * with exact counts and its stack as the summary's JSON gives one, written
 * as it is made (core/jsonw.c).
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>

#include "core/jsonw.h"

#include "reader/model/delta.h"
#include "reader/model/leak_class.h"
#include "reader/model/view.h"
#include "reader/show/diff_json.h"
#include "reader/show/summary_json.h"
#include "reader/tool.h"

static void
source_json(struct cmg__jsonw *w, const char *key, const struct cmg__view *v)
{
  cmg__jsonw_object(cmg__jsonw_key(w, key));
  if (v->n_sources > 0) {
    cmg__jsonw_member_string(w, "file", v->sources[0].file);
    cmg__jsonw_member_number(w, "pid", (double)v->sources[0].pid);
    cmg__jsonw_member_string(w, "command", v->sources[0].command);
  }
  cmg__jsonw_object_end(w);
}

static void
devices_json(struct cmg__jsonw *w, const struct cmg__view *base,
             const struct cmg__view *now)
{
  cmg__jsonw_array(cmg__jsonw_key(w, "devices"));
  for (int side = 0; side < 2; side++) {
    const struct cmg__view *v = side == 0 ? base : now;

    for (size_t i = 0; i < v->n_devices; i++) {
      int ord = v->devices[i].ordinal;
      const struct cmg__view_device *x = cmg__delta_device(base, ord);
      const struct cmg__view_device *y = cmg__delta_device(now, ord);

      if (side == 1 && x != NULL)
        continue;
      cmg__jsonw_object(w);
      cmg__jsonw_member_number(w, "ordinal", ord);
      cmg__jsonw_member_string(w, "name", (y != NULL ? y : x)->name);
      cmg__jsonw_member_uint(w, "base_live_bytes", x ? x->live_bytes : 0);
      cmg__jsonw_member_uint(w, "new_live_bytes", y ? y->live_bytes : 0);
      cmg__jsonw_member_uint(w, "base_peak_bytes", x ? x->peak_bytes : 0);
      cmg__jsonw_member_uint(w, "new_peak_bytes", y ? y->peak_bytes : 0);
      cmg__jsonw_object_end(w);
    }
  }
  cmg__jsonw_array_end(w);
}

/* BASE's and NEW's totals of a class. */
static void
class_json(struct cmg__jsonw *w, const struct cmg__view *base,
           const struct cmg__view *now, enum cmg__leak_class c,
           const char *base_key, const char *new_key)
{
  uint64_t bb, bc, nb, nc;

  cmg__leak_class_total(base, c, &bb, &bc);
  cmg__leak_class_total(now, c, &nb, &nc);
  cmg__jsonw_member_uint(w, base_key, bb);
  cmg__jsonw_member_uint(w, new_key, nb);
  if (c != CMG__LEAK_CLASS_LEAKED)
    return;
  cmg__jsonw_member_number(w, "delta_bytes", (double)nb - (double)bb);
  cmg__jsonw_member_number(w, "delta_allocations", (double)nc - (double)bc);
}

static void
change_json(struct cmg__jsonw *w, const struct cmg__view *base,
            const struct cmg__delta *c, const struct cmg__tool_opts *o)
{
  cmg__jsonw_object(w);
  cmg__jsonw_member_string(w, "api", c->api);
  cmg__jsonw_member_string(w, "kind", c->kind);
  cmg__jsonw_bool(cmg__jsonw_key(w, "device_memory"),
                  cmg__leak_class_is_device_kind(c->kind));
  if (c->device >= 0)
    cmg__jsonw_member_number(w, "device", c->device);
  else
    cmg__jsonw_null(cmg__jsonw_key(w, "device"));
  cmg__jsonw_member_uint(w, "base_count", c->base_count);
  cmg__jsonw_member_uint(w, "base_bytes", c->base_bytes);
  cmg__jsonw_member_uint(w, "new_count", c->new_count);
  cmg__jsonw_member_uint(w, "new_bytes", c->new_bytes);
  cmg__jsonw_member_number(w, "delta_count", (double)c->delta_count);
  cmg__jsonw_member_number(w, "delta_bytes", (double)c->delta_bytes);
  cmg__summary_json_stack(w, base->ix, c->stack, o);
  cmg__jsonw_object_end(w);
}

/* "changes" (held false) or "held": those --top and --min-bytes leave,
 * --top counting what grew and what shrank apart. */
static void
changes_json(struct cmg__jsonw *w, const struct cmg__view *base,
             const struct cmg__delta *c, size_t n,
             const struct cmg__tool_opts *o, bool held)
{
  size_t shown_of[3] = { 0, 0, 0 };

  cmg__jsonw_array(cmg__jsonw_key(w, held ? "held" : "changes"));
  for (size_t i = 0; i < n; i++) {
    enum cmg__delta_what what = cmg__delta_what(&c[i]);

    if (!cmg__delta_shown(&c[i], o->min_bytes) ||
        (o->top != 0 && shown_of[what] >= o->top))
      continue;
    shown_of[what]++;
    if ((what == CMG__DELTA_HELD) == held)
      change_json(w, base, &c[i], o);
  }
  cmg__jsonw_array_end(w);
}

void
cmg__diff_json_write(struct cmg__jsonw *w, const struct cmg__view *base,
                     const struct cmg__view *now, const struct cmg__delta *c,
                     size_t n, const struct cmg__tool_opts *o)
{
  cmg__jsonw_object(w);
  cmg__jsonw_member_string(w, "format", "cumemguard-report-diff");
  cmg__jsonw_member_number(w, "version", 1);
  source_json(w, "base", base);
  source_json(w, "new", now);
  devices_json(w, base, now);
  class_json(w, base, now, CMG__LEAK_CLASS_LEAKED, "base_leaked_bytes",
             "new_leaked_bytes");
  class_json(w, base, now, CMG__LEAK_CLASS_GRAPH, "base_graph_bytes",
             "new_graph_bytes");
  class_json(w, base, now, CMG__LEAK_CLASS_CONTEXT, "base_context_bytes",
             "new_context_bytes");
  changes_json(w, base, c, n, o, false);
  changes_json(w, base, c, n, o, true);
  cmg__jsonw_object_end(w);
}
