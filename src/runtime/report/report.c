/*
 * The JSON report, version 1 (docs/report-format.md): what was still live
 * grouped by stack, API and device, what was live at each device's peak and
 * at its first denial, every denial, and the stacks, frames and modules they
 * refer to, as indexed tables so each frame is symbolized and written once.
 *
 * The report is written at exit, on a dump signal (from the dump thread)
 * or on request, never in a signal handler and never inside a wrapper: it
 * may take locks one at a time, malloc and symbolize.
 *
 * It is written as it is made, member by member, by one writer
 * (core/jsonw.c), in the layout cJSON_Print gave it when it was a cJSON
 * tree: as a tree, a million live allocations took a gigabyte and most of
 * the report's time.  The live allocations are gathered, sorted and
 * grouped before the first byte, and the events counted, since the summary
 * near the top adds them up.
 *
 * The temporary file is created before the report is built, in the same
 * directory as the final path, and renamed over it only once complete: a
 * process killed at any point leaves either the old file or the new one at
 * that path, never a part (report_file.c).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/base.h"
#include "core/jsonw.h"
#include "core/signals.h"
#include "runtime/ledger/history.h"
#include "runtime/ledger/ledger.h"
#include "runtime/limits/policy.h"
#include "runtime/report/report.h"
#include "runtime/report/report_devices.h"
#include "runtime/report/report_file.h"
#include "runtime/report/report_options.h"
#include "runtime/report/report_refs.h"
#include "runtime/report/report_timeline.h"
#include "runtime/report/report_text.h"
#include "runtime/ledger/thread_names.h"
#include "runtime/ledger/timeline.h"

struct live {
  struct cmg__alloc *a;
  size_t n, cap;
  bool oom;
  uint64_t device_allocations, device_bytes; /* device memory only */
  uint64_t held_allocations, held_bytes;     /* of which the driver's */
  uint64_t host_bytes;
};

struct group {
  size_t first, n; /* range in the sorted live array */
  size_t threads;  /* distinct threads, by tid, first in that range of tids */
  uint64_t bytes;
};

/* What the report is made of that must be known before its first byte:
 * the live allocations, grouped, and the events the summary counts. */
struct report {
  struct live live;
  struct group *groups;
  size_t n_groups;
  uint32_t *tids; /* the groups' threads, as live.a is laid out */
  struct cmg__thread_name *names;
  size_t n_names;
  struct cmg__refs refs;
  size_t n_events;
  uint64_t totals[4]; /* events of each kind (enum cmg__event_kind), ever */
};

/* The events, the first CMG__MAX_EVENTS of them: reports are written one
 * at a time, and the array is too large for the stack. */
static struct cmg__event events[CMG__MAX_EVENTS];

static const char *const reasons[CMG__REASONS] = { "exit",    "signal",
                                                   "request", "soft_limit",
                                                   "killed",  "snapshot" };

/* The process being reported on, while its report is written: reports are
 * written one at a time (their caller serializes them). */
static const struct cmg__process *current;

/* The API label of an allocation or event, as the program knows it. */
static const char *
api_name(unsigned fn)
{
  const char *name = current->api_name ? current->api_name(fn) : NULL;
  return name ? name : "unknown";
}

static const char *const kind_names[CMG__KIND_COUNT] = {
  [CMG__KIND_DEVICE] = "device", [CMG__KIND_ARRAY] = "array",
  [CMG__KIND_VMM] = "vmm",       [CMG__KIND_HOST] = "host",
  [CMG__KIND_IMPORT] = "import", [CMG__KIND_VMM_OTHER] = "vmm_host",
  [CMG__KIND_GRAPH] = "graph",   [CMG__KIND_CONTEXT] = "context",
};

static double
seconds(uint64_t ns)
{
  return (double)(ns / 1000) / 1e6;
}

/* ---- collecting -------------------------------------------------------- */

static void
collect(const struct cmg__alloc *a, void *arg)
{
  struct live *l = arg;
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 1024;
    struct cmg__alloc *p = realloc(l->a, cap * sizeof(*p));
    if (p == NULL) {
      l->oom = true;
      return;
    }
    l->a = p;
    l->cap = cap;
  }
  l->a[l->n++] = *a;
}

/* The leaks' order: by site (stack, api, device, kind), then by sequence.
 * qsort sorts records this large through pointers to them, reading them at
 * random in memory; sorting a small key per record and moving each record
 * once took 0.6 s instead of 1.0 s for a million of them. */
struct order {
  uint64_t site, seq;
  size_t i;
};

static uint64_t
site_key(const struct cmg__alloc *a)
{
  return (uint64_t)a->stack << 32 | (uint64_t)a->fn << 24 |
         (uint64_t)(uint16_t)(a->device + 32768) << 8 | a->kind;
}

static int
by_order(const void *x, const void *y)
{
  const struct order *a = x, *b = y;
  if (a->site != b->site)
    return a->site < b->site ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int
sort_live(struct live *l)
{
  if (l->n < 2) /* l->a is NULL when nothing is live */
    return 0;
  struct order *o = malloc(l->n * sizeof(*o));
  struct cmg__alloc *sorted = malloc(l->n * sizeof(*sorted));
  if (o == NULL || sorted == NULL) {
    free(o);
    free(sorted);
    return -ENOMEM;
  }
  for (size_t i = 0; i < l->n; i++)
    o[i] = (struct order){ site_key(&l->a[i]), l->a[i].seq, i };
  qsort(o, l->n, sizeof(*o), by_order);
  for (size_t i = 0; i < l->n; i++)
    sorted[i] = l->a[o[i].i];
  free(o);
  free(l->a);
  l->a = sorted;
  l->cap = l->n;
  return 0;
}

static int
by_bytes(const void *x, const void *y)
{
  const struct group *a = x, *b = y;
  if (a->bytes != b->bytes)
    return a->bytes > b->bytes ? -1 : 1;
  if (a->n != b->n)
    return a->n > b->n ? -1 : 1;
  return a->first < b->first ? -1 : 1;
}

static bool
same_site(const struct cmg__alloc *a, const struct cmg__alloc *b)
{
  return a->stack == b->stack && a->fn == b->fn && a->device == b->device &&
         a->kind == b->kind;
}

/* Groups the live allocations, sorted by site, by (stack, api, device),
 * largest group first.  Returns the number of groups, or -ENOMEM. */
static ptrdiff_t
group_live(const struct live *l, struct group **out)
{
  struct group *g = malloc((l->n ? l->n : 1) * sizeof(*g));
  size_t n = 0;
  if (g == NULL)
    return -ENOMEM;
  for (size_t i = 0; i < l->n; i++) {
    if (n == 0 || !same_site(&l->a[g[n - 1].first], &l->a[i]))
      g[n++] = (struct group){ .first = i };
    g[n - 1].n++;
    g[n - 1].bytes += l->a[i].size;
  }
  qsort(g, n, sizeof(*g), by_bytes);
  *out = g;
  return (ptrdiff_t)n;
}

/* Each group's distinct threads, into its own range of rep->tids: a group
 * has no more threads than allocations. */
static int
group_threads(struct report *rep)
{
  const struct live *l = &rep->live;
  rep->tids = malloc((l->n ? l->n : 1) * sizeof(*rep->tids));
  if (rep->tids == NULL)
    return -ENOMEM;
  for (size_t i = 0; i < rep->n_groups; i++) {
    struct group *g = &rep->groups[i];
    uint32_t *t = rep->tids + g->first;
    for (size_t j = 0; j < g->n; j++)
      t[j] = l->a[g->first + j].thread;
    g->threads = cmg__threads_distinct(t, g->n);
  }
  /* Without names (out of memory) the threads are still listed. */
  rep->names = cmg__threads_sorted(&rep->n_names);
  return 0;
}

/* ---- sections ---------------------------------------------------------- */

#define KEY(name) cmg__jsonw_key(w, name)

/* How the process ends, where this report is its last word: by exit
 * with a status, or killed by a signal; null while it runs on. */
static void
end(struct cmg__jsonw *w, const struct cmg__process *p)
{
  if (p->reason != CMG__REASON_EXIT && p->reason != CMG__REASON_KILLED) {
    cmg__jsonw_null(w);
    return;
  }
  cmg__jsonw_object(w);
  if (p->reason == CMG__REASON_EXIT) {
    cmg__jsonw_string(KEY("by"), "exit");
    if (p->status >= 0)
      cmg__jsonw_number(KEY("status"), p->status);
    else
      cmg__jsonw_null(KEY("status"));
  } else {
    char name[16];
    const char *abbrev = cmg__signal_abbrev(p->status);
    snprintf(name, sizeof(name), "SIG%s", abbrev ? abbrev : "?");
    cmg__jsonw_string(KEY("by"), "signal");
    cmg__jsonw_number(KEY("signal"), p->status);
    cmg__jsonw_string(KEY("name"), name);
  }
  cmg__jsonw_object_end(w);
}

static void
process(struct cmg__jsonw *w, const struct cmg__process *p)
{
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  cmg__jsonw_object(w);
  cmg__jsonw_number(KEY("pid"), p->pid);
  cmg__jsonw_number(KEY("ppid"), p->ppid);
  cmg__text_string(KEY("exe"), p->exe ? p->exe : "");
  cmg__jsonw_array(KEY("argv"));
  for (size_t i = 0; p->argv != NULL && p->argv[i] != NULL; i++)
    cmg__text_string(w, p->argv[i]);
  cmg__jsonw_array_end(w);
  cmg__text_string(KEY("hostname"), p->hostname ? p->hostname : "");
  cmg__jsonw_number(KEY("start_time"), cmg__start_unix());
  cmg__jsonw_number(KEY("end_time"), now.tv_sec + now.tv_nsec / 1e9);
  cmg__jsonw_string(KEY("reason"), reasons[p->reason]);
  end(KEY("end"), p);
  cmg__jsonw_object_end(w);
}

static void
released(struct cmg__jsonw *w, struct cmg__refs *r)
{
  size_t n;
  struct cmg__released *g = cmg__history_released_groups(&n);
  cmg__jsonw_array(w);
  for (size_t i = 0; i < n; i++) {
    cmg__jsonw_object(w);
    cmg__refs_stack(KEY("stack"), r, g[i].stack);
    cmg__jsonw_string(KEY("api"), api_name(g[i].fn));
    cmg__jsonw_string(KEY("kind"), kind_names[g[i].kind]);
    cmg__report_device(KEY("device"), g[i].device);
    cmg__jsonw_uint(KEY("count"), g[i].count);
    cmg__jsonw_uint(KEY("bytes"), g[i].bytes);
    cmg__jsonw_number(KEY("time"), seconds(g[i].time_ns));
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
  free(g);
}

static void
composition(struct cmg__jsonw *w, const struct cmg__composition *c,
            struct cmg__refs *r)
{
  cmg__jsonw_array(w);
  for (size_t i = 0; i < c->n; i++) {
    cmg__jsonw_object(w);
    cmg__refs_stack(KEY("stack"), r, c->items[i].stack);
    cmg__jsonw_uint(KEY("bytes"), c->items[i].bytes);
    cmg__jsonw_uint(KEY("count"), c->items[i].count);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

static int
by_share_bytes(const void *x, const void *y)
{
  const struct cmg__share *a = x, *b = y;
  if (a->bytes != b->bytes)
    return a->bytes > b->bytes ? -1 : 1;
  return a->stack < b->stack ? -1 : a->stack > b->stack;
}

static void
peak(struct cmg__jsonw *w, int d, struct cmg__composition *c,
     struct cmg__refs *r)
{
  if (c->n > 1) /* items is NULL without stacks (stack_depth=0) */
    qsort(c->items, c->n, sizeof(*c->items), by_share_bytes);
  cmg__jsonw_object(w);
  cmg__report_device(KEY("device"), d);
  cmg__jsonw_uint(KEY("bytes"), c->bytes);
  cmg__jsonw_number(KEY("time"), seconds(c->time_ns));
  composition(KEY("by_stack"), c, r);
  cmg__jsonw_object_end(w);
}

static void
peaks(struct cmg__jsonw *w, struct cmg__refs *r,
      struct cmg__composition *first_denial)
{
  cmg__jsonw_array(w);
  for (int d = 0; d < CMG__MAX_DEVICES; d++) {
    struct cmg__device_history h;
    if (cmg__history_device(d, &h) < 0)
      continue;
    if (h.has_peak)
      peak(w, d, &h.peak, r);
    if (h.has_first_denial) {
      first_denial[d] = h.first_denial;
      h.first_denial.items = NULL;
    }
    cmg__history_device_free(&h);
  }
  cmg__jsonw_array_end(w);
}

static const char *const event_kinds[] = { "denial", "warn", "wait",
                                           "soft_limit" };

/* The members every event has; the caller closes the object. */
static void
event(struct cmg__jsonw *w, const struct cmg__event *e, struct cmg__refs *r)
{
  cmg__jsonw_object(w);
  cmg__jsonw_number(KEY("time"), seconds(e->time_ns));
  cmg__jsonw_string(KEY("api"), api_name(e->fn));
  cmg__report_device(KEY("device"), e->device);
  cmg__jsonw_uint(KEY("requested_bytes"), e->requested_bytes);
  cmg__jsonw_uint(KEY("live_bytes"), e->live_bytes);
  cmg__report_bytes(KEY("limit_bytes"), e->limit_bytes);
  cmg__refs_stack(KEY("stack"), r, e->stack);
}

/* The denials, the first on each device with what was live then. */
static void
denials(struct cmg__jsonw *w, const struct report *rep, struct cmg__refs *r,
        struct cmg__composition *first_denial)
{
  bool seen[CMG__MAX_DEVICES] = { false };
  cmg__jsonw_array(w);
  for (size_t i = 0; i < rep->n_events; i++) {
    int dev = events[i].device;
    if (events[i].kind != CMG__EVENT_DENIAL)
      continue;
    event(w, &events[i], r);
    if (dev >= 0 && dev < CMG__MAX_DEVICES && !seen[dev]) {
      struct cmg__composition *c = &first_denial[dev];
      seen[dev] = true;
      if (c->n > 1) /* items is NULL when empty; qsort takes no NULL */
        qsort(c->items, c->n, sizeof(*c->items), by_share_bytes);
      composition(KEY("by_stack"), c, r);
    }
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

/* The other policy decisions. */
static void
other_events(struct cmg__jsonw *w, const struct report *rep,
             struct cmg__refs *r)
{
  cmg__jsonw_array(w);
  for (size_t i = 0; i < rep->n_events; i++) {
    const struct cmg__event *e = &events[i];
    if (e->kind == CMG__EVENT_DENIAL)
      continue;
    event(w, e, r);
    cmg__jsonw_string(KEY("kind"), event_kinds[e->kind]);
    if (e->kind == CMG__EVENT_WAIT) {
      cmg__jsonw_number(KEY("waited"), seconds(e->waited_ns));
      cmg__jsonw_bool(KEY("granted"), e->granted);
    }
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

/* ---- leaks ------------------------------------------------------------- */

static void
allocation(struct cmg__jsonw *w, const struct cmg__alloc *a)
{
  cmg__jsonw_object(w);
  cmg__jsonw_hex(KEY("address"), a->addr);
  cmg__jsonw_u64(KEY("bytes"), a->size);
  cmg__jsonw_u64(KEY("thread"), a->thread);
  cmg__jsonw_u64(KEY("seq"), a->seq);
  cmg__jsonw_seconds(KEY("time"), a->time_ns);
  cmg__jsonw_object_end(w);
}

/* The threads a leak's allocations were made on, with their names. */
static void
threads(struct cmg__jsonw *w, const struct report *rep, const struct group *g)
{
  const uint32_t *t = rep->tids + g->first;
  cmg__jsonw_array(w);
  for (size_t j = 0; j < g->threads; j++) {
    const char *name = cmg__threads_find(rep->names, rep->n_names, t[j]);
    cmg__jsonw_object(w);
    cmg__jsonw_u64(KEY("tid"), t[j]);
    if (name != NULL)
      cmg__text_string(KEY("name"), name);
    else
      cmg__jsonw_null(KEY("name"));
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

/* One leak: the allocations of one (stack, api, kind, device). */
static void
leak(struct cmg__jsonw *w, const struct report *rep, const struct group *g)
{
  const struct cmg__alloc *first = &rep->live.a[g->first];
  cmg__jsonw_object(w);
  if (cmg__refs_is_stack(&rep->refs, first->stack))
    cmg__jsonw_u64(KEY("stack"), first->stack);
  else
    cmg__jsonw_null(KEY("stack"));
  cmg__jsonw_string(KEY("api"), api_name(first->fn));
  cmg__jsonw_string(KEY("kind"), kind_names[first->kind]);
  cmg__report_device(KEY("device"), first->device);
  cmg__jsonw_uint(KEY("count"), g->n);
  cmg__jsonw_uint(KEY("bytes"), g->bytes);
  threads(KEY("threads"), rep, g);
  cmg__jsonw_array(KEY("allocations"));
  for (size_t j = 0; j < g->n; j++)
    allocation(w, &first[j]);
  cmg__jsonw_array_end(w);
  cmg__jsonw_object_end(w);
}

static void
leaks(struct cmg__jsonw *w, const struct report *rep)
{
  cmg__jsonw_array(w);
  for (size_t i = 0; i < rep->n_groups; i++)
    leak(w, rep, &rep->groups[i]);
  cmg__jsonw_array_end(w);
}

/* ---- the whole report -------------------------------------------------- */

/* Copies the ledger, groups what is live and adds it up; marks the stacks
 * the leaks refer to; copies the events. */
static int
gather_live(struct report *rep)
{
  struct live *l = &rep->live;
  struct cmg__refs *r = &rep->refs;
  cmg__ledger_foreach(collect, l);
  if (l->oom || sort_live(l) < 0)
    return -ENOMEM;
  ptrdiff_t n_groups = group_live(l, &rep->groups);
  if (n_groups < 0 || cmg__refs_init(r) < 0)
    return -ENOMEM;
  rep->n_groups = (size_t)n_groups;
  if (group_threads(rep) < 0)
    return -ENOMEM;
  for (size_t i = 0; i < rep->n_groups; i++) {
    uint32_t id = l->a[rep->groups[i].first].stack;
    cmg__refs_mark(r, id);
  }
  for (size_t i = 0; i < l->n; i++) {
    bool held = cmg__kind_is_drivers(l->a[i].kind);
    if (cmg__kind_is_device(l->a[i].kind)) {
      l->device_bytes += l->a[i].size;
      l->device_allocations++;
      l->held_bytes += held ? l->a[i].size : 0;
      l->held_allocations += held;
    } else if (l->a[i].kind == CMG__KIND_HOST)
      l->host_bytes += l->a[i].size;
  }
  rep->n_events = cmg__history_events(events, CMG__MAX_EVENTS, rep->totals);
  return 0;
}

static void
summary(struct cmg__jsonw *w, const struct report *rep)
{
  const struct live *l = &rep->live;
  cmg__jsonw_object(w);
  cmg__jsonw_uint(KEY("live_allocations"), l->device_allocations);
  cmg__jsonw_uint(KEY("live_bytes"), l->device_bytes);
  cmg__jsonw_uint(KEY("host_live_bytes"), l->host_bytes);
  cmg__jsonw_uint(KEY("untracked_frees"), cmg__ledger_untracked_frees());
  cmg__jsonw_uint(KEY("denials"), rep->totals[CMG__EVENT_DENIAL]);
  cmg__jsonw_object(KEY("events"));
  for (int k = 1; k < 4; k++)
    cmg__jsonw_uint(KEY(event_kinds[k]), rep->totals[k]);
  cmg__jsonw_object_end(w);
  cmg__jsonw_object_end(w);
}

/* The members before "leaks". */
static void
head(struct cmg__jsonw *w, const struct cmg__process *proc,
     const struct report *rep)
{
  cmg__jsonw_string(KEY("format"), "cumemguard-report");
  cmg__jsonw_number(KEY("version"), CMG_REPORT_VERSION);
  cmg__jsonw_object(KEY("tool"));
  cmg__jsonw_string(KEY("name"), "cumemguard");
  cmg__jsonw_string(KEY("version"), CMG_VERSION_STRING);
  cmg__jsonw_object_end(w);
  process(KEY("process"), proc);
  cmg__report_options(KEY("options"), proc);
  cmg__report_devices(KEY("devices"));
  cmg__report_host(KEY("host"));
  cmg__report_group(KEY("group"));
  summary(KEY("summary"), rep);
  cmg__report_step();
}

/* The members after "leaks". */
static int
tail(struct cmg__jsonw *w, struct report *rep)
{
  struct cmg__composition first_denial[CMG__MAX_DEVICES] = { { 0 } };
  struct cmg__refs *r = &rep->refs;
  released(KEY("released"), r);
  peaks(KEY("peaks"), r, first_denial);
  denials(KEY("denials"), rep, r, first_denial);
  other_events(KEY("events"), rep, r);
  if (cmg__timeline_on)
    cmg__report_timeline(KEY("timeline"), cmg__now_ns(), reasons, r, api_name);
  for (int d = 0; d < CMG__MAX_DEVICES; d++)
    free(first_denial[d].items);
  cmg__report_step();
  return cmg__refs_write_tables(w, r);
}

/* The whole report; the first error. */
static int
document(struct cmg__jsonw *w, const struct cmg__process *proc,
         struct report *rep)
{
  cmg__jsonw_object(w);
  head(w, proc, rep);
  leaks(cmg__jsonw_key(w, "leaks"), rep);
  int err = tail(w, rep);
  cmg__jsonw_object_end(w);
  cmg__jsonw_lit(w, "\n");
  if (err < 0)
    cmg__jsonw_fail(w, err);
  return w->err;
}

/* Into the temporary file as it is made; or, where the report goes to its
 * path itself (a pipe, a device), into memory first: what a pipe was given
 * no rename takes back, and a failure half-way must leave nothing there. */
static int
emit(const struct cmg__report_file *f, const struct cmg__process *proc,
     struct report *rep)
{
  struct cmg__jsonw w;
  bool direct = f->tmp[0] == '\0';
  int err = cmg__jsonw_open(&w, direct ? -1 : f->fd, true);
  if (err < 0)
    return err;
  w.on_flush = cmg__report_step;
  if (document(&w, proc, rep) < 0 || !direct)
    return cmg__jsonw_close(&w);
  size_t len = w.len;
  char *text = cmg__jsonw_take(&w);
  err = text != NULL ? cmg__jsonw_open(&w, f->fd, true) : -ENOMEM;
  if (err == 0) {
    /* In pieces, each flush a step, as a slow reader of the pipe takes
     * them. */
    w.on_flush = cmg__report_step;
    for (size_t off = 0; off < len; off += 65536)
      cmg__jsonw_put(&w, text + off, len - off < 65536 ? len - off : 65536);
    err = cmg__jsonw_close(&w);
  }
  free(text);
  return err;
}

static void
report_free(struct report *rep)
{
  free(rep->live.a);
  free(rep->groups);
  free(rep->tids);
  free(rep->names);
  cmg__refs_free(&rep->refs);
}

int
cmg__report_write(const char *path, const struct cmg__process *proc,
                  uint64_t *live_allocations, uint64_t *live_bytes)
{
  struct cmg__report_file f;
  int err = cmg__report_file_open(&f, path);
  if (err < 0)
    return err;

  struct report rep = { 0 };
  current = proc;
  cmg__timeline_dump(proc->reason, cmg__now_ns());
  err = gather_live(&rep);
  cmg__report_step();
  if (err == 0)
    err = emit(&f, proc, &rep);
  err = cmg__report_file_close(&f, err);
  /* What the program allocated: a graph memory pool or a context is the
   * driver's to keep, never a leak. */
  if (err == 0) {
    *live_allocations = rep.live.device_allocations - rep.live.held_allocations;
    *live_bytes = rep.live.device_bytes - rep.live.held_bytes;
  }
  report_free(&rep);
  return err;
}
