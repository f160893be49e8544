/*
 * The summary as JSON (--json of summary and merge), and the frames of a
 * stack as JSON, which diff uses too: the document described under JSON
 * OUTPUT in cumemguard-report(1).  Everything the text shows is here with
 * exact numbers and every frame, hidden or not, so that a machine never has
 * to parse the text.  Sizes are written as JSON numbers, exact below 2^53,
 * which is as far as the reports themselves go.  The document is written
 * as it is made (core/jsonw.c), in document order: a summary of a report
 * of a million allocations is never held as a tree.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"

#include "reader/load/model.h"
#include "reader/model/index.h"
#include "reader/model/leak_class.h"
#include "reader/model/pool_blocks.h"
#include "reader/model/supp.h"
#include "reader/model/view.h"
#include "reader/show/group_text.h"
#include "reader/show/json_once.h"
#include "reader/show/one_line.h"
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
count_or_null(struct cmg__jsonw *w, const char *key, bool has, uint64_t n)
{
  if (has)
    count(w, key, n);
  else
    cmg__jsonw_null(cmg__jsonw_key(w, key));
}

static void
string(struct cmg__jsonw *w, const char *key, const char *s)
{
  cmg__jsonw_string_or_null(cmg__jsonw_key(w, key), s);
}

static void
boolean(struct cmg__jsonw *w, const char *key, bool b)
{
  cmg__jsonw_bool(cmg__jsonw_key(w, key), b);
}

/* A device row's ordinal, or null for host memory. */
static void
device(struct cmg__jsonw *w, const struct cmg__view *v, uint32_t d)
{
  if (d != CMG__TOOL_NONE)
    number(w, "device", v->devices[d].ordinal);
  else
    cmg__jsonw_null(cmg__jsonw_key(w, "device"));
}

/* A frame's object; "hidden" unless hidden is negative. */
static void
frame_json(struct cmg__jsonw *w, const struct cmg__index *ix, uint32_t id,
           int hidden)
{
  const struct cmg__index_frame *fr = &ix->frames[id];
  const struct cmg__index_module *m =
      fr->module != CMG__TOOL_NONE ? &ix->modules[fr->module] : NULL;

  cmg__jsonw_object(w);
  string(w, "function", fr->function);
  count_or_null(w, "function_offset", fr->has_function_offset,
                fr->function_offset);
  string(w, "module", m ? m->name : NULL);
  string(w, "path", m ? m->path : NULL);
  string(w, "build_id", m ? m->build_id : NULL);
  if (fr->has_offset)
    cmg__jsonw_hex(cmg__jsonw_key(w, "offset"), fr->offset);
  else
    cmg__jsonw_null(cmg__jsonw_key(w, "offset"));
  if (fr->python)
    string(w, "lang", "python");
  if (fr->python || fr->file != NULL) {
    string(w, "file", fr->file);
    count_or_null(w, "line", fr->line > 0, fr->line);
  }
  if (fr->name != NULL)
    string(w, "name", fr->name);
  if (fr->inlined)
    boolean(w, "inlined", true);
  if (fr->cut != 0) /* frames the capture left out here; null: unknown */
    count_or_null(w, "cut", fr->cut != CMG__MODEL_CUT_UNKNOWN, fr->cut);
  if (hidden >= 0)
    boolean(w, "hidden", hidden);
  cmg__jsonw_object_end(w);
}

/* "frames": every frame of the stack, each marked "hidden" or not; with a
 * table, each frame's number in it instead, and the default view's range
 * of them in shown[]. */
static void
frames_json(struct cmg__jsonw *w, const struct cmg__index *ix, uint32_t stack,
            struct cmg__json_once *once, uint32_t shown[2])
{
  const struct cmg__index_stack *s =
      stack != CMG__TOOL_NONE ? &ix->stacks[stack] : NULL;
  bool seen = false;

  shown[0] = shown[1] = 0;
  cmg__jsonw_array(cmg__jsonw_key(w, "frames"));
  for (uint32_t k = 0; s != NULL && k < s->n; k++) {
    bool hidden = k < s->lo || k >= s->hi;

    if (once == NULL) {
      frame_json(w, ix, s->frames[k], hidden);
      continue;
    }
    frame_json(cmg__json_once_writer(once), ix, s->frames[k], -1);
    cmg__jsonw_uint(w, cmg__json_once_frame(once));
    if (!hidden) {
      shown[0] = seen ? shown[0] : k;
      shown[1] = k + 1;
      seen = true;
    }
  }
  cmg__jsonw_array_end(w);
}

/* The stack as the text summary shows it: its title, its one-line view
 * (the line of a peak, a denial, a diff) and its folded lines, for readers
 * that show what the summary shows (the html page). */
static void
text_json(struct cmg__jsonw *w, const struct cmg__index *ix, uint32_t stack,
          struct cmg__json_once *once)
{
  char *buf = NULL, *line;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);

  if (f == NULL) {
    cmg__jsonw_fail(w, -ENOMEM);
    return;
  }
  bool titled = cmg__one_line_title(f, "", ix, stack);
  fflush(f);
  string(w, "title", titled ? buf : NULL);
  if ((line = cmg__one_line_text(ix, stack, false)) == NULL)
    cmg__jsonw_fail(w, -ENOMEM);
  string(w, "line", line);
  free(line);
  rewind(f);
  cmg__group_text_frames(f, ix, stack, false);
  fputc('\0', f);
  fclose(f);
  cmg__jsonw_array(cmg__jsonw_key(w, "lines"));
  for (char *p = buf, *nl; p != NULL && *p != '\0'; p = nl + 1) {
    nl = strchr(p, '\n');
    if (nl == NULL)
      nl = p + strlen(p) - 1;
    else
      *nl = '\0';
    p += strspn(p, " ");
    if (once != NULL)
      cmg__jsonw_uint(w, cmg__json_once_line(once, p));
    else
      cmg__jsonw_string(w, p);
  }
  cmg__jsonw_array_end(w);
  free(buf);
}

void
cmg__summary_json_stack(struct cmg__jsonw *w, const struct cmg__index *ix,
                        uint32_t stack, const struct cmg__tool_opts *o)
{
  uint32_t shown[2];

  frames_json(w, ix, stack, o->once, shown);
  if (o->stack_text)
    text_json(w, ix, stack, o->once);
  if (o->once == NULL)
    return;
  cmg__jsonw_array(cmg__jsonw_key(w, "shown"));
  cmg__jsonw_uint(w, shown[0]);
  cmg__jsonw_uint(w, shown[1]);
  cmg__jsonw_array_end(w);
}

/* The threads of a leak group: a name says which thread made memory whose
 * stack shows no Python (PyTorch's autograd threads). */
static void
threads_json(struct cmg__jsonw *w, const struct cmg__model_threads *t)
{
  cmg__jsonw_array(cmg__jsonw_key(w, "threads"));
  for (size_t i = 0; i < t->n; i++) {
    cmg__jsonw_object(w);
    count(w, "source", t->list[i].source);
    count(w, "tid", t->list[i].tid);
    string(w, "name", t->list[i].name);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

/* A leak group, or a graph memory pool's or a context's group. */
static void
group_json(struct cmg__jsonw *w, const struct cmg__view *v,
           const struct cmg__view_leak *l, const struct cmg__tool_opts *o)
{
  cmg__jsonw_object(w);
  string(w, "api", l->api);
  string(w, "kind", l->kind);
  boolean(w, "device_memory", cmg__leak_class_is_device_kind(l->kind));
  device(w, v, l->device);
  count(w, "count", l->count);
  count(w, "bytes", l->bytes);
  boolean(w, "truncated",
          l->stack != CMG__TOOL_NONE && v->ix->stacks[l->stack].truncated);
  string(w, "pool", l->pool);
  string(w, "held_by", l->held);
  threads_json(w, &l->threads);
  cmg__summary_json_stack(w, v->ix, l->stack, o);
  cmg__jsonw_object_end(w);
}

/* devices[].graph_memory as the report has it, summed over processes;
 * null where no report had one. */
static void
graph_memory_json(struct cmg__jsonw *w, const struct cmg__model_graphmem *g)
{
  if (!g->present) {
    cmg__jsonw_null(cmg__jsonw_key(w, "graph_memory"));
    return;
  }
  cmg__jsonw_object(cmg__jsonw_key(w, "graph_memory"));
  count(w, "reserved_bytes", g->reserved_bytes);
  count(w, "reserved_high_bytes", g->reserved_high_bytes);
  count(w, "used_bytes", g->used_bytes);
  count(w, "used_high_bytes", g->used_high_bytes);
  string(w, "source", g->estimate ? "estimate" : "driver");
  count(w, "launches", g->launches);
  count(w, "uploads", g->uploads);
  count(w, "trims", g->trims);
  count(w, "denied", g->denied);
  cmg__jsonw_object_end(w);
}

/* footprint.cross_check as the report has it, summed. */
static void
cross_check_json(struct cmg__jsonw *w, const struct cmg__model_footprint *fp)
{
  if (fp->checked == 0) {
    cmg__jsonw_null(cmg__jsonw_key(w, "cross_check"));
    return;
  }
  cmg__jsonw_object(cmg__jsonw_key(w, "cross_check"));
  count(w, "contexts", fp->checked);
  count(w, "nvml_bytes", fp->checked_nvml);
  count(w, "driver_bytes", fp->checked_driver);
  cmg__jsonw_object_end(w);
}

/* devices[].footprint as the report has it, summed over the processes
 * whose report has one (processes: how many); null where none had one. */
static void
footprint_json(struct cmg__jsonw *w, const struct cmg__view_device *d)
{
  static const char *const sources[] = {
    [CMG__MODEL_FP_NVML] = "nvml",
    [CMG__MODEL_FP_DRIVER] = "driver",
  };
  const struct cmg__model_footprint *fp = &d->footprint;

  if (!fp->present) {
    cmg__jsonw_null(cmg__jsonw_key(w, "footprint"));
    return;
  }
  cmg__jsonw_object(cmg__jsonw_key(w, "footprint"));
  count(w, "contexts", fp->contexts);
  count_or_null(w, "context_bytes", fp->has_context_bytes, fp->context_bytes);
  string(w, "source", sources[fp->source]);
  string(w, "why", fp->why);
  count(w, "allocated_bytes", fp->allocated_bytes);
  count_or_null(w, "process_bytes", fp->has_process_bytes, fp->process_bytes);
  count_or_null(w, "unexplained_bytes", fp->has_unexplained_bytes,
                fp->unexplained_bytes);
  boolean(w, "counted", fp->counted);
  cross_check_json(w, fp);
  count(w, "processes", d->footprints);
  cmg__jsonw_object_end(w);
}

static void
sources_json(struct cmg__jsonw *w, const struct cmg__view *v)
{
  cmg__jsonw_array(cmg__jsonw_key(w, "sources"));
  for (size_t i = 0; i < v->n_sources; i++) {
    const struct cmg__view_source *s = &v->sources[i];

    cmg__jsonw_object(w);
    string(w, "file", s->file);
    number(w, "pid", (double)s->pid);
    string(w, "exe", s->exe);
    string(w, "command", s->command);
    string(w, "hostname", s->hostname);
    string(w, "reason", s->reason);
    if (s->exit_status >= 0)
      number(w, "exit_status", s->exit_status);
    else
      cmg__jsonw_null(cmg__jsonw_key(w, "exit_status"));
    string(w, "killed_by", s->killed_by);
    number(w, "start_time", s->start_time);
    number(w, "end_time", s->end_time);
    count(w, "live_bytes", s->live_bytes);
    count(w, "live_allocations", s->live_allocations);
    count(w, "untracked_frees", s->untracked_frees);
    count(w, "denials", s->denials);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

static void
devices_json(struct cmg__jsonw *w, const struct cmg__view *v)
{
  cmg__jsonw_array(cmg__jsonw_key(w, "devices"));
  for (size_t i = 0; i < v->n_devices; i++) {
    const struct cmg__view_device *d = &v->devices[i];

    cmg__jsonw_object(w);
    number(w, "ordinal", d->ordinal);
    string(w, "name", d->name);
    string(w, "uuid", d->uuid);
    count(w, "processes", d->processes);
    count(w, "physical_bytes", d->physical_bytes);
    count_or_null(w, "limit_bytes", d->has_limit && !d->limit_varies,
                  d->limit_bytes);
    boolean(w, "limit_varies", d->limit_varies);
    count(w, "peak_bytes", d->peak_bytes);
    count(w, "live_bytes", d->live_bytes);
    count(w, "allocations", d->allocations);
    count(w, "frees", d->frees);
    count(w, "denied", d->denied);
    graph_memory_json(w, &d->graph);
    footprint_json(w, d);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

/* Opens the object of a peak or a first denial, with its composition; the
 * caller adds its own members and closes it. */
static void
comp_json(struct cmg__jsonw *w, const struct cmg__view *v,
          const struct cmg__view_moment *m, const struct cmg__tool_opts *o)
{
  cmg__jsonw_object(w);
  count(w, "source", m->source);
  device(w, v, m->device);
  number(w, "time", m->comp.time);
  count(w, "live_bytes", m->comp.bytes);
  if (!m->has_comp) {
    cmg__jsonw_null(cmg__jsonw_key(w, "by_stack"));
    return;
  }
  cmg__jsonw_array(cmg__jsonw_key(w, "by_stack"));
  for (size_t i = 0; i < m->comp.n && (o->top == 0 || i < o->top); i++) {
    const struct cmg__model_share *s = &m->comp.items[i];

    cmg__jsonw_object(w);
    count(w, "bytes", s->bytes);
    count(w, "count", s->count);
    cmg__summary_json_stack(w, v->ix, s->stack, o);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

/* "leaks": those --top and --min-bytes leave, and "omitted": what they
 * left out. */
static void
leaks_json(struct cmg__jsonw *w, const struct cmg__view *v,
           const struct cmg__tool_opts *o)
{
  uint64_t left_n = 0, left_bytes = 0, left_count = 0;
  size_t listed = 0;

  cmg__jsonw_array(cmg__jsonw_key(w, "leaks"));
  for (size_t i = 0; i < v->n_leaks; i++) {
    const struct cmg__view_leak *l = &v->leaks[i];
    enum cmg__leak_class c = cmg__leak_class_of(l);

    if (c == CMG__LEAK_CLASS_GRAPH || c == CMG__LEAK_CLASS_CONTEXT ||
        c == CMG__LEAK_CLASS_SUPPRESSED)
      continue;
    if (!cmg__leak_class_is_listed(l, o->min_bytes, o->top, listed)) {
      left_n++;
      left_bytes = cmg__tool_add(left_bytes, l->bytes);
      left_count = cmg__tool_add(left_count, l->count);
      continue;
    }
    listed++;
    group_json(w, v, l, o);
  }
  cmg__jsonw_array_end(w);
  cmg__jsonw_object(cmg__jsonw_key(w, "omitted"));
  count(w, "groups", left_n);
  count(w, "count", left_count);
  count(w, "bytes", left_bytes);
  cmg__jsonw_object_end(w);
}

/* The driver's graph or context groups: not leaks, and all listed, as the
 * text lists them. */
static void
class_json(struct cmg__jsonw *w, const char *key, const struct cmg__view *v,
           enum cmg__leak_class c, const struct cmg__tool_opts *o)
{
  cmg__jsonw_array(cmg__jsonw_key(w, key));
  for (size_t i = 0; i < v->n_leaks; i++)
    if (cmg__leak_class_of(&v->leaks[i]) == c)
      group_json(w, v, &v->leaks[i], o);
  cmg__jsonw_array_end(w);
}

/* Each suppression rule, with what it hid. */
static void
supp_json(struct cmg__jsonw *w, const struct cmg__supp *supp)
{
  cmg__jsonw_array(cmg__jsonw_key(w, "suppressions"));
  for (size_t i = 0; supp != NULL && i < supp->n; i++) {
    const struct cmg__supp_rule *r = &supp->rules[i];

    cmg__jsonw_object(w);
    string(w, "pattern", r->pattern);
    string(w, "file", r->file);
    number(w, "line", r->line);
    count(w, "count", r->count);
    count(w, "bytes", r->bytes);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

static void
peaks_json(struct cmg__jsonw *w, const struct cmg__view *v,
           const struct cmg__tool_opts *o)
{
  cmg__jsonw_array(cmg__jsonw_key(w, "peaks"));
  for (size_t i = 0; i < v->n_peaks; i++) {
    comp_json(w, v, &v->peaks[i], o);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

/* The first denial of each device, what it asked for and where from. */
static void
denials_json(struct cmg__jsonw *w, const struct cmg__view *v,
             const struct cmg__tool_opts *o)
{
  cmg__jsonw_array(cmg__jsonw_key(w, "first_denials"));
  for (size_t i = 0; i < v->n_denials; i++) {
    const struct cmg__view_moment *m = &v->denials[i];

    comp_json(w, v, m, o);
    string(w, "api", m->api);
    count(w, "requested_bytes", m->requested_bytes);
    count_or_null(w, "limit_bytes", m->has_limit, m->limit_bytes);
    cmg__summary_json_stack(w, v->ix, m->stack, o);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

/* "host": host memory's counters, or null. */
static void
host_json(struct cmg__jsonw *w, const struct cmg__view *v)
{
  if (!v->has_host) {
    cmg__jsonw_null(cmg__jsonw_key(w, "host"));
    return;
  }
  cmg__jsonw_object(cmg__jsonw_key(w, "host"));
  count_or_null(w, "limit_bytes", v->host.has_limit, v->host.limit_bytes);
  count(w, "peak_bytes", v->host.peak_bytes);
  count(w, "live_bytes", v->host.live_bytes);
  count(w, "allocations", v->host.allocations);
  count(w, "frees", v->host.frees);
  count(w, "denied", v->host.denied);
  cmg__jsonw_object_end(w);
}

/* NAME_bytes and NAME_allocations: the totals of a class. */
static void
class_totals(struct cmg__jsonw *w, const struct cmg__view *v,
             enum cmg__leak_class c, const char *name)
{
  char key[40];
  uint64_t bytes, n;

  cmg__leak_class_total(v, c, &bytes, &n);
  snprintf(key, sizeof(key), "%s_bytes", name);
  count(w, key, bytes);
  snprintf(key, sizeof(key), "%s_allocations", name);
  count(w, key, n);
}

/* The totals: what was released, and each class's. */
static void
totals_json(struct cmg__jsonw *w, const struct cmg__view *v)
{
  cmg__jsonw_object(cmg__jsonw_key(w, "events"));
  count(w, "warn", v->events[0]);
  count(w, "wait", v->events[1]);
  count(w, "soft_limit", v->events[2]);
  cmg__jsonw_object_end(w);
  count(w, "released_bytes", v->released_bytes);
  count(w, "released_allocations", v->released_count);
  class_totals(w, v, CMG__LEAK_CLASS_LEAKED, "leaked");
  class_totals(w, v, CMG__LEAK_CLASS_GRAPH, "graph");
  class_totals(w, v, CMG__LEAK_CLASS_CONTEXT, "context");
  class_totals(w, v, CMG__LEAK_CLASS_OTHER, "other");
  class_totals(w, v, CMG__LEAK_CLASS_SUPPRESSED, "suppressed");
}

/* "pools": the pool hint of the text summary, as data. */
static void
pools_json(struct cmg__jsonw *w, const struct cmg__view *v)
{
  uint64_t pooled, live;
  const char *pool;

  cmg__pool_blocks_share(v, &pooled, &live, &pool);
  cmg__jsonw_object(cmg__jsonw_key(w, "pools"));
  boolean(w, "no_pools", v->no_pools);
  count(w, "bytes", pooled);
  string(w, "largest", pool);
  boolean(w, "mostly", cmg__pool_blocks_is_mostly(v));
  cmg__jsonw_object_end(w);
}

void
cmg__summary_json_write(struct cmg__jsonw *w, const struct cmg__view *v,
                        const struct cmg__tool_opts *o)
{
  cmg__jsonw_object(w);
  sources_json(w, v);
  devices_json(w, v);
  host_json(w, v);
  totals_json(w, v);
  pools_json(w, v);
  string(w, "python_note", v->python_note);
  leaks_json(w, v, o);
  class_json(w, "graph", v, CMG__LEAK_CLASS_GRAPH, o);
  class_json(w, "context", v, CMG__LEAK_CLASS_CONTEXT, o);
  supp_json(w, o->supp);
  peaks_json(w, v, o);
  denials_json(w, v, o);
  cmg__jsonw_object_end(w);
}
