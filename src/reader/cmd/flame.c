/*
 * Folded stacks and flame graphs.  Both start from the same lines: one per
 * leak group (weight live) or per composition entry (peak, denial), frames
 * from the outermost to the innermost shown frame, each named by its
 * function or else "module+0xOFFSET"; for live weight the API the program
 * called is the leaf, so each leaf is one leak site.  When the data covers
 * more than one device, a "device N" frame is the root of every line.
 * Lines with equal frames are merged, lines of zero bytes dropped, and the
 * rest sorted, so the output is the same for the same reports.  The lines
 * of weight live add up to the report's live bytes.
 *
 * Folded stacks are the "a;b;c 123" lines that flamegraph.pl, inferno and
 * speedscope read; ';' inside a name is written as ':'.
 *
 * The SVG is drawn from the sorted lines in one pass, as flamegraph.pl
 * does after its sort: neighbouring lines share the boxes of their common
 * prefix, and a box closes when a line leaves it.  Each box is a <g> with
 * a <title> (the tooltip: name, size, share), one <rect> and a label when it
 * fits.  The box where a line ends has class "site" and the others class
 * "frame", so with weight live the "site" rectangles are the leak sites
 * one for one.  No box is left out for being narrow, so that count holds.
 * The file needs no script, style sheet or font from outside.
 *
 * The folded and flame commands, which read the reports into one view and
 * print it either way, are at the end.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/size.h"

#include "reader/cmd/flame.h"
#include "reader/load/utf8_text.h"
#include "reader/model/index.h"
#include "reader/model/leak_class.h"
#include "reader/model/view.h"
#include "reader/run/run.h"
#include "reader/show/frame_name.h"
#include "reader/show/output.h"
#include "reader/show/xml.h"
#include "reader/tool.h"

#define SIZE_BUF 32

/* Geometry of the SVG, in pixels. */
#define PAD_X 10
#define PAD_TOP 56
#define PAD_BOTTOM 16
#define ROW 16
#define CHAR_W 7.2
#define FONT_SIZE 12

struct line {
  uint32_t n;
  const char **labels;   /* root first */
  unsigned char *python; /* per label: a Python frame (same allocation) */
  uint64_t bytes, count;
  unsigned kind;    /* of the leaf: KIND_* */
  bool device_root; /* labels[0] is "device N" */
};

enum { KIND_FRAME, KIND_API, KIND_DEVICE, KIND_ROOT, KIND_PYTHON };

struct lines {
  size_t n, cap;
  struct line *v;
  char **frame_labels; /* per interned frame, made on first use */
  char *device_labels[CMG__MAX_DEVICES + 1];
  size_t n_frames;
  uint64_t total_bytes, total_count;
};

static void
lines_free(struct lines *ls)
{
  for (size_t i = 0; i < ls->n; i++)
    free(ls->v[i].labels);
  for (size_t i = 0; ls->frame_labels != NULL && i < ls->n_frames; i++)
    free(ls->frame_labels[i]);
  for (size_t i = 0; i < sizeof(ls->device_labels) / sizeof(*ls->device_labels);
       i++)
    free(ls->device_labels[i]);
  free(ls->frame_labels);
  free(ls->v);
}

/* Makes s fit for a folded line, where ';' separates frames; returns s. */
static char *
fold_name(char *s)
{
  for (char *p = s; p != NULL && *p != '\0'; p++) {
    if (*p == ';')
      *p = ':';
  }
  return s;
}

static const char *
frame_label(struct lines *ls, const struct cmg__index *ix, uint32_t fr)
{
  if (ls->frame_labels[fr] == NULL)
    ls->frame_labels[fr] = fold_name(cmg__frame_name_label(ix, fr));
  return ls->frame_labels[fr];
}

/* "device N", or "host" for -1; the reader allows ordinals 0 to 63. */
static const char *
device_label(struct lines *ls, int ordinal)
{
  char buf[32];
  int slot =
      ordinal >= 0 && ordinal < CMG__MAX_DEVICES ? ordinal : CMG__MAX_DEVICES;

  if (ls->device_labels[slot] == NULL) {
    if (slot == CMG__MAX_DEVICES)
      snprintf(buf, sizeof(buf), "host");
    else
      snprintf(buf, sizeof(buf), "device %d", ordinal);
    ls->device_labels[slot] = strdup(buf);
  }
  return ls->device_labels[slot];
}

/* Appends a line for stack (with an API leaf when api is not NULL). */
static int
add_line(struct lines *ls, const struct cmg__view *v, uint32_t stack,
         const char *api, int device, bool with_device, uint64_t bytes,
         uint64_t count, bool all_frames)
{
  const struct cmg__index *ix = v->ix;
  uint32_t lo, hi, n = 0;

  if (bytes == 0)
    return 0;
  if (ls->n == ls->cap) {
    size_t cap = ls->cap != 0 ? ls->cap * 2 : 64;
    struct line *bigger = realloc(ls->v, cap * sizeof(*bigger));

    if (bigger == NULL)
      return -ENOMEM;
    ls->v = bigger;
    ls->cap = cap;
  }
  cmg__index_stack_range(ix, stack, all_frames, &lo, &hi);
  struct line *l = &ls->v[ls->n];
  l->labels = malloc((hi - lo + 4) * (sizeof(*l->labels) + 1));
  if (l->labels == NULL)
    return -ENOMEM;
  l->python = (unsigned char *)(l->labels + (hi - lo + 4));
  memset(l->python, 0, hi - lo + 4);
  l->kind = KIND_FRAME;
  l->device_root = with_device;
  if (with_device)
    l->labels[n++] = device_label(ls, device);
  /* A cut stack does not start where the program did; say so at its root.
   * Reports that record where a stack was cut show the cut as a frame. */
  if (stack != CMG__TOOL_NONE && hi == ix->stacks[stack].n &&
      cmg__index_is_cut_unplaced(ix, stack))
    l->labels[n++] = "(truncated)";
  for (uint32_t k = hi; k > lo; k--) {
    uint32_t fr = ix->stacks[stack].frames[k - 1];

    l->python[n] = ix->frames[fr].python;
    l->labels[n++] = frame_label(ls, ix, fr);
  }
  if (api != NULL) {
    l->labels[n++] = api;
    l->kind = KIND_API;
  } else if (n == (with_device ? 1u : 0u)) {
    l->labels[n++] = "(no stack)";
  }
  for (uint32_t k = 0; k < n; k++) {
    if (l->labels[k] == NULL) {
      free(l->labels);
      return -ENOMEM;
    }
  }
  l->n = n;
  l->bytes = bytes;
  l->count = count;
  ls->total_bytes = cmg__tool_add(ls->total_bytes, bytes);
  ls->total_count = cmg__tool_add(ls->total_count, count);
  ls->n++;
  return 0;
}

static int
compare_lines(const void *a, const void *b)
{
  const struct line *x = a, *y = b;

  for (uint32_t k = 0; k < x->n && k < y->n; k++) {
    int c =
        x->labels[k] == y->labels[k] ? 0 : strcmp(x->labels[k], y->labels[k]);

    if (c != 0)
      return c;
  }
  return x->n < y->n ? -1 : x->n > y->n;
}

/* Whether the bytes of this weight lie on more than one device. */
static bool
is_multi_device(const struct cmg__view *v, enum cmg__flame_weight w)
{
  bool peak = w == CMG__FLAME_WEIGHT_PEAK, any = false;
  uint32_t first = 0;

  if (w == CMG__FLAME_WEIGHT_LIVE) {
    for (size_t i = 0; i < v->n_leaks; i++) {
      const struct cmg__view_leak *l = &v->leaks[i];

      if (!cmg__leak_class_is_device(cmg__leak_class_of(l)) || l->bytes == 0)
        continue;
      if (any && l->device != first)
        return true;
      any = true;
      first = l->device;
    }
    return false;
  }
  for (size_t i = 0; i < (peak ? v->n_peaks : v->n_denials); i++) {
    const struct cmg__view_moment *m = peak ? &v->peaks[i] : &v->denials[i];

    if (!m->has_comp || m->comp.n == 0)
      continue;
    if (any && m->device != first)
      return true;
    any = true;
    first = m->device;
  }
  return false;
}

/* The lines of a view for a weight, merged and sorted. */
static int
make_lines(struct lines *ls, const struct cmg__view *v,
           const struct cmg__flame_opts *o)
{
  bool multi = false;
  size_t i, out;
  int rc = 0;

  memset(ls, 0, sizeof(*ls));
  ls->n_frames = v->ix->n_frames;
  ls->frame_labels = calloc(ls->n_frames + 1, sizeof(*ls->frame_labels));
  if (ls->frame_labels == NULL)
    return -ENOMEM;
  multi = is_multi_device(v, o->weight);
  if (o->weight == CMG__FLAME_WEIGHT_LIVE) {
    for (i = 0; rc == 0 && i < v->n_leaks; i++) {
      const struct cmg__view_leak *l = &v->leaks[i];

      /* Device memory only: the lines add up to the report's live bytes. */
      if (cmg__leak_class_is_device(cmg__leak_class_of(l)))
        rc = add_line(ls, v, l->stack, l->api, cmg__view_ordinal(v, l->device),
                      multi, l->bytes, l->count, o->all_frames);
    }
  } else {
    bool peak = o->weight == CMG__FLAME_WEIGHT_PEAK;
    size_t n = peak ? v->n_peaks : v->n_denials;

    for (i = 0; rc == 0 && i < n; i++) {
      const struct cmg__view_moment *m = peak ? &v->peaks[i] : &v->denials[i];

      for (size_t k = 0; rc == 0 && m->has_comp && k < m->comp.n; k++)
        rc = add_line(ls, v, m->comp.items[k].stack, NULL,
                      cmg__view_ordinal(v, m->device), multi,
                      m->comp.items[k].bytes, m->comp.items[k].count,
                      o->all_frames);
    }
  }
  if (rc != 0)
    return rc;

  if (ls->n > 1)
    qsort(ls->v, ls->n, sizeof(*ls->v), compare_lines);
  for (i = 0, out = 0; i < ls->n; i++) {
    if (out > 0 && compare_lines(&ls->v[out - 1], &ls->v[i]) == 0) {
      ls->v[out - 1].bytes =
          cmg__tool_add(ls->v[out - 1].bytes, ls->v[i].bytes);
      ls->v[out - 1].count =
          cmg__tool_add(ls->v[out - 1].count, ls->v[i].count);
      free(ls->v[i].labels);
    } else {
      ls->v[out++] = ls->v[i];
    }
  }
  ls->n = out;
  return 0;
}

int
cmg__flame_folded(FILE *f, const struct cmg__view *v,
                  const struct cmg__flame_opts *o)
{
  struct lines ls;
  int rc = make_lines(&ls, v, o);

  for (size_t i = 0; rc == 0 && i < ls.n; i++) {
    for (uint32_t k = 0; k < ls.v[i].n; k++)
      fprintf(f, "%s%s", k > 0 ? ";" : "", ls.v[i].labels[k]);
    fprintf(f, " %" PRIu64 "\n", ls.v[i].bytes);
  }
  lines_free(&ls);
  return rc;
}

/* ---- SVG ---------------------------------------------------------------- */

static uint32_t
name_hash(const char *s)
{
  uint32_t h = 2166136261u;

  for (; *s != '\0'; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* flamegraph.pl's "mem" palette for program frames, blues for Python
 * frames; the leaf API red. */
static void
color(const char *label, unsigned kind, char *buf, size_t len)
{
  uint32_t h = name_hash(label);
  unsigned v1 = h & 0xff, v2 = (h >> 8) & 0xff;

  if (kind == KIND_ROOT || kind == KIND_DEVICE)
    snprintf(buf, len, "rgb(200,200,200)");
  else if (kind == KIND_PYTHON)
    snprintf(buf, len, "rgb(%u,%u,235)", 60 + v1 * 80 / 255,
             120 + v2 * 80 / 255);
  else if (kind == KIND_API)
    snprintf(buf, len, "rgb(230,%u,%u)", 80 + v1 * 60 / 255,
             50 + v2 * 40 / 255);
  else
    snprintf(buf, len, "rgb(0,%u,%u)", 190 + v2 * 50 / 255, v1 * 210 / 255);
}

struct drawing {
  FILE *f;
  double scale; /* pixels per byte */
  unsigned height;
  uint64_t total;
};

static void
box(struct drawing *d, const char *label, unsigned kind, bool site,
    unsigned depth, uint64_t start, uint64_t bytes, uint64_t count)
{
  double x = PAD_X + (double)start * d->scale;
  double w = (double)bytes * d->scale;
  double y = d->height - PAD_BOTTOM - (double)(depth + 1) * ROW;
  char size[SIZE_BUF], fill[32];
  size_t fit = w > 2 * CHAR_W ? (size_t)((w - 6) / CHAR_W) : 0;

  color(label, kind, fill, sizeof(fill));
  fprintf(d->f, "<g><title>");
  cmg__xml_put(d->f, label, SIZE_MAX);
  fprintf(d->f, ": %s in %" PRIu64 " %s (%" PRIu64 " bytes, %.2f%%)</title>",
          cmg__format_size(bytes, size, sizeof(size)), count,
          cmg__tool_plural(count, "allocation", "allocations"), bytes,
          d->total > 0 ? 100.0 * (double)bytes / (double)d->total : 0.0);
  fprintf(d->f,
          "<rect class=\"%s\" data-bytes=\"%" PRIu64 "\" x=\"%.2f\" "
          "y=\"%.1f\" width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"%s\"/>",
          kind == KIND_ROOT ? "root"
          : site            ? "site"
                            : "frame",
          bytes, x, y, w, ROW - 1, fill);
  if (fit >= 3) {
    size_t chars = cmg__utf8_count(label);

    fprintf(d->f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + 11.5);
    if (chars <= fit) {
      cmg__xml_put(d->f, label, SIZE_MAX);
    } else {
      cmg__xml_put(d->f, label, cmg__utf8_prefix(label, fit - 2));
      fputs("..", d->f);
    }
    fputs("</text>", d->f);
  }
  fputs("</g>\n", d->f);
}

struct open_box {
  const char *label;
  unsigned kind;
  bool site;
  uint64_t start, bytes, count;
};

static void
header(struct drawing *d, const struct cmg__view *v,
       const struct cmg__flame_opts *o, size_t sites, unsigned width)
{
  static const char *const titles[] = {
    "Live device memory by call stack",
    "Device memory at the peak, by call stack",
    "Device memory live at the first denial, by call stack",
  };
  char size[SIZE_BUF];

  fprintf(d->f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
          "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
          "width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
          "font-family=\"monospace\" font-size=\"%d\">\n",
          width, d->height, width, d->height, FONT_SIZE);
  fprintf(d->f, "<style>text { pointer-events: none; fill: #000; } "
                "rect:hover { stroke: #000; stroke-width: 0.5; }</style>\n");
  fprintf(d->f,
          "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%u\" "
          "height=\"%u\" fill=\"#f8f8f4\"/>\n",
          width, d->height);
  fprintf(d->f,
          "<text x=\"%u\" y=\"22\" text-anchor=\"middle\" "
          "font-size=\"16\">",
          width / 2);
  /* The title and the file name come from the command line: clean them of
   * anything XML refuses. */
  char *title =
      cmg__utf8_clean(o->title != NULL ? o->title : titles[o->weight]);
  cmg__xml_put(d->f, title != NULL ? title : "", SIZE_MAX);
  free(title);
  fprintf(d->f,
          "</text>\n<text x=\"%u\" y=\"42\" text-anchor=\"middle\">"
          "%s (%" PRIu64 " bytes) in %zu %s; ",
          width / 2, cmg__format_size(d->total, size, sizeof(size)), d->total,
          sites,
          o->weight == CMG__FLAME_WEIGHT_LIVE
              ? cmg__tool_plural(sites, "leak site", "leak sites")
              : cmg__tool_plural(sites, "stack", "stacks"));
  if (v->n_sources == 1) {
    fprintf(d->f, "process %ld, ", v->sources[0].pid);
    char *file = cmg__utf8_clean(v->sources[0].file);
    cmg__xml_put(d->f, file != NULL ? file : "", SIZE_MAX);
    free(file);
  } else {
    fprintf(d->f, "%zu processes", v->n_sources);
  }
  fprintf(d->f, "</text>\n");
}

/* The boxes of the lines, sorted, each path's boxes drawn as it closes;
 * open[k] is the box of depth k + 1 on the current path (one per depth). */
static void
draw_boxes(struct drawing *d, const struct lines *ls, struct open_box *open)
{
  uint32_t depth = 0;
  uint64_t cum = 0;

  for (size_t i = 0; i <= ls->n; i++) {
    const struct line *l = i < ls->n ? &ls->v[i] : NULL;
    uint32_t common = 0;

    while (l != NULL && common < depth && common < l->n &&
           strcmp(open[common].label, l->labels[common]) == 0)
      common++;
    while (depth > common) {
      struct open_box *b = &open[--depth];

      box(d, b->label, b->kind, b->site, depth + 1, b->start, b->bytes,
          b->count);
    }
    if (l == NULL)
      break;
    for (uint32_t k = depth; k < l->n; k++) {
      open[k].label = l->labels[k];
      open[k].kind = k + 1 == l->n              ? l->kind
                     : k == 0 && l->device_root ? KIND_DEVICE
                     : l->python[k]             ? KIND_PYTHON
                                                : KIND_FRAME;
      open[k].site = false;
      open[k].start = cum;
      open[k].bytes = open[k].count = 0;
    }
    depth = l->n;
    for (uint32_t k = 0; k < l->n; k++) {
      open[k].bytes = cmg__tool_add(open[k].bytes, l->bytes);
      open[k].count = cmg__tool_add(open[k].count, l->count);
    }
    open[l->n - 1].site = true;
    cum = cmg__tool_add(cum, l->bytes);
  }
}

int
cmg__flame_svg(FILE *f, const struct cmg__view *v,
               const struct cmg__flame_opts *o)
{
  struct drawing d = { f, 0, 0, 0 };
  struct lines ls;
  uint32_t depth = 0;
  int rc = make_lines(&ls, v, o);

  if (rc != 0) {
    lines_free(&ls);
    return rc;
  }
  for (size_t i = 0; i < ls.n; i++)
    depth = ls.v[i].n > depth ? ls.v[i].n : depth;
  struct open_box *open = calloc(depth + 1, sizeof(*open));
  if (open == NULL) {
    lines_free(&ls);
    return -ENOMEM;
  }
  d.total = ls.total_bytes;
  d.height = PAD_TOP + (depth + 1) * ROW + PAD_BOTTOM;
  d.scale = d.total > 0 ? (double)(o->width - 2 * PAD_X) / (double)d.total : 0;
  header(&d, v, o, ls.n, o->width);
  draw_boxes(&d, &ls, open);
  if (ls.n > 0)
    box(&d, "all", KIND_ROOT, false, 0, 0, d.total, ls.total_count);
  else
    fprintf(f,
            "<text x=\"%u\" y=\"%u\" text-anchor=\"middle\">nothing to "
            "draw: no bytes of this weight</text>\n",
            o->width / 2, PAD_TOP + ROW);
  fprintf(f, "</svg>\n");
  free(open);
  lines_free(&ls);
  return 0;
}

/* ---- the commands -------------------------------------------------------- */

int
cmg__flame_folded_main(char *const *files, int n_files, struct cmg__supp *supp,
                       const struct cmg__flame_opts *o)
{
  struct cmg__index ix;
  struct cmg__view v;
  int rc = 0;

  cmg__index_init(&ix);
  cmg__view_init(&v, &ix, true);
  if (cmg__run_load_all(&v, files, n_files, supp) != 0)
    rc = CMG__TOOL_EXIT_ERROR;
  if (rc == 0 && cmg__flame_folded(stdout, &v, o) != 0) {
    cmg__output_say("out of memory");
    rc = CMG__TOOL_EXIT_ERROR;
  }
  cmg__view_free(&v);
  cmg__index_free(&ix);
  return rc;
}

int
cmg__flame_main(char *const *files, int n_files, struct cmg__supp *supp,
                const struct cmg__flame_opts *o, const char *output)
{
  struct cmg__index ix;
  struct cmg__view v;
  FILE *out = NULL;
  int rc = 0;

  cmg__index_init(&ix);
  cmg__view_init(&v, &ix, true);
  if (cmg__run_load_all(&v, files, n_files, supp) != 0)
    rc = CMG__TOOL_EXIT_ERROR;
  /* Created only once every report has been read, so that a bad report
   * leaves no empty SVG behind. */
  if (rc == 0 && (out = cmg__output_create(output)) == NULL)
    rc = CMG__TOOL_EXIT_ERROR;
  if (out != NULL && cmg__flame_svg(out, &v, o) != 0) {
    cmg__output_say("out of memory");
    rc = CMG__TOOL_EXIT_ERROR;
  }
  if (out != NULL)
    rc = cmg__output_close(out, output, rc);
  cmg__view_free(&v);
  cmg__index_free(&ix);
  return rc;
}
