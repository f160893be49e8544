/*
 * Reading one report for cumemguard-report: the whole file into memory,
 * cJSON over it, then every field the tool uses checked and copied into a
 * struct cmg__model_report, after which the cJSON tree is dropped.  A report
 * is data from another program, another machine or a disk that filled up,
 * so nothing in it is trusted: types, ranges, and every index (a frame's
 * module, a stack's frames, a leak's stack id) are checked before use, and
 * the first problem becomes one line naming the field ("leaks[3].stack: 17
 * is not the id of a stack in stacks[]").  Sizes and counts must be
 * integers a double holds exactly (up to 2^53), which every byte count of a
 * real device is.  The stack tables are read by read_stacks.c, devices[]
 * by read_devices.c and the timeline by read_series.c, with the same
 * checks.  What is read goes into the data model (model.h) and nowhere
 * else: the loader names no frame (the model's symbolize.c does, after
 * loading), groups nothing and prints nothing.
 *
 * The format and version come first: a file of another format or a newer
 * version is refused for that reason alone, whatever else it holds.  Keys a
 * newer writer may add are ignored.  The per-allocation lists of leaks are
 * read only when a command asks for them (CMG__READ_LARGEST, as
 * timeline does), which keeps the summary of a report with a million live
 * allocations at the cost of cJSON's parse.
 *
 * Strings are copied through cmg__utf8_clean(), so no later output,
 * whether a terminal, an SVG or folded stacks, sees a control byte or
 * invalid UTF-8 from a report.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cumemguard.h"

#include "reader/load/fields.h"
#include "reader/load/jsonfile.h"
#include "reader/load/model.h"
#include "reader/load/read.h"
#include "reader/load/read_devices.h"
#include "reader/load/read_series.h"
#include "reader/load/read_stacks.h"
#include "reader/load/utf8_text.h"
#include "reader/tool.h"

static bool
has_member(const cJSON *o, const char *key)
{
  return cJSON_GetObjectItemCaseSensitive(o, key) != NULL;
}

/* The note of "python" when its frames are off; absent is fine. */
static int
read_python(struct cmg__fields_reader *rd, const cJSON *root,
            struct cmg__model_report *r)
{
  const cJSON *o;

  if (!has_member(root, "python"))
    return 0;
  CHECK(cmg__fields_object(rd, root, "", "python", &o));
  return cmg__fields_string(rd, o, "python", "note", true, &r->python_note);
}

/* leaks[i].threads, absent from reports written before it. */
static int
read_threads(struct cmg__fields_reader *rd, const cJSON *leak, const char *at,
             struct cmg__model_threads *t)
{
  const cJSON *arr, *it;
  char where[96], sub[128];
  double tid;

  if (!has_member(leak, "threads"))
    return 0;
  CHECK(cmg__fields_array(rd, leak, at, "threads", &arr, &t->cap));
  t->list = cmg__fields_table(t->cap, sizeof(*t->list));
  if (t->list == NULL)
    return -ENOMEM;
  snprintf(where, sizeof(where), "%s.threads", at);
  cJSON_ArrayForEach(it, arr)
  {
    struct cmg__model_thread *e = &t->list[t->n];

    CHECK(cmg__fields_element(rd, it, where, t->n, sub, sizeof(sub)));
    CHECK(cmg__fields_int(rd, it, sub, "tid", 1, UINT32_MAX, NULL, &tid));
    e->tid = (uint32_t)tid;
    /* Counted before the name is read, so that a failure frees it. */
    t->n++;
    CHECK(cmg__fields_string(rd, it, sub, "name", true, &e->name));
  }
  return 0;
}

/* leaks[] or released[]: groups of (stack, api, kind, device). */
static int
read_groups(struct cmg__fields_reader *rd, const cJSON *root, const char *key,
            struct cmg__model_report *r, const struct cmg__read_stacks_id *ids,
            struct cmg__model_leak **out, size_t *n)
{
  const cJSON *arr, *it;
  char at[64];
  size_t i = 0;

  CHECK(cmg__fields_array(rd, root, "", key, &arr, n));
  *out = cmg__fields_table(*n, sizeof(**out));
  if (*out == NULL)
    return -ENOMEM;
  cJSON_ArrayForEach(it, arr)
  {
    struct cmg__model_leak *l = &(*out)[i];

    CHECK(cmg__fields_element(rd, it, key, i++, at, sizeof(at)));
    CHECK(cmg__read_stacks_ref(rd, it, at, ids, r->n_stacks, &l->stack));
    CHECK(cmg__fields_string(rd, it, at, "api", false, &l->api));
    /* Reports written before kinds existed hold device memory only. */
    if (has_member(it, "kind"))
      CHECK(cmg__fields_string(rd, it, at, "kind", false, &l->kind));
    else if ((l->kind = strdup("device")) == NULL)
      return -ENOMEM;
    CHECK(cmg__fields_device(rd, it, at, "device", true, &l->device));
    CHECK(cmg__fields_count(rd, it, at, "count", NULL, &l->count));
    CHECK(cmg__fields_count(rd, it, at, "bytes", NULL, &l->bytes));
    if (strcmp(key, "leaks") == 0)
      CHECK(read_threads(rd, it, at, &l->threads));
  }
  return 0;
}

/* host{}, when the report has one. */
static int
read_host(struct cmg__fields_reader *rd, const cJSON *root,
          struct cmg__model_report *r)
{
  struct cmg__model_host *h = &r->host;
  const cJSON *o;

  r->has_host = has_member(root, "host");
  if (!r->has_host)
    return 0;
  CHECK(cmg__fields_object(rd, root, "", "host", &o));
  CHECK(cmg__fields_count(rd, o, "host", "limit_bytes", &h->has_limit,
                          &h->limit_bytes));
  CHECK(cmg__fields_count(rd, o, "host", "live_bytes", NULL, &h->live_bytes));
  CHECK(cmg__fields_count(rd, o, "host", "peak_bytes", NULL, &h->peak_bytes));
  CHECK(cmg__fields_count(rd, o, "host", "allocations", NULL, &h->allocations));
  CHECK(cmg__fields_count(rd, o, "host", "frees", NULL, &h->frees));
  CHECK(cmg__fields_count(rd, o, "host", "denied", NULL, &h->denied));
  return 0;
}

/* A by_stack array into c->items. */
static int
read_comp(struct cmg__fields_reader *rd, const cJSON *o, const char *at,
          const struct cmg__model_report *r,
          const struct cmg__read_stacks_id *ids, struct cmg__model_comp *c)
{
  const cJSON *arr, *it;
  char where[96], sub[128];
  size_t i = 0;

  CHECK(cmg__fields_array(rd, o, at, "by_stack", &arr, &c->n));
  c->items = cmg__fields_table(c->n, sizeof(*c->items));
  if (c->items == NULL)
    return -ENOMEM;
  snprintf(where, sizeof(where), "%s.by_stack", at);
  cJSON_ArrayForEach(it, arr)
  {
    struct cmg__model_share *s = &c->items[i];

    CHECK(cmg__fields_element(rd, it, where, i++, sub, sizeof(sub)));
    CHECK(cmg__read_stacks_ref(rd, it, sub, ids, r->n_stacks, &s->stack));
    CHECK(cmg__fields_count(rd, it, sub, "bytes", NULL, &s->bytes));
    CHECK(cmg__fields_count(rd, it, sub, "count", NULL, &s->count));
  }
  return 0;
}

static int
read_peaks(struct cmg__fields_reader *rd, const cJSON *root,
           struct cmg__model_report *r, const struct cmg__read_stacks_id *ids)
{
  const cJSON *arr, *it;
  char at[64];
  size_t i = 0;

  CHECK(cmg__fields_array(rd, root, "", "peaks", &arr, &r->n_peaks));
  r->peaks = cmg__fields_table(r->n_peaks, sizeof(*r->peaks));
  if (r->peaks == NULL)
    return -ENOMEM;
  cJSON_ArrayForEach(it, arr)
  {
    struct cmg__model_peak *p = &r->peaks[i];

    CHECK(cmg__fields_element(rd, it, "peaks", i++, at, sizeof(at)));
    CHECK(cmg__fields_device(rd, it, at, "device", false, &p->device));
    CHECK(cmg__fields_count(rd, it, at, "bytes", NULL, &p->comp.bytes));
    CHECK(cmg__fields_number(rd, it, at, "time", &p->comp.time));
    CHECK(read_comp(rd, it, at, r, ids, &p->comp));
  }
  return 0;
}

static int
read_denials(struct cmg__fields_reader *rd, const cJSON *root,
             struct cmg__model_report *r, const struct cmg__read_stacks_id *ids)
{
  const cJSON *arr, *it;
  char at[64];
  size_t i = 0;

  CHECK(cmg__fields_array(rd, root, "", "denials", &arr, &r->n_denials));
  r->denials_list = cmg__fields_table(r->n_denials, sizeof(*r->denials_list));
  if (r->denials_list == NULL)
    return -ENOMEM;
  cJSON_ArrayForEach(it, arr)
  {
    struct cmg__model_denial *d = &r->denials_list[i];

    CHECK(cmg__fields_element(rd, it, "denials", i++, at, sizeof(at)));
    CHECK(cmg__fields_number(rd, it, at, "time", &d->comp.time));
    CHECK(cmg__fields_string(rd, it, at, "api", false, &d->api));
    CHECK(cmg__fields_device(rd, it, at, "device", true, &d->device));
    CHECK(cmg__fields_count(rd, it, at, "requested_bytes", NULL,
                            &d->requested_bytes));
    CHECK(cmg__fields_count(rd, it, at, "live_bytes", NULL, &d->live_bytes));
    CHECK(cmg__fields_count(rd, it, at, "limit_bytes", &d->has_limit,
                            &d->limit_bytes));
    CHECK(cmg__read_stacks_ref(rd, it, at, ids, r->n_stacks, &d->stack));
    d->comp.bytes = d->live_bytes;
    d->has_comp = cJSON_GetObjectItemCaseSensitive(it, "by_stack") != NULL;
    if (d->has_comp)
      CHECK(read_comp(rd, it, at, r, ids, &d->comp));
  }
  return 0;
}

/* process.argv, joined with spaces for the one line a header gives it. */
static int
read_command(struct cmg__fields_reader *rd, const cJSON *p,
             struct cmg__model_report *r)
{
  const cJSON *argv, *a;
  size_t n, len = 1, i = 0;

  CHECK(cmg__fields_array(rd, p, "process", "argv", &argv, &n));
  cJSON_ArrayForEach(a, argv)
  {
    if (!cJSON_IsString(a) || a->valuestring == NULL)
      return cmg__fields_fail(rd,
                              "process.argv[%zu]: expected a string, got %s", i,
                              cmg__fields_kind(a));
    len += strlen(a->valuestring) + 1;
    i++;
  }
  r->command = malloc(len);
  if (r->command == NULL)
    return -ENOMEM;
  r->command[0] = '\0';
  cJSON_ArrayForEach(a, argv)
  {
    if (r->command[0] != '\0')
      strcat(r->command, " ");
    strcat(r->command, a->valuestring);
  }
  if (n > 0) {
    char *clean = cmg__utf8_clean(r->command);

    free(r->command);
    r->command = clean;
    if (clean == NULL)
      return -ENOMEM;
  }
  return 0;
}

/* summary{}; its events{} is absent from older reports, which count none. */
static int
read_summary(struct cmg__fields_reader *rd, const cJSON *root,
             struct cmg__model_report *r)
{
  const cJSON *s;

  CHECK(cmg__fields_object(rd, root, "", "summary", &s));
  CHECK(cmg__fields_count(rd, s, "summary", "live_allocations", NULL,
                          &r->live_allocations));
  CHECK(
      cmg__fields_count(rd, s, "summary", "live_bytes", NULL, &r->live_bytes));
  CHECK(cmg__fields_count(rd, s, "summary", "untracked_frees", NULL,
                          &r->untracked_frees));
  CHECK(cmg__fields_count(rd, s, "summary", "denials", NULL, &r->denials));
  if (has_member(s, "events")) {
    static const char *const names[] = { "warn", "wait", "soft_limit" };
    const cJSON *e;

    CHECK(cmg__fields_object(rd, s, "summary", "events", &e));
    for (size_t k = 0; k < 3; k++)
      CHECK(cmg__fields_count(rd, e, "summary.events", names[k], NULL,
                              &r->events[k]));
  }
  return 0;
}

/* process{} and summary{}: what the headers of the commands print. */
/* process.end, absent from reports written before it: how the process
 * ended, where the report was its last word. */
static int
read_end(struct cmg__fields_reader *rd, const cJSON *p,
         struct cmg__model_report *r)
{
  const cJSON *end, *by;
  bool has;
  double d;

  r->exit_status = -1;
  CHECK(cmg__fields_optional_object(rd, p, "process", "end", &end));
  if (end == NULL)
    return 0;
  CHECK(cmg__fields_member(rd, end, "process.end", "by", &by));
  if (cJSON_IsString(by) && strcmp(by->valuestring, "exit") == 0) {
    CHECK(cmg__fields_int(rd, end, "process.end", "status", 0, 255, &has, &d));
    r->exit_status = has ? (int)d : -1;
    return 0;
  }
  if (!cJSON_IsString(by) || strcmp(by->valuestring, "signal") != 0)
    return cmg__fields_wrong(rd, "process.end", "by", "\"exit\" or \"signal\"",
                             by);
  return cmg__fields_string(rd, end, "process.end", "name", false,
                            &r->killed_by);
}

static int
read_process(struct cmg__fields_reader *rd, const cJSON *root,
             struct cmg__model_report *r)
{
  const cJSON *p;
  double pid;

  CHECK(cmg__fields_object(rd, root, "", "process", &p));
  CHECK(cmg__fields_int(rd, p, "process", "pid", 1, CMG__FIELDS_EXACT_MAX, NULL,
                        &pid));
  r->pid = (long)pid;
  CHECK(cmg__fields_string(rd, p, "process", "exe", false, &r->exe));
  CHECK(cmg__fields_string(rd, p, "process", "hostname", false, &r->hostname));
  CHECK(cmg__fields_string(rd, p, "process", "reason", false, &r->reason));
  CHECK(read_end(rd, p, r));
  CHECK(cmg__fields_number(rd, p, "process", "start_time", &r->start_time));
  CHECK(cmg__fields_number(rd, p, "process", "end_time", &r->end_time));
  CHECK(read_command(rd, p, r));
  return read_summary(rd, root, r);
}

/* A soft limit as options has it: {"bytes": N}, {"percent": P} or null. */
static int
read_soft(struct cmg__fields_reader *rd, const cJSON *sl, const char *at,
          struct cmg__model_soft *out)
{
  if (sl == NULL || cJSON_IsNull(sl))
    return 0;
  if (!cJSON_IsObject(sl))
    return cmg__fields_fail_item(
        rd, at, "null or {\"bytes\": N} or {\"percent\": P}", sl);
  if (has_member(sl, "bytes"))
    return cmg__fields_number(rd, sl, at, "bytes", &out->bytes);
  return cmg__fields_number(rd, sl, at, "percent", &out->percent);
}

/* The soft limits of options.gpu_limits, by GPU UUID; absent from older
 * reports. */
static int
read_gpu_soft(struct cmg__fields_reader *rd, const cJSON *o,
              struct cmg__model_report *r)
{
  const cJSON *per = cJSON_GetObjectItemCaseSensitive(o, "gpu_limits"), *it;

  if (per != NULL && !cJSON_IsObject(per))
    return cmg__fields_wrong(rd, "options", "gpu_limits", "an object", per);
  cJSON_ArrayForEach(it, per)
  {
    struct cmg__model_gpu_soft *g = &r->gpu_soft[r->n_gpu_soft];

    if (r->n_gpu_soft == CMG__MODEL_SOFT_GPUS ||
        strlen(it->string) >= sizeof(g->uuid) || !cJSON_IsObject(it))
      return cmg__fields_fail(rd,
                              "options.gpu_limits: \"%.60s\" is not one of "
                              "at most %d GPUs, each an object of limits",
                              it->string, CMG__MODEL_SOFT_GPUS);
    snprintf(g->uuid, sizeof(g->uuid), "%s", it->string);
    char at[80];
    snprintf(at, sizeof(at), "options.gpu_limits.%s.soft_limit", g->uuid);
    CHECK(read_soft(rd, cJSON_GetObjectItemCaseSensitive(it, "soft_limit"), at,
                    &g->soft));
    r->n_gpu_soft++;
  }
  return 0;
}

/* options.soft_limit and soft_limits (by ordinal), which the page draws;
 * absent from some reports. */
static int
read_soft_limits(struct cmg__fields_reader *rd, const cJSON *o,
                 struct cmg__model_report *r)
{
  const cJSON *per = cJSON_GetObjectItemCaseSensitive(o, "soft_limits"), *it;

  CHECK(read_soft(rd, cJSON_GetObjectItemCaseSensitive(o, "soft_limit"),
                  "options.soft_limit", &r->soft_limit));
  if (per != NULL && !cJSON_IsObject(per))
    return cmg__fields_wrong(rd, "options", "soft_limits", "an object", per);
  cJSON_ArrayForEach(it, per)
  {
    char *end;
    long ordinal = strtol(it->string, &end, 10);

    if (end == it->string || *end != '\0' || ordinal < 0 ||
        ordinal >= CMG__MODEL_SOFT_DEVICES)
      return cmg__fields_fail(rd,
                              "options.soft_limits: \"%s\" is no device "
                              "ordinal from 0 to %d",
                              it->string, CMG__MODEL_SOFT_DEVICES - 1);
    char at[48];
    snprintf(at, sizeof(at), "options.soft_limits.%ld", ordinal);
    CHECK(read_soft(rd, it, at, &r->soft_limits[ordinal]));
  }
  return 0;
}

/*
 * options.no_pools and options.pool_switches, which reports written before
 * them lack: the reader then takes pools as on and every switch as unset.
 * Switches this reader does not know are skipped.
 */
static int
read_pools(struct cmg__fields_reader *rd, const cJSON *root,
           struct cmg__model_report *r)
{
  const cJSON *o, *sw, *it;
  size_t n;

  if (!has_member(root, "options"))
    return 0;
  CHECK(cmg__fields_object(rd, root, "", "options", &o));
  const cJSON *np = cJSON_GetObjectItemCaseSensitive(o, "no_pools");
  if (np != NULL && !cJSON_IsBool(np))
    return cmg__fields_wrong(rd, "options", "no_pools", "true or false", np);
  r->no_pools = cJSON_IsTrue(np);
  CHECK(read_soft_limits(rd, o, r));
  CHECK(read_gpu_soft(rd, o, r));
  if (!has_member(o, "pool_switches"))
    return 0;
  CHECK(cmg__fields_array(rd, o, "options", "pool_switches", &sw, &n));
  cJSON_ArrayForEach(it, sw)
  {
    const char *at = "options.pool_switches[]";
    char *name = NULL, *value = NULL;
    size_t i;

    if (!cJSON_IsObject(it))
      return cmg__fields_wrong(rd, "options", "pool_switches", "objects", it);
    CHECK(cmg__fields_string(rd, it, at, "name", false, &name));
    int rc = cmg__fields_string(rd, it, at, "value", true, &value);
    if (rc != 0) {
      free(name);
      return rc;
    }
    for (i = 0; i < CMG__POOLS_N; i++)
      if (strcmp(name, cmg__pools_switches[i].name) == 0 &&
          r->pool_values[i] == NULL)
        break;
    if (i < CMG__POOLS_N)
      r->pool_values[i] = value;
    else
      free(value);
    free(name);
  }
  return 0;
}

/* format and version: checked before anything else. */
static int
read_identity(struct cmg__fields_reader *rd, const cJSON *root)
{
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "format");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "version");

  if (f == NULL)
    return cmg__fields_fail(rd, "not a cumemguard report (no \"format\" key)");
  if (!cJSON_IsString(f) || f->valuestring == NULL ||
      strcmp(f->valuestring, "cumemguard-report") != 0)
    return cmg__fields_fail(rd, "not a cumemguard report (format is not "
                                "\"cumemguard-report\")");
  if (v == NULL || !cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
      v->valuedouble != floor(v->valuedouble))
    return cmg__fields_wrong(rd, "", "version", "an integer", v);
  if (v->valuedouble > CMG_REPORT_VERSION)
    return cmg__fields_fail(
        rd,
        "report version %.0f is newer than this " CMG__TOOL_NAME
        " reads (version %d); use a newer " CMG__TOOL_NAME,
        v->valuedouble, CMG_REPORT_VERSION);
  if (v->valuedouble < CMG_REPORT_VERSION)
    return cmg__fields_fail(rd, "unknown report version %.0f", v->valuedouble);
  return 0;
}

static int
parse(struct cmg__fields_reader *rd, const cJSON *root, unsigned what,
      struct cmg__model_report *r)
{
  struct cmg__read_stacks_id *ids = NULL;

  if (!cJSON_IsObject(root))
    return cmg__fields_fail(rd,
                            "not a cumemguard report (the JSON is %s, not an "
                            "object)",
                            cmg__fields_kind(root));
  CHECK(read_identity(rd, root));
  CHECK(read_process(rd, root, r));
  CHECK(read_pools(rd, root, r));
  CHECK(read_python(rd, root, r));
  int rc = cmg__read_stacks_modules(rd, root, &r->modules, &r->n_modules);
  if (rc == 0)
    rc = cmg__read_stacks_frames(rd, root, r->n_modules, &r->frames,
                                 &r->n_frames);
  if (rc == 0)
    rc = cmg__read_stacks_list(rd, root, &r->frames, &r->n_frames, &r->stacks,
                               &r->n_stacks, &ids);
  if (rc == 0)
    rc = cmg__read_devices(rd, root, r);
  if (rc == 0)
    rc = read_groups(rd, root, "leaks", r, ids, &r->leaks, &r->n_leaks);
  if (rc == 0 && has_member(root, "released"))
    rc =
        read_groups(rd, root, "released", r, ids, &r->released, &r->n_released);
  if (rc == 0)
    rc = read_host(rd, root, r);
  if (rc == 0)
    rc = read_peaks(rd, root, r, ids);
  if (rc == 0)
    rc = read_denials(rd, root, r, ids);
  if (rc == 0)
    rc = cmg__read_series(rd, root, ids, r->n_stacks, &r->timeline);
  if (rc == 0 && (what & CMG__READ_LARGEST))
    rc = cmg__read_series_largest(rd, root, r->n_leaks, &r->largest,
                                  &r->n_largest);
  free(ids);
  return rc;
}

int
cmg__read_report(const char *file, struct cmg__model_report *out, char *err,
                 size_t errlen)
{
  return cmg__read_report_with(file, 0, out, err, errlen);
}

int
cmg__read_report_with(const char *file, unsigned what,
                      struct cmg__model_report *out, char *err, size_t errlen)
{
  struct cmg__fields_reader rd = { err, errlen };
  cJSON *root;

  memset(out, 0, sizeof(*out));
  out->file = strdup(file);
  if (out->file == NULL) {
    cmg__fields_fail(&rd, "out of memory");
    return -ENOMEM;
  }
  int rc = cmg__jsonfile_load(file, &root, &rd);
  if (rc != 0)
    return rc;
  rc = parse(&rd, root, what, out);
  cmg__jsonfile_drop(root);
  if (rc == -ENOMEM)
    cmg__fields_fail(&rd, "out of memory");
  return rc;
}

void
cmg__read_threads_free(struct cmg__model_threads *t)
{
  for (size_t i = 0; i < t->n; i++)
    free(t->list[i].name);
  free(t->list);
  memset(t, 0, sizeof(*t));
}

void
cmg__read_report_free(struct cmg__model_report *r)
{
  free(r->file);
  free(r->exe);
  free(r->command);
  free(r->hostname);
  free(r->reason);
  free(r->killed_by);
  for (size_t i = 0; i < CMG__POOLS_N; i++)
    free(r->pool_values[i]);
  for (size_t i = 0; r->devices != NULL && i < r->n_devices; i++) {
    free(r->devices[i].name);
    free(r->devices[i].uuid);
    free(r->devices[i].footprint.why);
  }
  for (size_t i = 0; r->leaks != NULL && i < r->n_leaks; i++) {
    free(r->leaks[i].api);
    free(r->leaks[i].kind);
    cmg__read_threads_free(&r->leaks[i].threads);
  }
  for (size_t i = 0; r->released != NULL && i < r->n_released; i++) {
    free(r->released[i].api);
    free(r->released[i].kind);
  }
  for (size_t i = 0; r->peaks != NULL && i < r->n_peaks; i++)
    free(r->peaks[i].comp.items);
  for (size_t i = 0; r->denials_list != NULL && i < r->n_denials; i++) {
    free(r->denials_list[i].api);
    free(r->denials_list[i].comp.items);
  }
  for (size_t i = 0; r->stacks != NULL && i < r->n_stacks; i++)
    free(r->stacks[i].frames);
  for (size_t i = 0; r->frames != NULL && i < r->n_frames; i++) {
    free(r->frames[i].function);
    free(r->frames[i].name);
    free(r->frames[i].file);
  }
  free(r->python_note);
  for (size_t i = 0; r->modules != NULL && i < r->n_modules; i++) {
    free(r->modules[i].path);
    free(r->modules[i].build_id);
  }
  free(r->devices);
  free(r->leaks);
  free(r->released);
  free(r->peaks);
  free(r->denials_list);
  free(r->stacks);
  free(r->frames);
  free(r->modules);
  cmg__read_series_free(&r->timeline);
  free(r->largest);
  memset(r, 0, sizeof(*r));
}
