/*
 * The summary as JSON (--json of summary and merge), and the frames of a
 * stack as JSON, which diff uses too: the document described under JSON
 * OUTPUT in cumemguard-report(1).  Everything the text shows is here with
 * exact numbers and every frame, hidden or not, so that a machine never has
 * to parse the text.  Sizes are written as JSON numbers, exact below 2^53,
 * which is as far as the reports themselves go.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reader/load/model.h"
#include "reader/model/index.h"
#include "reader/model/leak_class.h"
#include "reader/model/pool_blocks.h"
#include "reader/model/supp.h"
#include "reader/model/view.h"
#include "reader/show/group_text.h"
#include "reader/show/one_line.h"
#include "reader/show/summary_json.h"
#include "reader/tool.h"

static cJSON *
string_or_null(const char *s)
{
  return s != NULL ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *
hex(uint64_t v)
{
  char buf[24];

  snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
  return cJSON_CreateString(buf);
}

void *
cmg__summary_json_frames(const struct cmg__index *ix, uint32_t stack)
{
  cJSON *a = cJSON_CreateArray();

  if (stack == CMG__TOOL_NONE)
    return a;
  for (uint32_t k = 0; k < ix->stacks[stack].n; k++) {
    const struct cmg__index_stack *s = &ix->stacks[stack];
    const struct cmg__index_frame *fr = &ix->frames[s->frames[k]];
    const struct cmg__index_module *m =
        fr->module != CMG__TOOL_NONE ? &ix->modules[fr->module] : NULL;
    cJSON *o = cJSON_CreateObject();

    cJSON_AddItemToObject(o, "function", string_or_null(fr->function));
    cJSON_AddItemToObject(o, "function_offset",
                          fr->has_function_offset
                              ? cJSON_CreateNumber((double)fr->function_offset)
                              : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "module", string_or_null(m ? m->name : NULL));
    cJSON_AddItemToObject(o, "path", string_or_null(m ? m->path : NULL));
    cJSON_AddItemToObject(o, "build_id",
                          string_or_null(m ? m->build_id : NULL));
    cJSON_AddItemToObject(
        o, "offset", fr->has_offset ? hex(fr->offset) : cJSON_CreateNull());
    if (fr->python)
      cJSON_AddStringToObject(o, "lang", "python");
    if (fr->python || fr->file != NULL) {
      cJSON_AddItemToObject(o, "file", string_or_null(fr->file));
      cJSON_AddItemToObject(o, "line",
                            fr->line > 0 ? cJSON_CreateNumber((double)fr->line)
                                         : cJSON_CreateNull());
    }
    if (fr->name != NULL)
      cJSON_AddStringToObject(o, "name", fr->name);
    if (fr->inlined)
      cJSON_AddBoolToObject(o, "inlined", true);
    if (fr->cut != 0) /* frames the capture left out here; null: unknown */
      cJSON_AddItemToObject(o, "cut",
                            fr->cut != CMG__MODEL_CUT_UNKNOWN
                                ? cJSON_CreateNumber((double)fr->cut)
                                : cJSON_CreateNull());
    cJSON_AddBoolToObject(o, "hidden", k < s->lo || k >= s->hi);
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

/* The stack as the text summary shows it: its title, its one-line view
 * (the line of a peak, a denial, a diff) and its folded lines, for readers that show what the summary shows (the html page). */
static void
add_text(cJSON *o, const struct cmg__index *ix, uint32_t stack)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);

  if (f == NULL)
    return;
  bool titled = cmg__one_line_title(f, "", ix, stack);
  fflush(f);
  cJSON_AddItemToObject(o, "title",
                        titled ? cJSON_CreateString(buf) : cJSON_CreateNull());
  char *line = cmg__one_line_text(ix, stack, false);
  cJSON_AddItemToObject(
      o, "line", line != NULL ? cJSON_CreateString(line) : cJSON_CreateNull());
  free(line);
  rewind(f);
  cmg__group_text_frames(f, ix, stack, false);
  fputc('\0', f);
  fclose(f);
  cJSON *lines = cJSON_AddArrayToObject(o, "lines");
  for (char *p = buf, *nl; p != NULL && *p != '\0'; p = nl + 1) {
    nl = strchr(p, '\n');
    if (nl == NULL)
      nl = p + strlen(p) - 1;
    else
      *nl = '\0';
    cJSON_AddItemToArray(lines, cJSON_CreateString(p + strspn(p, " ")));
  }
  free(buf);
}

void
cmg__summary_json_stack(void *obj, const struct cmg__index *ix, uint32_t stack,
                        const struct cmg__tool_opts *o)
{
  cJSON_AddItemToObject(obj, "frames", cmg__summary_json_frames(ix, stack));
  if (o->stack_text)
    add_text(obj, ix, stack);
}

/* The threads of a leak group: a name says which thread made memory whose
 * stack shows no Python (PyTorch's autograd threads). */
static cJSON *
threads_json(const struct cmg__model_threads *t)
{
  cJSON *a = cJSON_CreateArray();

  for (size_t i = 0; i < t->n; i++) {
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "source", t->list[i].source);
    cJSON_AddNumberToObject(o, "tid", t->list[i].tid);
    cJSON_AddItemToObject(o, "name", string_or_null(t->list[i].name));
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

/* A leak group, or a graph memory pool's or a context's group. */
static cJSON *
group_json(const struct cmg__view *v, const struct cmg__view_leak *l,
           const struct cmg__tool_opts *o)
{
  cJSON *e = cJSON_CreateObject();

  cJSON_AddStringToObject(e, "api", l->api);
  cJSON_AddStringToObject(e, "kind", l->kind);
  cJSON_AddBoolToObject(e, "device_memory",
                        cmg__leak_class_is_device_kind(l->kind));
  if (l->device != CMG__TOOL_NONE)
    cJSON_AddNumberToObject(e, "device", v->devices[l->device].ordinal);
  else
    cJSON_AddNullToObject(e, "device");
  cJSON_AddNumberToObject(e, "count", (double)l->count);
  cJSON_AddNumberToObject(e, "bytes", (double)l->bytes);
  cJSON_AddBoolToObject(e, "truncated",
                        l->stack != CMG__TOOL_NONE &&
                            v->ix->stacks[l->stack].truncated);
  cJSON_AddItemToObject(e, "pool", string_or_null(l->pool));
  cJSON_AddItemToObject(e, "held_by", string_or_null(l->held));
  cJSON_AddItemToObject(e, "threads", threads_json(&l->threads));
  cmg__summary_json_stack(e, v->ix, l->stack, o);
  return e;
}

/* devices[].graph_memory as the report has it, summed over processes;
 * null where no report had one. */
static cJSON *
graph_memory_json(const struct cmg__model_graphmem *g)
{
  cJSON *o;

  if (!g->present)
    return cJSON_CreateNull();
  o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "reserved_bytes", (double)g->reserved_bytes);
  cJSON_AddNumberToObject(o, "reserved_high_bytes",
                          (double)g->reserved_high_bytes);
  cJSON_AddNumberToObject(o, "used_bytes", (double)g->used_bytes);
  cJSON_AddNumberToObject(o, "used_high_bytes", (double)g->used_high_bytes);
  cJSON_AddStringToObject(o, "source", g->estimate ? "estimate" : "driver");
  cJSON_AddNumberToObject(o, "launches", (double)g->launches);
  cJSON_AddNumberToObject(o, "uploads", (double)g->uploads);
  cJSON_AddNumberToObject(o, "trims", (double)g->trims);
  cJSON_AddNumberToObject(o, "denied", (double)g->denied);
  return o;
}

static cJSON *
count_or_null(bool has, uint64_t n)
{
  return has ? cJSON_CreateNumber((double)n) : cJSON_CreateNull();
}

/* footprint.cross_check as the report has it, summed. */
static cJSON *
cross_check_json(const struct cmg__model_footprint *fp)
{
  if (fp->checked == 0)
    return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "contexts", (double)fp->checked);
  cJSON_AddNumberToObject(o, "nvml_bytes", (double)fp->checked_nvml);
  cJSON_AddNumberToObject(o, "driver_bytes", (double)fp->checked_driver);
  return o;
}

/* devices[].footprint as the report has it, summed over the processes
 * whose report has one (processes: how many); null where none had one. */
static cJSON *
footprint_json(const struct cmg__view_device *d)
{
  static const char *const sources[] = {
    [CMG__MODEL_FP_NVML] = "nvml",
    [CMG__MODEL_FP_DRIVER] = "driver",
  };
  const struct cmg__model_footprint *fp = &d->footprint;
  cJSON *o;

  if (!fp->present)
    return cJSON_CreateNull();
  o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "contexts", (double)fp->contexts);
  cJSON_AddItemToObject(
      o, "context_bytes",
      count_or_null(fp->has_context_bytes, fp->context_bytes));
  cJSON_AddItemToObject(o, "source", string_or_null(sources[fp->source]));
  cJSON_AddItemToObject(o, "why", string_or_null(fp->why));
  cJSON_AddNumberToObject(o, "allocated_bytes", (double)fp->allocated_bytes);
  cJSON_AddItemToObject(
      o, "process_bytes",
      count_or_null(fp->has_process_bytes, fp->process_bytes));
  cJSON_AddItemToObject(
      o, "unexplained_bytes",
      count_or_null(fp->has_unexplained_bytes, fp->unexplained_bytes));
  cJSON_AddBoolToObject(o, "counted", fp->counted);
  cJSON_AddItemToObject(o, "cross_check", cross_check_json(fp));
  cJSON_AddNumberToObject(o, "processes", d->footprints);
  return o;
}

static cJSON *
sources_json(const struct cmg__view *v)
{
  cJSON *a = cJSON_CreateArray();

  for (size_t i = 0; i < v->n_sources; i++) {
    const struct cmg__view_source *s = &v->sources[i];
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "file", s->file);
    cJSON_AddNumberToObject(o, "pid", (double)s->pid);
    cJSON_AddStringToObject(o, "exe", s->exe);
    cJSON_AddStringToObject(o, "command", s->command);
    cJSON_AddStringToObject(o, "hostname", s->hostname);
    cJSON_AddStringToObject(o, "reason", s->reason);
    cJSON_AddItemToObject(o, "exit_status",
                          s->exit_status >= 0
                              ? cJSON_CreateNumber(s->exit_status)
                              : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "killed_by",
                          s->killed_by != NULL
                              ? cJSON_CreateString(s->killed_by)
                              : cJSON_CreateNull());
    cJSON_AddNumberToObject(o, "start_time", s->start_time);
    cJSON_AddNumberToObject(o, "end_time", s->end_time);
    cJSON_AddNumberToObject(o, "live_bytes", (double)s->live_bytes);
    cJSON_AddNumberToObject(o, "live_allocations", (double)s->live_allocations);
    cJSON_AddNumberToObject(o, "untracked_frees", (double)s->untracked_frees);
    cJSON_AddNumberToObject(o, "denials", (double)s->denials);
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

static cJSON *
devices_json(const struct cmg__view *v)
{
  cJSON *a = cJSON_CreateArray();

  for (size_t i = 0; i < v->n_devices; i++) {
    const struct cmg__view_device *d = &v->devices[i];
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "ordinal", d->ordinal);
    cJSON_AddStringToObject(o, "name", d->name);
    cJSON_AddStringToObject(o, "uuid", d->uuid);
    cJSON_AddNumberToObject(o, "processes", d->processes);
    cJSON_AddNumberToObject(o, "physical_bytes", (double)d->physical_bytes);
    cJSON_AddItemToObject(o, "limit_bytes",
                          d->has_limit && !d->limit_varies
                              ? cJSON_CreateNumber((double)d->limit_bytes)
                              : cJSON_CreateNull());
    cJSON_AddBoolToObject(o, "limit_varies", d->limit_varies);
    cJSON_AddNumberToObject(o, "peak_bytes", (double)d->peak_bytes);
    cJSON_AddNumberToObject(o, "live_bytes", (double)d->live_bytes);
    cJSON_AddNumberToObject(o, "allocations", (double)d->allocations);
    cJSON_AddNumberToObject(o, "frees", (double)d->frees);
    cJSON_AddNumberToObject(o, "denied", (double)d->denied);
    cJSON_AddItemToObject(o, "graph_memory", graph_memory_json(&d->graph));
    cJSON_AddItemToObject(o, "footprint", footprint_json(d));
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

static cJSON *
comp_json(const struct cmg__view *v, const struct cmg__view_moment *m,
          const struct cmg__tool_opts *o)
{
  cJSON *obj = cJSON_CreateObject(), *items = cJSON_CreateArray();

  cJSON_AddNumberToObject(obj, "source", m->source);
  if (m->device != CMG__TOOL_NONE)
    cJSON_AddNumberToObject(obj, "device", v->devices[m->device].ordinal);
  else
    cJSON_AddNullToObject(obj, "device");
  cJSON_AddNumberToObject(obj, "time", m->comp.time);
  cJSON_AddNumberToObject(obj, "live_bytes", (double)m->comp.bytes);
  for (size_t i = 0; m->has_comp && i < m->comp.n; i++) {
    const struct cmg__model_share *s = &m->comp.items[i];

    if (o->top != 0 && i >= o->top)
      break;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "bytes", (double)s->bytes);
    cJSON_AddNumberToObject(e, "count", (double)s->count);
    cmg__summary_json_stack(e, v->ix, s->stack, o);
    cJSON_AddItemToArray(items, e);
  }
  if (m->has_comp) {
    cJSON_AddItemToObject(obj, "by_stack", items);
  } else {
    cJSON_Delete(items);
    cJSON_AddNullToObject(obj, "by_stack");
  }
  return obj;
}

/* The groups the text lists: the leaks (those --top and --min-bytes
 * leave, the others counted in *omitted), and the driver's graph and
 * context groups, all of them. */
static void
groups_json(const struct cmg__view *v, const struct cmg__tool_opts *o,
            cJSON *leaks, cJSON *omitted, cJSON *graph, cJSON *context)
{
  uint64_t left_n = 0, left_bytes = 0, left_count = 0;
  size_t listed = 0;

  for (size_t i = 0; i < v->n_leaks; i++) {
    const struct cmg__view_leak *l = &v->leaks[i];
    enum cmg__leak_class c = cmg__leak_class_of(l);

    /* Not leaks, and all listed, as the text lists them. */
    if (c == CMG__LEAK_CLASS_GRAPH || c == CMG__LEAK_CLASS_CONTEXT) {
      cJSON_AddItemToArray(c == CMG__LEAK_CLASS_GRAPH ? graph : context,
                           group_json(v, l, o));
      continue;
    }
    if (c == CMG__LEAK_CLASS_SUPPRESSED)
      continue;
    if (!cmg__leak_class_is_listed(l, o->min_bytes, o->top, listed)) {
      left_n++;
      left_bytes = cmg__tool_add(left_bytes, l->bytes);
      left_count = cmg__tool_add(left_count, l->count);
      continue;
    }
    listed++;
    cJSON_AddItemToArray(leaks, group_json(v, l, o));
  }
  cJSON_AddNumberToObject(omitted, "groups", (double)left_n);
  cJSON_AddNumberToObject(omitted, "count", (double)left_count);
  cJSON_AddNumberToObject(omitted, "bytes", (double)left_bytes);
}

/* Each suppression rule, with what it hid. */
static cJSON *
supp_json(const struct cmg__supp *supp)
{
  cJSON *a = cJSON_CreateArray();

  for (size_t i = 0; supp != NULL && i < supp->n; i++) {
    const struct cmg__supp_rule *r = &supp->rules[i];
    cJSON *e = cJSON_CreateObject();

    cJSON_AddStringToObject(e, "pattern", r->pattern);
    cJSON_AddStringToObject(e, "file", r->file);
    cJSON_AddNumberToObject(e, "line", r->line);
    cJSON_AddNumberToObject(e, "count", (double)r->count);
    cJSON_AddNumberToObject(e, "bytes", (double)r->bytes);
    cJSON_AddItemToArray(a, e);
  }
  return a;
}

/* The first denial of each device, what it asked for and where from. */
static cJSON *
denials_json(const struct cmg__view *v, const struct cmg__tool_opts *o)
{
  cJSON *a = cJSON_CreateArray();

  for (size_t i = 0; i < v->n_denials; i++) {
    const struct cmg__view_moment *m = &v->denials[i];
    cJSON *e = comp_json(v, m, o);

    cJSON_AddStringToObject(e, "api", m->api);
    cJSON_AddNumberToObject(e, "requested_bytes", (double)m->requested_bytes);
    cJSON_AddItemToObject(e, "limit_bytes",
                          m->has_limit
                              ? cJSON_CreateNumber((double)m->limit_bytes)
                              : cJSON_CreateNull());
    cmg__summary_json_stack(e, v->ix, m->stack, o);
    cJSON_AddItemToArray(a, e);
  }
  return a;
}

/* s.host: host memory's counters, or null. */
static void
add_host(cJSON *s, const struct cmg__view *v)
{
  if (!v->has_host) {
    cJSON_AddNullToObject(s, "host");
    return;
  }
  cJSON *h = cJSON_AddObjectToObject(s, "host");

  cJSON_AddItemToObject(h, "limit_bytes",
                        v->host.has_limit
                            ? cJSON_CreateNumber((double)v->host.limit_bytes)
                            : cJSON_CreateNull());
  cJSON_AddNumberToObject(h, "peak_bytes", (double)v->host.peak_bytes);
  cJSON_AddNumberToObject(h, "live_bytes", (double)v->host.live_bytes);
  cJSON_AddNumberToObject(h, "allocations", (double)v->host.allocations);
  cJSON_AddNumberToObject(h, "frees", (double)v->host.frees);
  cJSON_AddNumberToObject(h, "denied", (double)v->host.denied);
}

/* s.NAME_bytes and s.NAME_allocations: the totals of a class. */
static void
add_class(cJSON *s, const struct cmg__view *v, enum cmg__leak_class c,
          const char *name)
{
  char key[40];
  uint64_t bytes, count;

  cmg__leak_class_total(v, c, &bytes, &count);
  snprintf(key, sizeof(key), "%s_bytes", name);
  cJSON_AddNumberToObject(s, key, (double)bytes);
  snprintf(key, sizeof(key), "%s_allocations", name);
  cJSON_AddNumberToObject(s, key, (double)count);
}

/* The totals: what was released, and each class's. */
static void
add_totals(cJSON *s, const struct cmg__view *v)
{
  cJSON *ev = cJSON_AddObjectToObject(s, "events");
  cJSON_AddNumberToObject(ev, "warn", (double)v->events[0]);
  cJSON_AddNumberToObject(ev, "wait", (double)v->events[1]);
  cJSON_AddNumberToObject(ev, "soft_limit", (double)v->events[2]);
  cJSON_AddNumberToObject(s, "released_bytes", (double)v->released_bytes);
  cJSON_AddNumberToObject(s, "released_allocations", (double)v->released_count);
  add_class(s, v, CMG__LEAK_CLASS_LEAKED, "leaked");
  add_class(s, v, CMG__LEAK_CLASS_GRAPH, "graph");
  add_class(s, v, CMG__LEAK_CLASS_CONTEXT, "context");
  add_class(s, v, CMG__LEAK_CLASS_OTHER, "other");
  add_class(s, v, CMG__LEAK_CLASS_SUPPRESSED, "suppressed");
}

/* s.pools: the pool hint of the text summary, as data. */
static void
add_pools(cJSON *s, const struct cmg__view *v)
{
  uint64_t pooled, live;
  const char *pool;

  cmg__pool_blocks_share(v, &pooled, &live, &pool);
  cJSON *pools = cJSON_AddObjectToObject(s, "pools");
  cJSON_AddBoolToObject(pools, "no_pools", v->no_pools);
  cJSON_AddNumberToObject(pools, "bytes", (double)pooled);
  cJSON_AddItemToObject(pools, "largest",
                        pool ? cJSON_CreateString(pool) : cJSON_CreateNull());
  cJSON_AddBoolToObject(pools, "mostly", cmg__pool_blocks_is_mostly(v));
}

void *
cmg__summary_json_of(const struct cmg__view *v, const struct cmg__tool_opts *o)
{
  cJSON *s = cJSON_CreateObject(), *leaks = cJSON_CreateArray();
  cJSON *peaks = cJSON_CreateArray(), *omitted = cJSON_CreateObject();
  cJSON *graph = cJSON_CreateArray(), *context = cJSON_CreateArray();

  groups_json(v, o, leaks, omitted, graph, context);
  for (size_t i = 0; i < v->n_peaks; i++)
    cJSON_AddItemToArray(peaks, comp_json(v, &v->peaks[i], o));
  cJSON_AddItemToObject(s, "sources", sources_json(v));
  cJSON_AddItemToObject(s, "devices", devices_json(v));
  add_host(s, v);
  add_totals(s, v);
  add_pools(s, v);
  cJSON_AddItemToObject(s, "python_note", string_or_null(v->python_note));
  cJSON_AddItemToObject(s, "leaks", leaks);
  cJSON_AddItemToObject(s, "omitted", omitted);
  cJSON_AddItemToObject(s, "graph", graph);
  cJSON_AddItemToObject(s, "context", context);
  cJSON_AddItemToObject(s, "suppressions", supp_json(o->supp));
  cJSON_AddItemToObject(s, "peaks", peaks);
  cJSON_AddItemToObject(s, "first_denials", denials_json(v, o));
  return s;
}
