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
 * in "frames" and "strings", and groups name them by index ("shown" keeps
 * which frames the default view hides).  Every '<', '>' and '&' of the JSON
 * is written as a \u escape: no string of a report can end the script
 * element, or be read as markup, whatever it holds.  The file is created
 * only once every report was read, so a bad report leaves no page.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cumemguard.h"

#include "reader/cmd/html.h"
#include "reader/load/model.h"
#include "reader/model/delta.h"
#include "reader/model/index.h"
#include "reader/model/intern.h"
#include "reader/model/view.h"
#include "reader/page_html.h"
#include "reader/run/run.h"
#include "reader/show/diff_json.h"
#include "reader/show/output.h"
#include "reader/show/summary_json.h"
#include "reader/tool.h"

#define MARKER "@CMG_DATA@"

/* ---- what the views say ------------------------------------------------ */

/* The summary of reports r[0..n), already read, as one view, as summary
 * --json writes it. */
static cJSON *
summary_of(const struct cmg__model_report *r, int n, struct cmg__supp *supp,
           const struct cmg__tool_opts *o)
{
  struct cmg__index ix;
  struct cmg__view v;
  cJSON *s = NULL;
  int rc = 0;

  cmg__index_init(&ix);
  cmg__view_init(&v, &ix, true);
  for (int i = 0; rc == 0 && i < n; i++)
    rc = cmg__view_add(&v, &r[i]);
  if (rc != 0)
    cmg__output_say("out of memory");
  else if (cmg__run_finish(&v, supp) == 0)
    s = cmg__summary_json_of(&v, o);
  cmg__view_free(&v);
  cmg__index_free(&ix);
  return s;
}

struct pair_arg {
  const struct cmg__tool_opts *o;
  cJSON *doc;
};

static int
keep_diff(const struct cmg__view *base, const struct cmg__view *now, void *arg)
{
  struct pair_arg *a = arg;
  size_t n;
  struct cmg__delta *c = cmg__delta_of(base, now, &n);

  a->doc = c != NULL ? cmg__diff_json_of(base, now, c, n, a->o) : NULL;
  free(c);
  return a->doc != NULL ? 0 : -1;
}

/* diff --json of the two reports, read afresh as the diff command reads
 * them; NULL after saying why. */
static cJSON *
diff_of(const char *base_file, const char *new_file, struct cmg__supp *supp,
        const struct cmg__tool_opts *o)
{
  struct pair_arg a = { o, NULL };

  cmg__run_pair(base_file, new_file, supp, keep_diff, &a);
  return a.doc;
}

/* ---- what the reports say of time -------------------------------------- */

static cJSON *
bytes_or_null(uint64_t bytes)
{
  return bytes != 0 ? cJSON_CreateNumber((double)bytes) : cJSON_CreateNull();
}

/* The soft limit of a device in bytes (its own, else the process's; a
 * percent of its physical memory), 0 for none. */
static uint64_t
soft_limit(const struct cmg__model_report *r, int device)
{
  const struct cmg__model_soft *s = &r->soft_limit;

  if (device >= 0 && device < CMG__MODEL_SOFT_DEVICES &&
      (r->soft_limits[device].bytes > 0 || r->soft_limits[device].percent > 0))
    s = &r->soft_limits[device];
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

static cJSON *
series_json(const struct cmg__model_report *r,
            const struct cmg__model_series *s)
{
  cJSON *o = cJSON_CreateObject();
  cJSON *pts = cJSON_CreateArray();

  cJSON_AddNumberToObject(o, "device", s->device);
  cJSON_AddNumberToObject(o, "resolution", s->resolution);
  cJSON_AddNumberToObject(o, "peak_bytes", (double)s->peak_bytes);
  cJSON_AddNumberToObject(o, "peak_time", peak_time(r, s));
  cJSON_AddItemToObject(o, "limit_bytes",
                        bytes_or_null(cmg__run_limit(r, s->device)));
  cJSON_AddItemToObject(o, "soft_limit_bytes",
                        bytes_or_null(soft_limit(r, s->device)));
  for (size_t i = 0; i < s->n; i++) {
    const struct cmg__model_point *p = &s->points[i];
    double v[4] = { p->time, (double)p->live, (double)p->min, (double)p->max };

    cJSON_AddItemToArray(pts, cJSON_CreateDoubleArray(v, 4));
  }
  cJSON_AddItemToObject(o, "points", pts);
  return o;
}

/* A denial as the charts mark it, its stack in one line as every view
 * names it; NULL when out of memory. */
static cJSON *
denial_json(const struct cmg__run_stacks *st, const struct cmg__model_denial *d)
{
  char *line = cmg__run_stacks_line(st, d->stack);
  cJSON *o = cJSON_CreateObject();

  cJSON_AddItemToObject(o, "device",
                        d->device >= 0 ? cJSON_CreateNumber(d->device)
                                       : cJSON_CreateNull());
  cJSON_AddNumberToObject(o, "time", d->comp.time);
  cJSON_AddStringToObject(o, "api", d->api);
  cJSON_AddNumberToObject(o, "requested_bytes", (double)d->requested_bytes);
  cJSON_AddNumberToObject(o, "live_bytes", (double)d->live_bytes);
  cJSON_AddItemToObject(o, "limit_bytes",
                        d->has_limit
                            ? cJSON_CreateNumber((double)d->limit_bytes)
                            : cJSON_CreateNull());
  if (line == NULL || cJSON_AddStringToObject(o, "stack", line) == NULL) {
    cJSON_Delete(o);
    o = NULL;
  }
  free(line);
  return o;
}

/* A report's timeline, dumps and denials; NULL when out of memory. */
static cJSON *
report_json(const struct cmg__model_report *r)
{
  const struct cmg__model_timeline *t = &r->timeline;
  struct cmg__run_stacks st = { 0 };
  bool ok = r->n_denials == 0 || cmg__run_stacks_init(&st, r) == 0;
  cJSON *o = cJSON_CreateObject();
  cJSON *series = cJSON_AddArrayToObject(o, "timeline");
  cJSON *dumps = cJSON_AddArrayToObject(o, "dumps");
  cJSON *denials = cJSON_AddArrayToObject(o, "denials");

  cJSON_AddStringToObject(o, "file", r->file);
  cJSON_AddNumberToObject(o, "pid", (double)r->pid);
  for (size_t i = 0; t->present && i < t->n_series; i++)
    cJSON_AddItemToArray(series, series_json(r, &t->series[i]));
  for (size_t i = 0; t->present && i < t->n_dumps; i++) {
    cJSON *d = cJSON_CreateObject();

    cJSON_AddNumberToObject(d, "time", t->dumps[i].time);
    cJSON_AddStringToObject(d, "reason", t->dumps[i].reason);
    cJSON_AddItemToArray(dumps, d);
  }
  for (size_t i = 0; ok && i < r->n_denials; i++) {
    cJSON *d = denial_json(&st, &r->denials_list[i]);

    ok = d != NULL;
    cJSON_AddItemToArray(denials, d);
  }
  cmg__run_stacks_free(&st);
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

/* ---- written once ------------------------------------------------------ */

/* Items met once each, by their text: the index of the first. */
struct table {
  struct cmg__intern texts;
  cJSON *items; /* the array they are written into */
  bool failed;
};

/* v in hex digits from its highest one, then c. */
static char *
put_hex(char *p, uint64_t v, char c)
{
  int shift = 60;

  while (shift > 0 && (v >> shift) == 0)
    shift -= 4;
  for (; shift >= 0; shift -= 4)
    *p++ = "0123456789abcdef"[(v >> shift) & 15];
  *p++ = c;
  return p;
}

/*
 * What tells one frame object from another, cheaper to make than its JSON:
 * each member's name, then a letter for its type and its value: a string
 * after its length, a number's bits (a double's, whatever it holds), so
 * that no two objects give one key whatever their strings hold.  NULL when
 * out of memory.
 */
static char *
key_of(const cJSON *o)
{
  size_t len = 1;
  const cJSON *m;

  cJSON_ArrayForEach(m, o)
  {
    len += strlen(m->string) + 2 + 18;
    if (cJSON_IsString(m))
      len += strlen(m->valuestring);
  }
  char *key = malloc(len), *p = key;
  if (key == NULL)
    return NULL;
  cJSON_ArrayForEach(m, o)
  {
    size_t n = strlen(m->string);
    uint64_t bits;

    memcpy(p, m->string, n);
    p += n;
    *p++ = '=';
    if (cJSON_IsString(m)) {
      n = strlen(m->valuestring);
      p = put_hex(p, n, 's');
      memcpy(p, m->valuestring, n);
      p += n;
    } else if (cJSON_IsNumber(m)) {
      memcpy(&bits, &m->valuedouble, sizeof(bits));
      p = put_hex(p, bits, 'n');
    } else {
      p = put_hex(p, (uint64_t)(m->type & 0xff), 't');
    }
    *p++ = ';';
  }
  *p = '\0';
  return key;
}

/* The index of key in t, adding item (taken, and key with it if the table
 * owns its keys) when it is new; -1 when out of memory. */
static double
intern(struct table *t, char *key, cJSON *item)
{
  size_t before = t->texts.n, k;

  if (cmg__intern_add(&t->texts, key, &k) != 0) {
    cJSON_Delete(item);
    t->failed = true;
    return -1;
  }
  if (k == before)
    cJSON_AddItemToArray(t->items, item);
  else
    cJSON_Delete(item);
  return (double)k;
}

/* A group's frames as indexes, with the default view's range [lo, hi). */
static void
refer_frames(cJSON *group, cJSON *frames, struct table *t)
{
  cJSON *refs = cJSON_CreateArray();
  int lo = -1, hi = 0, k = 0;
  cJSON *fr;

  while ((fr = cJSON_DetachItemFromArray(frames, 0)) != NULL) {
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(fr, "hidden"))) {
      lo = lo < 0 ? k : lo;
      hi = k + 1;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(fr, "hidden");
    cJSON_AddItemToArray(refs, cJSON_CreateNumber(intern(t, key_of(fr), fr)));
    k++;
  }
  int shown[2] = { lo < 0 ? 0 : lo, lo < 0 ? 0 : hi };
  cJSON_ReplaceItemInObjectCaseSensitive(group, "frames", refs);
  cJSON_AddItemToObject(group, "shown", cJSON_CreateIntArray(shown, 2));
}

static void
refer_lines(cJSON *group, cJSON *lines, struct table *t)
{
  cJSON *refs = cJSON_CreateArray();
  cJSON *s;

  while ((s = cJSON_DetachItemFromArray(lines, 0)) != NULL)
    cJSON_AddItemToArray(
        refs, cJSON_CreateNumber(intern(t, cJSON_GetStringValue(s), s)));
  cJSON_ReplaceItemInObjectCaseSensitive(group, "lines", refs);
}

static void
refer(cJSON *node, struct table *frames, struct table *lines)
{
  cJSON *it = node != NULL ? node->child : NULL;

  while (it != NULL) {
    cJSON *next = it->next;

    if (it->string != NULL && cJSON_IsArray(it) &&
        strcmp(it->string, "frames") == 0)
      refer_frames(node, it, frames);
    else if (it->string != NULL && cJSON_IsArray(it) &&
             strcmp(it->string, "lines") == 0)
      refer_lines(node, it, lines);
    else
      refer(it, frames, lines);
    it = next;
  }
}

static void
table_init(struct table *t, cJSON *items, bool owns)
{
  cmg__intern_init(&t->texts, owns);
  t->items = items;
  t->failed = false;
}

/* Moves every group's frames and lines of doc into doc's "frames" and
 * "strings".  Returns 0 or -ENOMEM. */
static int
write_once(cJSON *doc)
{
  cJSON *frames = cJSON_CreateArray(), *strings = cJSON_CreateArray();
  struct table tf, ts;
  bool ok;

  /* A frame's key is made for it; a line is its own, kept by the item
   * that holds it in strings until the table is freed. */
  table_init(&tf, frames, true);
  table_init(&ts, strings, false);
  refer(doc, &tf, &ts);
  ok = !tf.failed && !ts.failed;
  cmg__intern_free(&tf.texts);
  cmg__intern_free(&ts.texts);
  cJSON_AddItemToObject(doc, "frames", frames);
  cJSON_AddItemToObject(doc, "strings", strings);
  return ok ? 0 : -ENOMEM;
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

static cJSON *
data_of(char *const *files, int n, bool diff, struct cmg__supp *supp,
        const struct cmg__tool_opts *o, const struct cmg__model_report *r)
{
  cJSON *doc = cJSON_CreateObject();
  cJSON *reports = cJSON_CreateArray();
  cJSON *summary = summary_of(diff ? r + 1 : r, diff ? 1 : n, supp, o);
  cJSON *base = diff && summary != NULL ? summary_of(r, 1, supp, o) : NULL;
  cJSON *d = base != NULL ? diff_of(files[0], files[1], supp, o) : NULL;

  cJSON_AddStringToObject(doc, "format", "cumemguard-html");
  cJSON_AddNumberToObject(doc, "version", 1);
  cJSON_AddStringToObject(doc, "tool", CMG__TOOL_NAME " " CMG_VERSION_STRING);
  cJSON_AddStringToObject(doc, "mode", diff ? "diff" : n > 1 ? "merge" : "run");
  cJSON_AddItemToObject(doc, "summary", summary);
  cJSON_AddItemToObject(doc, "base", base != NULL ? base : cJSON_CreateNull());
  cJSON_AddItemToObject(doc, "diff", d != NULL ? d : cJSON_CreateNull());
  bool ok = summary != NULL && (!diff || (base != NULL && d != NULL));
  for (int i = 0; ok && i < n; i++) {
    cJSON *rj = report_json(&r[i]);

    if (rj == NULL)
      cmg__output_say("out of memory");
    ok = rj != NULL;
    cJSON_AddItemToArray(reports, rj);
  }
  cJSON_AddItemToObject(doc, "reports", reports);
  if (!ok) {
    cJSON_Delete(doc);
    return NULL;
  }
  return doc;
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
  cJSON *doc = data_of(files, n_files, n_files == 2 && !merged, supp, &o, r);
  char *json = NULL;
  if (doc != NULL && write_once(doc) == 0)
    json = cJSON_PrintUnformatted(doc);
  if (doc != NULL && json == NULL)
    cmg__output_say("out of memory");
  FILE *f = json != NULL ? cmg__output_create(output) : NULL;
  if (f != NULL) {
    put_page(f, json);
    rc = cmg__output_close(f, output, 0);
  }
  free(json);
  cJSON_Delete(doc);
  cmg__run_raw_free(r, n_files);
  return rc;
}
