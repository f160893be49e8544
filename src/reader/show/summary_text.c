/*
 * The summary a person reads: where the report came from, a table of the
 * devices, then the leak groups as LeakSanitizer prints them ("Leaked 3.0
 * MiB in 3 allocations (cudaMalloc, device 0) from:" and numbered frames),
 * what CUDA graph memory pools hold and what contexts took, which are no
 * leaks (summary_held.c's), the suppressions that
 * hid anything, what was live at each device's peak and at its first
 * denial, and a last `SUMMARY:` line that scripts can grep.  The same view
 * as JSON is summary_json.c's.  The summary and merge commands print it
 * (cmd/summary.c), check the leaks and the SUMMARY line only
 * (cmd/check.c).
 *
 * Sizes are written for people ("3.0 MiB"); the SUMMARY line and the
 * suppressions table carry exact byte counts as well, and --json has
 * nothing else.  --top and --min-bytes shorten the lists, never the totals.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/size.h"

#include "reader/load/model.h"
#include "reader/model/index.h"
#include "reader/model/intern.h"
#include "reader/model/leak_class.h"
#include "reader/model/pool_blocks.h"
#include "reader/model/supp.h"
#include "reader/model/view.h"
#include "reader/show/frame_name.h"
#include "reader/show/group_text.h"
#include "reader/show/one_line.h"
#include "reader/show/summary_devices.h"
#include "reader/show/summary_held.h"
#include "reader/show/summary_text.h"
#include "reader/tool.h"

#define SIZE_BUF 32

static const char *
size_str(uint64_t bytes, char *buf)
{
  return cmg__format_size(bytes, buf, SIZE_BUF);
}

/* When the report was written, and how the process ended if it was the
 * process's last word: "at exit (status 0)", "as SIGTERM killed it". */
static const char *
reason_text(const struct cmg__view_source *s, char *buf, size_t len)
{
  if (s->killed_by != NULL) {
    snprintf(buf, len, "as %s killed it", s->killed_by);
    return buf;
  }
  if (strcmp(s->reason, "exit") == 0 && s->exit_status >= 0) {
    snprintf(buf, len, "at exit (status %d)", s->exit_status);
    return buf;
  }
  if (strcmp(s->reason, "exit") == 0)
    return "at exit";
  if (strcmp(s->reason, "signal") == 0)
    return "on a signal";
  if (strcmp(s->reason, "request") == 0)
    return "on request (cmg_dump)";
  if (strcmp(s->reason, "snapshot") == 0)
    return "as a snapshot while the process ran";
  return s->reason;
}

/* ---- text ---------------------------------------------------------------- */

static void
print_header(FILE *f, const struct cmg__view *v)
{
  char how[96];

  if (v->n_sources == 1) {
    const struct cmg__view_source *s = &v->sources[0];

    fprintf(f, "cumemguard report %s\n", s->file);
    fprintf(f, "  process %ld: %s\n", s->pid, s->command);
    fprintf(f, "  written %s, %.3f s after the process started, on %s\n",
            reason_text(s, how, sizeof(how)),
            s->end_time > s->start_time ? s->end_time - s->start_time : 0.0,
            s->hostname);
  } else {
    fprintf(f, "cumemguard reports of %zu processes, merged\n", v->n_sources);
    for (size_t i = 0; i < v->n_sources; i++)
      fprintf(f, "  process %ld (%s, written %s): %s\n", v->sources[i].pid,
              v->sources[i].file, reason_text(&v->sources[i], how, sizeof(how)),
              v->sources[i].command);
  }
  /* The stacks of a Python program without its Python frames: say why. */
  if (v->python_note != NULL)
    fprintf(f, "  %s\n", v->python_note);
  fprintf(f, "\n");
}

static void
print_devices(FILE *f, const struct cmg__view *v)
{
  char a[SIZE_BUF], b[SIZE_BUF], c[SIZE_BUF], d[SIZE_BUF];

  if (v->n_devices == 0) {
    fprintf(f, "No device was used.\n\n");
    return;
  }
  fprintf(f, "%3s  %10s %10s %10s %10s %8s %8s %7s  %s\n", "dev", "physical",
          "limit", "peak", "live", "allocs", "frees", "denied", "name");
  for (size_t i = 0; i < v->n_devices; i++) {
    const struct cmg__view_device *dv = &v->devices[i];

    fprintf(f,
            "%3d  %10s %10s %10s %10s %8" PRIu64 " %8" PRIu64 " %7" PRIu64
            "  %s\n",
            dv->ordinal, size_str(dv->physical_bytes, a),
            dv->limit_varies ? "varies"
            : dv->has_limit  ? size_str(dv->limit_bytes, b)
                             : "none",
            size_str(dv->peak_bytes, c), size_str(dv->live_bytes, d),
            dv->allocations, dv->frees, dv->denied,
            dv->name[0] != '\0' ? dv->name : "?");
  }
  if (v->has_host && (v->host.allocations > 0 || v->host.has_limit))
    fprintf(f,
            "%4s %10s %10s %10s %10s %8" PRIu64 " %8" PRIu64 " %7" PRIu64
            "  %s\n",
            "host", "-",
            v->host.has_limit ? size_str(v->host.limit_bytes, b) : "none",
            size_str(v->host.peak_bytes, c), size_str(v->host.live_bytes, d),
            v->host.allocations, v->host.frees, v->host.denied,
            "pinned host memory");
  cmg__summary_devices_footprint(f, v);
  cmg__summary_devices_graph(f, v);
  if (v->n_sources > 1)
    fprintf(f, "(devices are matched by UUID; each column is the sum over "
               "the processes,\nso peak is the sum of each process's own "
               "peak)\n");
  fprintf(f, "\n");
}

/* Growth-policy events and teardown releases, when there were any. */
static void
print_events(FILE *f, const struct cmg__view *v)
{
  char a[SIZE_BUF];
  bool any = false;

  if (v->events[0] + v->events[1] + v->events[2] > 0) {
    fprintf(f,
            "Limit events: %" PRIu64 " allowed past the limit (warn), %" PRIu64
            " waited for memory, %" PRIu64 " passed the soft limit\n",
            v->events[0], v->events[1], v->events[2]);
    any = true;
  }
  if (v->released_count > 0) {
    fprintf(f,
            "Released when their context was destroyed (not leaks): %s "
            "in %" PRIu64 " %s\n",
            size_str(v->released_bytes, a), v->released_count,
            cmg__tool_plural(v->released_count, "allocation", "allocations"));
    any = true;
  }
  if (any)
    fprintf(f, "\n");
}

/*
 * One line when pool blocks hold most of the leaked device memory: the
 * groups then say where a pool grew, not which tensor leaked, and the
 * rerun that shows the tensors is --no-pools.  Under no_pools=1 the same
 * finding means a switch was kept (the user's value wins) or the program
 * set its own allocator.
 */
static void
print_pool_hint(FILE *f, const struct cmg__view *v)
{
  char a[SIZE_BUF], b[SIZE_BUF];
  uint64_t pooled, live;
  const char *pool;

  if (!cmg__pool_blocks_is_mostly(v))
    return;
  cmg__pool_blocks_share(v, &pooled, &live, &pool);
  if (!v->no_pools)
    fprintf(f,
            "Most of the leaked device memory (%s of %s) is in pool blocks "
            "of the %s, which say where the pool grew, not which tensor "
            "leaked: rerun with --no-pools to see the tensors.\n\n",
            size_str(pooled, a), size_str(live, b), pool);
  else
    fprintf(f,
            "Most of the leaked device memory (%s of %s) is still in pool "
            "blocks of the %s although pools were asked off (no_pools=1): "
            "a switch kept from the environment (the report's "
            "options.pool_switches) or an allocator the program sets "
            "itself keeps the pool.\n\n",
            size_str(pooled, a), size_str(live, b), pool);
}

/* A leak group as the summary shows it, after its first line; NULL when
 * out of memory. */
static char *
group_body(const struct cmg__view *v, const struct cmg__view_leak *l,
           const struct cmg__tool_opts *o)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);

  if (f == NULL)
    return NULL;
  cmg__group_text_print(f, v->ix, l, o->all_frames);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* Leak groups that read the same in the default view: one block, with
 * how many groups (stacks) it holds; --all-frames keeps each apart. */
struct block {
  const struct cmg__view_leak *first;
  char *body; /* the first group's */
  char *key;  /* the body less frame numbers and folded frame counts */
  uint64_t bytes, count;
  unsigned groups;
};

/* body without the numbers that differ between stacks a person reads as
 * one: "#45 " and "... 35 frames", in place.  NULL stays NULL. */
static char *
key_of(char *body)
{
  char *o = body;
  const char *p = body;

  if (body == NULL)
    return NULL;
  while (*p != '\0') {
    if (*p == '#' || cmg__has_prefix(p, "... ")) {
      size_t keep = *p == '#' ? 1 : 4;

      for (size_t i = 0; i < keep; i++)
        *o++ = *p++;
      while (*p >= '0' && *p <= '9')
        p++;
      continue;
    }
    *o++ = *p++;
  }
  *o = '\0';
  return body;
}

/* What the groups folded into one block share: the heading's API, kind,
 * device, pool and holder, and the stack as key_of reads it, each with
 * its length so that no two differ in one way and agree in another.
 * NULL when out of memory. */
static char *
block_id(const struct cmg__view_leak *l, const char *key)
{
  char *id;

  if (asprintf(&id, "%zu:%s%zu:%s%" PRIu32 ":%p:%p:%s", strlen(l->api), l->api,
               strlen(l->kind), l->kind, l->device, (const void *)l->pool,
               (const void *)l->held, key) < 0)
    return NULL;
  return id;
}

static int
by_block_bytes(const void *a, const void *b)
{
  const struct block *x = a, *y = b;

  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? 1 : -1;
  return x->first < y->first ? -1 : x->first > y->first ? 1 : 0;
}

/* The unsuppressed leak groups as blocks, largest first (graph memory and
 * contexts are summary_held.c's); NULL when out of memory (*n 0). */
static struct block *
blocks_of(const struct cmg__view *v, const struct cmg__tool_opts *o, size_t *n)
{
  struct block *b = calloc(v->n_leaks ? v->n_leaks : 1, sizeof(*b));
  struct cmg__intern seen;

  *n = 0;
  cmg__intern_init(&seen, true);
  for (size_t i = 0; b != NULL && i < v->n_leaks; i++) {
    const struct cmg__view_leak *l = &v->leaks[i];
    char *body, *key;
    size_t k = *n;

    if (!cmg__leak_class_in_leaks(cmg__leak_class_of(l)) ||
        (body = group_body(v, l, o)) == NULL)
      continue;
    key = key_of(strdup(body));
    if (key == NULL ||
        (!o->all_frames && cmg__intern_add(&seen, block_id(l, key), &k) != 0)) {
      free(body);
      free(key);
      continue; /* out of memory */
    }
    if (k == *n) {
      b[(*n)++] = (struct block){ l, body, key, 0, 0, 0 };
    } else {
      free(body);
      free(key);
    }
    b[k].bytes = cmg__tool_add(b[k].bytes, l->bytes);
    b[k].count = cmg__tool_add(b[k].count, l->count);
    b[k].groups++;
  }
  cmg__intern_free(&seen);
  if (b != NULL)
    qsort(b, *n, sizeof(*b), by_block_bytes);
  return b;
}

static void
print_block(FILE *f, const struct cmg__view *v, const struct block *b)
{
  const struct cmg__view_leak *l = b->first;
  char a[SIZE_BUF], where[64], groups[32] = "";

  if (b->groups > 1)
    snprintf(groups, sizeof(groups), ", %u stacks", b->groups);
  fprintf(
      f, "Leaked %s in %" PRIu64 " %s%s (%s, %s)%s%s%s%s%s%s from:\n",
      size_str(b->bytes, a), b->count,
      cmg__tool_plural(b->count, "allocation", "allocations"), groups, l->api,
      cmg__group_text_where(l->kind, cmg__view_ordinal(v, l->device), where,
                            sizeof(where)),
      l->pool ? ", a pool block of the " : "", l->pool ? l->pool : "",
      l->pool ? "," : "", l->held ? ", kept by a " : "", l->held ? l->held : "",
      l->held ? " for the life of the process," : "");
  fprintf(f, "%s\n", b->body);
}

static void
print_leaks(FILE *f, const struct cmg__view *v, const struct cmg__tool_opts *o)
{
  const struct cmg__index *ix = v->ix;
  uint64_t left_bytes = 0, left_count = 0, left_groups = 0;
  char a[SIZE_BUF];
  bool hidden = false;
  size_t listed = 0, n;
  struct block *b = blocks_of(v, o, &n);

  for (size_t i = 0; b != NULL && i < n; i++) {
    uint32_t lo, hi, stack = b[i].first->stack;

    if (b[i].bytes < o->min_bytes || (o->top != 0 && listed >= o->top)) {
      left_groups += b[i].groups;
      left_bytes = cmg__tool_add(left_bytes, b[i].bytes);
      left_count = cmg__tool_add(left_count, b[i].count);
      continue;
    }
    listed++;
    print_block(f, v, &b[i]);
    cmg__index_stack_range(ix, stack, o->all_frames, &lo, &hi);
    if (stack != CMG__TOOL_NONE && (lo > 0 || hi < ix->stacks[stack].n))
      hidden = true;
  }
  if (n == 0)
    fprintf(f, "No device memory leaked.\n\n");
  if (left_groups > 0)
    fprintf(f,
            "... and %" PRIu64 " more leak %s: %s in %" PRIu64
            " %s (see --top and --min-bytes)\n\n",
            left_groups, cmg__tool_plural(left_groups, "group", "groups"),
            size_str(left_bytes, a), left_count,
            cmg__tool_plural(left_count, "allocation", "allocations"));
  hidden = cmg__summary_held_text(f, v, o) || hidden;
  if (hidden)
    fprintf(f, "Frames inside the CUDA runtime and driver and the C "
               "start-up code are not\nshown; --all-frames shows them.\n\n");
  for (size_t i = 0; b != NULL && i < n; i++) {
    free(b[i].body);
    free(b[i].key);
  }
  free(b);
  cmg__frame_name_put_unread(f, ix);
  print_pool_hint(f, v);
}

static void
print_suppressions(FILE *f, const struct cmg__tool_opts *o)
{
  if (o->supp == NULL || o->supp->n == 0)
    return;
  fprintf(f, "-----------------------------------------------------\n");
  fprintf(f, "Suppressions used:\n");
  fprintf(f, "  count      bytes template\n");
  for (size_t i = 0; i < o->supp->n; i++)
    fprintf(f, "%7" PRIu64 " %10" PRIu64 " %s\n", o->supp->rules[i].count,
            o->supp->rules[i].bytes, o->supp->rules[i].pattern);
  fprintf(f, "-----------------------------------------------------\n\n");
}

/* One line of a composition: stacks that read the same in the default
 * view are one line, with how many they are. */
struct row {
  char *text;
  uint64_t bytes, count;
  unsigned stacks;
};

static int
by_row_bytes(const void *a, const void *b)
{
  const struct row *x = a, *y = b;

  return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* The composition's rows, merged unless all_frames; NULL when out of
 * memory. */
static struct row *
comp_rows(const struct cmg__view *v, const struct cmg__model_comp *c,
          bool all_frames, size_t *n)
{
  struct row *rows = calloc(c->n ? c->n : 1, sizeof(*rows));
  struct cmg__intern seen; /* of the rows' texts, which outlive it */

  *n = 0;
  cmg__intern_init(&seen, false);
  for (size_t i = 0; rows != NULL && i < c->n; i++) {
    size_t len = 0, k = *n;
    char *text = NULL;
    FILE *m = open_memstream(&text, &len);

    if (m == NULL)
      break;
    cmg__one_line_put(m, v->ix, c->items[i].stack, all_frames);
    fclose(m);
    if (!all_frames && cmg__intern_add(&seen, text, &k) != 0) {
      free(text);
      break;
    }
    if (k == *n)
      rows[(*n)++] = (struct row){ text, 0, 0, 0 };
    else
      free(text);
    rows[k].bytes = cmg__tool_add(rows[k].bytes, c->items[i].bytes);
    rows[k].count = cmg__tool_add(rows[k].count, c->items[i].count);
    rows[k].stacks++;
  }
  cmg__intern_free(&seen);
  if (rows != NULL && *n > 1)
    qsort(rows, *n, sizeof(*rows), by_row_bytes);
  return rows;
}

static void
print_comp(FILE *f, const struct cmg__view *v, const struct cmg__view_moment *m,
           const struct cmg__tool_opts *o)
{
  uint64_t left_bytes = 0, left_count = 0, left_n = 0;
  char a[SIZE_BUF], stacks[48];
  size_t n;

  if (!m->has_comp) {
    fprintf(f,
            "    (no composition was recorded: reports keep one for devices 0 "
            "to 7)\n");
    return;
  }
  struct row *rows = comp_rows(v, &m->comp, o->all_frames, &n);
  for (size_t i = 0; rows != NULL && i < n; i++) {
    if (o->top != 0 && i >= o->top) {
      left_n += rows[i].stacks;
      left_bytes = cmg__tool_add(left_bytes, rows[i].bytes);
      left_count = cmg__tool_add(left_count, rows[i].count);
      continue;
    }
    stacks[0] = '\0';
    if (rows[i].stacks > 1)
      snprintf(stacks, sizeof(stacks), ", %u stacks", rows[i].stacks);
    fprintf(f, "    %s in %" PRIu64 " %s%s: %s\n", size_str(rows[i].bytes, a),
            rows[i].count,
            cmg__tool_plural(rows[i].count, "allocation", "allocations"),
            stacks, rows[i].text);
  }
  for (size_t i = 0; rows != NULL && i < n; i++)
    free(rows[i].text);
  free(rows);
  if (left_n > 0)
    fprintf(f, "    ... and %" PRIu64 " more %s: %s in %" PRIu64 " %s\n",
            left_n, cmg__tool_plural(left_n, "stack", "stacks"),
            size_str(left_bytes, a), left_count,
            cmg__tool_plural(left_count, "allocation", "allocations"));
}

static void
print_moments(FILE *f, const struct cmg__view *v,
              const struct cmg__tool_opts *o)
{
  char a[SIZE_BUF], b[SIZE_BUF], pid[48] = "", where[32];

  for (size_t i = 0; i < v->n_peaks; i++) {
    const struct cmg__view_moment *m = &v->peaks[i];

    if (v->n_sources > 1)
      snprintf(pid, sizeof(pid), " in process %ld", v->sources[m->source].pid);
    fprintf(
        f, "Live at the peak of device %d%s, at %.6f s: %s in %" PRIu64 " %s\n",
        v->devices[m->device].ordinal, pid, m->comp.time,
        size_str(m->comp.bytes, a), m->count,
        cmg__tool_plural(m->count, "allocation", "allocations"));
    print_comp(f, v, m, o);
    fprintf(f, "\n");
  }
  for (size_t i = 0; i < v->n_denials; i++) {
    const struct cmg__view_moment *m = &v->denials[i];

    if (v->n_sources > 1)
      snprintf(pid, sizeof(pid), " in process %ld", v->sources[m->source].pid);
    if (m->device != CMG__TOOL_NONE)
      snprintf(where, sizeof(where), "device %d",
               v->devices[m->device].ordinal);
    else
      snprintf(where, sizeof(where), "pinned host memory");
    fprintf(f, "Live at the first denial on %s%s, at %.6f s: %s", where, pid,
            m->comp.time, size_str(m->comp.bytes, a));
    if (m->has_comp)
      fprintf(f, " in %" PRIu64 " %s", m->count,
              cmg__tool_plural(m->count, "allocation", "allocations"));
    fprintf(f, "\n  refused: %s of %s (limit %s) from ", m->api,
            size_str(m->requested_bytes, a),
            m->has_limit ? size_str(m->limit_bytes, b) : "none");
    cmg__one_line_put(f, v->ix, m->stack, o->all_frames);
    fprintf(f, "\n");
    print_comp(f, v, m, o);
    fprintf(f, "\n");
  }
}

static void
print_summary_line(FILE *f, const struct cmg__view *v)
{
  uint64_t bytes, count, other_bytes, other_count, sup_bytes, sup_count;
  char a[SIZE_BUF];

  cmg__leak_class_total(v, CMG__LEAK_CLASS_LEAKED, &bytes, &count);
  cmg__leak_class_total(v, CMG__LEAK_CLASS_OTHER, &other_bytes, &other_count);
  cmg__leak_class_total(v, CMG__LEAK_CLASS_SUPPRESSED, &sup_bytes, &sup_count);
  fprintf(
      f, "SUMMARY: cumemguard: %s (%" PRIu64 " bytes) leaked in %" PRIu64 " %s",
      size_str(bytes, a), bytes, count,
      cmg__tool_plural(count, "allocation", "allocations"));
  cmg__summary_held_line(f, v);
  if (other_count > 0)
    fprintf(f,
            "; %s (%" PRIu64 " bytes) in %" PRIu64 " %s of host or "
            "imported memory",
            size_str(other_bytes, a), other_bytes, other_count,
            cmg__tool_plural(other_count, "allocation", "allocations"));
  if (sup_count > 0)
    fprintf(f, "; %s (%" PRIu64 " bytes) in %" PRIu64 " %s suppressed",
            size_str(sup_bytes, a), sup_bytes, sup_count,
            cmg__tool_plural(sup_count, "allocation", "allocations"));
  fprintf(f, "\n");
}

void
cmg__summary_text_print(FILE *f, const struct cmg__view *v,
                        const struct cmg__tool_opts *o, bool leaks_only)
{
  if (!leaks_only) {
    print_header(f, v);
    print_devices(f, v);
    print_events(f, v);
  }
  print_leaks(f, v, o);
  print_suppressions(f, o);
  if (!leaks_only)
    print_moments(f, v, o);
  print_summary_line(f, v);
}
