/*
 * Unit tests of diff_json.c, the diff as the JSON document that diff
 * --json writes and the html page of BASE NEW reads, on the reports of
 * tests/reader/data read as diff reads them.  Programs read this document,
 * so each member is checked by value: both sources, every device of
 * either report once (0 for the side that lacks it), the leaked, graph
 * and context totals apart, each change with exact counts and its stack,
 * "changes" and "held" kept apart, and --top and --min-bytes leaving the
 * same changes out as the text does.
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"

#include "reader/model/delta.h"
#include "reader/show/diff_json.h"
#include "reader/show/json_once.h"
#include "reader/tool.h"
#include "reader_harness.h"
#include "../tap.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* The diff document of BASE NEW with options o, parsed; NULL when the
 * reports cannot be read or it is no JSON. */
static cJSON *
diff_of(const char *base, const char *now, const struct cmg__tool_opts *o)
{
  struct harness h;
  struct cmg__jsonw w;
  struct cmg__delta *c;
  size_t n;
  cJSON *doc = NULL;

  if (harness_pair(&h, base, now) == 0 &&
      (c = cmg__delta_of(&h.v, &h.now, &n)) != NULL) {
    if (cmg__jsonw_open(&w, -1, false) == 0) {
      cmg__diff_json_write(&w, &h.v, &h.now, c, n, o);
      char *text = cmg__jsonw_take(&w);
      doc = text != NULL ? cJSON_Parse(text) : NULL;
      free(text);
    }
    free(c);
  }
  harness_free(&h);
  return doc;
}

static cJSON *
get(const cJSON *o, const char *key)
{
  return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* A member's number, or -1 where it is not a number. */
static double
num(const cJSON *o, const char *key)
{
  const cJSON *x = get(o, key);

  return cJSON_IsNumber(x) ? x->valuedouble : -1;
}

static const char *
str(const cJSON *o, const char *key)
{
  const cJSON *x = get(o, key);

  return cJSON_IsString(x) ? x->valuestring : NULL;
}

static int
size_of(const cJSON *o, const char *key)
{
  const cJSON *x = get(o, key);

  return cJSON_IsArray(x) ? cJSON_GetArraySize(x) : -1;
}

static cJSON *
item(const cJSON *o, const char *key, int i)
{
  return cJSON_GetArrayItem(get(o, key), i);
}

static void
test_document(void)
{
  struct cmg__tool_opts o = { 0 };
  cJSON *d = diff_of("data/job-a.json", "data/job-b.json", &o);

  ok(cJSON_IsObject(d), "job-a against job-b: one JSON object");
  is_str(str(d, "format"), "cumemguard-report-diff", "its format");
  is_int(num(d, "version"), 1, "its version");
  is_str(str(get(d, "base"), "file"), "data/job-a.json", "base: its file");
  is_int(num(get(d, "base"), "pid"), 4242, "base: its pid");
  is_str(str(get(d, "base"), "command"), "/opt/trainer/bin/trainer --epochs 3",
         "base: its command");
  is_str(str(get(d, "new"), "file"), "data/job-b.json", "new: its file");
  is_int(num(get(d, "new"), "pid"), 4243, "new: its pid");
  is_u64(num(d, "base_leaked_bytes"), 4581232640u, "BASE's leaked bytes");
  is_u64(num(d, "new_leaked_bytes"), 4026531840u, "NEW's leaked bytes");
  is_int(num(d, "delta_bytes"), -554700800, "the change, signed");
  is_int(num(d, "delta_allocations"), -6, "the change in allocations");
  ok(num(d, "base_graph_bytes") == 0 && num(d, "new_graph_bytes") == 0 &&
         num(d, "base_context_bytes") == 0 && num(d, "new_context_bytes") == 0,
     "no graph pool or context memory on either side");
  is_int(size_of(d, "changes"), 10, "ten changes: 3 grew, 7 shrank");
  is_int(size_of(d, "held"), 0, "nothing held unchanged");
  cJSON_Delete(d);
}

static void
test_changes(void)
{
  struct cmg__tool_opts o = { 0 };
  cJSON *d = diff_of("data/job-a.json", "data/job-b.json", &o);
  cJSON *grew = item(d, "changes", 0), *host = item(d, "changes", 6);
  cJSON *none = item(d, "changes", 9);

  is_str(str(grew, "api"), "cudaMalloc", "the largest growth first: its API");
  is_str(str(grew, "kind"), "device", "its kind");
  ok(cJSON_IsTrue(get(grew, "device_memory")), "device memory");
  is_int(num(grew, "device"), 1, "on device 1");
  ok(num(grew, "base_count") == 0 && num(grew, "base_bytes") == 0,
     "nothing of it in BASE");
  ok(num(grew, "new_count") == 2 && num(grew, "new_bytes") == 3 * GiB,
     "2 allocations, 3 GiB, in NEW");
  ok(num(grew, "delta_count") == 2 && num(grew, "delta_bytes") == 3 * GiB,
     "the change");
  is_int(size_of(grew, "frames"), 8, "its stack, every frame");
  is_str(str(item(grew, "frames", 2), "function"), "alloc_weights",
         "innermost first, as the report has them");
  ok(cJSON_IsTrue(get(item(grew, "frames", 1), "hidden")) &&
         cJSON_IsFalse(get(item(grew, "frames", 2), "hidden")),
     "the CUDA runtime's frames hidden, the program's shown");

  is_str(str(item(d, "changes", 3), "api"), "cudaMalloc",
         "what shrank follows what grew");
  is_int(num(item(d, "changes", 3), "delta_bytes"), -(int64_t)(3 * GiB),
         "and its change is negative");
  is_str(str(host, "kind"), "host", "pinned host memory: kind host");
  ok(cJSON_IsFalse(get(host, "device_memory")), "not device memory");
  ok(cJSON_IsNull(get(host, "device")), "and no device: null");
  is_int(num(none, "new_count"), 0, "the last change: gone");
  is_int(size_of(none, "frames"), 0, "a group without a stack: no frames");
  cJSON_Delete(d);
}

static void
test_devices(void)
{
  struct cmg__tool_opts o = { 0 };
  const char *f = "data/gpu/torch-three-sites-nopools.json";
  cJSON *d = diff_of(f, "data/job-a.json", &o);
  cJSON *g = diff_of("data/job-a.json", f, &o);
  cJSON *x = item(d, "devices", 1), *y = item(g, "devices", 1);

  is_int(size_of(d, "devices"), 2, "a device only NEW has is listed");
  ok(num(item(d, "devices", 0), "ordinal") == 0 && num(x, "ordinal") == 1,
     "after BASE's, in ordinal order");
  is_str(str(x, "name"), "NVIDIA H100 80GB HBM3", "with its name");
  ok(num(x, "base_live_bytes") == 0 && num(x, "base_peak_bytes") == 0,
     "BASE lacks it: 0");
  ok(num(x, "new_live_bytes") == 553652224 &&
         num(x, "new_peak_bytes") == 553652224,
     "NEW's bytes");
  is_u64(num(item(d, "devices", 0), "base_peak_bytes"), 352 * MiB,
         "a device of both: BASE's peak");
  is_int(size_of(g, "devices"), 2, "a device only BASE has is listed");
  ok(num(y, "base_live_bytes") == 553652224 && num(y, "new_live_bytes") == 0,
     "NEW lacks it: 0");
  is_str(str(y, "name"), "NVIDIA H100 80GB HBM3", "its name from BASE");
  is_int(size_of(d, "changes"), 7, "every group of NEW is a change");
  is_int(num(d, "delta_allocations"), 10, "10 allocations more");
  cJSON_Delete(d);
  cJSON_Delete(g);
}

static void
test_held_and_apart(void)
{
  struct cmg__tool_opts o = { 0 };
  cJSON *same = diff_of("data/job-a.json", "data/job-a.json", &o);
  cJSON *d = diff_of("data/graph.json", "data/context.json", &o);

  is_int(size_of(same, "changes"), 0, "a report against itself: no change");
  is_int(size_of(same, "held"), 7, "every group held");
  ok(num(item(same, "held", 0), "delta_bytes") == 0 &&
         num(item(same, "held", 0), "new_bytes") == 3 * GiB,
     "a held group: no change, its bytes");
  is_int(num(same, "delta_bytes"), 0, "and no change in all");

  is_u64(num(d, "base_graph_bytes"), 1536 * MiB, "BASE's graph pool bytes");
  is_u64(num(d, "new_graph_bytes"), 0, "NEW's");
  is_u64(num(d, "base_context_bytes"), 0, "BASE's context bytes");
  is_u64(num(d, "new_context_bytes"), 817889280, "NEW's");
  is_int(num(d, "delta_bytes"), -(int64_t)(2 * GiB),
         "the leaked change leaves them out");
  is_int(num(d, "delta_allocations"), 0, "as many leaked allocations");
  is_int(size_of(d, "changes"), 5, "their groups are changes as any");
  is_str(str(item(d, "changes", 0), "kind"), "context", "a context's");
  is_str(str(item(d, "changes", 3), "kind"), "graph", "a graph pool's");
  is_int(size_of(d, "held"), 1, "the unchanged group is held");
  is_str(str(item(d, "held", 0), "api"), "cuMemAlloc_v2",
         "under another stack id in each report");
  cJSON_Delete(same);
  cJSON_Delete(d);
}

static void
test_top_and_min_bytes(void)
{
  struct cmg__tool_opts top = { .top = 1 }, min = { .min_bytes = 100 * MiB };
  struct cmg__tool_opts top2 = { .top = 2 };
  cJSON *t = diff_of("data/job-a.json", "data/job-b.json", &top);
  cJSON *m = diff_of("data/job-a.json", "data/job-b.json", &min);
  cJSON *h = diff_of("data/graph.json", "data/context.json", &top2);

  is_int(size_of(t, "changes"), 2, "--top 1: one that grew, one that shrank");
  ok(num(item(t, "changes", 0), "delta_bytes") == 3 * GiB &&
         num(item(t, "changes", 1), "delta_bytes") == -(double)(3 * GiB),
     "the largest of each");
  is_int(num(t, "delta_bytes"), -554700800, "the totals still count all");
  is_int(size_of(m, "changes"), 6, "--min-bytes 100M: six changes");
  is_int(size_of(h, "changes"), 4, "--top 2: two of each");
  is_int(size_of(h, "held"), 1, "and what is held, counted apart");
  cJSON_Delete(t);
  cJSON_Delete(m);
  cJSON_Delete(h);
}

static void
test_once(void)
{
  struct cmg__json_once once;
  struct cmg__tool_opts o = { .once = &once, .stack_text = true };
  cJSON *d;

  ok(cmg__json_once_init(&once) == 0, "a table of frames");
  d = diff_of("data/job-a.json", "data/job-b.json", &o);
  cJSON *a = item(d, "changes", 0), *b = item(d, "changes", 3);
  ok(cJSON_IsNumber(item(a, "frames", 0)), "with a table: frames by number");
  cJSON *fa = item(a, "frames", 2), *fb = item(b, "frames", 2);
  ok(fa != NULL && fb != NULL && fa->valueint == fb->valueint,
     "one frame, in two changes, has one number");
  ok(fa != NULL && item(a, "frames", 3) != NULL &&
         fa->valueint != item(a, "frames", 3)->valueint,
     "two frames, two numbers");
  is_int(size_of(a, "shown"), 2, "and the shown range is given");
  is_str(str(a, "line"), "alloc_weights < load_model < main",
         "stack_text: the one-line view");
  is_int(size_of(a, "lines"), 3, "and the numbered frames' lines, by number");
  cmg__json_once_free(&once);
  cJSON_Delete(d);
}

int
main(void)
{
  test_document();
  test_changes();
  test_devices();
  test_held_and_apart();
  test_top_and_min_bytes();
  test_once();
  return done_testing();
}
