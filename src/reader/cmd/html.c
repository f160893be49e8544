/*
 * The html command: one self-contained page of a run.  The page
 * (src/reader/page.html, built into the tool) holds its own script and
 * styles; this file writes it with the data it shows embedded once, as
 * compact JSON in a script element of type application/json:
 *
 *   summary  the summary's --json of every group (--top 0), each group with
 *            the text's title and folded lines, so that the page shows
 *            stacks exactly as the summary prints them;
 *   base, diff  for BASE NEW, BASE's summary and diff --json;
 *   reports  each report's timeline, limits, dumps and denials, as the
 *            plot command reads them.
 *
 * Frames and lines repeat from group to group, so each is written once,
 * in "frames" and "strings" (show/json_once.c), and groups name them by
 * index ("shown" keeps which frames the default view hides).  The data is
 * written into memory as it is made (core/jsonw.c); every '<', '>' and '&'
 * of it is written out as a \u escape: no string of a report can end the
 * script element, or be read as markup, whatever it holds.  The file is
 * created only once every report was read, so a bad report leaves no
 * page.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"

#include "cumemguard.h"

#include "reader/cmd/html.h"
#include "reader/load/model.h"
#include "reader/model/delta.h"
#include "reader/model/index.h"
#include "reader/model/view.h"
#include "reader/page_html.h"
#include "reader/run/run.h"
#include "reader/show/diff_json.h"
#include "reader/show/json_once.h"
#include "reader/show/output.h"
#include "reader/show/summary_json.h"
#include "reader/tool.h"

#define MARKER "@CMG_DATA@"

/* ---- what the views say ------------------------------------------------ */

/* Writes member key: the summary of reports r[0..n), already read, as one
 * view, as summary --json writes it.  0, or -1 after saying why not. */
static int
summary_of(struct cmg__jsonw *w, const char *key,
           const struct cmg__model_report *r, int n, struct cmg__supp *supp,
           const struct cmg__tool_opts *o)
{
  struct cmg__index ix;
  struct cmg__view v;
  int rc = 0;

  cmg__index_init(&ix);
  cmg__view_init(&v, &ix, true);
  for (int i = 0; rc == 0 && i < n; i++)
    rc = cmg__view_add(&v, &r[i]);
  if (rc != 0)
    cmg__output_say("out of memory");
  else if ((rc = cmg__run_finish(&v, supp)) == 0)
    cmg__summary_json_write(cmg__jsonw_key(w, key), &v, o);
  cmg__view_free(&v);
  cmg__index_free(&ix);
  return rc == 0 ? 0 : -1;
}

struct pair_arg {
  struct cmg__jsonw *w;
  const struct cmg__tool_opts *o;
};

static int
write_diff(const struct cmg__view *base, const struct cmg__view *now, void *arg)
{
  struct pair_arg *a = arg;
  size_t n;
  struct cmg__delta *c = cmg__delta_of(base, now, &n);

  if (c == NULL)
    return -1;
  cmg__diff_json_write(cmg__jsonw_key(a->w, "diff"), base, now, c, n, a->o);
  free(c);
  return 0;
}

/* Writes member "diff": diff --json of the two reports, read afresh as the
 * diff command reads them.  0, or -1 after saying why not. */
static int
diff_of(struct cmg__jsonw *w, const char *base_file, const char *new_file,
        struct cmg__supp *supp, const struct cmg__tool_opts *o)
{
  struct pair_arg a = { w, o };

  return cmg__run_pair(base_file, new_file, supp, write_diff, &a) == 0 ? 0 : -1;
}

/* ---- what the reports say of time -------------------------------------- */

static bool
is_set(const struct cmg__model_soft *s)
{
  return s->bytes > 0 || s->percent > 0;
}

/* The soft limit options.gpu_limits sets for the GPU at `device`, or NULL. */
static const struct cmg__model_soft *
gpu_soft(const struct cmg__model_report *r, int device)
{
  for (size_t i = 0; i < r->n_devices; i++) {
    const struct cmg__model_device *d = &r->devices[i];

    if (d->ordinal != device || d->uuid == NULL)
      continue;
    for (size_t k = 0; k < r->n_gpu_soft; k++)
      if (strcmp(r->gpu_soft[k].uuid, d->uuid) == 0 &&
          is_set(&r->gpu_soft[k].soft))
        return &r->gpu_soft[k].soft;
  }
  return NULL;
}

/* The soft limit of a device in bytes (its GPU's, else its ordinal's, else
 * the process's, as the library takes them; a percent of its physical
 * memory), 0 for none. */
static uint64_t
soft_limit(const struct cmg__model_report *r, int device)
{
  const struct cmg__model_soft *s = gpu_soft(r, device);

  if (s == NULL && device >= 0 && device < CMG__MODEL_SOFT_DEVICES &&
      is_set(&r->soft_limits[device]))
    s = &r->soft_limits[device];
  if (s == NULL)
    s = &r->soft_limit;
  if (s->bytes > 0)
    return (uint64_t)s->bytes;
  for (size_t i = 0; s->percent > 0 && i < r->n_devices; i++)
    if (r->devices[i].ordinal == device)
      return (uint64_t)((double)r->devices[i].physical_bytes * s->percent /
                        100);
  return 0;
}

/* When the device's peak was: the instant the report's peak gives, which
 * the summary's peak is, rather than the start of the timeline's interval
 * that holds it. */
static double
peak_time(const struct cmg__model_report *r, const struct cmg__model_series *s)
{
  for (size_t i = 0; i < r->n_peaks; i++)
    if (r->peaks[i].device == s->device)
      return r->peaks[i].comp.time;
  return s->peak_time;
}

static void
series_json(struct cmg__jsonw *w, const struct cmg__model_report *r,
            const struct cmg__model_series *s)
{
  uint64_t limit = cmg__run_limit(r, s->device),
           soft = soft_limit(r, s->device);

  cmg__jsonw_object(w);
  cmg__jsonw_member_number(w, "device", s->device);
  cmg__jsonw_member_number(w, "resolution", s->resolution);
  cmg__jsonw_member_uint(w, "peak_bytes", s->peak_bytes);
  cmg__jsonw_member_number(w, "peak_time", peak_time(r, s));
  cmg__jsonw_member_uint_or_null(w, "limit_bytes", limit != 0, limit);
  cmg__jsonw_member_uint_or_null(w, "soft_limit_bytes", soft != 0, soft);
  cmg__jsonw_array(cmg__jsonw_key(w, "points"));
  for (size_t i = 0; i < s->n; i++) {
    const struct cmg__model_point *p = &s->points[i];

    cmg__jsonw_array(w);
    cmg__jsonw_number(w, p->time);
    cmg__jsonw_uint(w, p->live);
    cmg__jsonw_uint(w, p->min);
    cmg__jsonw_uint(w, p->max);
    cmg__jsonw_array_end(w);
  }
  cmg__jsonw_array_end(w);
  cmg__jsonw_object_end(w);
}

/* A denial as the charts mark it, its stack in one line as every view
 * names it. */
static void
denial_json(struct cmg__jsonw *w, const struct cmg__run_stacks *st,
            const struct cmg__model_denial *d)
{
  char *line = cmg__run_stacks_line(st, d->stack);

  if (line == NULL)
    cmg__jsonw_fail(w, -ENOMEM);
  cmg__jsonw_object(w);
  if (d->device >= 0)
    cmg__jsonw_member_number(w, "device", d->device);
  else
    cmg__jsonw_null(cmg__jsonw_key(w, "device"));
  cmg__jsonw_member_number(w, "time", d->comp.time);
  cmg__jsonw_string(cmg__jsonw_key(w, "api"), d->api);
  cmg__jsonw_member_uint(w, "requested_bytes", d->requested_bytes);
  cmg__jsonw_member_uint(w, "live_bytes", d->live_bytes);
  cmg__jsonw_member_uint_or_null(w, "limit_bytes", d->has_limit,
                                 d->limit_bytes);
  cmg__jsonw_string(cmg__jsonw_key(w, "stack"), line);
  cmg__jsonw_object_end(w);
  free(line);
}

/* A report's timeline, dumps and denials. */
static void
report_json(struct cmg__jsonw *w, const struct cmg__model_report *r)
{
  const struct cmg__model_timeline *t = &r->timeline;
  struct cmg__run_stacks st = { 0 };

  if (r->n_denials > 0 && cmg__run_stacks_init(&st, r) != 0)
    cmg__jsonw_fail(w, -ENOMEM);
  cmg__jsonw_object(w);
  cmg__jsonw_array(cmg__jsonw_key(w, "timeline"));
  for (size_t i = 0; t->present && i < t->n_series; i++)
    series_json(w, r, &t->series[i]);
  cmg__jsonw_array_end(w);
  cmg__jsonw_array(cmg__jsonw_key(w, "dumps"));
  for (size_t i = 0; t->present && i < t->n_dumps; i++) {
    cmg__jsonw_object(w);
    cmg__jsonw_member_number(w, "time", t->dumps[i].time);
    cmg__jsonw_string(cmg__jsonw_key(w, "reason"), t->dumps[i].reason);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
  cmg__jsonw_array(cmg__jsonw_key(w, "denials"));
  for (size_t i = 0; w->err == 0 && i < r->n_denials; i++)
    denial_json(w, &st, &r->denials_list[i]);
  cmg__jsonw_array_end(w);
  cmg__jsonw_string(cmg__jsonw_key(w, "file"), r->file);
  cmg__jsonw_member_number(w, "pid", (double)r->pid);
  cmg__jsonw_object_end(w);
  cmg__run_stacks_free(&st);
}

/* ---- the page ---------------------------------------------------------- */

/* JSON inside a script element: '<', '>' and '&' as \u escapes, which
 * JSON.parse reads back as the characters they stand for. */
static void
put_json(FILE *f, const char *json)
{
  for (const char *p = json; *p != '\0'; p++) {
    size_t run = strcspn(p, "<>&");

    fwrite(p, 1, run, f);
    p += run;
    if (*p == '\0')
      break;
    fprintf(f, "\\u%04x", (unsigned char)*p);
  }
}

static void
put_page(FILE *f, const char *json)
{
  for (size_t i = 0; i < sizeof(cmg__page_lines) / sizeof(*cmg__page_lines);
       i++) {
    const char *line = cmg__page_lines[i];
    const char *at = strstr(line, MARKER);

    if (at == NULL) {
      fputs(line, f);
      continue;
    }
    fwrite(line, 1, (size_t)(at - line), f);
    put_json(f, json);
    fputs(at + strlen(MARKER), f);
  }
}

/* ---- the command ------------------------------------------------------- */

/* The page's data, as compact JSON, malloc'd; NULL after saying why not. */
static char *
data_of(char *const *files, int n, bool diff, struct cmg__supp *supp,
        const struct cmg__tool_opts *opts, const struct cmg__model_report *r)
{
  struct cmg__tool_opts o = *opts;
  struct cmg__json_once once;
  struct cmg__jsonw w;

  if (cmg__jsonw_open(&w, -1, false) != 0) {
    cmg__output_say("out of memory");
    return NULL;
  }
  if (cmg__json_once_init(&once) != 0) {
    cmg__json_once_free(&once);
    cmg__jsonw_close(&w);
    cmg__output_say("out of memory");
    return NULL;
  }
  o.once = &once;
  cmg__jsonw_object(&w);
  cmg__jsonw_string(cmg__jsonw_key(&w, "format"), "cumemguard-html");
  cmg__jsonw_number(cmg__jsonw_key(&w, "version"), 1);
  cmg__jsonw_string(cmg__jsonw_key(&w, "tool"),
                    CMG__TOOL_NAME " " CMG_VERSION_STRING);
  cmg__jsonw_string(cmg__jsonw_key(&w, "mode"), diff    ? "diff"
                                                : n > 1 ? "merge"
                                                        : "run");
  bool ok =
      summary_of(&w, "summary", diff ? r + 1 : r, diff ? 1 : n, supp, &o) == 0;
  if (ok && diff) {
    ok = summary_of(&w, "base", r, 1, supp, &o) == 0 &&
         diff_of(&w, files[0], files[1], supp, &o) == 0;
  } else if (ok) {
    cmg__jsonw_null(cmg__jsonw_key(&w, "base"));
    cmg__jsonw_null(cmg__jsonw_key(&w, "diff"));
  }
  cmg__jsonw_array(cmg__jsonw_key(&w, "reports"));
  for (int i = 0; ok && i < n; i++)
    report_json(&w, &r[i]);
  cmg__jsonw_array_end(&w);
  cmg__json_once_write(&once, &w);
  cmg__jsonw_object_end(&w);
  cmg__json_once_free(&once);
  if (!ok) {
    cmg__jsonw_close(&w);
    return NULL;
  }
  char *json = cmg__jsonw_take(&w);
  if (json == NULL)
    cmg__output_say("out of memory");
  return json;
}

int
cmg__html_main(char *const *files, int n_files, bool merged,
               struct cmg__supp *supp, const struct cmg__tool_opts *opts,
               const char *output)
{
  struct cmg__tool_opts o = *opts;
  struct cmg__model_report *r = NULL;
  int rc = CMG__TOOL_EXIT_ERROR;

  o.top = 0;
  o.json = true;
  o.stack_text = true;
  if (cmg__run_raw_read(files, n_files, 0, &r) != 0)
    return rc;
  char *json = data_of(files, n_files, n_files == 2 && !merged, supp, &o, r);
  FILE *f = json != NULL ? cmg__output_create(output) : NULL;
  if (f != NULL) {
    put_page(f, json);
    rc = cmg__output_close(f, output, 0);
  }
  free(json);
  cmg__run_raw_free(r, n_files);
  return rc;
}
