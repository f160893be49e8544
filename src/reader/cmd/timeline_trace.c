/*
 * The timeline command: reports as a trace in the Chrome trace-event JSON
 * format (the "JSON Array/Object Format" that Perfetto's UI and
 * chrome://tracing open).  Each report is a process; several are put side
 * by side on one clock, from their start times, so the ranks of a job or
 * two runs line up.  For each device with a timeline:
 *
 *   - a counter "device N in use": the most bytes in use in each point's
 *     span, so the counter reaches the device's peak exactly, however much
 *     the series was merged; and a counter "device N limit";
 *   - an instant per denial and per report write, on the process;
 *   - the largest allocations, as async slices named by size and API with
 *     their top frames: those freed from their allocation to their free
 *     (the library keeps the largest it saw freed), those still live when
 *     the report was written from their allocation to the report.
 *
 * Timestamps are microseconds, as the format wants.  The trace is written
 * as it is made (core/jsonw.c) into memory, and the file is created only
 * once it is whole.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "core/size.h"

#include "reader/cmd/timeline_trace.h"
#include "reader/load/model.h"
#include "reader/load/read.h"
#include "reader/run/run.h"
#include "reader/show/frame_name.h"
#include "reader/show/output.h"
#include "reader/tool.h"

/* The slices drawn per report, and the frames named on each. */
#define SLICES 16
#define SLICE_FRAMES 4

struct proc {
  const struct cmg__model_report *r;
  struct cmg__run_stacks stacks; /* to name them as the views do */
  long pid;
  double origin_us; /* where this report's time 0 lies on the trace */
  bool oom;
};

/* Opens an event's object with the members every event has; the caller
 * adds its own and closes it. */
static void
event(struct cmg__jsonw *w, const char *name, const char *ph,
      const struct proc *p, double t)
{
  cmg__jsonw_object(w);
  cmg__jsonw_string(cmg__jsonw_key(w, "name"), name);
  cmg__jsonw_string(cmg__jsonw_key(w, "ph"), ph);
  cmg__jsonw_number(cmg__jsonw_key(w, "pid"), (double)p->pid);
  cmg__jsonw_number(cmg__jsonw_key(w, "tid"), (double)p->pid);
  cmg__jsonw_number(cmg__jsonw_key(w, "ts"), p->origin_us + t * 1e6);
}

static void
metadata(struct cmg__jsonw *w, const struct proc *p, size_t index)
{
  char name[512];

  snprintf(name, sizeof(name), "%s: pid %ld, %s", p->r->file, p->r->pid,
           p->r->command ? p->r->command : "");
  event(w, "process_name", "M", p, 0);
  cmg__jsonw_object(cmg__jsonw_key(w, "args"));
  cmg__jsonw_string(cmg__jsonw_key(w, "name"), name);
  cmg__jsonw_object_end(w);
  cmg__jsonw_object_end(w);
  event(w, "process_sort_index", "M", p, 0);
  cmg__jsonw_object(cmg__jsonw_key(w, "args"));
  cmg__jsonw_number(cmg__jsonw_key(w, "sort_index"), (double)index);
  cmg__jsonw_object_end(w);
  cmg__jsonw_object_end(w);
}

static void
counter(struct cmg__jsonw *w, const struct proc *p, const char *name, double t,
        uint64_t bytes)
{
  event(w, name, "C", p, t);
  cmg__jsonw_object(cmg__jsonw_key(w, "args"));
  cmg__jsonw_number(cmg__jsonw_key(w, "bytes"), (double)bytes);
  cmg__jsonw_object_end(w);
  cmg__jsonw_object_end(w);
}

static void
series(struct cmg__jsonw *w, const struct proc *p,
       const struct cmg__model_series *s)
{
  char name[64], limit_name[64];
  uint64_t limit = cmg__run_limit(p->r, s->device);

  snprintf(name, sizeof(name), "device %d in use", s->device);
  snprintf(limit_name, sizeof(limit_name), "device %d limit", s->device);
  for (size_t i = 0; i < s->n; i++)
    counter(w, p, name, s->points[i].time, s->points[i].max);
  if (limit != 0) {
    counter(w, p, limit_name, s->points[0].time, limit);
    counter(w, p, limit_name, s->points[s->n - 1].time, limit);
  }
}

/* Opens an instant event and its args, for the caller to fill and close
 * with instant_end(). */
static void
instant(struct cmg__jsonw *w, const struct proc *p, const char *name, double t)
{
  event(w, name, "i", p, t);
  cmg__jsonw_string(cmg__jsonw_key(w, "s"), "p");
  cmg__jsonw_object(cmg__jsonw_key(w, "args"));
}

static void
instant_end(struct cmg__jsonw *w)
{
  cmg__jsonw_object_end(w);
  cmg__jsonw_object_end(w);
}

/* A device as the trace's arguments name it: its ordinal, or "host". */
static void
device_arg(struct cmg__jsonw *w, int device)
{
  if (device >= 0)
    cmg__jsonw_number(cmg__jsonw_key(w, "device"), device);
  else
    cmg__jsonw_string(cmg__jsonw_key(w, "device"), "host");
}

/* args.stack of a denial: its stack in one line, as every view names a
 * group's. */
static void
stack_arg(struct cmg__jsonw *w, struct proc *p, uint32_t stack)
{
  char *line = cmg__run_stacks_line(&p->stacks, stack);

  if (line == NULL)
    p->oom = true;
  cmg__jsonw_string_or_null(cmg__jsonw_key(w, "stack"), line);
  free(line);
}

static void
denials(struct cmg__jsonw *w, struct proc *p)
{
  char name[128], size[32];

  for (size_t i = 0; i < p->r->n_denials; i++) {
    const struct cmg__model_denial *d = &p->r->denials_list[i];

    snprintf(name, sizeof(name), "denied %s of %s", d->api,
             cmg__format_size(d->requested_bytes, size, sizeof(size)));
    instant(w, p, name, d->comp.time);
    device_arg(w, d->device);
    cmg__jsonw_number(cmg__jsonw_key(w, "requested_bytes"),
                      (double)d->requested_bytes);
    cmg__jsonw_number(cmg__jsonw_key(w, "live_bytes"), (double)d->live_bytes);
    if (d->has_limit)
      cmg__jsonw_number(cmg__jsonw_key(w, "limit_bytes"),
                        (double)d->limit_bytes);
    stack_arg(w, p, d->stack);
    instant_end(w);
  }
}

static void
dumps(struct cmg__jsonw *w, const struct proc *p)
{
  char name[64];

  for (size_t i = 0; i < p->r->timeline.n_dumps; i++) {
    const struct cmg__model_dump *d = &p->r->timeline.dumps[i];

    snprintf(name, sizeof(name), "report (%s)", d->reason);
    instant(w, p, name, d->time);
    instant_end(w);
  }
}

/* When the report was written, on its own clock: its timeline's last
 * point, else its end time. */
static double
report_time(const struct cmg__model_report *r)
{
  double t = r->end_time > r->start_time ? r->end_time - r->start_time : 0;

  for (size_t i = 0; i < r->timeline.n_series; i++) {
    const struct cmg__model_series *s = &r->timeline.series[i];
    if (s->points[s->n - 1].time > t)
      t = s->points[s->n - 1].time;
  }
  return t;
}

/* An allocation drawn as a slice, live or freed. */
struct slice {
  uint64_t bytes;
  double start, end;
  const char *api, *kind, *category;
  int device;
  uint32_t stack;
};

static int
by_bytes(const void *x, const void *y)
{
  const struct slice *a = x, *b = y;

  if (a->bytes != b->bytes)
    return a->bytes < b->bytes ? 1 : -1;
  return a->start < b->start ? -1 : a->start > b->start;
}

/* The SLICES largest of the live and the freed allocations into s. */
static size_t
gather(const struct cmg__model_report *r, struct slice *s)
{
  double end = report_time(r);
  size_t n = 0;

  for (size_t i = 0; i < r->n_largest && i < SLICES; i++) {
    const struct cmg__model_alloc *a = &r->largest[i];
    const struct cmg__model_leak *l = &r->leaks[a->leak];

    s[n++] = (struct slice){ a->bytes,  a->time, end > a->time ? end : a->time,
                             l->api,    l->kind, "live allocation",
                             l->device, l->stack };
  }
  for (size_t i = 0; i < r->timeline.n_freed && i < SLICES; i++) {
    const struct cmg__model_freed *f = &r->timeline.freed[i];

    s[n++] = (struct slice){ f->bytes,
                             f->time,
                             f->free_time,
                             f->api,
                             f->device >= 0 ? "device" : "host",
                             "freed allocation",
                             f->device,
                             f->stack };
  }
  qsort(s, n, sizeof(*s), by_bytes);
  return n < SLICES ? n : SLICES;
}

static void
slices(struct cmg__jsonw *w, const struct proc *p, size_t index)
{
  char name[128], size[32], stack[1024], id[48];
  struct slice s[2 * SLICES];
  size_t n = gather(p->r, s);

  for (size_t i = 0; i < n; i++) {
    snprintf(name, sizeof(name), "%s %s",
             cmg__format_size(s[i].bytes, size, sizeof(size)), s[i].api);
    snprintf(id, sizeof(id), "%zu.%zu", index, i);
    event(w, name, "b", p, s[i].start);
    cmg__jsonw_string(cmg__jsonw_key(w, "cat"), s[i].category);
    cmg__jsonw_string(cmg__jsonw_key(w, "id"), id);
    cmg__jsonw_object(cmg__jsonw_key(w, "args"));
    cmg__jsonw_number(cmg__jsonw_key(w, "bytes"), (double)s[i].bytes);
    device_arg(w, s[i].device);
    cmg__jsonw_string(cmg__jsonw_key(w, "kind"), s[i].kind);
    /* An allocation, not a group: its innermost frames as the report
     * names them, whole. */
    cmg__jsonw_string(cmg__jsonw_key(w, "stack"),
                      cmg__frame_name_raw_stack(p->r, s[i].stack, SLICE_FRAMES,
                                                stack, sizeof(stack)));
    cmg__jsonw_object_end(w);
    cmg__jsonw_object_end(w);
    event(w, name, "e", p, s[i].end);
    cmg__jsonw_string(cmg__jsonw_key(w, "cat"), s[i].category);
    cmg__jsonw_string(cmg__jsonw_key(w, "id"), id);
    cmg__jsonw_object_end(w);
  }
}

/* A pid no earlier report has, so that two runs of one pid stay apart. */
static long
unique_pid(const struct proc *procs, size_t n, long pid)
{
  for (size_t i = 0; i < n; i++)
    if (procs[i].pid == pid)
      return unique_pid(procs, n, pid + 10000000);
  return pid;
}

/* The trace of reports r[0..n), malloc'd; NULL when out of memory. */
static char *
trace(const struct cmg__model_report *r, int n, struct proc *procs)
{
  struct cmg__jsonw w;
  double origin = r[0].start_time;

  if (cmg__jsonw_open(&w, -1, false) != 0)
    return NULL;
  cmg__jsonw_object(&w);
  cmg__jsonw_array(cmg__jsonw_key(&w, "traceEvents"));

  for (int i = 1; i < n; i++)
    if (r[i].start_time < origin)
      origin = r[i].start_time;
  for (int i = 0; i < n; i++) {
    struct proc *p = &procs[i];

    p->r = &r[i];
    if (cmg__run_stacks_init(&p->stacks, &r[i]) != 0) {
      cmg__jsonw_close(&w);
      return NULL;
    }
    p->pid = unique_pid(procs, (size_t)i, r[i].pid);
    p->origin_us = (r[i].start_time - origin) * 1e6;
    metadata(&w, p, (size_t)i);
    for (size_t k = 0; k < r[i].timeline.n_series; k++)
      series(&w, p, &r[i].timeline.series[k]);
    denials(&w, p);
    dumps(&w, p);
    slices(&w, p, (size_t)i);
    if (p->oom) {
      cmg__jsonw_close(&w);
      return NULL;
    }
  }
  cmg__jsonw_array_end(&w);
  cmg__jsonw_string(cmg__jsonw_key(&w, "displayTimeUnit"), "ms");
  cmg__jsonw_object_end(&w);
  return cmg__jsonw_take(&w);
}

int
cmg__timeline_trace_main(char *const *files, int n_files, const char *output)
{
  struct cmg__model_report *r;
  char *text = NULL;
  FILE *f;
  int rc = 0;

  if (cmg__run_raw_read(files, n_files, CMG__READ_LARGEST, &r) != 0)
    return CMG__TOOL_EXIT_ERROR;
  if (cmg__run_need_timeline(r, n_files) != 0) {
    cmg__run_raw_free(r, n_files);
    return CMG__TOOL_EXIT_ERROR;
  }
  struct proc *procs = calloc((size_t)n_files, sizeof(*procs));
  if (procs != NULL)
    text = trace(r, n_files, procs);
  if (text == NULL) {
    cmg__output_say("out of memory");
    rc = CMG__TOOL_EXIT_ERROR;
  } else if ((f = cmg__output_create(output)) == NULL) {
    rc = CMG__TOOL_EXIT_ERROR;
  } else {
    fputs(text, f);
    fputc('\n', f);
    rc = cmg__output_close(f, output, 0);
  }
  free(text);
  for (int i = 0; procs != NULL && i < n_files; i++)
    cmg__run_stacks_free(&procs[i].stacks);
  free(procs);
  cmg__run_raw_free(r, n_files);
  return rc;
}
