/*
 * The JSON report, version 1 (docs/report-format.md): what was still live
 * grouped by stack, API and device, what was live at each device's peak and
 * at its first denial, every denial, and the stacks, frames and modules they
 * refer to, as indexed tables so each frame is symbolized and written once.
 *
 * cJSON is used by the report's files (report*.c) and nowhere else in the
 * library.  The report is written at exit, on a dump signal (from the dump
 * thread) or on request, never in a signal handler and never inside a
 * wrapper: it may take locks one at a time, malloc and symbolize.
 *
 * Everything but the leaks is built as two cJSON trees, the members before
 * "leaks" and those after, and printed as cJSON prints them.  The leaks,
 * one entry per live allocation, are written in between straight from the
 * sorted copy of the ledger (jsonw.c), in the same layout: as a tree they
 * were most of the time and nine tenths of the memory of a large report.
 *
 * The temporary file is created before the report is built, in the same
 * directory as the final path, and renamed over it only once complete: a
 * process killed at any point leaves either the old file or the new one at
 * that path, never a part (report_file.c).
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "runtime/history.h"
#include "runtime/jsonw.h"
#include "runtime/ledger.h"
#include "runtime/policy.h"
#include "runtime/report.h"
#include "runtime/report_devices.h"
#include "runtime/report_options.h"
#include "runtime/report_file.h"
#include "runtime/report_refs.h"
#include "core/signals.h"
#include "runtime/report_timeline.h"
#include "runtime/stacks.h"
#include "runtime/text.h"
#include "runtime/threads.h"
#include "runtime/timeline.h"

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

/* What the report is made of, all of it gathered before its first byte is
 * written, so that running out of memory leaves nothing half-written (on a
 * pipe, too). */
struct report {
  struct live live;
  struct group *groups;
  size_t n_groups;
  uint32_t *tids; /* the groups' threads, as live.a is laid out */
  struct cmg__thread_name *names;
  size_t n_names;
  struct cmg__refs refs;
  cJSON *head, *tail; /* the members before "leaks", and after */
};

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

/* How the process ends, where this report is its last word: by exit
 * with a status, or killed by a signal; null while it runs on. */
static cJSON *
end_json(const struct cmg__process *p)
{
  if (p->reason != CMG__REASON_EXIT && p->reason != CMG__REASON_KILLED)
    return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  if (p->reason == CMG__REASON_EXIT) {
    cJSON_AddStringToObject(o, "by", "exit");
    cJSON_AddItemToObject(o, "status",
                          p->status >= 0 ? cJSON_CreateNumber(p->status)
                                         : cJSON_CreateNull());
    return o;
  }
  char name[16];
  const char *abbrev = cmg__signal_abbrev(p->status);
  snprintf(name, sizeof(name), "SIG%s", abbrev ? abbrev : "?");
  cJSON_AddStringToObject(o, "by", "signal");
  cJSON_AddNumberToObject(o, "signal", p->status);
  cJSON_AddStringToObject(o, "name", name);
  return o;
}

static cJSON *
process_json(const struct cmg__process *p)
{
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "pid", p->pid);
  cJSON_AddNumberToObject(o, "ppid", p->ppid);
  cJSON_AddItemToObject(o, "exe", cmg__text_json(p->exe ? p->exe : ""));
  cJSON *argv = cJSON_AddArrayToObject(o, "argv");
  for (size_t i = 0; p->argv != NULL && p->argv[i] != NULL; i++)
    cJSON_AddItemToArray(argv, cmg__text_json(p->argv[i]));
  cJSON_AddItemToObject(o, "hostname",
                        cmg__text_json(p->hostname ? p->hostname : ""));
  cJSON_AddNumberToObject(o, "start_time", cmg__start_unix());
  cJSON_AddNumberToObject(o, "end_time", now.tv_sec + now.tv_nsec / 1e9);
  cJSON_AddStringToObject(o, "reason", reasons[p->reason]);
  cJSON_AddItemToObject(o, "end", end_json(p));
  return o;
}

static cJSON *
released_json(struct cmg__refs *r)
{
  size_t n;
  struct cmg__released *g = cmg__history_released_groups(&n);
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; i < n; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "stack", cmg__refs_stack(r, g[i].stack));
    cJSON_AddStringToObject(o, "api", api_name(g[i].fn));
    cJSON_AddStringToObject(o, "kind", kind_names[g[i].kind]);
    cJSON_AddItemToObject(o, "device", cmg__report_device(g[i].device));
    cJSON_AddNumberToObject(o, "count", g[i].count);
    cJSON_AddNumberToObject(o, "bytes", g[i].bytes);
    cJSON_AddNumberToObject(o, "time", seconds(g[i].time_ns));
    cJSON_AddItemToArray(a, o);
  }
  free(g);
  return a;
}

static cJSON *
composition_json(const struct cmg__composition *c, struct cmg__refs *r)
{
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; i < c->n; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "stack", cmg__refs_stack(r, c->items[i].stack));
    cJSON_AddNumberToObject(o, "bytes", c->items[i].bytes);
    cJSON_AddNumberToObject(o, "count", c->items[i].count);
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

static int
by_share_bytes(const void *x, const void *y)
{
  const struct cmg__share *a = x, *b = y;
  if (a->bytes != b->bytes)
    return a->bytes > b->bytes ? -1 : 1;
  return a->stack < b->stack ? -1 : a->stack > b->stack;
}

static cJSON *
peaks_json(struct cmg__refs *r, struct cmg__composition *first_denial)
{
  cJSON *a = cJSON_CreateArray();
  for (int d = 0; d < CMG__MAX_DEVICES; d++) {
    struct cmg__device_history h;
    if (cmg__history_device(d, &h) < 0)
      continue;
    if (h.has_peak) {
      if (h.peak.n > 1) /* items is NULL without stacks (stack_depth=0) */
        qsort(h.peak.items, h.peak.n, sizeof(*h.peak.items), by_share_bytes);
      cJSON *o = cJSON_CreateObject();
      cJSON_AddItemToObject(o, "device", cmg__report_device(d));
      cJSON_AddNumberToObject(o, "bytes", h.peak.bytes);
      cJSON_AddNumberToObject(o, "time", seconds(h.peak.time_ns));
      cJSON_AddItemToObject(o, "by_stack", composition_json(&h.peak, r));
      cJSON_AddItemToArray(a, o);
    }
    if (h.has_first_denial) {
      first_denial[d] = h.first_denial;
      h.first_denial.items = NULL;
    }
    cmg__history_device_free(&h);
  }
  return a;
}

static cJSON *
event_json(const struct cmg__event *e, struct cmg__refs *r)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "time", seconds(e->time_ns));
  cJSON_AddStringToObject(o, "api", api_name(e->fn));
  cJSON_AddItemToObject(o, "device", cmg__report_device(e->device));
  cJSON_AddNumberToObject(o, "requested_bytes", e->requested_bytes);
  cJSON_AddNumberToObject(o, "live_bytes", e->live_bytes);
  cJSON_AddItemToObject(o, "limit_bytes", cmg__report_bytes(e->limit_bytes));
  cJSON_AddItemToObject(o, "stack", cmg__refs_stack(r, e->stack));
  return o;
}

/* The denials (the first on each device with what was live then), and the
 * other policy decisions. */
static void
add_events(cJSON *root, cJSON *summary, struct cmg__refs *r,
           struct cmg__composition *first_denial)
{
  static struct cmg__event ev[CMG__MAX_EVENTS];
  static const char *const kinds[] = { "denial", "warn", "wait", "soft_limit" };
  uint64_t totals[4];
  size_t n = cmg__history_events(ev, CMG__MAX_EVENTS, totals);
  bool seen[CMG__MAX_DEVICES] = { false };
  cJSON *denials = cJSON_AddArrayToObject(root, "denials");
  cJSON *events = cJSON_AddArrayToObject(root, "events");
  for (size_t i = 0; i < n; i++) {
    cJSON *o = event_json(&ev[i], r);
    int dev = ev[i].device;
    if (ev[i].kind != CMG__EVENT_DENIAL) {
      cJSON_AddStringToObject(o, "kind", kinds[ev[i].kind]);
      if (ev[i].kind == CMG__EVENT_WAIT) {
        cJSON_AddNumberToObject(o, "waited", seconds(ev[i].waited_ns));
        cJSON_AddBoolToObject(o, "granted", ev[i].granted);
      }
      cJSON_AddItemToArray(events, o);
      continue;
    }
    if (dev >= 0 && dev < CMG__MAX_DEVICES && !seen[dev]) {
      struct cmg__composition *c = &first_denial[dev];
      seen[dev] = true;
      if (c->n > 1) /* items is NULL when empty; qsort takes no NULL */
        qsort(c->items, c->n, sizeof(*c->items), by_share_bytes);
      cJSON_AddItemToObject(o, "by_stack", composition_json(c, r));
    }
    cJSON_AddItemToArray(denials, o);
  }
  cJSON_AddNumberToObject(summary, "denials", totals[CMG__EVENT_DENIAL]);
  cJSON *counts = cJSON_AddObjectToObject(summary, "events");
  for (int k = 1; k < 4; k++)
    cJSON_AddNumberToObject(counts, kinds[k], totals[k]);
}

/* ---- leaks, written straight to the file ------------------------------ */

/* The indentation cJSON gives an allocation's members: the root, "leaks",
 * a leak and its "allocations" each go one level deeper. */
#define LEAK_TABS "\t\t\t"
#define ALLOC_TABS "\t\t\t\t\t"

/* A string as cJSON writes it, escapes included. */
static void
string(struct cmg__jsonw *w, const char *s)
{
  char buf[256];
  cJSON node = { .type = cJSON_String, .valuestring = (char *)s };
  if (cJSON_PrintPreallocated(&node, buf, sizeof(buf), false)) {
    cmg__jsonw_text(w, buf);
    return;
  }
  char *text = cJSON_PrintUnformatted(&node);
  if (text != NULL)
    cmg__jsonw_text(w, text);
  else
    cmg__jsonw_fail(w, -ENOMEM);
  cJSON_free(text);
}

/* A count or a byte total as cJSON prints a number: below 10^15 an integer
 * has at most 15 digits, all of which "%1.15g" prints; a larger one goes
 * through cJSON, exponent and all. */
static void
number(struct cmg__jsonw *w, uint64_t v)
{
  char buf[64];
  cJSON node = { .type = cJSON_Number };
  if (v < 1000000000000000ull) {
    cmg__jsonw_u64(w, v);
    return;
  }
  cJSON_SetNumberValue(&node, (double)v);
  if (cJSON_PrintPreallocated(&node, buf, sizeof(buf), false))
    cmg__jsonw_text(w, buf);
  else
    cmg__jsonw_fail(w, -ENOMEM);
}

static void
allocation(struct cmg__jsonw *w, const struct cmg__alloc *a)
{
  cmg__jsonw_lit(w, "{\n" ALLOC_TABS "\"address\":\t");
  cmg__jsonw_hex(w, a->addr);
  cmg__jsonw_lit(w, ",\n" ALLOC_TABS "\"bytes\":\t");
  cmg__jsonw_u64(w, a->size);
  cmg__jsonw_lit(w, ",\n" ALLOC_TABS "\"thread\":\t");
  cmg__jsonw_u64(w, a->thread);
  cmg__jsonw_lit(w, ",\n" ALLOC_TABS "\"seq\":\t");
  cmg__jsonw_u64(w, a->seq);
  cmg__jsonw_lit(w, ",\n" ALLOC_TABS "\"time\":\t");
  cmg__jsonw_seconds(w, a->time_ns);
  cmg__jsonw_lit(w, "\n\t\t\t\t}");
}

/* The threads a leak's allocations were made on, with their names. */
static void
threads(struct cmg__jsonw *w, const struct report *rep, const struct group *g)
{
  const uint32_t *t = rep->tids + g->first;
  cmg__jsonw_lit(w, ",\n" LEAK_TABS "\"threads\":\t[");
  for (size_t j = 0; j < g->threads; j++) {
    const char *name = cmg__threads_find(rep->names, rep->n_names, t[j]);
    char text[CMG__TEXT_ROOM(CMG__THREAD_NAME)];
    if (j > 0)
      cmg__jsonw_lit(w, ", ");
    cmg__jsonw_lit(w, "{\n" ALLOC_TABS "\"tid\":\t");
    cmg__jsonw_u64(w, t[j]);
    cmg__jsonw_lit(w, ",\n" ALLOC_TABS "\"name\":\t");
    if (name != NULL) {
      cmg__text_escape(text, sizeof(text), name, strlen(name));
      string(w, text);
    } else {
      cmg__jsonw_lit(w, "null");
    }
    cmg__jsonw_lit(w, "\n\t\t\t\t}");
  }
  cmg__jsonw_lit(w, "]");
}

/* One leak: the allocations of one (stack, api, kind, device). */
static void
leak(struct cmg__jsonw *w, const struct report *rep, const struct group *g)
{
  const struct cmg__alloc *first = &rep->live.a[g->first];
  const struct cmg__refs *r = &rep->refs;
  cmg__jsonw_lit(w, "{\n" LEAK_TABS "\"stack\":\t");
  if (cmg__refs_is_stack(r, first->stack))
    cmg__jsonw_u64(w, first->stack);
  else
    cmg__jsonw_lit(w, "null");
  cmg__jsonw_lit(w, ",\n" LEAK_TABS "\"api\":\t");
  string(w, api_name(first->fn));
  cmg__jsonw_lit(w, ",\n" LEAK_TABS "\"kind\":\t");
  string(w, kind_names[first->kind]);
  cmg__jsonw_lit(w, ",\n" LEAK_TABS "\"device\":\t");
  if (cmg__is_report_device(first->device))
    cmg__jsonw_u64(w, (uint64_t)first->device);
  else
    cmg__jsonw_lit(w, "null");
  cmg__jsonw_lit(w, ",\n" LEAK_TABS "\"count\":\t");
  number(w, g->n);
  cmg__jsonw_lit(w, ",\n" LEAK_TABS "\"bytes\":\t");
  number(w, g->bytes);
  threads(w, rep, g);
  cmg__jsonw_lit(w, ",\n" LEAK_TABS "\"allocations\":\t[");
  for (size_t j = 0; j < g->n; j++) {
    if (j > 0)
      cmg__jsonw_lit(w, ", ");
    allocation(w, &first[j]);
  }
  cmg__jsonw_lit(w, "]\n\t\t}");
}

static void
leaks(struct cmg__jsonw *w, const struct report *rep)
{
  cmg__jsonw_lit(w, "[");
  for (size_t i = 0; i < rep->n_groups; i++) {
    if (i > 0)
      cmg__jsonw_lit(w, ", ");
    leak(w, rep, &rep->groups[i]);
  }
  cmg__jsonw_lit(w, "]");
}

/* ---- the whole report -------------------------------------------------- */

/* Copies the ledger, groups what is live and adds it up; marks the stacks
 * the leaks refer to. */
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
  return 0;
}

/* The members before "leaks"; the summary's counts of events come later. */
static cJSON *
head_json(const struct cmg__process *proc, const struct live *l)
{
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "format", "cumemguard-report");
  cJSON_AddNumberToObject(root, "version", CMG_REPORT_VERSION);
  cJSON *tool = cJSON_AddObjectToObject(root, "tool");
  cJSON_AddStringToObject(tool, "name", "cumemguard");
  cJSON_AddStringToObject(tool, "version", CMG_VERSION_STRING);
  cJSON_AddItemToObject(root, "process", process_json(proc));
  cJSON_AddItemToObject(root, "options", cmg__report_options_json(proc));
  cJSON_AddItemToObject(root, "devices", cmg__report_devices_json());
  cJSON_AddItemToObject(root, "host", cmg__report_host_json());
  cJSON_AddItemToObject(root, "group", cmg__report_group_json());
  cJSON *summary = cJSON_AddObjectToObject(root, "summary");
  cJSON_AddNumberToObject(summary, "live_allocations", l->device_allocations);
  cJSON_AddNumberToObject(summary, "live_bytes", l->device_bytes);
  cJSON_AddNumberToObject(summary, "host_live_bytes", l->host_bytes);
  cJSON_AddNumberToObject(summary, "untracked_frees",
                          cmg__ledger_untracked_frees());
  return root;
}

static int
build(const struct cmg__process *proc, struct report *rep)
{
  struct cmg__composition first_denial[CMG__MAX_DEVICES] = { { 0 } };
  struct cmg__refs *r = &rep->refs;
  int err = gather_live(rep);
  if (err < 0)
    return err;
  cmg__report_step();
  rep->head = head_json(proc, &rep->live);
  cmg__report_step();
  rep->tail = cJSON_CreateObject();
  cJSON_AddItemToObject(rep->tail, "released", released_json(r));
  cJSON_AddItemToObject(rep->tail, "peaks", peaks_json(r, first_denial));
  add_events(rep->tail, cJSON_GetObjectItemCaseSensitive(rep->head, "summary"),
             r, first_denial);
  if (cmg__timeline_on)
    cJSON_AddItemToObject(
        rep->tail, "timeline",
        cmg__report_timeline(cmg__now_ns(), reasons, r, api_name));
  for (int d = 0; d < CMG__MAX_DEVICES; d++)
    free(first_denial[d].items);
  cmg__report_step();
  return cmg__refs_add_tables(rep->tail, r);
}

/* The report as one object, laid out as cJSON_Print lays it out: the head
 * without its closing "\n}", the leaks, the tail without its opening "{\n".
 * A cJSON object prints as "{\n", its members, "\n}" at the root. */
static int
emit(int fd, const struct report *rep)
{
  struct cmg__jsonw w;
  char *head = cJSON_Print(rep->head), *tail = cJSON_Print(rep->tail);
  int err = head && tail ? cmg__jsonw_open(&w, fd) : -ENOMEM;
  if (err == 0) {
    cmg__jsonw_put(&w, head, strlen(head) - 2);
    cmg__jsonw_lit(&w, ",\n\t\"leaks\":\t");
    leaks(&w, rep);
    cmg__jsonw_lit(&w, ",\n");
    cmg__jsonw_text(&w, tail + 2);
    cmg__jsonw_lit(&w, "\n");
    err = cmg__jsonw_close(&w);
  }
  cJSON_free(head);
  cJSON_free(tail);
  return err;
}

static void
report_free(struct report *rep)
{
  cJSON_Delete(rep->head);
  cJSON_Delete(rep->tail);
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
  err = build(proc, &rep);
  cmg__report_step();
  if (err == 0)
    err = emit(f.fd, &rep);
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
