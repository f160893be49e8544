/*
 * The diff as a person reads it: both reports' sources, their devices side
 * by side, then each group that grew, is still held or shrank, as the
 * summary prints a group, and a SUMMARY line of the changes.  Memory that
 * graph memory pools and contexts hold is listed as any and counted apart,
 * as no leak.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/size.h"

#include "reader/model/delta.h"
#include "reader/model/index.h"
#include "reader/model/leak_class.h"
#include "reader/model/view.h"
#include "reader/show/diff_text.h"
#include "reader/show/group_text.h"
#include "reader/show/one_line.h"
#include "reader/tool.h"

#define SIZE_BUF 40

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

static int
compare_ints(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;

  return x < y ? -1 : x > y;
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
    const struct cmg__view_device *x = cmg__delta_device(base, ords[i]);
    const struct cmg__view_device *y = cmg__delta_device(now, ords[i]);
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
            const struct cmg__tool_opts *o)
{
  if (!o->all_frames && cmg__one_line_title(f, "  ", ix, stack))
    fputc('\n', f);
  cmg__group_text_frames(f, ix, stack, o->all_frames);
  fprintf(f, "\n");
}

static void
print_change(FILE *f, const struct cmg__index *ix, const struct cmg__delta *c,
             const struct cmg__tool_opts *o)
{
  char a[SIZE_BUF], b[SIZE_BUF], where[64];
  const char *what = c->base_count == 0  ? ", new"
                     : c->new_count == 0 ? ", gone"
                                         : "";

  if (cmg__delta_what(c) == CMG__DELTA_HELD) {
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
          cmg__delta_what(c) == CMG__DELTA_GREW ? "Grew" : "Shrank",
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

void
cmg__diff_text_print(FILE *f, const struct cmg__view *base,
                     const struct cmg__view *now, const struct cmg__delta *c,
                     size_t n, const struct cmg__tool_opts *o)
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
    enum cmg__delta_what w = cmg__delta_what(&c[i]);

    /* Graph memory pools' and contexts' groups are listed as any,
     * counted apart. */
    if (c[i].class == CMG__LEAK_CLASS_GRAPH)
      graphs++;
    else if (c[i].class == CMG__LEAK_CLASS_CONTEXT)
      contexts++;
    else
      count[w]++;
    if (!cmg__delta_shown(&c[i], o->min_bytes) ||
        (o->top != 0 && shown_of[w] >= o->top)) {
      left++;
      continue;
    }
    shown_of[w]++;
    print_change(f, base->ix, &c[i], o);
  }
  if (count[CMG__DELTA_GREW] + count[CMG__DELTA_SHRANK] == 0)
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
          count[CMG__DELTA_GREW],
          cmg__tool_plural(count[CMG__DELTA_GREW], "group", "groups"),
          count[CMG__DELTA_SHRANK], count[CMG__DELTA_HELD]);
  if (graphs > 0)
    print_apart(f, "CUDA graph memory pools", CMG__LEAK_CLASS_GRAPH, base, now);
  if (contexts > 0)
    print_apart(f, "CUDA contexts and modules", CMG__LEAK_CLASS_CONTEXT, base,
                now);
  fprintf(f, "\n");
}
