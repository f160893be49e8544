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

/* Members, key and value. */
static void
number(struct cmg__jsonw *w, const char *key, double d)
{
  cmg__jsonw_number(cmg__jsonw_key(w, key), d);
}

static void
count(struct cmg__jsonw *w, const char *key, uint64_t n)
{
  cmg__jsonw_uint(cmg__jsonw_key(w, key), n);
}

static void
string(struct cmg__jsonw *w, const char *key, const char *s)
{
  cmg__jsonw_string(cmg__jsonw_key(w, key), s);
}

static void
source_json(struct cmg__jsonw *w, const char *key, const struct cmg__view *v)
{
  cmg__jsonw_object(cmg__jsonw_key(w, key));
  if (v->n_sources > 0) {
    string(w, "file", v->sources[0].file);
    number(w, "pid", (double)v->sources[0].pid);
    string(w, "command", v->sources[0].command);
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
      number(w, "ordinal", ord);
      string(w, "name", (y != NULL ? y : x)->name);
      count(w, "base_live_bytes", x ? x->live_bytes : 0);
      count(w, "new_live_bytes", y ? y->live_bytes : 0);
      count(w, "base_peak_bytes", x ? x->peak_bytes : 0);
      count(w, "new_peak_bytes", y ? y->peak_bytes : 0);
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
  count(w, base_key, bb);
  count(w, new_key, nb);
  if (c != CMG__LEAK_CLASS_LEAKED)
    return;
  number(w, "delta_bytes", (double)nb - (double)bb);
  number(w, "delta_allocations", (double)nc - (double)bc);
}

static void
change_json(struct cmg__jsonw *w, const struct cmg__view *base,
            const struct cmg__delta *c, const struct cmg__tool_opts *o)
{
  cmg__jsonw_object(w);
  string(w, "api", c->api);
  string(w, "kind", c->kind);
  cmg__jsonw_bool(cmg__jsonw_key(w, "device_memory"),
                  cmg__leak_class_is_device_kind(c->kind));
  if (c->device >= 0)
    number(w, "device", c->device);
  else
    cmg__jsonw_null(cmg__jsonw_key(w, "device"));
  count(w, "base_count", c->base_count);
  count(w, "base_bytes", c->base_bytes);
  count(w, "new_count", c->new_count);
  count(w, "new_bytes", c->new_bytes);
  number(w, "delta_count", (double)c->delta_count);
  number(w, "delta_bytes", (double)c->delta_bytes);
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
  string(w, "format", "cumemguard-report-diff");
  number(w, "version", 1);
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
