/*
 * The plot command: a report's timeline as a self-contained SVG, one panel
 * per device.  Each panel draws the most bytes in use over time (the
 * points' max as steps, filled), the least where it differs (a line), the
 * limit (a dashed line), the peak (a dot, labelled) and each denial (a red
 * mark with its details as a tooltip), on axes in seconds and in binary
 * units.  Every text that comes from the report goes through
 * cmg__xml_put(), so the file stays well-formed XML whatever a path
 * or an API name holds.
 */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/size.h"

#include "reader/cmd/plot.h"
#include "reader/load/model.h"
#include "reader/run/run.h"
#include "reader/show/output.h"
#include "reader/show/xml.h"
#include "reader/tool.h"

#define WIDTH 900
#define PANEL 280 /* height of a device's panel */
#define TOP 50    /* the title */
#define LEFT 90   /* the bytes axis */
#define RIGHT 30
#define PAD 30 /* above and below a plot in its panel */

struct frame {
  double x0, x1, y0, y1; /* the plot area, in pixels (y0 at the top) */
  double t_max;          /* seconds at x1 */
  double b_max;          /* bytes at y0 */
};

static double
x_of(const struct frame *fr, double t)
{
  return fr->x0 + (fr->x1 - fr->x0) * (fr->t_max > 0 ? t / fr->t_max : 0);
}

static double
y_of(const struct frame *fr, double bytes)
{
  return fr->y1 - (fr->y1 - fr->y0) * (fr->b_max > 0 ? bytes / fr->b_max : 0);
}

/* A step of 1, 2 or 5 times a power of ten in `unit`s giving at most
 * about five ticks up to max. */
static double
nice_step(double max, double unit)
{
  double raw = max / unit / 5;

  if (raw <= 0)
    return unit;
  double p = pow(10, floor(log10(raw)));
  double m = raw / p;
  return unit * p * (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10);
}

static void
axes(FILE *f, const struct frame *fr)
{
  char label[32];
  double unit = 1;

  while (unit * 1024 <= fr->b_max)
    unit *= 1024;
  double step = nice_step(fr->b_max, unit);
  fprintf(f, "<g class=\"axes\">\n");
  for (double b = 0; b <= fr->b_max * 1.0001; b += step) {
    double y = y_of(fr, b);
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "class=\"grid\"/>\n",
            fr->x0, y, fr->x1, y);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", fr->x0 - 6,
            y + 4);
    cmg__xml_put(f, cmg__format_size((uint64_t)b, label, sizeof(label)),
                 SIZE_MAX);
    fputs("</text>\n", f);
  }
  step = nice_step(fr->t_max, 1e-6);
  for (double t = 0; t <= fr->t_max * 1.0001; t += step) {
    double x = x_of(fr, t);
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "class=\"tick\"/>\n",
            x, fr->y1, x, fr->y1 + 5);
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g s"
            "</text>\n",
            x, fr->y1 + 18, t);
  }
  fprintf(f,
          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
          "class=\"frame\"/>\n</g>\n",
          fr->x0, fr->y0, fr->x1 - fr->x0, fr->y1 - fr->y0);
}

/* The most bytes in use as steps: each point's max holds until the next. */
static void
envelope(FILE *f, const struct frame *fr, const struct cmg__model_series *s)
{
  fprintf(f, "<path class=\"most\" d=\"M%.1f %.1f", x_of(fr, s->points[0].time),
          y_of(fr, 0));
  for (size_t i = 0; i < s->n; i++) {
    double next = i + 1 < s->n ? s->points[i + 1].time : s->points[i].time;
    fprintf(f, " L%.1f %.1f L%.1f %.1f", x_of(fr, s->points[i].time),
            y_of(fr, (double)s->points[i].max), x_of(fr, next),
            y_of(fr, (double)s->points[i].max));
  }
  fprintf(f, " L%.1f %.1f Z\"/>\n", x_of(fr, s->points[s->n - 1].time),
          y_of(fr, 0));
  fprintf(f, "<polyline class=\"least\" points=\"");
  for (size_t i = 0; i < s->n; i++) {
    double next = i + 1 < s->n ? s->points[i + 1].time : s->points[i].time;
    fprintf(f, "%.1f,%.1f %.1f,%.1f ", x_of(fr, s->points[i].time),
            y_of(fr, (double)s->points[i].min), x_of(fr, next),
            y_of(fr, (double)s->points[i].min));
  }
  fputs("\"/>\n", f);
}

/* A denial's mark, with its details as a tooltip; line is its stack in
 * one line. */
static void
denial_mark(FILE *f, const struct frame *fr, const struct cmg__model_denial *d,
            const char *line)
{
  char a[32], b[32];
  double x = x_of(fr, d->comp.time), y = y_of(fr, (double)d->live_bytes);

  fprintf(f, "<g class=\"denial\"><title>denied ");
  cmg__xml_put(f, d->api, SIZE_MAX);
  fputs(" of ", f);
  cmg__xml_put(f, cmg__format_size(d->requested_bytes, a, sizeof(a)), SIZE_MAX);
  fputs(" with ", f);
  cmg__xml_put(f, cmg__format_size(d->live_bytes, b, sizeof(b)), SIZE_MAX);
  fprintf(f, " in use, at %.6f s, from ", d->comp.time);
  cmg__xml_put(f, line, SIZE_MAX);
  fprintf(f,
          "</title><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
          "y2=\"%.1f\"/><path d=\"M%.1f %.1f l-5 -9 l10 0 Z\"/></g>\n",
          x, fr->y0, x, fr->y1, x, y);
}

static void
marks(FILE *f, const struct frame *fr, const struct cmg__model_report *r,
      const struct cmg__model_series *s, uint64_t limit, char *const *lines)
{
  char a[32];
  double y;

  if (limit != 0 && limit <= fr->b_max) {
    y = y_of(fr, (double)limit);
    fprintf(f,
            "<line class=\"limit\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
            "y2=\"%.1f\"/>\n<text class=\"limit\" x=\"%.1f\" y=\"%.1f\" "
            "text-anchor=\"end\">limit ",
            fr->x0, y, fr->x1, y, fr->x1 - 4, y - 5);
    cmg__xml_put(f, cmg__format_size(limit, a, sizeof(a)), SIZE_MAX);
    fputs("</text>\n", f);
  }
  double x = x_of(fr, s->peak_time);
  y = y_of(fr, (double)s->peak_bytes);
  fprintf(f,
          "<circle class=\"peak\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"/>\n"
          "<text class=\"peak\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">"
          "peak ",
          x, y, x + (x > (fr->x0 + fr->x1) / 2 ? -8 : 8), y - 8,
          x > (fr->x0 + fr->x1) / 2 ? "end" : "start");
  cmg__xml_put(f, cmg__format_size(s->peak_bytes, a, sizeof(a)), SIZE_MAX);
  fprintf(f, " at %.3f s</text>\n", s->peak_time);
  for (size_t i = 0; i < r->n_denials; i++) {
    const struct cmg__model_denial *d = &r->denials_list[i];

    if (d->device != s->device)
      continue;
    denial_mark(f, fr, d, lines[i]);
  }
}

static void
panel(FILE *f, const struct cmg__model_report *r,
      const struct cmg__model_series *s, double t_max, int index,
      char *const *lines)
{
  struct frame fr;
  uint64_t limit = cmg__run_limit(r, s->device), top = s->peak_bytes;
  char label[64];

  for (size_t i = 0; i < s->n; i++)
    if (s->points[i].max > top)
      top = s->points[i].max;
  if (limit > top && limit < top * 4)
    top = limit;
  fr.x0 = LEFT;
  fr.x1 = WIDTH - RIGHT;
  fr.y0 = TOP + index * PANEL + PAD;
  fr.y1 = TOP + (index + 1) * PANEL - PAD;
  fr.t_max = t_max > 0 ? t_max : 1e-3;
  fr.b_max = top > 0 ? (double)top * 1.1 : 1024;
  snprintf(label, sizeof(label), "device %d", s->device);
  fprintf(f,
          "<g class=\"device\" data-device=\"%d\">\n<text x=\"%.1f\" "
          "y=\"%.1f\" class=\"panel\">",
          s->device, fr.x0, fr.y0 - 8);
  cmg__xml_put(f, label, SIZE_MAX);
  fputs("</text>\n", f);
  envelope(f, &fr, s);
  axes(f, &fr);
  marks(f, &fr, r, s, limit, lines);
  fputs("</g>\n", f);
}

static void
plot(FILE *f, const struct cmg__model_report *r, char *const *lines)
{
  const struct cmg__model_timeline *t = &r->timeline;
  double t_max = 0;
  char title[1024];

  for (size_t i = 0; i < t->n_series; i++) {
    const struct cmg__model_series *s = &t->series[i];
    if (s->points[s->n - 1].time > t_max)
      t_max = s->points[s->n - 1].time;
  }
  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
          "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
          "font-size=\"12\">\n",
          WIDTH, TOP + (int)(t->n_series ? t->n_series : 1) * PANEL, WIDTH,
          TOP + (int)(t->n_series ? t->n_series : 1) * PANEL);
  fputs("<style>.grid{stroke:#ddd}.tick{stroke:#555}.frame{fill:none;"
        "stroke:#555}.most{fill:#9ecae1;stroke:#3182bd}.least{fill:none;"
        "stroke:#08519c;stroke-width:0.7}.limit{stroke:#d62728;"
        "stroke-dasharray:6 4;fill:#d62728}.peak{fill:#ff7f0e}"
        ".denial{stroke:#d62728;fill:#d62728}.panel{font-weight:bold}"
        "</style>\n",
        f);
  snprintf(title, sizeof(title), "Memory over time: %s, pid %ld", r->file,
           r->pid);
  fputs("<text x=\"10\" y=\"24\" font-size=\"16\">", f);
  cmg__xml_put(f, title, SIZE_MAX);
  fputs("</text>\n<text x=\"10\" y=\"40\" fill=\"#555\">", f);
  cmg__xml_put(f, r->command ? r->command : "", SIZE_MAX);
  fputs("</text>\n", f);
  for (size_t i = 0; i < t->n_series; i++)
    panel(f, r, &t->series[i], t_max, (int)i, lines);
  if (t->n_series == 0)
    fprintf(f, "<text x=\"%d\" y=\"%d\">no device memory was used</text>\n",
            LEFT, TOP + PANEL / 2);
  fputs("</svg>\n", f);
}

/* Each denial's stack in one line, as every view names it; NULL when
 * out of memory. */
static char **
denial_lines(const struct cmg__model_report *r)
{
  struct cmg__run_stacks st = { 0 };
  char **lines = calloc(r->n_denials + 1, sizeof(*lines));
  bool ok = lines != NULL && cmg__run_stacks_init(&st, r) == 0;

  for (size_t i = 0; ok && i < r->n_denials; i++)
    ok = (lines[i] = cmg__run_stacks_line(&st, r->denials_list[i].stack)) !=
         NULL;
  cmg__run_stacks_free(&st);
  for (size_t i = 0; !ok && lines != NULL && i < r->n_denials; i++)
    free(lines[i]);
  if (!ok) {
    free(lines);
    return NULL;
  }
  return lines;
}

int
cmg__plot_main(char *const *files, int n_files, const char *output)
{
  struct cmg__model_report *r;
  char **lines = NULL;
  FILE *f;
  int rc = CMG__TOOL_EXIT_ERROR;

  if (n_files != 1) {
    cmg__output_say("plot takes one report; got %d", n_files);
    return CMG__TOOL_EXIT_ERROR;
  }
  if (cmg__run_raw_read(files, 1, 0, &r) != 0)
    return CMG__TOOL_EXIT_ERROR;
  if (cmg__run_need_timeline(r, 1) == 0 && (lines = denial_lines(r)) == NULL)
    cmg__output_say("out of memory");
  if (lines != NULL && (f = cmg__output_create(output)) != NULL) {
    plot(f, r, lines);
    rc = cmg__output_close(f, output, 0);
  }
  for (size_t i = 0; lines != NULL && i < r->n_denials; i++)
    free(lines[i]);
  free(lines);
  cmg__run_raw_free(r, 1);
  return rc;
}
