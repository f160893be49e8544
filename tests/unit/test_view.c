/*
 * Unit tests of view.c, the reports folded into what every command
 * prints.  Leak groups of one (stack, API, kind, device) sum, across
 * reports too, while another of any part is another group; a statically
 * linked runtime's group takes the entry the program called; a group is a
 * pool block only as device memory that can leak.  Devices match by UUID
 * for merge (one GPU numbered differently by two processes is one row) and
 * by ordinal for diff; an ordinal no devices[] lists still gets a row.
 * Rows, host memory, graph pools and footprints sum as processes share a
 * device; peaks keep each report's composition, sorted, their stacks the
 * index's; only the first denial of each device is kept.  Threads are
 * kept once per report.  Sorting is by bytes, stable.  Last, the
 * fixtures' job-a and job-b give the totals their golden summaries print.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/load/model.h"
#include "reader/load/read.h"
#include "reader/model/index.h"
#include "reader/model/leak_class.h"
#include "reader/model/view.h"
#include "reader/tool.h"
#include "report_builder.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define NONE CMG__TOOL_NONE

/* The frames and stacks every report of this test has, in the same order:
 * the first report into an empty index gives its stacks these numbers. */
enum { F_DRV, F_RT, F_TRAIN, F_MAIN, F_CACHE, F_CUBLAS, N_FRAMES };
enum { S_TRAIN, S_STATIC, S_CACHE, S_CUBLAS, N_STACKS };

static void
make_report(struct cmg__model_report *r, const char *file, long pid)
{
  report_init(r, file, pid);
  uint32_t drv = report_module(r, "/usr/lib/libcuda.so.1", "d1");
  uint32_t app = report_module(r, "/opt/app/bin/app", "a1");
  report_frame(r, drv, 0x10, "cuMemAlloc_v2");
  report_frame(r, app, 0x20, "cudaMalloc");
  report_frame(r, app, 0x30, "train");
  report_frame(r, app, 0x40, "main");
  report_frame(r, app, 0x50, "c10::cuda::DeviceCachingAllocator::malloc");
  report_frame(r, app, 0x60, "cublasCreate_v2");
  REPORT_STACK(r, F_TRAIN, F_MAIN);
  REPORT_STACK(r, F_DRV, F_RT, F_TRAIN, F_MAIN);
  REPORT_STACK(r, F_DRV, F_CACHE, F_MAIN);
  REPORT_STACK(r, F_DRV, F_CUBLAS, F_MAIN);
}

static const struct cmg__view_leak *
group(const struct cmg__view *v, uint32_t stack, const char *api,
      const char *kind, int ordinal)
{
  for (size_t i = 0; i < v->n_leaks; i++) {
    const struct cmg__view_leak *l = &v->leaks[i];

    if (l->stack == stack && strcmp(l->api, api) == 0 &&
        strcmp(l->kind, kind) == 0 &&
        cmg__view_ordinal(v, l->device) == ordinal)
      return l;
  }
  return NULL;
}

static bool
has(const struct cmg__view_leak *l, uint64_t count, uint64_t bytes)
{
  if (l == NULL)
    return false;
  if (l->count != count || l->bytes != bytes)
    printf("#   got %llu bytes in %llu\n", (unsigned long long)l->bytes,
           (unsigned long long)l->count);
  return l->count == count && l->bytes == bytes;
}

static void
test_groups(void)
{
  struct cmg__model_report a, b;
  struct cmg__index ix;
  struct cmg__view v;

  make_report(&a, "a.json", 10);
  report_device(&a, 0, "GPU zero", "GPU-0");
  report_device(&a, 1, "GPU one", "GPU-1");
  struct cmg__model_leak *l =
      report_leak(&a, S_TRAIN, "cudaMalloc", "device", 0, 2, 100);
  report_thread(l, 7, "main");
  report_thread(l, 8, NULL);
  l = report_leak(&a, S_TRAIN, "cudaMalloc", "device", 0, 1, 50);
  report_thread(l, 8, NULL);
  report_thread(l, 9, "loader");
  report_leak(&a, S_TRAIN, "cudaMalloc", "device", 1, 1, 1000);
  report_leak(&a, S_TRAIN, "cudaMalloc", "host", -1, 1, 64);
  report_leak(&a, S_TRAIN, "cudaMallocManaged", "device", 0, 1, 70);
  report_leak(&a, NONE, "cuMemAlloc_v2", "device", 0, 1, 4096);
  report_leak(&a, S_STATIC, "cuMemAlloc_v2", "device", 0, 1, 80);
  report_leak(&a, S_CACHE, "cuMemAlloc_v2", "device", 0, 1, 2000);
  report_leak(&a, S_CACHE, "cuMemAlloc_v2", "graph", 0, 1, 3000);
  report_leak(&a, S_CUBLAS, "cuMemAlloc_v2", "device", 0, 1, 90);
  report_leak(&a, S_TRAIN, "cudaMalloc", "device", 5, 1, 5);

  /* The second process numbers the two GPUs the other way round. */
  make_report(&b, "b.json", 11);
  report_device(&b, 0, "GPU one", "GPU-1");
  report_device(&b, 1, "GPU zero", "GPU-0");
  l = report_leak(&b, S_TRAIN, "cudaMalloc", "device", 0, 4, 400);
  report_thread(l, 7, "main");

  cmg__index_init(&ix);
  cmg__view_init(&v, &ix, true);
  is_int(cmg__view_add(&v, &a), 0, "a report is added");
  is_int(v.n_leaks, 10, "its 11 leaks are 10 groups");
  const struct cmg__view_leak *g = group(&v, 0, "cudaMalloc", "device", 0);
  ok(has(g, 3, 150), "one key twice: summed");
  ok(g != NULL && g->order == 0 && g->rule == NONE &&
         g->by_kind == CMG__LEAK_CLASS_LEAKED && g->pool == NULL &&
         g->held == NULL,
     "first seen, no rule, leaked, no pool, kept by none");
  ok(g != NULL && g->threads.n == 3 && g->threads.list[0].tid == 7 &&
         g->threads.list[1].tid == 8 && g->threads.list[2].tid == 9 &&
         strcmp(g->threads.list[2].name, "loader") == 0 &&
         g->threads.list[1].name == NULL,
     "its threads, each once, in the order met, with their names");
  ok(has(group(&v, 0, "cudaMalloc", "device", 1), 1, 1000),
     "another device: another group");
  g = group(&v, 0, "cudaMalloc", "host", -1);
  ok(has(g, 1, 64) && g->device == NONE && g->by_kind == CMG__LEAK_CLASS_OTHER,
     "another kind: another group, of no device");
  ok(has(group(&v, 0, "cudaMallocManaged", "device", 0), 1, 70),
     "another API: another group");
  ok(has(group(&v, NONE, "cuMemAlloc_v2", "device", 0), 1, 4096),
     "no stack: a group of its own");
  ok(has(group(&v, 1, "cudaMalloc", "device", 0), 1, 80),
     "a static runtime's driver call: the runtime entry names it");
  g = group(&v, 2, "cuMemAlloc_v2", "device", 0);
  ok(has(g, 1, 2000) && g->pool != NULL &&
         strcmp(g->pool, "PyTorch caching allocator") == 0,
     "device memory through a pool's code: a pool block");
  g = group(&v, 2, "cuMemAlloc_v2", "graph", 0);
  ok(has(g, 1, 3000) && g->pool == NULL && g->by_kind == CMG__LEAK_CLASS_GRAPH,
     "a graph pool through the same code: the driver's, no pool block");
  g = group(&v, 3, "cuMemAlloc_v2", "device", 0);
  ok(has(g, 1, 90) && g->held != NULL && strstr(g->held, "cuBLAS") != NULL,
     "a cuBLAS handle's memory is kept by the library");
  g = group(&v, 0, "cudaMalloc", "device", 5);
  ok(has(g, 1, 5) && g->device == 2 && strcmp(v.devices[2].name, "") == 0 &&
         strcmp(v.devices[2].uuid, "") == 0,
     "an ordinal devices[] does not list: a row with no name");

  is_int(cmg__view_add(&v, &b), 0, "a second report");
  is_int(v.n_leaks, 10, "its group is one of the first's");
  g = group(&v, 0, "cudaMalloc", "device", 1);
  ok(has(g, 5, 1400) && g->device == 1,
     "matched by the GPU's UUID, not its ordinal");
  ok(g != NULL && g->threads.n == 1 && g->threads.list[0].source == 1 &&
         g->threads.list[0].tid == 7,
     "its thread is the second report's");
  is_int(v.n_devices, 3, "two GPUs and the unlisted ordinal: three rows");
  ok(v.n_sources == 2 && v.sources[1].pid == 11 &&
         strcmp(v.sources[1].file, "b.json") == 0,
     "each report is a source");

  cmg__view_sort(&v);
  bool sorted = true;
  for (size_t i = 1; i < v.n_leaks; i++)
    sorted = sorted && v.leaks[i - 1].bytes >= v.leaks[i].bytes;
  ok(sorted && v.leaks[0].bytes == 4096 && v.leaks[9].bytes == 5,
     "sorted: largest first");
  ok(v.leak_map.cap == 0, "and the map of positions is dropped");
  is_int(cmg__view_ordinal(&v, NONE), -1, "no device row: ordinal -1");
  cmg__view_free(&v);
  ok(v.n_leaks == 0 && v.leaks == NULL && v.ix == NULL, "freed, it is empty");
  cmg__index_free(&ix);
  cmg__read_report_free(&a);
  cmg__read_report_free(&b);
}

/* Equal bytes: more allocations first, then the order first seen. */
static void
test_sort(void)
{
  static const uint64_t bytes[] = { 10, 30, 30, 30, 20 };
  static const uint64_t counts[] = { 1, 1, 5, 1, 1 };
  static const uint32_t want[] = { 2, 1, 3, 4, 0 };
  struct cmg__view_leak leaks[N(bytes)];
  struct cmg__view v;
  bool same = true;

  memset(&v, 0, sizeof(v));
  memset(leaks, 0, sizeof(leaks));
  for (uint32_t i = 0; i < N(bytes); i++) {
    leaks[i].bytes = bytes[i];
    leaks[i].count = counts[i];
    leaks[i].order = i;
  }
  v.leaks = leaks;
  v.n_leaks = N(bytes);
  cmg__view_sort(&v);
  for (size_t i = 0; i < N(want); i++)
    same = same && leaks[i].order == want[i];
  ok(same, "equal bytes: more allocations first, then first seen");
}

static void
test_devices(void)
{
  struct cmg__model_report a, b;
  struct cmg__model_device *d;
  const struct cmg__view_device *vd;
  struct cmg__index ix;
  struct cmg__view v;

  make_report(&a, "a.json", 1);
  d = report_device(&a, 0, "H100", "GPU-A");
  d->physical_bytes = 80;
  d->has_limit = true;
  d->limit_bytes = 16;
  d->live_bytes = 1, d->peak_bytes = 2, d->allocations = 3;
  d->frees = 4, d->denied = 5;
  d->graph =
      (struct cmg__model_graphmem){ true, false, 100, 150, 10, 40, 1, 2, 3, 4 };
  d->footprint.present = d->footprint.counted = true;
  d->footprint.has_context_bytes = d->footprint.has_process_bytes = true;
  d->footprint.source = CMG__MODEL_FP_DRIVER;
  d->footprint.contexts = 1, d->footprint.context_bytes = 500;
  d->footprint.process_bytes = 900;
  d->footprint.why = strdup("first why");
  report_device(&a, 1, "A100", "");
  make_report(&b, "b.json", 2);
  d = report_device(&b, 3, "H100", "GPU-A");
  d->physical_bytes = 81;
  d->has_limit = true;
  d->limit_bytes = 32;
  d->live_bytes = 10, d->peak_bytes = 20, d->allocations = 30;
  d->frees = 40, d->denied = 50;
  d->graph =
      (struct cmg__model_graphmem){ true, true, 7, 50, 3, 90, 10, 20, 30, 40 };
  d->footprint.present = d->footprint.has_context_bytes = true;
  d->footprint.source = CMG__MODEL_FP_NVML;
  d->footprint.contexts = 2, d->footprint.context_bytes = 70;
  d->footprint.why = strdup("second why");
  report_device(&b, 1, "A100", "");

  cmg__index_init(&ix);
  cmg__view_init(&v, &ix, true);
  cmg__view_add(&v, &a);
  cmg__view_add(&v, &b);
  is_int(v.n_devices, 2, "by UUID: ordinals 0 and 3 are one GPU");
  vd = &v.devices[0];
  ok(vd->ordinal == 0 && vd->processes == 2 && strcmp(vd->name, "H100") == 0,
     "the first report's ordinal, two processes");
  ok(vd->live_bytes == 11 && vd->peak_bytes == 22 && vd->allocations == 33 &&
         vd->frees == 44 && vd->denied == 55,
     "the counts summed");
  is_u64(vd->physical_bytes, 81, "the size: the largest said");
  ok(vd->has_limit && vd->limit_bytes == 16 && vd->limit_varies,
     "the first limit, marked as varying");
  ok(v.devices[1].ordinal == 1 && v.devices[1].processes == 2,
     "GPUs without a UUID match by ordinal");
  const struct cmg__model_graphmem *gm = &vd->graph;
  ok(gm->present && gm->estimate && gm->reserved_bytes == 107 &&
         gm->used_bytes == 13,
     "graph pools: held bytes summed, an estimate in any makes one");
  ok(gm->reserved_high_bytes == 150 && gm->used_high_bytes == 90,
     "and the highs the largest of one");
  ok(gm->launches == 11 && gm->uploads == 22 && gm->trims == 33 &&
         gm->denied == 44,
     "its counts summed");
  const struct cmg__model_footprint *fp = &vd->footprint;
  ok(vd->footprints == 2 && fp->contexts == 3 && fp->context_bytes == 570,
     "footprints: contexts and their bytes summed");
  ok(!fp->has_process_bytes && fp->process_bytes == 0,
     "a count one process did not know is not known");
  ok(!fp->counted && vd->counted_any,
     "counted against the caps only if by all; said if by any");
  ok(fp->source == CMG__MODEL_FP_NVML && vd->mixed_sources,
     "NVML is the source if any part's, the mix said");
  is_str(fp->why, "first why", "the first reason given");
  ok(!v.devices[1].footprint.present && v.devices[1].footprints == 0,
     "a device with no footprint has none");
  cmg__view_free(&v);

  /* For diff: by ordinal, whatever the UUIDs say. */
  cmg__view_init(&v, &ix, false);
  cmg__view_add(&v, &a);
  cmg__view_add(&v, &b);
  ok(v.n_devices == 3 && v.devices[0].processes == 1 &&
         v.devices[1].processes == 2 && v.devices[2].ordinal == 3,
     "by ordinal: 0, 1 and 3 are three rows");
  cmg__view_free(&v);
  cmg__index_free(&ix);
  cmg__read_report_free(&a);
  cmg__read_report_free(&b);
}

static void
test_totals(void)
{
  struct cmg__model_report a, b, c;
  struct cmg__index ix;
  struct cmg__view v;

  make_report(&a, "a.json", 1);
  a.has_host = true;
  a.host = (struct cmg__model_host){ true, 128, 1, 2, 3, 4, 5 };
  a.events[0] = 1, a.events[1] = 2, a.events[2] = 3;
  a.released = calloc(2, sizeof(*a.released));
  a.n_released = 2;
  a.released[0].bytes = 32, a.released[0].count = 1;
  a.released[1].bytes = 8, a.released[1].count = 2;
  for (size_t i = 0; i < 2; i++) {
    a.released[i].api = strdup("cudaMalloc");
    a.released[i].kind = strdup("device");
  }
  report_leak(&a, S_TRAIN, "cudaMalloc", "device", -1, 1,
              (uint64_t)INT64_MAX - 5);
  make_report(&b, "b.json", 2);
  b.has_host = true;
  b.host = (struct cmg__model_host){ true, 128, 10, 20, 30, 40, 50 };
  b.events[1] = 5;
  b.no_pools = true;
  b.python_note = strdup("no libpython");
  report_leak(&b, S_TRAIN, "cudaMalloc", "device", -1, 2, 100);
  make_report(&c, "c.json", 3);
  c.has_host = true;
  c.host = (struct cmg__model_host){ true, 256, 0, 0, 0, 0, 0 };
  c.python_note = strdup("a later note");

  cmg__index_init(&ix);
  cmg__view_init(&v, &ix, true);
  cmg__view_add(&v, &a);
  cmg__view_add(&v, &b);
  const struct cmg__model_host *h = &v.host;
  ok(v.has_host && h->live_bytes == 11 && h->peak_bytes == 22 &&
         h->allocations == 33 && h->frees == 44 && h->denied == 55,
     "host memory summed");
  ok(h->has_limit && h->limit_bytes == 128, "one limit for all: kept");
  ok(v.events[0] == 1 && v.events[1] == 7 && v.events[2] == 3,
     "the limit events summed");
  ok(v.released_bytes == 40 && v.released_count == 3,
     "memory released by context teardown summed");
  ok(v.no_pools, "written with no_pools by any: said");
  ok(v.n_leaks == 1 && v.leaks[0].bytes == (uint64_t)INT64_MAX &&
         v.leaks[0].count == 3,
     "a sum of bytes past INT64_MAX stops there");
  cmg__view_add(&v, &c);
  ok(!h->has_limit, "host limits that differ: none said");
  is_str(v.python_note, "no libpython", "the first report's Python note");
  cmg__view_free(&v);
  cmg__index_free(&ix);
  cmg__read_report_free(&a);
  cmg__read_report_free(&b);
  cmg__read_report_free(&c);
}

static void
test_moments(void)
{
  static const uint64_t peak[][3] = {
    { S_TRAIN, 100, 1 },
    { NONE, 300, 2 },
    { S_CACHE, 100, 4 },
    { S_STATIC, 300, 2 },
  };
  static const uint64_t denied[][3] = { { S_CUBLAS, 50, 5 } };
  struct cmg__model_report r, other;
  struct cmg__index ix;
  struct cmg__view v;
  uint32_t first;

  /* A stack the index has before: the report's are numbered after it. */
  report_init(&other, "other.json", 2);
  report_frame(&other, report_module(&other, "/lib/x.so", "x"), 1, "x");
  REPORT_STACK(&other, 0);
  make_report(&r, "m.json", 1);
  REPORT_STACK(&r, F_CUBLAS);
  report_device(&r, 0, "GPU", "GPU-0");
  r.peaks = calloc(1, sizeof(*r.peaks));
  r.n_peaks = 1;
  report_comp(&r.peaks[0].comp, 800, 1.5, N(peak), peak);
  r.denials_list = calloc(4, sizeof(*r.denials_list));
  r.n_denials = 4;
  for (int i = 0; i < 4; i++) {
    struct cmg__model_denial *d = &r.denials_list[i];

    d->api = strdup(i == 2 ? "cuMemHostAlloc" : "cudaMalloc");
    d->device = i == 2 ? -1 : i == 3 ? 4 : 0;
    d->requested_bytes = 1000 + (uint64_t)i;
    d->stack = i == 0 ? N_STACKS : NONE;
  }
  r.denials_list[0].has_limit = true;
  r.denials_list[0].limit_bytes = 64;
  r.denials_list[0].has_comp = true;
  report_comp(&r.denials_list[0].comp, 50, 2.5, N(denied), denied);

  cmg__index_init(&ix);
  cmg__index_add(&ix, &other, &first);
  cmg__view_init(&v, &ix, true);
  cmg__view_add(&v, &r);
  is_int(v.n_peaks, 1, "the peak is kept");
  const struct cmg__view_moment *m = &v.peaks[0];
  ok(m->has_comp && m->comp.n == 4 && m->comp.bytes == 800 &&
         m->comp.time == 1.5 && m->count == 9 && m->device == 0,
     "with its composition, time, device and allocations");
  ok(m->comp.items[0].bytes == 300 && m->comp.items[1].bytes == 300 &&
         m->comp.items[2].count == 4 && m->comp.items[3].count == 1,
     "sorted by bytes, then allocations");
  ok(m->comp.items[0].stack == 1 + S_STATIC && m->comp.items[1].stack == NONE,
     "then by stack, the index's, no stack last");
  is_int(v.n_denials, 3, "the first denial of each device: 0, host, 4");
  ok(v.denials[0].requested_bytes == 1000 &&
         v.denials[1].requested_bytes == 1002 &&
         v.denials[2].requested_bytes == 1003,
     "a later denial of the same device is not kept");
  m = &v.denials[0];
  ok(m->has_limit && m->limit_bytes == 64 && strcmp(m->api, "cudaMalloc") == 0,
     "a denial keeps its API and limit");
  ok(m->stack == 1 + N_STACKS && m->comp.items[0].stack == 1 + S_CUBLAS &&
         m->count == 5,
     "its stacks are the index's");
  ok(v.denials[1].device == NONE && !v.denials[1].has_comp &&
         v.denials[1].comp.items == NULL && v.denials[1].count == 0,
     "host memory: no device; no composition: none");
  ok(strcmp(v.devices[v.denials[2].device].name, "") == 0,
     "an unlisted device gets a row");
  cmg__view_free(&v);
  cmg__index_free(&ix);
  cmg__read_report_free(&r);
  cmg__read_report_free(&other);
}

/* The fixtures, as the golden summaries of job-a and of merge say. */
static void
test_fixtures(void)
{
  const char *srcdir = getenv("srcdir");
  char path[2][1024], err[CMG__TOOL_ERR_MAX];
  struct cmg__model_report r;
  struct cmg__index ix;
  struct cmg__view v;
  uint64_t bytes, count;
  int rc = 0;

  cmg__index_init(&ix);
  cmg__view_init(&v, &ix, true);
  for (int i = 0; i < 2; i++) {
    snprintf(path[i], sizeof(path[i]), "%s/tests/reader/data/job-%c.json",
             srcdir && *srcdir ? srcdir : ".", 'a' + i);
    if (cmg__read_report(path[i], &r, err, sizeof(err)) != 0) {
      printf("# %s: %s\n", path[i], err);
      rc = -1;
    } else if (cmg__view_add(&v, &r) != 0) {
      rc = -1;
    }
    cmg__read_report_free(&r);
    if (i == 0) {
      is_int(rc, 0, "job-a is read into a view");
      cmg__view_sort(&v);
      cmg__leak_class_total(&v, CMG__LEAK_CLASS_LEAKED, &bytes, &count);
      ok(bytes == 4581232640ull && count == 10,
         "job-a: 4581232640 bytes leaked in 10 allocations");
      ok(v.n_leaks == 7 && v.leaks[0].bytes == 3221225472ull &&
             v.leaks[0].count == 2 &&
             cmg__view_ordinal(&v, v.leaks[0].device) == 0,
         "in 7 groups, the largest 3.0 GiB in 2 on device 0");
      ok(v.n_peaks == 2 && v.n_denials == 2,
         "two peaks, and the first denials of device 0 and host memory");
      ok(v.released_bytes == 33554432 && v.released_count == 1,
         "32 MiB released when its context was destroyed");
    }
  }
  is_int(rc, 0, "job-b is added");
  cmg__leak_class_total(&v, CMG__LEAK_CLASS_LEAKED, &bytes, &count);
  ok(bytes == 8607764480ull && count == 14,
     "merged: 8607764480 bytes leaked in 14 allocations");
  cmg__view_free(&v);
  cmg__index_free(&ix);
}

int
main(void)
{
  test_groups();
  test_sort();
  test_devices();
  test_totals();
  test_moments();
  test_fixtures();
  return done_testing();
}
