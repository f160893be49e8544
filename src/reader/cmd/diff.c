/*
 * diff BASE NEW: what grew and what shrank between two reports of one
 * program, such as a dump taken after warm-up and the report at exit of a
 * long-running service.  Both views share one index, so a leak group of
 * BASE and one of NEW are the same when their stacks are the same call path
 * (module, offset, function of every frame: never raw addresses, which ASLR
 * changes from run to run), their API is the same and their device ordinal
 * is the same.  Devices are matched by ordinal here, not by UUID: the two
 * runs may well have been given different GPUs.
 *
 * The groups of both views are put in one array with their key and sorted,
 * so that equal keys meet; the work is O(n log n) in the number of groups.
 * Groups that a suppression hid are left out of both sides.  What grew
 * comes first, then what is still held unchanged (after a release, the
 * question is what did not go), then what shrank.  The diff command, which
 * reads the two reports and prints this, is at the end.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/size.h"

#include "reader/cmd/diff.h"
#include "reader/cmd/summary_json.h"
#include "reader/model/index.h"
#include "reader/model/leak_class.h"
#include "reader/model/view.h"
#include "reader/run/run.h"
#include "reader/show/group_text.h"
#include "reader/show/one_line.h"
#include "reader/show/output.h"
#include "reader/tool.h"

#define SIZE_BUF 40

struct change {
  uint32_t stack;
  int device; /* ordinal, -1 for none */
  const char *api, *kind;
  enum cmg__leak_class class; /* graph, context, or leaked or other */
  uint64_t base_count, base_bytes, new_count, new_bytes;
  int64_t delta_count, delta_bytes;
};

static int
compare_keys(const void *a, const void *b)
{
  const struct change *x = a, *y = b;

  if (x->stack != y->stack)
    return x->stack < y->stack ? -1 : 1;
  if (x->device != y->device)
    return x->device < y->device ? -1 : 1;
  if (strcmp(x->api, y->api) != 0)
    return strcmp(x->api, y->api);
  return strcmp(x->kind, y->kind);
}

/* What a group did: the order they are listed in. */
enum what { GREW, HELD, SHRANK };

static enum what
what_of(const struct change *c)
{
  if (c->delta_bytes > 0 || (c->delta_bytes == 0 && c->delta_count > 0))
    return GREW;
  return c->delta_bytes == 0 && c->delta_count == 0 ? HELD : SHRANK;
}

/* What grew, largest growth first; then what is still held unchanged,
 * largest first, since after a release that is the question; then what
 * shrank, largest first.  Equal ones by key. */
static int
compare_deltas(const void *a, const void *b)
{
  const struct change *x = a, *y = b;
  enum what wx = what_of(x), wy = what_of(y);
  bool gx = wx == GREW;

  if (wx != wy)
    return wx < wy ? -1 : 1;
  if (wx == HELD && x->new_bytes != y->new_bytes)
    return x->new_bytes > y->new_bytes ? -1 : 1;
  if (x->delta_bytes != y->delta_bytes)
    return (x->delta_bytes > y->delta_bytes) == gx ? -1 : 1;
  if (x->delta_count != y->delta_count)
    return (x->delta_count > y->delta_count) == gx ? -1 : 1;
  return compare_keys(a, b);
}

/* Both views' unsuppressed groups, merged by key and sorted by change. */
static struct change *
changes(const struct cmg__view *base, const struct cmg__view *now,
        size_t *n_out)
{
  struct change *c = malloc((base->n_leaks + now->n_leaks + 1) * sizeof(*c));
  size_t n = 0, o = 0;

  if (c == NULL)
    return NULL;
  for (int side = 0; side < 2; side++) {
    const struct cmg__view *v = side == 0 ? base : now;

    for (size_t i = 0; i < v->n_leaks; i++) {
      const struct cmg__view_leak *l = &v->leaks[i];

      if (cmg__leak_class_of(l) == CMG__LEAK_CLASS_SUPPRESSED)
        continue;
      memset(&c[n], 0, sizeof(c[n]));
      c[n].stack = l->stack;
      c[n].device = cmg__view_ordinal(v, l->device);
      c[n].api = l->api;
      c[n].kind = l->kind;
      c[n].class = cmg__leak_class_of(l);
      if (side == 0) {
        c[n].base_count = l->count;
        c[n].base_bytes = l->bytes;
      } else {
        c[n].new_count = l->count;
        c[n].new_bytes = l->bytes;
      }
      n++;
    }
  }
  qsort(c, n, sizeof(*c), compare_keys);
  for (size_t i = 0; i < n; i++) {
    if (o > 0 && compare_keys(&c[o - 1], &c[i]) == 0) {
      c[o - 1].base_count = cmg__tool_add(c[o - 1].base_count, c[i].base_count);
      c[o - 1].base_bytes = cmg__tool_add(c[o - 1].base_bytes, c[i].base_bytes);
      c[o - 1].new_count = cmg__tool_add(c[o - 1].new_count, c[i].new_count);
      c[o - 1].new_bytes = cmg__tool_add(c[o - 1].new_bytes, c[i].new_bytes);
    } else {
      c[o++] = c[i];
    }
  }
  n = 0;
  for (size_t i = 0; i < o; i++) {
    c[i].delta_count = (int64_t)c[i].new_count - (int64_t)c[i].base_count;
    c[i].delta_bytes = (int64_t)c[i].new_bytes - (int64_t)c[i].base_bytes;
    c[n++] = c[i];
  }
  qsort(c, n, sizeof(*c), compare_deltas);
  *n_out = n;
  return c;
}

/* "+3.0 MiB", "-512 B", "0 B". */
static const char *
signed_size(int64_t delta, char *buf)
{
  char abs[SIZE_BUF - 8];

  cmg__format_size(delta < 0 ? (uint64_t)-delta : (uint64_t)delta, abs,
                   sizeof(abs));
  snprintf(buf, SIZE_BUF, "%s%s", delta > 0 ? "+" : delta < 0 ? "-" : "", abs);
  return buf;
}

/* --min-bytes: of the change, or of what is held. */
static bool
is_shown(const struct change *c, const struct cmg__run_opts *o)
{
  uint64_t mag =
      c->delta_bytes < 0 ? (uint64_t)-c->delta_bytes : (uint64_t)c->delta_bytes;

  return (what_of(c) == HELD ? c->new_bytes : mag) >= o->min_bytes;
}

static int
compare_ints(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;

  return x < y ? -1 : x > y;
}

static const struct cmg__view_device *
find_device(const struct cmg__view *v, int ordinal)
{
  for (size_t i = 0; i < v->n_devices; i++) {
    if (v->devices[i].ordinal == ordinal)
      return &v->devices[i];
  }
  return NULL;
}

/* A size, or "-" for a device the report does not have. */
static const char *
size_or_dash(const struct cmg__view_device *d, bool peak, char *buf)
{
  if (d == NULL)
    return "-";
  return cmg__format_size(peak ? d->peak_bytes : d->live_bytes, buf, SIZE_BUF);
}

/* The device rows of both views, by ordinal. */
static void
print_devices(FILE *f, const struct cmg__view *base,
              const struct cmg__view *now)
{
  char a[SIZE_BUF], b[SIZE_BUF], c[SIZE_BUF], d[SIZE_BUF], e[SIZE_BUF];
  int *ords = malloc((base->n_devices + now->n_devices + 1) * sizeof(*ords));
  size_t n = 0;

  if (ords == NULL)
    return;
  for (size_t i = 0; i < base->n_devices; i++)
    ords[n++] = base->devices[i].ordinal;
  for (size_t i = 0; i < now->n_devices; i++)
    ords[n++] = now->devices[i].ordinal;
  qsort(ords, n, sizeof(*ords), compare_ints);

  fprintf(f, "%6s  %10s %10s %10s  %10s %10s  %s\n", "device", "base live",
          "new live", "change", "base peak", "new peak", "name");
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && ords[i] == ords[i - 1])
      continue;
    const struct cmg__view_device *x = find_device(base, ords[i]);
    const struct cmg__view_device *y = find_device(now, ords[i]);
    fprintf(f, "%6d  %10s %10s %10s  %10s %10s  %s\n", ords[i],
            size_or_dash(x, false, a), size_or_dash(y, false, b),
            signed_size((int64_t)(y ? y->live_bytes : 0) -
                            (int64_t)(x ? x->live_bytes : 0),
                        c),
            size_or_dash(x, true, d), size_or_dash(y, true, e),
            y != NULL && y->name[0] != '\0'   ? y->name
            : x != NULL && x->name[0] != '\0' ? x->name
                                              : "?");
  }
  fprintf(f, "\n");
  free(ords);
}

static void
print_source(FILE *f, const char *label, const struct cmg__view *v)
{
  for (size_t i = 0; i < v->n_sources; i++)
    fprintf(f, "  %s process %ld (%s): %s\n", label, v->sources[i].pid,
            v->sources[i].file, v->sources[i].command);
}

/* A group's title (the user's line first) and frames. */
static void
print_stack(FILE *f, const struct cmg__index *ix, uint32_t stack,
            const struct cmg__run_opts *o)
{
  if (!o->all_frames && cmg__one_line_title(f, "  ", ix, stack))
    fputc('\n', f);
  cmg__group_text_frames(f, ix, stack, o->all_frames);
  fprintf(f, "\n");
}

static void
print_change(FILE *f, const struct cmg__index *ix, const struct change *c,
             const struct cmg__run_opts *o)
{
  char a[SIZE_BUF], b[SIZE_BUF], where[64];
  const char *what = c->base_count == 0  ? ", new"
                     : c->new_count == 0 ? ", gone"
                                         : "";

  if (what_of(c) == HELD) {
    fprintf(f, "Still held: %s in %" PRIu64 " %s (%s, %s), unchanged, from:\n",
            cmg__format_size(c->new_bytes, b, sizeof(b)), c->new_count,
            cmg__tool_plural(c->new_count, "allocation", "allocations"), c->api,
            cmg__group_text_where(c->kind, c->device, where, sizeof(where)));
    print_stack(f, ix, c->stack, o);
    return;
  }
  fprintf(f,
          "%s by %s (%+" PRId64 " %s), to %s in %" PRIu64 " %s "
          "(%s, %s%s) from:\n",
          what_of(c) == GREW ? "Grew" : "Shrank",
          cmg__format_size(c->delta_bytes < 0 ? (uint64_t)-c->delta_bytes
                                              : (uint64_t)c->delta_bytes,
                           a, sizeof(a)),
          c->delta_count,
          c->delta_count == 1 || c->delta_count == -1 ? "allocation"
                                                      : "allocations",
          cmg__format_size(c->new_bytes, b, sizeof(b)), c->new_count,
          cmg__tool_plural(c->new_count, "allocation", "allocations"), c->api,
          cmg__group_text_where(c->kind, c->device, where, sizeof(where)),
          what);
  print_stack(f, ix, c->stack, o);
}

/* The SUMMARY line's word on memory that is not leaked (what graph memory
 * pools held, what contexts took): how much more or less there was,
 * beside the leaks' count. */
static void
print_apart(FILE *f, const char *what, enum cmg__leak_class by,
            const struct cmg__view *base, const struct cmg__view *now)
{
  uint64_t bb, bc, nb, nc;
  char a[SIZE_BUF];

  cmg__leak_class_total(base, by, &bb, &bc);
  cmg__leak_class_total(now, by, &nb, &nc);
  fprintf(f, "; %s %s (%+" PRId64 " bytes), not leaked", what,
          signed_size((int64_t)nb - (int64_t)bb, a), (int64_t)nb - (int64_t)bb);
}

static void
print_text(FILE *f, const struct cmg__view *base, const struct cmg__view *now,
           const struct change *c, size_t n, const struct cmg__run_opts *o)
{
  uint64_t bb, bc, nb, nc, left = 0, count[3] = { 0, 0, 0 }, graphs = 0;
  uint64_t contexts = 0;
  size_t shown_of[3] = { 0, 0, 0 };
  char a[SIZE_BUF];

  fprintf(f, "cumemguard diff\n");
  print_source(f, "base:", base);
  print_source(f, "new: ", now);
  fprintf(f, "\n");
  print_devices(f, base, now);

  for (size_t i = 0; i < n; i++) {
    enum what w = what_of(&c[i]);

    /* Graph memory pools' and contexts' groups are listed as any,
     * counted apart. */
    if (c[i].class == CMG__LEAK_CLASS_GRAPH)
      graphs++;
    else if (c[i].class == CMG__LEAK_CLASS_CONTEXT)
      contexts++;
    else
      count[w]++;
    if (!is_shown(&c[i], o) || (o->top != 0 && shown_of[w] >= o->top)) {
      left++;
      continue;
    }
    shown_of[w]++;
    print_change(f, base->ix, &c[i], o);
  }
  if (count[GREW] + count[SHRANK] == 0)
    fprintf(f, "No leak group changed.\n\n");
  if (left > 0)
    fprintf(f,
            "... and %" PRIu64 " smaller %s (see --top and "
            "--min-bytes)\n\n",
            left, cmg__tool_plural(left, "change", "changes"));

  cmg__leak_class_total(base, CMG__LEAK_CLASS_LEAKED, &bb, &bc);
  cmg__leak_class_total(now, CMG__LEAK_CLASS_LEAKED, &nb, &nc);
  fprintf(f,
          "SUMMARY: cumemguard: leaked %s (%+" PRId64 " bytes) in %+" PRId64
          " %s; %" PRIu64 " leak %s grew, %" PRIu64 " shrank, %" PRIu64 " held",
          signed_size((int64_t)nb - (int64_t)bb, a), (int64_t)nb - (int64_t)bb,
          (int64_t)nc - (int64_t)bc,
          (int64_t)nc - (int64_t)bc == 1 || (int64_t)nc - (int64_t)bc == -1
              ? "allocation"
              : "allocations",
          count[GREW], cmg__tool_plural(count[GREW], "group", "groups"),
          count[SHRANK], count[HELD]);
  if (graphs > 0)
    print_apart(f, "CUDA graph memory pools", CMG__LEAK_CLASS_GRAPH, base, now);
  if (contexts > 0)
    print_apart(f, "CUDA contexts and modules", CMG__LEAK_CLASS_CONTEXT, base,
                now);
  fprintf(f, "\n");
}

static cJSON *
source_json(const struct cmg__view *v)
{
  cJSON *o = cJSON_CreateObject();

  if (v->n_sources > 0) {
    cJSON_AddStringToObject(o, "file", v->sources[0].file);
    cJSON_AddNumberToObject(o, "pid", (double)v->sources[0].pid);
    cJSON_AddStringToObject(o, "command", v->sources[0].command);
  }
  return o;
}

static cJSON *
devices_json(const struct cmg__view *base, const struct cmg__view *now)
{
  cJSON *a = cJSON_CreateArray();

  for (int side = 0; side < 2; side++) {
    const struct cmg__view *v = side == 0 ? base : now;

    for (size_t i = 0; i < v->n_devices; i++) {
      int ord = v->devices[i].ordinal;
      const struct cmg__view_device *x = find_device(base, ord);
      const struct cmg__view_device *y = find_device(now, ord);

      if (side == 1 && x != NULL)
        continue;
      cJSON *o = cJSON_CreateObject();
      cJSON_AddNumberToObject(o, "ordinal", ord);
      cJSON_AddStringToObject(o, "name", (y != NULL ? y : x)->name);
      cJSON_AddNumberToObject(o, "base_live_bytes",
                              x ? (double)x->live_bytes : 0);
      cJSON_AddNumberToObject(o, "new_live_bytes",
                              y ? (double)y->live_bytes : 0);
      cJSON_AddNumberToObject(o, "base_peak_bytes",
                              x ? (double)x->peak_bytes : 0);
      cJSON_AddNumberToObject(o, "new_peak_bytes",
                              y ? (double)y->peak_bytes : 0);
      cJSON_AddItemToArray(a, o);
    }
  }
  return a;
}

static cJSON *
diff_json(const struct cmg__view *base, const struct cmg__view *now,
          const struct change *c, size_t n, const struct cmg__run_opts *o)
{
  cJSON *d = cJSON_CreateObject(), *a = cJSON_CreateArray();
  cJSON *held = cJSON_CreateArray();
  uint64_t bb, bc, nb, nc;
  size_t shown_of[3] = { 0, 0, 0 };

  cmg__leak_class_total(base, CMG__LEAK_CLASS_LEAKED, &bb, &bc);
  cmg__leak_class_total(now, CMG__LEAK_CLASS_LEAKED, &nb, &nc);
  cJSON_AddStringToObject(d, "format", "cumemguard-report-diff");
  cJSON_AddNumberToObject(d, "version", 1);
  cJSON_AddItemToObject(d, "base", source_json(base));
  cJSON_AddItemToObject(d, "new", source_json(now));
  cJSON_AddItemToObject(d, "devices", devices_json(base, now));
  cJSON_AddNumberToObject(d, "base_leaked_bytes", (double)bb);
  cJSON_AddNumberToObject(d, "new_leaked_bytes", (double)nb);
  cJSON_AddNumberToObject(d, "delta_bytes", (double)nb - (double)bb);
  cJSON_AddNumberToObject(d, "delta_allocations", (double)nc - (double)bc);
  cmg__leak_class_total(base, CMG__LEAK_CLASS_GRAPH, &bb, &bc);
  cmg__leak_class_total(now, CMG__LEAK_CLASS_GRAPH, &nb, &nc);
  cJSON_AddNumberToObject(d, "base_graph_bytes", (double)bb);
  cJSON_AddNumberToObject(d, "new_graph_bytes", (double)nb);
  cmg__leak_class_total(base, CMG__LEAK_CLASS_CONTEXT, &bb, &bc);
  cmg__leak_class_total(now, CMG__LEAK_CLASS_CONTEXT, &nb, &nc);
  cJSON_AddNumberToObject(d, "base_context_bytes", (double)bb);
  cJSON_AddNumberToObject(d, "new_context_bytes", (double)nb);
  for (size_t i = 0; i < n; i++) {
    enum what w = what_of(&c[i]);

    if (!is_shown(&c[i], o) || (o->top != 0 && shown_of[w] >= o->top))
      continue;
    shown_of[w]++;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "api", c[i].api);
    cJSON_AddStringToObject(e, "kind", c[i].kind);
    cJSON_AddBoolToObject(e, "device_memory",
                          cmg__leak_class_is_device_kind(c[i].kind));
    if (c[i].device >= 0)
      cJSON_AddNumberToObject(e, "device", c[i].device);
    else
      cJSON_AddNullToObject(e, "device");
    cJSON_AddNumberToObject(e, "base_count", (double)c[i].base_count);
    cJSON_AddNumberToObject(e, "base_bytes", (double)c[i].base_bytes);
    cJSON_AddNumberToObject(e, "new_count", (double)c[i].new_count);
    cJSON_AddNumberToObject(e, "new_bytes", (double)c[i].new_bytes);
    cJSON_AddNumberToObject(e, "delta_count", (double)c[i].delta_count);
    cJSON_AddNumberToObject(e, "delta_bytes", (double)c[i].delta_bytes);
    cmg__summary_json_stack(e, base->ix, c[i].stack, o);
    cJSON_AddItemToArray(w == HELD ? held : a, e);
  }
  cJSON_AddItemToObject(d, "changes", a);
  cJSON_AddItemToObject(d, "held", held);
  return d;
}

int
cmg__diff_print(FILE *f, const struct cmg__view *base,
                const struct cmg__view *now, const struct cmg__run_opts *o)
{
  size_t n;
  struct change *c = changes(base, now, &n);
  int rc = 0;

  if (c == NULL)
    return -ENOMEM;
  if (o->json) {
    cJSON *d = diff_json(base, now, c, n, o);
    char *text = d != NULL ? cJSON_Print(d) : NULL;

    if (text != NULL)
      fprintf(f, "%s\n", text);
    else
      rc = -ENOMEM;
    cJSON_free(text);
    cJSON_Delete(d);
  } else {
    print_text(f, base, now, c, n, o);
  }
  free(c);
  return rc;
}

/* Reads the two reports into views over one index, devices matched by
 * ordinal, and calls done(); 0, or -1 after saying why. */
static int
with_pair(const char *base_file, const char *new_file, struct cmg__supp *supp,
          int (*done)(const struct cmg__view *, const struct cmg__view *,
                      void *),
          void *arg)
{
  struct cmg__index ix;
  struct cmg__view base, now;
  int rc = -1;

  cmg__index_init(&ix);
  cmg__view_init(&base, &ix, false);
  cmg__view_init(&now, &ix, false);
  if (cmg__run_load(&base, base_file) == 0 &&
      cmg__run_load(&now, new_file) == 0 && cmg__run_finish(&base, supp) == 0 &&
      cmg__run_finish(&now, supp) == 0) {
    rc = done(&base, &now, arg);
    if (rc != 0)
      cmg__output_say("out of memory");
  }
  cmg__view_free(&base);
  cmg__view_free(&now);
  cmg__index_free(&ix);
  return rc;
}

static int
print_diff(const struct cmg__view *base, const struct cmg__view *now, void *o)
{
  return cmg__diff_print(stdout, base, now, o) == 0 ? 0 : -1;
}

struct json_arg {
  const struct cmg__run_opts *o;
  cJSON *doc;
};

static int
keep_json(const struct cmg__view *base, const struct cmg__view *now, void *arg)
{
  struct json_arg *a = arg;
  size_t n;
  struct change *c = changes(base, now, &n);

  a->doc = c != NULL ? diff_json(base, now, c, n, a->o) : NULL;
  free(c);
  return a->doc != NULL ? 0 : -1;
}

void *
cmg__diff_json(const char *base_file, const char *new_file,
               struct cmg__supp *supp, const struct cmg__run_opts *o)
{
  struct json_arg a = { o, NULL };

  with_pair(base_file, new_file, supp, keep_json, &a);
  return a.doc;
}

int
cmg__diff_main(const char *base_file, const char *new_file,
               struct cmg__supp *supp, const struct cmg__run_opts *o)
{
  return with_pair(base_file, new_file, supp, print_diff, (void *)o) == 0
             ? 0
             : CMG__TOOL_EXIT_ERROR;
}
