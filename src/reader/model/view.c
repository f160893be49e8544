/*
 * Views over reports: what every command prints from.  A view adds reports
 * on top of an index (index.c): leak groups of equal (stack,
 * API, device) are summed, devices are matched by UUID (merge: processes of
 * one job may number the same GPU differently) or by ordinal (diff: two
 * runs may have been given different GPUs), and the peaks and first
 * denials of each report are kept as they were, with their stacks interned.
 * A leak, peak or denial on an ordinal that the report's devices[] does not
 * list gets a row of its own with no name, rather than being dropped.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/load/model.h"
#include "reader/load/read.h"
#include "reader/model/frame_class.h"
#include "reader/model/index.h"
#include "reader/model/intern.h"
#include "reader/model/leak_class.h"
#include "reader/model/pool_blocks.h"
#include "reader/model/view.h"
#include "reader/tool.h"

/* A report's groups come one after another, so its threads already in
 * `to` are the last ones there: the common case (a group's first report, or
 * one group per report) looks at none. */
static int
threads_add(struct cmg__model_threads *to,
            const struct cmg__model_threads *from, uint32_t source)
{
  size_t before = to->n;

  for (size_t i = 0; i < from->n; i++) {
    const struct cmg__model_thread *f = &from->list[i];
    size_t k = before;

    while (k > 0 && to->list[k - 1].source == source &&
           to->list[k - 1].tid != f->tid)
      k--;
    if (k > 0 && to->list[k - 1].source == source)
      continue;
    if (to->n == to->cap) {
      size_t cap = to->cap ? 2 * to->cap : 4;
      struct cmg__model_thread *p = realloc(to->list, cap * sizeof(*p));

      if (p == NULL)
        return -ENOMEM;
      to->list = p;
      to->cap = cap;
    }
    struct cmg__model_thread *t = &to->list[to->n];

    t->source = source;
    t->tid = f->tid;
    t->name = NULL;
    if (f->name != NULL && (t->name = strdup(f->name)) == NULL)
      return -ENOMEM;
    to->n++;
  }
  return 0;
}

/* ---- views -------------------------------------------------------------- */

void
cmg__view_init(struct cmg__view *v, struct cmg__index *ix, bool by_uuid)
{
  memset(v, 0, sizeof(*v));
  v->ix = ix;
  v->by_uuid = by_uuid;
}

void
cmg__view_free(struct cmg__view *v)
{
  for (size_t i = 0; i < v->n_sources; i++) {
    struct cmg__view_source *s = &v->sources[i];

    free(s->file);
    free(s->exe);
    free(s->command);
    free(s->hostname);
    free(s->reason);
    free(s->killed_by);
  }
  for (size_t i = 0; i < v->n_devices; i++) {
    free(v->devices[i].name);
    free(v->devices[i].uuid);
    free(v->devices[i].footprint.why);
  }
  for (size_t i = 0; i < v->n_leaks; i++) {
    free(v->leaks[i].api);
    free(v->leaks[i].kind);
    cmg__read_threads_free(&v->leaks[i].threads);
  }
  for (size_t i = 0; i < v->n_peaks; i++)
    free(v->peaks[i].comp.items);
  for (size_t i = 0; i < v->n_denials; i++) {
    free(v->denials[i].comp.items);
    free(v->denials[i].api);
  }
  free(v->python_note);
  free(v->sources);
  free(v->devices);
  free(v->leaks);
  free(v->peaks);
  free(v->denials);
  cmg__intern_map_free(&v->leak_map);
  memset(v, 0, sizeof(*v));
}

static bool
is_same_device(const struct cmg__view *v, const struct cmg__view_device *d,
               int ordinal, const char *uuid)
{
  if (v->by_uuid && (d->uuid[0] != '\0' || uuid[0] != '\0'))
    return strcmp(d->uuid, uuid) == 0;
  return d->ordinal == ordinal;
}

/* The view's row for a device of a report, made when new. */
static int
view_device(struct cmg__view *v, int ordinal, const char *name,
            const char *uuid, uint32_t *out)
{
  for (size_t i = 0; i < v->n_devices; i++) {
    if (is_same_device(v, &v->devices[i], ordinal, uuid)) {
      *out = (uint32_t)i;
      return 0;
    }
  }
  if (CMG__INTERN_GROW(v->devices, v->cap_devices, v->n_devices) != 0)
    return -ENOMEM;
  struct cmg__view_device *d = &v->devices[v->n_devices];
  memset(d, 0, sizeof(*d));
  d->ordinal = ordinal;
  d->name = strdup(name);
  d->uuid = strdup(uuid);
  if (d->name == NULL || d->uuid == NULL) {
    free(d->name);
    free(d->uuid);
    return -ENOMEM;
  }
  *out = (uint32_t)v->n_devices++;
  return 0;
}

/* The view's row for a device ordinal of report r; NONE for -1 (host). */
static int
device_of(struct cmg__view *v, const struct cmg__model_report *r, int ordinal,
          uint32_t *out)
{
  if (ordinal < 0) {
    *out = CMG__TOOL_NONE;
    return 0;
  }

  for (size_t i = 0; i < r->n_devices; i++) {
    if (r->devices[i].ordinal == ordinal)
      return view_device(v, ordinal, r->devices[i].name, r->devices[i].uuid,
                         out);
  }
  return view_device(v, ordinal, "", "", out);
}

/* The graph memory of processes that shared a device: each has a pool of
 * its own, so what they held adds up, while the highs, reached at times
 * the reports do not say, are the largest one's.  An estimate in any
 * makes the sum one. */
static void
add_graph(struct cmg__model_graphmem *t, const struct cmg__model_graphmem *g)
{
  if (!g->present)
    return;
  t->present = true;
  t->estimate = t->estimate || g->estimate;
  t->reserved_bytes = cmg__tool_add(t->reserved_bytes, g->reserved_bytes);
  t->used_bytes = cmg__tool_add(t->used_bytes, g->used_bytes);
  if (g->reserved_high_bytes > t->reserved_high_bytes)
    t->reserved_high_bytes = g->reserved_high_bytes;
  if (g->used_high_bytes > t->used_high_bytes)
    t->used_high_bytes = g->used_high_bytes;
  t->launches = cmg__tool_add(t->launches, g->launches);
  t->uploads = cmg__tool_add(t->uploads, g->uploads);
  t->trims = cmg__tool_add(t->trims, g->trims);
  t->denied = cmg__tool_add(t->denied, g->denied);
}

/* A nullable count summed: unknown where any part is. */
static void
add_known(bool *has, uint64_t *t, bool part_has, uint64_t part)
{
  *has = *has && part_has;
  *t = *has ? cmg__tool_add(*t, part) : 0;
}

/* The footprints of processes that shared a device: each has contexts of
 * its own, so bytes and contexts add up; the contexts count against the
 * caps only where every process counts its own; NVML is the source if it
 * was any part's, as the library says of contexts measured both ways; the
 * first reason given says why a sum is unknown.  0 or -ENOMEM. */
static int
add_footprint(struct cmg__view_device *d, const struct cmg__model_footprint *f)
{
  struct cmg__model_footprint *t = &d->footprint;

  if (!f->present)
    return 0;
  if (d->footprints++ == 0) {
    *t = *f;
    t->why = NULL;
  } else {
    t->contexts = cmg__tool_add(t->contexts, f->contexts);
    t->allocated_bytes = cmg__tool_add(t->allocated_bytes, f->allocated_bytes);
    add_known(&t->has_context_bytes, &t->context_bytes, f->has_context_bytes,
              f->context_bytes);
    add_known(&t->has_process_bytes, &t->process_bytes, f->has_process_bytes,
              f->process_bytes);
    add_known(&t->has_unexplained_bytes, &t->unexplained_bytes,
              f->has_unexplained_bytes, f->unexplained_bytes);
    t->counted = t->counted && f->counted;
    t->checked = cmg__tool_add(t->checked, f->checked);
    t->checked_nvml = cmg__tool_add(t->checked_nvml, f->checked_nvml);
    t->checked_driver = cmg__tool_add(t->checked_driver, f->checked_driver);
    d->mixed_sources =
        d->mixed_sources || (t->has_context_bytes && f->source != t->source);
    if (!t->has_context_bytes)
      t->source = CMG__MODEL_FP_NONE;
    else if (f->source == CMG__MODEL_FP_NVML)
      t->source = CMG__MODEL_FP_NVML;
  }
  d->counted_any = d->counted_any || f->counted;
  if (t->why == NULL && f->why != NULL && (t->why = strdup(f->why)) == NULL)
    return -ENOMEM;
  return 0;
}

static int
add_devices(struct cmg__view *v, const struct cmg__model_report *r)
{
  for (size_t i = 0; i < r->n_devices; i++) {
    const struct cmg__model_device *rd = &r->devices[i];
    uint32_t k;

    if (view_device(v, rd->ordinal, rd->name, rd->uuid, &k) != 0)
      return -ENOMEM;
    struct cmg__view_device *d = &v->devices[k];
    if (d->processes == 0) {
      d->has_limit = rd->has_limit;
      d->limit_bytes = rd->limit_bytes;
    } else if (d->has_limit != rd->has_limit ||
               d->limit_bytes != rd->limit_bytes) {
      d->limit_varies = true;
    }
    d->processes++;
    if (rd->physical_bytes > d->physical_bytes)
      d->physical_bytes = rd->physical_bytes;
    d->live_bytes = cmg__tool_add(d->live_bytes, rd->live_bytes);
    d->peak_bytes = cmg__tool_add(d->peak_bytes, rd->peak_bytes);
    d->allocations = cmg__tool_add(d->allocations, rd->allocations);
    d->frees = cmg__tool_add(d->frees, rd->frees);
    d->denied = cmg__tool_add(d->denied, rd->denied);
    add_graph(&d->graph, &rd->graph);
    if (add_footprint(d, &rd->footprint) != 0)
      return -ENOMEM;
  }
  return 0;
}

int
cmg__view_ordinal(const struct cmg__view *v, uint32_t device)
{
  return device != CMG__TOOL_NONE ? v->devices[device].ordinal : -1;
}

/* Host memory of several processes: sums, as for devices. */
static void
add_host(struct cmg__view *v, const struct cmg__model_host *h)
{
  struct cmg__model_host *t = &v->host;

  if (!v->has_host) {
    t->has_limit = h->has_limit;
    t->limit_bytes = h->limit_bytes;
  } else if (t->has_limit != h->has_limit || t->limit_bytes != h->limit_bytes) {
    t->has_limit = false;
  }
  v->has_host = true;
  t->live_bytes = cmg__tool_add(t->live_bytes, h->live_bytes);
  t->peak_bytes = cmg__tool_add(t->peak_bytes, h->peak_bytes);
  t->allocations = cmg__tool_add(t->allocations, h->allocations);
  t->frees = cmg__tool_add(t->frees, h->frees);
  t->denied = cmg__tool_add(t->denied, h->denied);
}

struct leak_key {
  uint32_t stack, device;
  const char *api, *kind;
};

static bool
leak_eq(const void *ctx, uint32_t i, const void *key)
{
  const struct cmg__view *v = ctx;
  const struct leak_key *k = key;
  const struct cmg__view_leak *l = &v->leaks[i];

  return l->stack == k->stack && l->device == k->device &&
         strcmp(l->api, k->api) == 0 && strcmp(l->kind, k->kind) == 0;
}

static int
add_leak(struct cmg__view *v, const struct leak_key *k, uint64_t count,
         uint64_t bytes, const char *pool,
         const struct cmg__model_threads *threads)
{
  uint64_t h = cmg__intern_hash_bytes(CMG__INTERN_HASH_INIT, &k->stack,
                                      sizeof(k->stack));
  struct cmg__view_leak *l;

  h = cmg__intern_hash_bytes(h, &k->device, sizeof(k->device));
  h = cmg__intern_hash_string(h, k->api);
  h = cmg__intern_hash_string(h, k->kind);
  if (cmg__intern_map_reserve(&v->leak_map) != 0)
    return -ENOMEM;
  size_t slot = cmg__intern_map_probe(&v->leak_map, h, leak_eq, v, k);
  if (v->leak_map.slots[slot] != 0) {
    l = &v->leaks[v->leak_map.slots[slot] - 1];
  } else {
    if (CMG__INTERN_GROW(v->leaks, v->cap_leaks, v->n_leaks) != 0)
      return -ENOMEM;
    l = &v->leaks[v->n_leaks];
    memset(l, 0, sizeof(*l));
    l->stack = k->stack;
    l->device = k->device;
    l->rule = CMG__TOOL_NONE;
    l->order = (uint32_t)v->n_leaks;
    l->by_kind = cmg__leak_class_of_kind(k->kind);
    l->api = strdup(k->api);
    l->kind = strdup(k->kind);
    if (l->api == NULL || l->kind == NULL) {
      free(l->api);
      free(l->kind);
      return -ENOMEM;
    }
    cmg__intern_map_set(&v->leak_map, slot, h, (uint32_t)v->n_leaks++);
  }
  l->count = cmg__tool_add(l->count, count);
  l->bytes = cmg__tool_add(l->bytes, bytes);
  /* A group merged from reports that judge it differently (one with its
   * framework's pool off) stays a pool block: the pool was there once. */
  if (l->pool == NULL)
    l->pool = pool;
  if (l->held == NULL)
    l->held = cmg__pool_blocks_held_by(v->ix, k->stack);
  return threads_add(&l->threads, threads, (uint32_t)v->n_sources - 1);
}

static int
compare_shares(const void *a, const void *b)
{
  const struct cmg__model_share *x = a, *y = b;

  if (x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* A moment of v from a composition of r, its stacks made interned ids. */
static int
add_moment(struct cmg__view_moment *m, const struct cmg__model_comp *c,
           bool has_comp, const uint32_t *ids)
{
  m->comp = *c;
  m->has_comp = has_comp;
  m->comp.items = NULL;
  m->count = 0;
  if (!has_comp)
    return 0;
  m->comp.items = malloc((c->n + 1) * sizeof(*c->items));
  if (m->comp.items == NULL)
    return -ENOMEM;
  for (size_t i = 0; i < c->n; i++) {
    m->comp.items[i] = c->items[i];
    if (c->items[i].stack != CMG__TOOL_NONE)
      m->comp.items[i].stack = ids[c->items[i].stack];
    m->count = cmg__tool_add(m->count, c->items[i].count);
  }
  qsort(m->comp.items, c->n, sizeof(*c->items), compare_shares);
  return 0;
}

static int
add_source(struct cmg__view *v, const struct cmg__model_report *r)
{
  if (CMG__INTERN_GROW(v->sources, v->cap_sources, v->n_sources) != 0)
    return -ENOMEM;
  struct cmg__view_source *s = &v->sources[v->n_sources];
  memset(s, 0, sizeof(*s));
  s->pid = r->pid;
  s->start_time = r->start_time;
  s->end_time = r->end_time;
  s->live_allocations = r->live_allocations;
  s->live_bytes = r->live_bytes;
  s->untracked_frees = r->untracked_frees;
  s->denials = r->denials;
  s->file = strdup(r->file);
  s->exe = strdup(r->exe);
  s->command = strdup(r->command);
  s->hostname = strdup(r->hostname);
  s->reason = strdup(r->reason);
  s->exit_status = r->exit_status;
  s->killed_by = r->killed_by != NULL ? strdup(r->killed_by) : NULL;
  v->n_sources++;
  if (s->file == NULL || s->exe == NULL || s->command == NULL ||
      s->hostname == NULL || s->reason == NULL ||
      (r->killed_by != NULL && s->killed_by == NULL))
    return -ENOMEM;
  return 0;
}

static int
add_moments(struct cmg__view *v, const struct cmg__model_report *r,
            const uint32_t *ids)
{
  uint32_t source = (uint32_t)v->n_sources - 1, dev;
  size_t k;

  for (size_t i = 0; i < r->n_peaks; i++) {
    if (CMG__INTERN_GROW(v->peaks, v->cap_peaks, v->n_peaks) != 0)
      return -ENOMEM;
    struct cmg__view_moment *m = &v->peaks[v->n_peaks];
    memset(m, 0, sizeof(*m));
    m->source = source;
    m->stack = CMG__TOOL_NONE;
    if (device_of(v, r, r->peaks[i].device, &m->device) != 0 ||
        add_moment(m, &r->peaks[i].comp, true, ids) != 0)
      return -ENOMEM;
    v->n_peaks++;
  }
  for (size_t i = 0; i < r->n_denials; i++) {
    const struct cmg__model_denial *d = &r->denials_list[i];

    /* The first denial of each device, which carries the composition; this
     * report's are the last ones of the view, at most one per device. */
    if (device_of(v, r, d->device, &dev) != 0)
      return -ENOMEM;
    for (k = v->n_denials; k > 0 && v->denials[k - 1].source == source &&
                           v->denials[k - 1].device != dev;
         k--)
      ;
    if (k > 0 && v->denials[k - 1].source == source)
      continue;
    if (CMG__INTERN_GROW(v->denials, v->cap_denials, v->n_denials) != 0)
      return -ENOMEM;
    struct cmg__view_moment *m = &v->denials[v->n_denials];
    memset(m, 0, sizeof(*m));
    m->source = source;
    m->requested_bytes = d->requested_bytes;
    m->has_limit = d->has_limit;
    m->limit_bytes = d->limit_bytes;
    m->stack = d->stack != CMG__TOOL_NONE ? ids[d->stack] : CMG__TOOL_NONE;
    m->device = dev;
    m->api = strdup(d->api);
    v->n_denials++;
    if (m->api == NULL || add_moment(m, &d->comp, d->has_comp, ids) != 0)
      return -ENOMEM;
  }
  return 0;
}

int
cmg__view_add(struct cmg__view *v, const struct cmg__model_report *r)
{
  uint32_t *ids = malloc((r->n_stacks + 1) * sizeof(*ids));
  int rc = -ENOMEM;

  if (ids == NULL)
    return -ENOMEM;
  if (cmg__index_add(v->ix, r, ids) != 0 || add_source(v, r) != 0 ||
      add_devices(v, r) != 0)
    goto out;
  for (size_t i = 0; i < r->n_leaks; i++) {
    const struct cmg__model_leak *l = &r->leaks[i];
    struct leak_key k;

    k.stack = l->stack != CMG__TOOL_NONE ? ids[l->stack] : CMG__TOOL_NONE;
    k.api = cmg__frame_class_runtime_entry(v->ix, k.stack, l->api);
    k.kind = l->kind;
    /* Only device memory that can leak is a pool's: a graph memory pool
     * and a context are the driver's, whatever code launched the graph or
     * made the context. */
    const char *pool =
        cmg__leak_class_of_kind(l->kind) == CMG__LEAK_CLASS_LEAKED
            ? cmg__pool_blocks_of(v->ix, k.stack, l->api, r)
            : NULL;
    if (device_of(v, r, l->device, &k.device) != 0 ||
        add_leak(v, &k, l->count, l->bytes, pool, &l->threads) != 0)
      goto out;
  }
  for (size_t i = 0; i < r->n_released; i++) {
    v->released_bytes = cmg__tool_add(v->released_bytes, r->released[i].bytes);
    v->released_count = cmg__tool_add(v->released_count, r->released[i].count);
  }
  for (size_t i = 0; i < 3; i++)
    v->events[i] = cmg__tool_add(v->events[i], r->events[i]);
  v->no_pools = v->no_pools || r->no_pools;
  if (v->python_note == NULL && r->python_note != NULL &&
      (v->python_note = strdup(r->python_note)) == NULL)
    goto out;
  if (r->has_host)
    add_host(v, &r->host);
  rc = add_moments(v, r, ids);
out:
  free(ids);
  return rc;
}

static int
compare_leaks(const void *a, const void *b)
{
  const struct cmg__view_leak *x = a, *y = b;

  if (x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

void
cmg__view_sort(struct cmg__view *v)
{
  /* The map points at positions, which sorting moves: drop it. */
  if (v->n_leaks > 1)
    qsort(v->leaks, v->n_leaks, sizeof(*v->leaks), compare_leaks);
  cmg__intern_map_free(&v->leak_map);
}
