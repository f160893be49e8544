/*
 * Unit tests of read_series.c: a report's timeline and the largest live
 * allocations of its leaks.  The timeline is optional, but one that is
 * there is drawn, so each device's points must be [time, live, min, max]
 * with min <= live <= max, in time order, 1 to a million of them, a
 * device listed once, and a freed allocation freed no earlier than made;
 * host memory is null, or 64 as cumemguard 0.1.0 wrote it.  Of the
 * allocations, only the CMG__MODEL_LARGEST largest are kept, largest
 * first and the earlier first among equals, from the groups already read,
 * whatever their order in the file.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reader/load/fields.h"
#include "reader/load/model.h"
#include "reader/load/read_series.h"
#include "reader/load/read_stacks.h"
#include "reader/tool.h"
#include "../tap.h"
#include "report_harness.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define PTS "timeline.devices[0].points"

static char err[CMG__TOOL_ERR_MAX];
static struct cmg__fields_reader rd = { err, sizeof(err) };
static struct cmg__model_timeline t;

/* The base report's stacks: id 7 is stack 1, id 13 stack 0. */
static const struct cmg__read_stacks_id ids[] = { { 7, 1 }, { 13, 0 } };

/* The base report's timeline with up to two members set, into t. */
static int
read_with(const char *p1, const char *v1, const char *p2, const char *v2)
{
  cJSON *root = report_tree();
  int rc;

  if (p1 != NULL)
    report_set(root, p1, v1);
  if (p2 != NULL)
    report_set(root, p2, v2);
  cmg__read_series_free(&t);
  err[0] = '\0';
  rc = cmg__read_series(&rd, root, ids, N(ids), &t);
  cJSON_Delete(root);
  return rc;
}

static void
test_base(void)
{
  is_int(read_with(NULL, NULL, NULL, NULL), 0, "the base timeline reads");
  ok(t.present && t.n_series == 1, "one device's series");
  const struct cmg__model_series *s = &t.series[0];
  ok(s->device == 0 && s->resolution == 0.001 && s->peak_bytes == 6291456 &&
         s->peak_time == 12.5,
     "its device, resolution and peak");
  is_int(s->n, 3, "its points");
  ok(s->n == 3 && s->points[1].time == 12.5 && s->points[1].live == 6291456 &&
         s->points[1].min == 1048576 && s->points[1].max == 6291456,
     "a point's time, live, min and max");
  ok(t.n_dumps == 1 && t.dumps[0].time == 30 &&
         strcmp(t.dumps[0].reason, "signal") == 0 && t.dumps_total == 1,
     "the report writes");
  const struct cmg__model_freed *f = &t.freed[0];
  ok(t.n_freed == 1 && f->bytes == 8388608 && f->device == 0 &&
         strcmp(f->api, "cudaFree") == 0 && f->stack == 0 && f->time == 2.5 &&
         f->free_time == 3.5,
     "a freed allocation, its stack by index");

  cmg__read_series_free(&t);
  ok(!t.present && t.series == NULL && t.n_series == 0 && t.freed == NULL,
     "freed, the timeline is empty");
  is_int(read_with("timeline", NULL, NULL, NULL), 0, "no timeline is fine");
  ok(!t.present && t.n_series == 0, "... and not present");
}

static void
test_accepted(void)
{
  is_int(read_with("timeline.freed[0].device", "null", NULL, NULL), 0,
         "freed host memory, as null");
  is_int(t.freed[0].device, -1, "... is -1");
  is_int(read_with("timeline.freed[0].device", "64", NULL, NULL), 0,
         "freed host memory as cumemguard 0.1.0 wrote it");
  is_int(t.freed[0].device, -1, "... is -1 too");
  is_int(read_with("timeline.freed[0].stack", "null", NULL, NULL), 0,
         "a freed allocation without a stack");
  is_u64(t.freed[0].stack, CMG__TOOL_NONE, "... has none");
  is_int(read_with("timeline.freed[0].free_time", "2.5", NULL, NULL), 0,
         "freed the moment it was made");
  is_int(read_with(PTS "[2][0]", "12.5", NULL, NULL), 0,
         "two points at one time");
  is_int(read_with(PTS, "[[0.25, 0, 0, 0]]", NULL, NULL), 0,
         "one point, at a fraction of a second");
  ok(t.series[0].n == 1 && t.series[0].points[0].time == 0.25, "... read");
  is_int(read_with("timeline.devices", "[]", "timeline.freed", "[]"), 0,
         "an empty timeline");
  ok(t.present && t.n_series == 0 && t.n_freed == 0, "... present, empty");
}

static void
test_refused(void)
{
  static const struct {
    const char *p1, *v1, *p2, *v2, *want;
  } cases[] = {
    { "timeline", "[]", 0, 0, "timeline: expected an object, got an array" },
    { "timeline.devices", NULL, 0, 0, "timeline.devices: missing" },
    { "timeline.devices[0]", "1", 0, 0,
      "timeline.devices[0]: expected an object, got a number" },
    { "timeline.devices[0].device", "null", 0, 0,
      "timeline.devices[0].device: expected an integer from 0 to 63, got "
      "null" },
    { "timeline.devices[0].resolution", "\"1ms\"", 0, 0,
      "timeline.devices[0].resolution: expected a number, got \"1ms\"" },
    { "timeline.devices[0].peak_bytes", "-1", 0, 0,
      "timeline.devices[0].peak_bytes: expected an integer from 0 to 2^53, "
      "got -1" },
    { PTS, "[]", 0, 0, PTS ": expected 1 to 1000000 points, got 0" },
    { PTS, "{}", 0, 0, PTS ": expected an array, got an object" },
    { PTS "[1]", "[1, 2, 3]", 0, 0,
      PTS "[1]: expected [time, live, min, max], got an array" },
    { PTS "[1]", "7", 0, 0,
      PTS "[1]: expected [time, live, min, max], got a number" },
    { PTS "[0][0]", "-1", 0, 0,
      PTS "[0][0]: expected seconds (a number from 0), got a number" },
    { PTS "[0][0]", "\"0\"", 0, 0,
      PTS "[0][0]: expected seconds (a number from 0), got a string" },
    { PTS "[1][1]", "1.5", 0, 0,
      PTS "[1][1]: expected bytes (an integer from 0 to 2^53), got a "
          "number" },
    { PTS "[1][3]", "9007199254740994", 0, 0,
      PTS "[1][3]: expected bytes (an integer from 0 to 2^53), got a "
          "number" },
    { PTS "[1][2]", "null", 0, 0,
      PTS "[1][2]: expected bytes (an integer from 0 to 2^53), got null" },
    { PTS "[1][2]", "6291457", 0, 0, PTS "[1]: expected min <= live <= max" },
    { PTS "[1][3]", "6291455", 0, 0, PTS "[1]: expected min <= live <= max" },
    { PTS "[2][0]", "12.4", 0, 0, PTS "[2]: expected points in time order" },
    { "timeline.devices[1]",
      "{\"device\": 0, \"resolution\": 1, \"peak_bytes\": 0,"
      " \"peak_time\": 0, \"points\": [[0, 0, 0, 0]]}",
      0, 0, "timeline.devices[1].device: device 0 is listed twice" },
    { "timeline.dumps", NULL, 0, 0, "timeline.dumps: missing" },
    { "timeline.dumps[0].reason", NULL, 0, 0,
      "timeline.dumps[0].reason: missing" },
    { "timeline.dumps_total", "-1", 0, 0,
      "timeline.dumps_total: expected an integer from 0 to 2^53, got -1" },
    { "timeline.freed", "null", 0, 0,
      "timeline.freed: expected an array, got null" },
    { "timeline.freed[0].device", "65", 0, 0,
      "timeline.freed[0].device: expected an integer from 0 to 63 or null, "
      "got 65" },
    { "timeline.freed[0].stack", "99", 0, 0,
      "timeline.freed[0].stack: 99 is not the id of a stack in stacks[]" },
    { "timeline.freed[0].free_time", "2.25", 0, 0,
      "timeline.freed[0].free_time: expected no earlier than its time" },
    { "timeline.freed[0].api", "1", 0, 0,
      "timeline.freed[0].api: expected a string, got 1" },
  };

  for (size_t i = 0; i < N(cases); i++) {
    is_int(read_with(cases[i].p1, cases[i].v1, cases[i].p2, cases[i].v2),
           -EINVAL, "refused: %s = %s", cases[i].p1,
           cases[i].v1 ? cases[i].v1 : "(removed)");
    is_str(err, cases[i].want, "... in one line");
  }
}

/* cmg__read_series_largest over the leaks of text, the first n_leaks. */
static int
largest_of(const char *leaks, size_t n_leaks, struct cmg__model_alloc **out,
           size_t *n)
{
  cJSON *root = cJSON_CreateObject();
  int rc;

  report_set(root, "leaks", leaks);
  err[0] = '\0';
  rc = cmg__read_series_largest(&rd, root, n_leaks, out, n);
  cJSON_Delete(root);
  return rc;
}

static void
test_largest_order(void)
{
  struct cmg__model_alloc *a = NULL;
  size_t n = 99;

  cJSON *root = report_tree();
  is_int(cmg__read_series_largest(&rd, root, 3, &a, &n), 0,
         "the base report's allocations");
  cJSON_Delete(root);
  ok(n == 3 && a[0].bytes == 3145728 && a[0].leak == 0 &&
         a[1].bytes == 2097152 && a[1].leak == 1 && a[2].bytes == 1048576 &&
         a[2].leak == 0 && a[2].time == 0.5,
     "largest first, each with its group");
  free(a);

  is_int(largest_of("[{\"allocations\": [{\"bytes\": 5, \"time\": 3},"
                    " {\"bytes\": 5, \"time\": 1}]},"
                    " {\"allocations\": [{\"bytes\": 5, \"time\": 2}]}]",
                    2, &a, &n),
         0, "equal sizes");
  ok(n == 3 && a[0].time == 1 && a[1].time == 2 && a[2].time == 3,
     "... the earliest first");
  free(a);

  is_int(largest_of("[{\"allocations\": [{\"bytes\": 1, \"time\": 0}]},"
                    " {\"allocations\": [{\"bytes\": 9, \"time\": 0}]}]",
                    1, &a, &n),
         0, "only the groups already read");
  ok(n == 1 && a[0].bytes == 1, "... the later one left out");
  free(a);

  is_int(largest_of("[{}, {\"allocations\": []}]", 2, &a, &n), 0,
         "groups without allocations");
  ok(n == 0 && a != NULL, "... none, in a table all the same");
  free(a);
}

static void
test_largest_many(void)
{
  enum { COUNT = 200 };
  cJSON *leaks = cJSON_CreateArray();
  struct cmg__model_alloc *a = NULL;
  size_t n = 0;
  bool sorted = true;

  /* 200 sizes in a scrambled order (73 is prime to 200), over two groups. */
  for (int g = 0; g < 2; g++) {
    cJSON *grp = cJSON_CreateObject(), *list = cJSON_CreateArray();

    for (int i = g * COUNT / 2; i < (g + 1) * COUNT / 2; i++) {
      cJSON *e = cJSON_CreateObject();
      cJSON_AddNumberToObject(e, "bytes", (i * 73 % COUNT + 1) * 1000);
      cJSON_AddNumberToObject(e, "time", i);
      cJSON_AddItemToArray(list, e);
    }
    cJSON_AddItemToObject(grp, "allocations", list);
    cJSON_AddItemToArray(leaks, grp);
  }
  cJSON *root = cJSON_CreateObject();
  cJSON_AddItemToObject(root, "leaks", leaks);
  is_int(cmg__read_series_largest(&rd, root, 2, &a, &n), 0, "200 allocations");
  cJSON_Delete(root);
  is_int(n, CMG__MODEL_LARGEST, "only the largest are kept");
  for (size_t i = 0; i < n; i++)
    sorted = sorted && a[i].bytes == (COUNT - i) * 1000;
  ok(sorted, "the %d largest, largest first", CMG__MODEL_LARGEST);
  ok(n > 0 && a[0].time == 63 && a[0].leak == 0,
     "each with its time and group");
  free(a);
}

static void
test_largest_refused(void)
{
  static const struct {
    const char *leaks, *want;
  } cases[] = {
    { "[{\"allocations\": {}}]",
      "leaks[0].allocations: expected an array, got an object" },
    { "[{\"allocations\": [{\"bytes\": 1, \"time\": 0}, 5]}]",
      "leaks[0].allocations[1]: expected an object, got a number" },
    { "[{}, {\"allocations\": [{\"time\": 0}]}]",
      "leaks[1].allocations[0].bytes: missing" },
    { "[{\"allocations\": [{\"bytes\": 1.5, \"time\": 0}]}]",
      "leaks[0].allocations[0].bytes: expected an integer from 0 to 2^53, "
      "got 1.5" },
    { "[{\"allocations\": [{\"bytes\": 1, \"time\": null}]}]",
      "leaks[0].allocations[0].time: expected a number, got null" },
  };

  for (size_t i = 0; i < N(cases); i++) {
    struct cmg__model_alloc *a = NULL;
    size_t n;

    is_int(largest_of(cases[i].leaks, 2, &a, &n), -EINVAL,
           "largest: refused: %s", cases[i].leaks);
    is_str(err, cases[i].want, "... in one line");
    free(a);
  }
}

int
main(void)
{
  test_base();
  test_accepted();
  test_refused();
  test_largest_order();
  test_largest_many();
  test_largest_refused();
  cmg__read_series_free(&t);
  return done_testing();
}
