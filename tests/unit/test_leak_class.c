/*
 * Unit tests of leak_class.c, how a leak group counts: device memory left
 * open is leaked, pinned host and imported memory is listed but is no
 * device memory, graph pools and contexts are the driver's and no leak, a
 * suppressed group counts as suppressed whatever its kind; which groups
 * --min-bytes and --top list, and the totals of each class.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "reader/model/leak_class.h"
#include "reader/model/view.h"
#include "reader/tool.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const class_names[] = {
  [CMG__LEAK_CLASS_LEAKED] = "leaked",
  [CMG__LEAK_CLASS_OTHER] = "other",
  [CMG__LEAK_CLASS_GRAPH] = "graph",
  [CMG__LEAK_CLASS_CONTEXT] = "context",
  [CMG__LEAK_CLASS_SUPPRESSED] = "suppressed",
};

/* Every kind a report gives (docs/report-format.md), and some it does not. */
static void
test_kinds(void)
{
  static const struct {
    const char *kind;
    bool device;
    enum cmg__leak_class class;
  } cases[] = {
    { "device", true, CMG__LEAK_CLASS_LEAKED },
    { "array", true, CMG__LEAK_CLASS_LEAKED },
    { "vmm", true, CMG__LEAK_CLASS_LEAKED },
    { "graph", true, CMG__LEAK_CLASS_GRAPH },
    { "context", true, CMG__LEAK_CLASS_CONTEXT },
    { "host", false, CMG__LEAK_CLASS_OTHER },
    { "import", false, CMG__LEAK_CLASS_OTHER },
    { "vmm_host", false, CMG__LEAK_CLASS_OTHER },
    { "", false, CMG__LEAK_CLASS_OTHER },
    { "Device", false, CMG__LEAK_CLASS_OTHER },
    { "devices", false, CMG__LEAK_CLASS_OTHER },
    { "graphs", false, CMG__LEAK_CLASS_OTHER },
  };

  for (size_t i = 0; i < N(cases); i++) {
    is_int(cmg__leak_class_is_device_kind(cases[i].kind), cases[i].device,
           "kind '%s' is %sdevice memory", cases[i].kind,
           cases[i].device ? "" : "no ");
    is_int(cmg__leak_class_of_kind(cases[i].kind), cases[i].class,
           "kind '%s' is %s", cases[i].kind, class_names[cases[i].class]);
  }
}

static void
test_classes(void)
{
  static const struct {
    enum cmg__leak_class class;
    bool in_leaks, device;
  } cases[] = {
    { CMG__LEAK_CLASS_LEAKED, true, true },
    { CMG__LEAK_CLASS_OTHER, true, false },
    { CMG__LEAK_CLASS_GRAPH, false, true },
    { CMG__LEAK_CLASS_CONTEXT, false, true },
    { CMG__LEAK_CLASS_SUPPRESSED, false, false },
  };

  for (size_t i = 0; i < N(cases); i++) {
    const char *name = class_names[cases[i].class];

    is_int(cmg__leak_class_in_leaks(cases[i].class), cases[i].in_leaks,
           "%s groups are %slisted among the leaks", name,
           cases[i].in_leaks ? "" : "not ");
    is_int(cmg__leak_class_is_device(cases[i].class), cases[i].device,
           "%s groups are %sdevice memory of the flame graph", name,
           cases[i].device ? "" : "not ");
  }
}

/* A group's class: its kind's, until a rule hides it. */
static void
test_of(void)
{
  static const enum cmg__leak_class kinds[] = { CMG__LEAK_CLASS_LEAKED,
                                                CMG__LEAK_CLASS_OTHER,
                                                CMG__LEAK_CLASS_GRAPH,
                                                CMG__LEAK_CLASS_CONTEXT };
  struct cmg__view_leak l;

  for (size_t i = 0; i < N(kinds); i++) {
    memset(&l, 0, sizeof(l));
    l.by_kind = kinds[i];
    l.rule = CMG__TOOL_NONE;
    is_int(cmg__leak_class_of(&l), kinds[i],
           "a group of class %s, without a rule", class_names[kinds[i]]);
    l.rule = 0;
    is_int(cmg__leak_class_of(&l), CMG__LEAK_CLASS_SUPPRESSED,
           "a group of class %s hidden by rule 0 is suppressed",
           class_names[kinds[i]]);
    l.rule = 7;
    is_int(cmg__leak_class_of(&l), CMG__LEAK_CLASS_SUPPRESSED,
           "a group of class %s hidden by rule 7 is suppressed",
           class_names[kinds[i]]);
  }
}

static void
test_is_listed(void)
{
  static const struct {
    const char *what;
    uint64_t bytes;
    uint32_t rule;
    uint64_t min_bytes;
    size_t top, listed;
    bool want;
  } cases[] = {
    { "no options: listed", 1, CMG__TOOL_NONE, 0, 0, 0, true },
    { "no options: an empty group too", 0, CMG__TOOL_NONE, 0, 0, 0, true },
    { "after many, with no --top", 1, CMG__TOOL_NONE, 0, 0, 100000, true },
    { "--min-bytes: at the bound", 4096, CMG__TOOL_NONE, 4096, 0, 0, true },
    { "--min-bytes: one byte below", 4095, CMG__TOOL_NONE, 4096, 0, 0, false },
    { "--top 3: the third", 1, CMG__TOOL_NONE, 0, 3, 2, true },
    { "--top 3: the fourth", 1, CMG__TOOL_NONE, 0, 3, 3, false },
    { "--top 1: the first", 1, CMG__TOOL_NONE, 0, 1, 0, true },
    { "--top and --min-bytes: both must pass", 10, CMG__TOOL_NONE, 100, 5, 0,
      false },
    { "suppressed: never", 1 << 20, 0, 0, 0, 0, false },
    { "suppressed by a later rule: never", 1 << 20, 3, 0, 0, 0, false },
  };
  struct cmg__view_leak l;

  for (size_t i = 0; i < N(cases); i++) {
    memset(&l, 0, sizeof(l));
    l.by_kind = CMG__LEAK_CLASS_LEAKED;
    l.bytes = cases[i].bytes;
    l.rule = cases[i].rule;
    is_int(cmg__leak_class_is_listed(&l, cases[i].min_bytes, cases[i].top,
                                     cases[i].listed),
           cases[i].want, "%s", cases[i].what);
  }
}

/* Totals: every group of the class, whatever --top and --min-bytes say;
 * a suppressed group counts once, as suppressed. */
static void
test_total(void)
{
  static const struct {
    enum cmg__leak_class by_kind;
    uint32_t rule;
    uint64_t bytes, count;
  } groups[] = {
    { CMG__LEAK_CLASS_LEAKED, CMG__TOOL_NONE, 1000, 1 },
    { CMG__LEAK_CLASS_LEAKED, CMG__TOOL_NONE, 24, 3 },
    { CMG__LEAK_CLASS_LEAKED, 0, 500, 5 },
    { CMG__LEAK_CLASS_OTHER, CMG__TOOL_NONE, 64, 2 },
    { CMG__LEAK_CLASS_OTHER, 1, 7, 7 },
    { CMG__LEAK_CLASS_GRAPH, CMG__TOOL_NONE, 1 << 20, 1 },
    { CMG__LEAK_CLASS_CONTEXT, CMG__TOOL_NONE, 300, 1 },
    { CMG__LEAK_CLASS_CONTEXT, CMG__TOOL_NONE, 200, 1 },
  };
  static const struct {
    enum cmg__leak_class class;
    uint64_t bytes, count;
  } want[] = {
    { CMG__LEAK_CLASS_LEAKED, 1024, 4 },
    { CMG__LEAK_CLASS_OTHER, 64, 2 },
    { CMG__LEAK_CLASS_GRAPH, 1 << 20, 1 },
    { CMG__LEAK_CLASS_CONTEXT, 500, 2 },
    { CMG__LEAK_CLASS_SUPPRESSED, 507, 12 },
  };
  struct cmg__view_leak leaks[N(groups)];
  struct cmg__view v;
  uint64_t bytes, count;

  memset(&v, 0, sizeof(v));
  memset(leaks, 0, sizeof(leaks));
  for (size_t i = 0; i < N(groups); i++) {
    leaks[i].by_kind = groups[i].by_kind;
    leaks[i].rule = groups[i].rule;
    leaks[i].bytes = groups[i].bytes;
    leaks[i].count = groups[i].count;
  }
  v.leaks = leaks;
  v.n_leaks = N(groups);
  for (size_t i = 0; i < N(want); i++) {
    cmg__leak_class_total(&v, want[i].class, &bytes, &count);
    ok(bytes == want[i].bytes && count == want[i].count,
       "%s: %llu bytes in %llu allocations", class_names[want[i].class],
       (unsigned long long)want[i].bytes, (unsigned long long)want[i].count);
    if (bytes != want[i].bytes || count != want[i].count)
      printf("#   got %llu bytes in %llu\n", (unsigned long long)bytes,
             (unsigned long long)count);
  }

  v.n_leaks = 0;
  bytes = count = 12345;
  cmg__leak_class_total(&v, CMG__LEAK_CLASS_LEAKED, &bytes, &count);
  ok(bytes == 0 && count == 0, "a view without groups: zero");

  /* Sums stop at INT64_MAX, as JSON numbers can carry them. */
  leaks[0].bytes = leaks[1].bytes = (uint64_t)INT64_MAX - 10;
  v.n_leaks = 2;
  cmg__leak_class_total(&v, CMG__LEAK_CLASS_LEAKED, &bytes, &count);
  is_u64(bytes, (uint64_t)INT64_MAX, "a sum past INT64_MAX stops there");
  is_u64(count, 4, "and the count is still exact");
}

int
main(void)
{
  test_kinds();
  test_classes();
  test_of();
  test_is_listed();
  test_total();
  return done_testing();
}
