/*
 * The summary as JSON, which scripts and the html page read instead of the
 * text: it must carry every number exactly, every frame with the hidden
 * ones marked, leaks apart from graph memory and contexts, totals that
 * --top and --min-bytes never shorten with what they left out counted in
 * "omitted", the suppressions with what they hid, and, on request, the
 * text's lines of each stack or each frame and line written once and
 * named by number.  The whole documents of context.json and graph.json
 * are the tool's golden ones; job-a.json's values are its report's.
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/jsonw.h"

#include "reader/model/supp.h"
#include "reader/model/symbolize.h"
#include "reader/show/json_once.h"
#include "reader/show/summary_json.h"
#include "reader/tool.h"
#include "reader_harness.h"
#include "../tap.h"

#define MiB (1ull << 20)

static cJSON *doc;

/* {"s": the summary of v under o, and with o->once its tables}, parsed;
 * the previous document freed. */
static const cJSON *
summary(const struct cmg__view *v, const struct cmg__tool_opts *o)
{
  struct cmg__jsonw w;
  char *text;

  cJSON_Delete(doc);
  if (cmg__jsonw_open(&w, -1, false) != 0)
    abort();
  cmg__jsonw_object(&w);
  cmg__summary_json_write(cmg__jsonw_key(&w, "s"), v, o);
  if (o->once != NULL)
    cmg__json_once_write(o->once, &w);
  cmg__jsonw_object_end(&w);
  text = cmg__jsonw_take(&w);
  doc = text != NULL ? cJSON_Parse(text) : NULL;
  free(text);
  return cJSON_GetObjectItemCaseSensitive(doc, "s");
}

static const cJSON *
at(const cJSON *j, const char *key)
{
  return cJSON_GetObjectItemCaseSensitive(j, key);
}

static const cJSON *
nth(const cJSON *j, const char *key, int i)
{
  return cJSON_GetArrayItem(at(j, key), i);
}

static double
num(const cJSON *j, const char *key)
{
  const cJSON *x = at(j, key);

  return cJSON_IsNumber(x) ? x->valuedouble : -1;
}

static const char *
str(const cJSON *j, const char *key)
{
  const cJSON *x = at(j, key);

  return cJSON_IsString(x) ? x->valuestring
         : cJSON_IsNull(x) ? "(null)"
                           : "(none)";
}

static int
count(const cJSON *j, const char *key)
{
  const cJSON *x = at(j, key);

  return cJSON_IsArray(x) ? cJSON_GetArraySize(x) : -1;
}

/* Item i of array key of j: a number (-1 when not one), or a string. */
static int
item_int(const cJSON *j, const char *key, int i)
{
  const cJSON *x = cJSON_GetArrayItem(at(j, key), i);

  return cJSON_IsNumber(x) ? x->valueint : -1;
}

static const char *
item_str(const cJSON *j, const char *key, int i)
{
  const cJSON *x = cJSON_GetArrayItem(at(j, key), i);

  return cJSON_IsString(x) ? x->valuestring : "(none)";
}

/* The functions of a group's frames, hidden or shown, joined by spaces. */
static const char *
functions(const cJSON *group, bool hidden)
{
  static char buf[512];
  const cJSON *fr;

  buf[0] = '\0';
  cJSON_ArrayForEach(fr, at(group, "frames"))
  {
    if (cJSON_IsTrue(at(fr, "hidden")) != hidden)
      continue;
    if (buf[0] != '\0')
      strcat(buf, " ");
    strcat(buf, str(fr, "function"));
  }
  return buf;
}

/* The whole document as summary --json writes it. */
static void
test_golden(const char *report, const char *golden)
{
  const struct cmg__tool_opts o = { 0 };
  struct cmg__jsonw w;
  struct harness h;
  char *got, *want;

  ok(harness_load(&h, report) == 0, "%s read", report);
  cmg__jsonw_open(&w, -1, true);
  cmg__jsonw_object(&w);
  cmg__jsonw_string(cmg__jsonw_key(&w, "format"), "cumemguard-report-summary");
  cmg__jsonw_number(cmg__jsonw_key(&w, "version"), 1);
  cmg__jsonw_array(cmg__jsonw_key(&w, "summaries"));
  cmg__summary_json_write(&w, &h.v, &o);
  cmg__jsonw_array_end(&w);
  cmg__jsonw_object_end(&w);
  cmg__jsonw_lit(&w, "\n");
  got = cmg__jsonw_take(&w);
  want = harness_slurp(golden);
  ok(got != NULL && want != NULL && strcmp(got, want) == 0,
     "%s: byte for byte %s", report, golden);
  free(got);
  free(want);
  harness_free(&h);
}

static void
test_totals(const cJSON *s)
{
  is_u64(num(s, "leaked_bytes"), 4581232640u, "leaked bytes: the report's");
  is_u64(num(s, "leaked_allocations"), 10, "leaked allocations");
  is_u64(num(s, "other_bytes"), 64 * MiB, "host memory apart");
  is_u64(num(s, "other_allocations"), 1, "in one allocation");
  is_u64(num(s, "graph_bytes") + num(s, "context_bytes") +
             num(s, "suppressed_bytes"),
         0, "no graph memory, contexts or suppressed");
  is_u64(num(s, "released_bytes"), 32 * MiB, "released at context teardown");
  is_u64(num(s, "released_allocations"), 1, "in one allocation");
  is_u64(num(at(s, "events"), "wait"), 1, "the events: one wait");
  is_u64(num(at(s, "events"), "warn") + num(at(s, "events"), "soft_limit"), 0,
         "no warn or soft limit");
  is_u64(num(at(s, "host"), "peak_bytes"), 96 * MiB, "host memory's peak");
  ok(cJSON_IsNull(at(at(s, "host"), "limit_bytes")), "and no host limit");
  ok(cJSON_IsNull(at(s, "python_note")), "no Python note");
  ok(cJSON_IsFalse(at(at(s, "pools"), "mostly")), "no pool blocks");
}

static void
test_groups(const cJSON *s)
{
  const cJSON *host = nth(s, "leaks", 3), *odd = nth(s, "leaks", 4);

  is_int(count(s, "leaks"), 7, "every leak group listed by default");
  is_str(str(nth(s, "leaks", 0), "api"), "cudaMalloc", "largest first");
  is_u64(num(nth(s, "leaks", 0), "bytes"), 3221225472u, "its exact bytes");
  is_str(functions(nth(s, "leaks", 0), false), "alloc_weights load_model main",
         "the frames shown by default");
  is_str(functions(nth(s, "leaks", 0), true),
         "(null) cudaMalloc (null) __libc_start_main _start",
         "and the hidden ones, marked");
  is_str(str(host, "kind"), "host", "pinned host memory is listed");
  ok(cJSON_IsNull(at(host, "device")) &&
         cJSON_IsFalse(at(host, "device_memory")),
     "with no device, and not device memory");
  ok(cJSON_IsTrue(at(nth(s, "leaks", 0), "device_memory")),
     "a cudaMalloc group is device memory");
  ok(cJSON_IsTrue(at(nth(s, "leaks", 5), "truncated")),
     "a truncated stack says so");
  is_int(count(nth(s, "leaks", 6), "frames"), 0, "no stack: no frames");
  is_str(str(nth(odd, "frames", 2), "offset"), "(null)",
         "a frame without a module: no offset");
  ok(cJSON_IsNull(at(nth(odd, "frames", 2), "module")) &&
         cJSON_IsNull(at(nth(odd, "frames", 2), "function")),
     "nor module nor function");
  is_str(str(nth(odd, "frames", 3), "offset"), "0x2460",
         "a module's offset in hex");
  is_u64(num(nth(odd, "frames", 3), "function_offset"), 0x3a,
         "the offset in the function");
  is_int(count(s, "graph") + count(s, "context") + count(s, "suppressions"), 0,
         "graph, context and suppressions empty");
}

static void
test_moments(const cJSON *s)
{
  const cJSON *host = nth(s, "first_denials", 1);

  is_int(count(s, "peaks"), 2, "a peak per device");
  is_u64(num(nth(s, "peaks", 1), "live_bytes"), 528 * MiB + 4096,
         "device 1's peak bytes");
  is_int(count(nth(s, "peaks", 1), "by_stack"), 3, "and its three stacks");
  is_int(count(s, "first_denials"), 2, "a first denial per device and host");
  is_u64(num(nth(s, "first_denials", 0), "requested_bytes"), 13958643712u,
         "what was refused");
  is_str(functions(nth(s, "first_denials", 0), false),
         "model::Buffer::grow(unsigned long) train_step main",
         "and from where, by full names");
  ok(cJSON_IsNull(at(host, "device")) && cJSON_IsNull(at(host, "by_stack")),
     "host memory's denial: no device, no composition");
  is_u64(num(host, "limit_bytes"), 128 * MiB, "and the host limit");
}

/* --top and --min-bytes choose the leaks and the composition lines;
 * "omitted" counts what they left, and the totals everything. */
static void
test_top(const struct cmg__view *v)
{
  struct cmg__tool_opts o = { .top = 2, .min_bytes = 512 * MiB };
  const cJSON *s = summary(v, &o);

  is_int(count(s, "leaks"), 2, "--top 2: two leak groups");
  is_u64(num(at(s, "omitted"), "groups"), 5, "five left out");
  is_u64(num(at(s, "omitted"), "count"), 6, "with their allocations");
  is_u64(num(at(s, "omitted"), "bytes"), 593 * MiB + 4096, "and their bytes");
  is_u64(num(s, "leaked_bytes"), 4581232640u, "the totals are whole");
  is_int(count(nth(s, "peaks", 1), "by_stack"), 2,
         "a peak's composition cut to two");
  o.top = 0;
  o.min_bytes = 1ull << 30;
  s = summary(v, &o);
  is_int(count(s, "leaks"), 1, "--min-bytes 1G: one group");
  is_u64(num(at(s, "omitted"), "groups"), 6, "six left out");
  is_int(count(nth(s, "peaks", 1), "by_stack"), 3,
         "--min-bytes does not cut compositions");
}

/* stack_text: the text summary's lines of each stack, for the page. */
static void
test_stack_text(const struct cmg__view *v)
{
  struct cmg__tool_opts o = { .stack_text = true };
  const cJSON *s = summary(v, &o), *g = nth(s, "leaks", 0);

  ok(cJSON_IsNull(at(g, "title")), "no Python: no title");
  is_str(str(g, "line"), "alloc_weights < load_model < main",
         "the one-line view");
  is_int(count(g, "lines"), 3, "the lines of the numbered frames");
  is_str(item_str(g, "lines", 0), "#0 alloc_weights+0x12 (trainer+0x1a2b)",
         "without their indent");
  g = nth(s, "leaks", 6);
  is_str(str(g, "line"), "(no stack)", "no stack: its one line says so");
  is_str(item_str(g, "lines", 0),
         "(no stack was recorded: stack_depth=0, or the capture failed)",
         "and so does its text");
  ok(at(nth(summary(v, &(struct cmg__tool_opts){ 0 }), "leaks", 0), "line") ==
         NULL,
     "without stack_text: no text members");
}

/* once: each frame and line kept once and named by its number. */
static void
test_once(const struct cmg__view *v)
{
  struct cmg__json_once once;
  struct cmg__tool_opts o = { .stack_text = true, .once = &once };
  const cJSON *s, *a, *b;

  if (cmg__json_once_init(&once) != 0)
    abort();
  s = summary(v, &o);
  a = nth(s, "leaks", 0);
  b = nth(s, "leaks", 1);
  ok(cJSON_IsNumber(cJSON_GetArrayItem(at(a, "frames"), 0)),
     "frames are numbers");
  is_int(item_int(a, "frames", 4), item_int(b, "frames", 4),
         "the same frame (main) has the same number in two groups");
  is_str(str(cJSON_GetArrayItem(at(doc, "frames"), item_int(a, "frames", 4)),
             "function"),
         "main", "and the table holds it under that number");
  is_int(item_int(a, "shown", 0), 2,
         "shown: from the first frame of the default view");
  is_int(item_int(a, "shown", 1), 5, "to its end");
  is_int(item_int(a, "lines", 2), item_int(b, "lines", 2),
         "the same line has the same number");
  is_str(item_str(doc, "strings", item_int(a, "lines", 2)),
         "#2 main+0x5c (trainer+0x2100)", "and the table holds its text");
  a = nth(s, "leaks", 6);
  is_int(item_int(a, "shown", 1), 0, "no stack: an empty range");
  ok(cJSON_IsNumber(cJSON_GetArrayItem(at(a, "lines"), 0)),
     "its line is a number too");
  ok(at(cJSON_GetArrayItem(at(doc, "frames"), 0), "hidden") == NULL,
     "a frame of the table has no hidden flag: shown says it");
  cmg__json_once_free(&once);
}

/* The frames of one stack, as diff writes them. */
static void
test_stack_alone(const struct cmg__view *v)
{
  struct cmg__tool_opts o = { .stack_text = true };
  struct cmg__jsonw w;
  char *text;

  cmg__jsonw_open(&w, -1, false);
  cmg__jsonw_object(&w);
  cmg__summary_json_stack(&w, v->ix, CMG__TOOL_NONE, &o);
  cmg__jsonw_object_end(&w);
  text = cmg__jsonw_take(&w);
  is_str(text,
         "{\"frames\":[],\"title\":null,\"line\":\"(no stack)\",\"lines\":"
         "[\"(no stack was recorded: stack_depth=0, or the capture "
         "failed)\"]}",
         "no stack: its members exactly");
  free(text);
}

static void
test_suppressed(struct harness *h)
{
  char path[] = "/tmp/cmg-supp-XXXXXX", err[CMG__TOOL_ERR_MAX] = "";
  struct cmg__supp supp = { 0 };
  struct cmg__tool_opts o = { .supp = &supp };
  int fd = mkstemp(path);
  const cJSON *s, *r;

  if (fd < 0 || write(fd, "leak:alloc_weights\n", 19) != 19)
    abort();
  close(fd);
  ok(cmg__supp_load(&supp, path, err, sizeof(err)) == 0 &&
         cmg__run_finish(&h->v, &supp) == 0,
     "a suppression of alloc_weights applied");
  s = summary(&h->v, &o);
  r = nth(s, "suppressions", 0);
  is_str(str(r, "pattern"), "alloc_weights", "the rule's pattern");
  is_str(str(r, "file"), path, "its file");
  is_u64(num(r, "line"), 1, "its line");
  is_u64(num(r, "count"), 2, "what it hid: allocations");
  is_u64(num(r, "bytes"), 3221225472u, "and bytes");
  is_u64(num(s, "suppressed_bytes"), 3221225472u, "counted as suppressed");
  is_u64(num(s, "leaked_bytes"), 4581232640u - 3221225472u, "not as leaked");
  is_int(count(s, "leaks"), 6, "and not listed");
  is_u64(num(at(s, "omitted"), "groups"), 0, "nor counted as omitted");
  unlink(path);
  cmg__supp_free(&supp);
}

static void
test_job_a(void)
{
  const struct cmg__tool_opts o = { 0 };
  struct harness h;
  const cJSON *s;

  ok(harness_load(&h, "data/job-a.json") == 0, "job-a.json read");
  s = summary(&h.v, &o);
  is_str(str(nth(s, "sources", 0), "file"), "data/job-a.json", "its source");
  is_u64(num(nth(s, "devices", 0), "limit_bytes"), 16ull << 30,
         "device 0's limit");
  ok(cJSON_IsNull(at(nth(s, "devices", 0), "footprint")) &&
         cJSON_IsNull(at(nth(s, "devices", 0), "graph_memory")),
     "a report from before footprints and graph memory: null");
  test_totals(s);
  test_groups(s);
  test_moments(s);
  test_top(&h.v);
  test_stack_text(&h.v);
  test_once(&h.v);
  test_stack_alone(&h.v);
  test_suppressed(&h);
  harness_free(&h);
}

/* Pool blocks and the library handles that keep memory, from a PyTorch
 * run on a GPU. */
static void
test_pools(void)
{
  const struct cmg__tool_opts o = { 0 };
  struct harness h;
  const cJSON *s, *p;

  ok(harness_load(&h, "data/gpu/torch-gpt2-compile.json") == 0,
     "torch-gpt2-compile.json read");
  s = summary(&h.v, &o);
  p = at(s, "pools");
  ok(cJSON_IsTrue(at(p, "mostly")), "most leaked memory in pool blocks");
  is_u64(num(p, "bytes"), 328 * MiB, "their bytes");
  is_str(str(p, "largest"), "PyTorch caching allocator", "whose pool");
  is_str(str(nth(s, "leaks", 0), "pool"), "PyTorch caching allocator",
         "a group that is a pool block names the pool");
  is_str(str(nth(s, "leaks", 1), "held_by"), "cuBLAS handle (cublasCreate_v2)",
         "one kept by a library names what keeps it");
  harness_free(&h);
}

/* An empty view: every member, empty or null. */
static void
test_empty(void)
{
  const struct cmg__tool_opts o = { 0 };
  struct cmg__index ix;
  struct cmg__view v;
  const cJSON *s;

  cmg__index_init(&ix);
  cmg__view_init(&v, &ix, true);
  s = summary(&v, &o);
  ok(s != NULL, "an empty view writes a document");
  is_int(count(s, "sources") + count(s, "devices") + count(s, "leaks") +
             count(s, "peaks") + count(s, "first_denials"),
         0, "with empty arrays");
  ok(cJSON_IsNull(at(s, "host")), "host null");
  is_u64(num(at(s, "omitted"), "groups"), 0, "nothing omitted");
  cmg__view_free(&v);
  cmg__index_free(&ix);
}

int
main(void)
{
  cmg__symbolize_off();
  test_golden("data/context.json", "golden/summary-context.json");
  test_golden("data/graph.json", "golden/summary-graph.json");
  test_job_a();
  test_pools();
  test_empty();
  cJSON_Delete(doc);
  return done_testing();
}
