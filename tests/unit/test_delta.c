/*
 * Unit tests of delta.c, what diff BASE NEW says grew and shrank.  A group
 * of BASE and one of NEW are one change when their stack, API, kind and
 * device ordinal are the same (the ordinal, not the row: the two views
 * number their rows apart); a group in one side only grew from nothing or
 * shrank to nothing; a suppressed group is in neither side.  The order is
 * the one diff prints: what grew, largest first, then what is held
 * unchanged, largest first, then what shrank, largest first; --min-bytes
 * judges a change by its size and a held group by what it holds.  Last,
 * the fixtures' job-a and job-b give the counts of their golden diff.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/load/read.h"
#include "reader/model/delta.h"
#include "reader/model/index.h"
#include "reader/model/leak_class.h"
#include "reader/model/view.h"
#include "reader/tool.h"
#include "report_builder.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define NONE CMG__TOOL_NONE

static const char *const what_names[] = { "grew", "held", "shrank" };

static void
test_what(void)
{
  static const struct {
    int64_t bytes, count;
    enum cmg__delta_what want;
  } cases[] = {
    { 100, 1, CMG__DELTA_GREW },
    { 100, -3, CMG__DELTA_GREW },
    { 0, 2, CMG__DELTA_GREW },
    { 0, 0, CMG__DELTA_HELD },
    { 0, -1, CMG__DELTA_SHRANK },
    { -1, 5, CMG__DELTA_SHRANK },
    { INT64_MIN + 1, 0, CMG__DELTA_SHRANK },
  };
  struct cmg__delta c;

  for (size_t i = 0; i < N(cases); i++) {
    memset(&c, 0, sizeof(c));
    c.delta_bytes = cases[i].bytes;
    c.delta_count = cases[i].count;
    is_int(cmg__delta_what(&c), cases[i].want,
           "%lld bytes and %lld allocations: %s", (long long)cases[i].bytes,
           (long long)cases[i].count, what_names[cases[i].want]);
  }
}

static void
test_shown(void)
{
  static const struct {
    int64_t delta;
    uint64_t now, min;
    bool want;
  } cases[] = {
    { 4096, 4096, 4096, true }, { 4095, 8192, 4096, false },
    { -4096, 0, 4096, true },   { -4095, 0, 4096, false },
    { 0, 4096, 4096, true },    { 0, 4095, 4096, false },
    { 0, 0, 0, true },
  };
  struct cmg__delta c;

  for (size_t i = 0; i < N(cases); i++) {
    memset(&c, 0, sizeof(c));
    c.delta_bytes = cases[i].delta;
    c.delta_count = cases[i].delta > 0 ? 1 : cases[i].delta < 0 ? -1 : 0;
    c.new_bytes = cases[i].now;
    is_int(cmg__delta_shown(&c, cases[i].min), cases[i].want,
           "a change of %lld holding %llu, --min-bytes %llu: %s",
           (long long)cases[i].delta, (unsigned long long)cases[i].now,
           (unsigned long long)cases[i].min,
           cases[i].want ? "shown" : "not shown");
  }
}

/* ---- two views ------------------------------------------------------------ */

struct side_group {
  uint32_t stack;
  const char *api, *kind;
  uint32_t device; /* a row of the view */
  uint64_t count, bytes;
  uint32_t rule;
};

static void
make_view(struct cmg__view *v, struct cmg__view_leak *leaks,
          struct cmg__view_device *devices, const int *ordinals, size_t n_dev,
          const struct side_group *g, size_t n)
{
  memset(v, 0, sizeof(*v));
  for (size_t i = 0; i < n_dev; i++) {
    memset(&devices[i], 0, sizeof(devices[i]));
    devices[i].ordinal = ordinals[i];
  }
  for (size_t i = 0; i < n; i++) {
    memset(&leaks[i], 0, sizeof(leaks[i]));
    leaks[i].stack = g[i].stack;
    leaks[i].api = (char *)g[i].api;
    leaks[i].kind = (char *)g[i].kind;
    leaks[i].by_kind = cmg__leak_class_of_kind(g[i].kind);
    leaks[i].device = g[i].device;
    leaks[i].count = g[i].count;
    leaks[i].bytes = g[i].bytes;
    leaks[i].rule = g[i].rule;
  }
  v->leaks = leaks;
  v->n_leaks = n;
  v->devices = devices;
  v->n_devices = n_dev;
}

struct want {
  uint32_t stack;
  int device;
  const char *api, *kind;
  uint64_t base_bytes, new_bytes;
  int64_t delta_count;
};

static void
test_of(void)
{
  /* BASE numbers its rows 0 → ordinal 0, 1 → ordinal 1; NEW the other way
   * round, so rows and ordinals differ. */
  static const int base_ord[] = { 0, 1 }, new_ord[] = { 1, 0 };
  static const struct side_group base_g[] = {
    { 1, "cudaMalloc", "device", 0, 2, 200, NONE },     /* shrank to 100 */
    { 2, "cudaMalloc", "device", 0, 1, 50, NONE },      /* gone */
    { 3, "cudaMalloc", "device", 1, 1, 700, NONE },     /* held */
    { 4, "cudaMalloc", "device", 0, 1, 10, NONE },      /* held, smaller */
    { 5, "cudaMalloc", "device", 0, 9, 9000, 0 },       /* suppressed */
    { 6, "cuMemHostAlloc", "host", NONE, 1, 64, NONE }, /* shrank to 0 */
    { 7, "cudaMalloc", "device", 1, 1, 20, NONE },      /* same bytes, more */
  };
  static const struct side_group new_g[] = {
    { 1, "cudaMalloc", "device", 1, 1, 100, NONE },
    { 3, "cudaMalloc", "device", 0, 1, 700, NONE },
    { 4, "cudaMalloc", "device", 1, 1, 10, NONE },
    { 1, "cudaMalloc", "device", 0, 1, 5000, NONE },       /* device 1: new */
    { 1, "cudaMallocManaged", "device", 1, 3, 300, NONE }, /* another API */
    { 1, "cudaMalloc", "graph", 1, 1, 1000, NONE },        /* another kind */
    { 5, "cudaMalloc", "device", 1, 1, 1, 0 },             /* suppressed */
    { NONE, "cuMemAlloc_v2", "device", 1, 1, 4096, NONE },
    { 7, "cudaMalloc", "device", 0, 4, 20, NONE },
  };
  /* clang-format off */
  static const struct want want[] = {
    { 1, 1, "cudaMalloc", "device", 0, 5000, 1 },
    { NONE, 0, "cuMemAlloc_v2", "device", 0, 4096, 1 },
    { 1, 0, "cudaMalloc", "graph", 0, 1000, 1 },
    { 1, 0, "cudaMallocManaged", "device", 0, 300, 3 },
    { 7, 1, "cudaMalloc", "device", 20, 20, 3 },
    { 3, 1, "cudaMalloc", "device", 700, 700, 0 },
    { 4, 0, "cudaMalloc", "device", 10, 10, 0 },
    { 1, 0, "cudaMalloc", "device", 200, 100, -1 },
    { 6, -1, "cuMemHostAlloc", "host", 64, 0, -1 },
    { 2, 0, "cudaMalloc", "device", 50, 0, -1 },
  };
  /* clang-format on */
  struct cmg__view_leak bl[N(base_g)], nl[N(new_g)];
  struct cmg__view_device bd[2], nd[2];
  struct cmg__view base, now;
  size_t n = 99;

  make_view(&base, bl, bd, base_ord, 2, base_g, N(base_g));
  make_view(&now, nl, nd, new_ord, 2, new_g, N(new_g));
  struct cmg__delta *c = cmg__delta_of(&base, &now, &n);
  ok(c != NULL, "the changes are made");
  is_int(n, N(want), "one per key, the suppressed in neither side");
  for (size_t i = 0; c != NULL && i < N(want) && i < n; i++) {
    const struct want *w = &want[i];
    bool same =
        c[i].stack == w->stack && c[i].device == w->device &&
        strcmp(c[i].api, w->api) == 0 && strcmp(c[i].kind, w->kind) == 0 &&
        c[i].base_bytes == w->base_bytes && c[i].new_bytes == w->new_bytes &&
        c[i].delta_bytes == (int64_t)w->new_bytes - (int64_t)w->base_bytes &&
        c[i].delta_count == w->delta_count;

    ok(same, "#%zu: stack %d, device %d, %s %s: %llu to %llu bytes", i,
       (int)w->stack, w->device, w->api, w->kind,
       (unsigned long long)w->base_bytes, (unsigned long long)w->new_bytes);
    if (!same)
      printf("#   got stack %d, device %d, %s %s: %llu to %llu, %lld\n",
             (int)c[i].stack, c[i].device, c[i].api, c[i].kind,
             (unsigned long long)c[i].base_bytes,
             (unsigned long long)c[i].new_bytes, (long long)c[i].delta_count);
  }
  ok(c != NULL && n > 7 && c[7].base_count == 2 && c[7].new_count == 1,
     "each side's count kept");
  ok(c != NULL && n > 8 && c[2].class == CMG__LEAK_CLASS_GRAPH &&
         c[8].class == CMG__LEAK_CLASS_OTHER &&
         c[0].class == CMG__LEAK_CLASS_LEAKED,
     "each change keeps its group's class");
  ok(c != NULL && n > 0 && c[0].api == nl[3].api,
     "and points at the view's strings");
  free(c);

  /* One view's two rows of one ordinal (matched by UUID, numbered alike):
   * one key, summed. */
  static const int twice_ord[] = { 0, 0 };
  static const struct side_group twice_g[] = {
    { 1, "cudaMalloc", "device", 0, 1, 30, NONE },
    { 1, "cudaMalloc", "device", 1, 2, 40, NONE },
  };
  make_view(&now, nl, nd, twice_ord, 2, twice_g, N(twice_g));
  make_view(&base, bl, bd, base_ord, 2, base_g, 0);
  c = cmg__delta_of(&base, &now, &n);
  ok(c != NULL && n == 1 && c[0].new_bytes == 70 && c[0].new_count == 3 &&
         c[0].delta_bytes == 70,
     "two groups of one key in a view are summed");
  free(c);
  make_view(&now, nl, nd, new_ord, 2, new_g, 0);
  c = cmg__delta_of(&base, &now, &n);
  ok(c != NULL && n == 0, "two empty views: no change");
  free(c);
}

/* Ties: by the change in allocations, then by key. */
static void
test_ties(void)
{
  static const int ord[] = { 0 };
  static const struct side_group base_g[] = {
    { 9, "cudaMalloc", "device", 0, 5, 100, NONE },
    { 8, "cudaMalloc", "device", 0, 1, 100, NONE },
    { 3, "cudaMalloc", "device", 0, 1, 100, NONE },
  };
  static const struct side_group new_g[] = {
    { 1, "cudaMalloc", "device", 0, 1, 50, NONE },
    { 2, "cudaMalloc", "device", 0, 3, 50, NONE },
  };
  static const uint32_t want[] = { 2, 1, 9, 3, 8 };
  struct cmg__view_leak bl[3], nl[2];
  struct cmg__view_device bd[1], nd[1];
  struct cmg__view base, now;
  size_t n;
  bool same = true;

  make_view(&base, bl, bd, ord, 1, base_g, N(base_g));
  make_view(&now, nl, nd, ord, 1, new_g, N(new_g));
  struct cmg__delta *c = cmg__delta_of(&base, &now, &n);
  for (size_t i = 0; c != NULL && i < N(want); i++)
    same = same && n == N(want) && c[i].stack == want[i];
  ok(c != NULL && same,
     "equal changes in bytes: the larger change in allocations first, "
     "then by stack");
  free(c);
}

static void
test_device(void)
{
  struct cmg__view_device d[3];
  struct cmg__view v;

  memset(&v, 0, sizeof(v));
  memset(d, 0, sizeof(d));
  d[0].ordinal = 2, d[1].ordinal = 0, d[2].ordinal = 7;
  v.devices = d;
  v.n_devices = 3;
  ok(cmg__delta_device(&v, 0) == &d[1], "the device of ordinal 0: row 1");
  ok(cmg__delta_device(&v, 7) == &d[2], "of ordinal 7: row 2");
  ok(cmg__delta_device(&v, 1) == NULL, "an ordinal with no row: none");
  ok(cmg__delta_device(&v, -1) == NULL, "host memory: none");
}

/* diff data/job-a.json data/job-b.json, as its golden output says. */
static void
test_fixtures(void)
{
  const char *srcdir = getenv("srcdir");
  char path[1024], err[CMG__TOOL_ERR_MAX];
  struct cmg__model_report r;
  struct cmg__index ix;
  struct cmg__view v[2];
  int rc = 0;

  cmg__index_init(&ix);
  for (int i = 0; i < 2; i++) {
    cmg__view_init(&v[i], &ix, false);
    snprintf(path, sizeof(path), "%s/tests/reader/data/job-%c.json",
             srcdir && *srcdir ? srcdir : ".", 'a' + i);
    if (cmg__read_report(path, &r, err, sizeof(err)) != 0) {
      printf("# %s: %s\n", path, err);
      rc = -1;
    } else if (cmg__view_add(&v[i], &r) != 0) {
      rc = -1;
    }
    cmg__read_report_free(&r);
    cmg__view_sort(&v[i]);
  }
  is_int(rc, 0, "job-a and job-b are read into two views over one index");

  size_t n = 0, what[3] = { 0, 0, 0 };
  int64_t leaked = 0;
  struct cmg__delta *c = cmg__delta_of(&v[0], &v[1], &n);
  for (size_t i = 0; c != NULL && i < n; i++) {
    what[cmg__delta_what(&c[i])]++;
    if (c[i].class == CMG__LEAK_CLASS_LEAKED)
      leaked += c[i].delta_bytes;
  }
  ok(what[0] == 3 && what[1] == 0 && what[2] == 7,
     "3 leak groups grew, 7 shrank, 0 held");
  is_int(leaked, -554700800, "leaked -554700800 bytes");
  ok(n > 0 && c[0].delta_bytes == 3221225472ll && c[0].device == 1 &&
         strcmp(c[0].api, "cudaMalloc") == 0 && c[0].base_bytes == 0,
     "the first: grew by 3.0 GiB, cudaMalloc on device 1, new");
  ok(n == 10 && c[9].delta_bytes == -4096 && c[9].stack == NONE,
     "the last: shrank by 4.0 KiB, with no stack");
  free(c);
  cmg__view_free(&v[0]);
  cmg__view_free(&v[1]);
  cmg__index_free(&ix);
}

int
main(void)
{
  test_what();
  test_shown();
  test_of();
  test_ties();
  test_device();
  test_fixtures();
  return done_testing();
}
