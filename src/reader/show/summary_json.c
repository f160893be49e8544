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

/* A device row's ordinal, or null for host memory. */
static void
device(struct cmg__jsonw *w, const struct cmg__view *v, uint32_t d)
{
  if (d != CMG__TOOL_NONE)
    cmg__jsonw_member_number(w, "device", v->devices[d].ordinal);
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
  cmg__jsonw_member_string_or_null(w, "function", fr->function);
  cmg__jsonw_member_uint_or_null(w, "function_offset", fr->has_function_offset,
                                 fr->function_offset);
  cmg__jsonw_member_string_or_null(w, "module", m ? m->name : NULL);
  cmg__jsonw_member_string_or_null(w, "path", m ? m->path : NULL);
  cmg__jsonw_member_string_or_null(w, "build_id", m ? m->build_id : NULL);
  if (fr->has_offset)
    cmg__jsonw_hex(cmg__jsonw_key(w, "offset"), fr->offset);
  else
    cmg__jsonw_null(cmg__jsonw_key(w, "offset"));
  if (fr->python)
    cmg__jsonw_member_string_or_null(w, "lang", "python");
  if (fr->python || fr->file != NULL) {
    cmg__jsonw_member_string_or_null(w, "file", fr->file);
    cmg__jsonw_member_uint_or_null(w, "line", fr->line > 0, fr->line);
  }
  if (fr->name != NULL)
    cmg__jsonw_member_string_or_null(w, "name", fr->name);
  if (fr->inlined)
    cmg__jsonw_member_bool(w, "inlined", true);
  if (fr->cut != 0) /* frames the capture left out here; null: unknown */
    cmg__jsonw_member_uint_or_null(w, "cut", fr->cut != CMG__MODEL_CUT_UNKNOWN,
                                   fr->cut);
  if (hidden >= 0)
    cmg__jsonw_member_bool(w, "hidden", hidden);
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
  cmg__jsonw_member_string_or_null(w, "title", titled ? buf : NULL);
  if ((line = cmg__one_line_text(ix, stack, false)) == NULL)
    cmg__jsonw_fail(w, -ENOMEM);
  cmg__jsonw_member_string_or_null(w, "line", line);
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
    cmg__jsonw_member_uint(w, "source", t->list[i].source);
    cmg__jsonw_member_uint(w, "tid", t->list[i].tid);
    cmg__jsonw_member_string_or_null(w, "name", t->list[i].name);
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
  cmg__jsonw_member_string_or_null(w, "api", l->api);
  cmg__jsonw_member_string_or_null(w, "kind", l->kind);
  cmg__jsonw_member_bool(w, "device_memory",
                         cmg__leak_class_is_device_kind(l->kind));
  device(w, v, l->device);
  cmg__jsonw_member_uint(w, "count", l->count);
  cmg__jsonw_member_uint(w, "bytes", l->bytes);
  cmg__jsonw_member_bool(w, "truncated",
                         l->stack != CMG__TOOL_NONE &&
                             v->ix->stacks[l->stack].truncated);
  cmg__jsonw_member_string_or_null(w, "pool", l->pool);
  cmg__jsonw_member_string_or_null(w, "held_by", l->held);
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
  cmg__jsonw_member_uint(w, "reserved_bytes", g->reserved_bytes);
  cmg__jsonw_member_uint(w, "reserved_high_bytes", g->reserved_high_bytes);
  cmg__jsonw_member_uint(w, "used_bytes", g->used_bytes);
  cmg__jsonw_member_uint(w, "used_high_bytes", g->used_high_bytes);
  cmg__jsonw_member_string_or_null(w, "source",
                                   g->estimate ? "estimate" : "driver");
  cmg__jsonw_member_uint(w, "launches", g->launches);
  cmg__jsonw_member_uint(w, "uploads", g->uploads);
  cmg__jsonw_member_uint(w, "trims", g->trims);
  cmg__jsonw_member_uint(w, "denied", g->denied);
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
  cmg__jsonw_member_uint(w, "contexts", fp->checked);
  cmg__jsonw_member_uint(w, "nvml_bytes", fp->checked_nvml);
  cmg__jsonw_member_uint(w, "driver_bytes", fp->checked_driver);
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
  cmg__jsonw_member_uint(w, "contexts", fp->contexts);
  cmg__jsonw_member_uint_or_null(w, "context_bytes", fp->has_context_bytes,
                                 fp->context_bytes);
  cmg__jsonw_member_string_or_null(w, "source", sources[fp->source]);
  cmg__jsonw_member_string_or_null(w, "why", fp->why);
  cmg__jsonw_member_uint(w, "allocated_bytes", fp->allocated_bytes);
  cmg__jsonw_member_uint_or_null(w, "process_bytes", fp->has_process_bytes,
                                 fp->process_bytes);
  cmg__jsonw_member_uint_or_null(
      w, "unexplained_bytes", fp->has_unexplained_bytes, fp->unexplained_bytes);
  cmg__jsonw_member_bool(w, "counted", fp->counted);
  cross_check_json(w, fp);
  cmg__jsonw_member_uint(w, "processes", d->footprints);
  cmg__jsonw_object_end(w);
}

static void
sources_json(struct cmg__jsonw *w, const struct cmg__view *v)
{
  cmg__jsonw_array(cmg__jsonw_key(w, "sources"));
  for (size_t i = 0; i < v->n_sources; i++) {
    const struct cmg__view_source *s = &v->sources[i];

    cmg__jsonw_object(w);
    cmg__jsonw_member_string_or_null(w, "file", s->file);
    cmg__jsonw_member_number(w, "pid", (double)s->pid);
    cmg__jsonw_member_string_or_null(w, "exe", s->exe);
    cmg__jsonw_member_string_or_null(w, "command", s->command);
    cmg__jsonw_member_string_or_null(w, "hostname", s->hostname);
    cmg__jsonw_member_string_or_null(w, "reason", s->reason);
    if (s->exit_status >= 0)
      cmg__jsonw_member_number(w, "exit_status", s->exit_status);
    else
      cmg__jsonw_null(cmg__jsonw_key(w, "exit_status"));
    cmg__jsonw_member_string_or_null(w, "killed_by", s->killed_by);
    cmg__jsonw_member_number(w, "start_time", s->start_time);
    cmg__jsonw_member_number(w, "end_time", s->end_time);
    cmg__jsonw_member_uint(w, "live_bytes", s->live_bytes);
    cmg__jsonw_member_uint(w, "live_allocations", s->live_allocations);
    cmg__jsonw_member_uint(w, "untracked_frees", s->untracked_frees);
    cmg__jsonw_member_uint(w, "denials", s->denials);
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
    cmg__jsonw_member_number(w, "ordinal", d->ordinal);
    cmg__jsonw_member_string_or_null(w, "name", d->name);
    cmg__jsonw_member_string_or_null(w, "uuid", d->uuid);
    cmg__jsonw_member_uint(w, "processes", d->processes);
    cmg__jsonw_member_uint(w, "physical_bytes", d->physical_bytes);
    cmg__jsonw_member_uint_or_null(
        w, "limit_bytes", d->has_limit && !d->limit_varies, d->limit_bytes);
    cmg__jsonw_member_bool(w, "limit_varies", d->limit_varies);
    cmg__jsonw_member_uint(w, "peak_bytes", d->peak_bytes);
    cmg__jsonw_member_uint(w, "live_bytes", d->live_bytes);
    cmg__jsonw_member_uint(w, "allocations", d->allocations);
    cmg__jsonw_member_uint(w, "frees", d->frees);
    cmg__jsonw_member_uint(w, "denied", d->denied);
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
  cmg__jsonw_member_uint(w, "source", m->source);
  device(w, v, m->device);
  cmg__jsonw_member_number(w, "time", m->comp.time);
  cmg__jsonw_member_uint(w, "live_bytes", m->comp.bytes);
  if (!m->has_comp) {
    cmg__jsonw_null(cmg__jsonw_key(w, "by_stack"));
    return;
  }
  cmg__jsonw_array(cmg__jsonw_key(w, "by_stack"));
  for (size_t i = 0; i < m->comp.n && (o->top == 0 || i < o->top); i++) {
    const struct cmg__model_share *s = &m->comp.items[i];

    cmg__jsonw_object(w);
    cmg__jsonw_member_uint(w, "bytes", s->bytes);
    cmg__jsonw_member_uint(w, "count", s->count);
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
  cmg__jsonw_member_uint(w, "groups", left_n);
  cmg__jsonw_member_uint(w, "count", left_count);
  cmg__jsonw_member_uint(w, "bytes", left_bytes);
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
    cmg__jsonw_member_string_or_null(w, "pattern", r->pattern);
    cmg__jsonw_member_string_or_null(w, "file", r->file);
    cmg__jsonw_member_number(w, "line", r->line);
    cmg__jsonw_member_uint(w, "count", r->count);
    cmg__jsonw_member_uint(w, "bytes", r->bytes);
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
    cmg__jsonw_member_string_or_null(w, "api", m->api);
    cmg__jsonw_member_uint(w, "requested_bytes", m->requested_bytes);
    cmg__jsonw_member_uint_or_null(w, "limit_bytes", m->has_limit,
                                   m->limit_bytes);
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
  cmg__jsonw_member_uint_or_null(w, "limit_bytes", v->host.has_limit,
                                 v->host.limit_bytes);
  cmg__jsonw_member_uint(w, "peak_bytes", v->host.peak_bytes);
  cmg__jsonw_member_uint(w, "live_bytes", v->host.live_bytes);
  cmg__jsonw_member_uint(w, "allocations", v->host.allocations);
  cmg__jsonw_member_uint(w, "frees", v->host.frees);
  cmg__jsonw_member_uint(w, "denied", v->host.denied);
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
  cmg__jsonw_member_uint(w, key, bytes);
  snprintf(key, sizeof(key), "%s_allocations", name);
  cmg__jsonw_member_uint(w, key, n);
}

/* The totals: what was released, and each class's. */
static void
totals_json(struct cmg__jsonw *w, const struct cmg__view *v)
{
  cmg__jsonw_object(cmg__jsonw_key(w, "events"));
  cmg__jsonw_member_uint(w, "warn", v->events[0]);
  cmg__jsonw_member_uint(w, "wait", v->events[1]);
  cmg__jsonw_member_uint(w, "soft_limit", v->events[2]);
  cmg__jsonw_object_end(w);
  cmg__jsonw_member_uint(w, "released_bytes", v->released_bytes);
  cmg__jsonw_member_uint(w, "released_allocations", v->released_count);
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
  cmg__jsonw_member_bool(w, "no_pools", v->no_pools);
  cmg__jsonw_member_uint(w, "bytes", pooled);
  cmg__jsonw_member_string_or_null(w, "largest", pool);
  cmg__jsonw_member_bool(w, "mostly", cmg__pool_blocks_is_mostly(v));
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
  cmg__jsonw_member_string_or_null(w, "python_note", v->python_note);
  leaks_json(w, v, o);
  class_json(w, "graph", v, CMG__LEAK_CLASS_GRAPH, o);
  class_json(w, "context", v, CMG__LEAK_CLASS_CONTEXT, o);
  supp_json(w, o->supp);
  peaks_json(w, v, o);
  denials_json(w, v, o);
  cmg__jsonw_object_end(w);
}
