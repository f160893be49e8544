/*
 * The parts of a report that speak of time, read as read.c reads the rest:
 * every member checked, the first problem one line naming it.  "timeline"
 * is optional (reports written before it have none; the commands that need
 * it say so).  Its points must be in time order and each hold min <= live
 * <= max, or the drawing would lie.
 *
 * The per-allocation lists of leaks[] are read only when a command asks for
 * them (timeline, which draws them), and only the largest are kept: a
 * report of a million live allocations is read in one pass with a small
 * heap.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cumemguard.h"
#include "reader/load/fields.h"
#include "reader/load/model.h"
#include "reader/load/read_series.h"
#include "reader/load/read_stacks.h"

#define POINTS_MAX 1000000

/* One [time, live, min, max] element. */
static int
read_point(struct cmg__fields_reader *rd, const cJSON *it, const char *at,
           size_t i, struct cmg__model_point *p)
{
  const cJSON *v[4];
  uint64_t b[3];

  if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 4)
    return cmg__fields_fail(rd,
                            "%s[%zu]: expected [time, live, min, max], got %s",
                            at, i, cmg__fields_kind(it));
  for (int k = 0; k < 4; k++) {
    v[k] = cJSON_GetArrayItem(it, k);
    if (!cJSON_IsNumber(v[k]) || v[k]->valuedouble < 0 ||
        v[k]->valuedouble > CMG__FIELDS_EXACT_MAX ||
        (k > 0 && v[k]->valuedouble != (double)(uint64_t)v[k]->valuedouble))
      return cmg__fields_fail(rd, "%s[%zu][%d]: expected %s, got %s", at, i, k,
                              k == 0 ? "seconds (a number from 0)"
                                     : "bytes (an integer from 0 to 2^53)",
                              cmg__fields_kind(v[k]));
    if (k > 0)
      b[k - 1] = (uint64_t)v[k]->valuedouble;
  }
  p->time = v[0]->valuedouble;
  p->live = b[0];
  p->min = b[1];
  p->max = b[2];
  if (!(p->min <= p->live && p->live <= p->max))
    return cmg__fields_fail(rd, "%s[%zu]: expected min <= live <= max", at, i);
  return 0;
}

static int
read_one_series(struct cmg__fields_reader *rd, const cJSON *it, const char *at,
                struct cmg__model_series *s)
{
  const cJSON *arr, *p;
  char where[96];
  size_t i = 0;

  CHECK(cmg__fields_device(rd, it, at, "device", false, &s->device));
  CHECK(cmg__fields_number(rd, it, at, "resolution", &s->resolution));
  CHECK(cmg__fields_count(rd, it, at, "peak_bytes", NULL, &s->peak_bytes));
  CHECK(cmg__fields_number(rd, it, at, "peak_time", &s->peak_time));
  CHECK(cmg__fields_array(rd, it, at, "points", &arr, &s->n));
  if (s->n == 0 || s->n > POINTS_MAX)
    return cmg__fields_fail(rd, "%s.points: expected 1 to %d points, got %zu",
                            at, POINTS_MAX, s->n);
  s->points = cmg__fields_table(s->n, sizeof(*s->points));
  if (s->points == NULL)
    return -ENOMEM;
  snprintf(where, sizeof(where), "%s.points", at);
  cJSON_ArrayForEach(p, arr)
  {
    CHECK(read_point(rd, p, where, i, &s->points[i]));
    if (i > 0 && s->points[i].time < s->points[i - 1].time)
      return cmg__fields_fail(rd, "%s[%zu]: expected points in time order",
                              where, i);
    i++;
  }
  return 0;
}

static int
read_dumps(struct cmg__fields_reader *rd, const cJSON *o,
           struct cmg__model_timeline *t)
{
  const cJSON *arr, *it;
  char at[64];
  size_t i = 0;

  CHECK(cmg__fields_array(rd, o, "timeline", "dumps", &arr, &t->n_dumps));
  t->dumps = cmg__fields_table(t->n_dumps, sizeof(*t->dumps));
  if (t->dumps == NULL)
    return -ENOMEM;
  cJSON_ArrayForEach(it, arr)
  {
    struct cmg__model_dump *d = &t->dumps[i];

    CHECK(cmg__fields_element(rd, it, "timeline.dumps", i++, at, sizeof(at)));
    CHECK(cmg__fields_number(rd, it, at, "time", &d->time));
    CHECK(cmg__fields_string(rd, it, at, "reason", false, &d->reason));
  }
  return cmg__fields_count(rd, o, "timeline", "dumps_total", NULL,
                           &t->dumps_total);
}

/* Reports of cumemguard 0.1.0 named host memory freed during the run by
 * CMG_HOST_MEMORY, the public API's number for it, where every other
 * member says null: those reports still read, as host memory. */
static int
freed_device(struct cmg__fields_reader *rd, const cJSON *it, const char *at,
             int *out)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "device");

  if (cJSON_IsNumber(v) && v->valuedouble == CMG_HOST_MEMORY) {
    *out = -1;
    return 0;
  }
  return cmg__fields_device(rd, it, at, "device", true, out);
}

static int
read_freed(struct cmg__fields_reader *rd, const cJSON *o,
           const struct cmg__read_stacks_id *ids, size_t n_ids,
           struct cmg__model_timeline *t)
{
  const cJSON *arr, *it;
  char at[64];
  size_t i = 0;

  CHECK(cmg__fields_array(rd, o, "timeline", "freed", &arr, &t->n_freed));
  t->freed = cmg__fields_table(t->n_freed, sizeof(*t->freed));
  if (t->freed == NULL)
    return -ENOMEM;
  cJSON_ArrayForEach(it, arr)
  {
    struct cmg__model_freed *f = &t->freed[i];

    CHECK(cmg__fields_element(rd, it, "timeline.freed", i++, at, sizeof(at)));
    CHECK(cmg__fields_count(rd, it, at, "bytes", NULL, &f->bytes));
    CHECK(freed_device(rd, it, at, &f->device));
    CHECK(cmg__fields_string(rd, it, at, "api", false, &f->api));
    CHECK(cmg__read_stacks_ref(rd, it, at, ids, n_ids, &f->stack));
    CHECK(cmg__fields_number(rd, it, at, "time", &f->time));
    CHECK(cmg__fields_number(rd, it, at, "free_time", &f->free_time));
    if (f->free_time < f->time)
      return cmg__fields_fail(rd,
                              "%s.free_time: expected no earlier than its "
                              "time",
                              at);
  }
  return 0;
}

int
cmg__read_series(struct cmg__fields_reader *rd, const cJSON *root,
                 const struct cmg__read_stacks_id *ids, size_t n_ids,
                 struct cmg__model_timeline *t)
{
  const cJSON *o, *arr, *it;
  char at[64];
  size_t i = 0;

  memset(t, 0, sizeof(*t));
  if (cJSON_GetObjectItemCaseSensitive(root, "timeline") == NULL)
    return 0;
  t->present = true;
  CHECK(cmg__fields_object(rd, root, "", "timeline", &o));
  CHECK(cmg__fields_array(rd, o, "timeline", "devices", &arr, &t->n_series));
  t->series = cmg__fields_table(t->n_series, sizeof(*t->series));
  if (t->series == NULL)
    return -ENOMEM;
  cJSON_ArrayForEach(it, arr)
  {
    CHECK(cmg__fields_element(rd, it, "timeline.devices", i, at, sizeof(at)));
    CHECK(read_one_series(rd, it, at, &t->series[i]));
    for (size_t k = 0; k < i; k++)
      if (t->series[k].device == t->series[i].device)
        return cmg__fields_fail(rd, "%s.device: device %d is listed twice", at,
                                t->series[i].device);
    i++;
  }
  CHECK(read_dumps(rd, o, t));
  return read_freed(rd, o, ids, n_ids, t);
}

/* Keeps the largest n allocations in a min-heap by bytes (heap[0] the
 * smallest kept), so each of a million costs a compare. */
static void
keep(struct cmg__model_alloc *heap, size_t *n, struct cmg__model_alloc a)
{
  size_t i;

  if (*n == CMG__MODEL_LARGEST) {
    if (a.bytes <= heap[0].bytes)
      return;
    i = 0;
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= *n)
        break;
      if (c + 1 < *n && heap[c + 1].bytes < heap[c].bytes)
        c++;
      if (heap[c].bytes >= a.bytes)
        break;
      heap[i] = heap[c];
      i = c;
    }
    heap[i] = a;
    return;
  }
  i = (*n)++;
  while (i > 0 && heap[(i - 1) / 2].bytes > a.bytes) {
    heap[i] = heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  heap[i] = a;
}

static int
by_bytes(const void *x, const void *y)
{
  const struct cmg__model_alloc *a = x, *b = y;

  if (a->bytes != b->bytes)
    return a->bytes < b->bytes ? 1 : -1;
  return a->time < b->time ? -1 : a->time > b->time;
}

int
cmg__read_series_largest(struct cmg__fields_reader *rd, const cJSON *root,
                         size_t n_leaks, struct cmg__model_alloc **out,
                         size_t *n)
{
  const cJSON *leaks = cJSON_GetObjectItemCaseSensitive(root, "leaks");
  const cJSON *g, *it;
  char at[64], list_at[80], sub[96];
  size_t i = 0;

  *n = 0;
  *out = cmg__fields_table(CMG__MODEL_LARGEST, sizeof(**out));
  if (*out == NULL)
    return -ENOMEM;
  cJSON_ArrayForEach(g, leaks)
  {
    if (i >= n_leaks)
      break;
    snprintf(at, sizeof(at), "leaks[%zu]", i);
    snprintf(list_at, sizeof(list_at), "leaks[%zu].allocations", i);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(g, "allocations");
    if (list != NULL && !cJSON_IsArray(list))
      return cmg__fields_wrong(rd, at, "allocations", "an array", list);
    size_t j = 0;
    cJSON_ArrayForEach(it, list)
    {
      struct cmg__model_alloc a = { .leak = i };

      CHECK(cmg__fields_element(rd, it, list_at, j++, sub, sizeof(sub)));
      CHECK(cmg__fields_count(rd, it, sub, "bytes", NULL, &a.bytes));
      CHECK(cmg__fields_number(rd, it, sub, "time", &a.time));
      keep(*out, n, a);
    }
    i++;
  }
  qsort(*out, *n, sizeof(**out), by_bytes);
  return 0;
}

void
cmg__read_series_free(struct cmg__model_timeline *t)
{
  for (size_t i = 0; t->series != NULL && i < t->n_series; i++)
    free(t->series[i].points);
  for (size_t i = 0; t->dumps != NULL && i < t->n_dumps; i++)
    free(t->dumps[i].reason);
  for (size_t i = 0; t->freed != NULL && i < t->n_freed; i++)
    free(t->freed[i].api);
  free(t->series);
  free(t->dumps);
  free(t->freed);
  memset(t, 0, sizeof(*t));
}
