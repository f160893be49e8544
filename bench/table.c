/*
 * The benchmark's output: the table on stdout, the same figures as JSON,
 * the targets with PASS or MISS, and the check that every figure came back
 * from the children.  Everything here reads what main.c collected into
 * results.c (cmgb_get, cmgb_plan, cmgb_machine); nothing here runs
 * anything or calls into main.c.
 */
#include "config.h"

#include <errno.h>
#include <gnu/libc-version.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmgbench.h"

/* ---- the table -------------------------------------------------------- */

static const char *const path_names[] = { "direct", "dlsym", "getproc",
                                          "runtime" };
#define NPATHS 4

static const char *
stacks_name(int depth)
{
  static char buf[4][16];
  static int i;
  char *b = buf[i++ % 4];
  if (depth == 0)
    return "off";
  snprintf(b, 16, "%d", depth);
  return b;
}

/* Worst (largest) added cost over the paths of one "calls" child. */
static double
worst_of(const char *prefix)
{
  double w = NAN;
  for (int p = 0; p < NPATHS; p++) {
    double a = cmgb_get("%s.%s.added_med", prefix, path_names[p]);
    if (isnan(w) || a > w)
      w = a;
  }
  return w;
}

static double
worst_added(int depth)
{
  char prefix[32];
  snprintf(prefix, sizeof(prefix), "calls.%d", depth);
  return worst_of(prefix);
}

static double
worst_repeat(int i)
{
  char prefix[32];
  snprintf(prefix, sizeof(prefix), "repeat.%d", i);
  return worst_of(prefix);
}

/* The stacks-off target: the median over section 1's process and the
 * repeats of each process's worst path, so that the verdict does not hang
 * on the state one process met; the spread is printed beside it. */
static double
stacks_off_added(double *lo, double *hi)
{
  double w[65];
  size_t n = 0;
  w[n++] = worst_added(0);
  for (int i = 0; i < cmgb_plan->repeats && n < 65; i++)
    w[n++] = worst_repeat(i);
  for (size_t i = 0; i < n; i++)
    if (isnan(w[i]))
      return NAN;
  double med = cmgb_median(w, n); /* sorts w */
  if (lo != NULL)
    *lo = w[0], *hi = w[n - 1];
  return med;
}

/* The timeline's cost: over the pairs of repeats with and without it, the
 * median of each pair's difference in added ns, averaged over the paths. */
static double
timeline_added(void)
{
  double diff[64];
  int n = 0;
  for (int i = 0; i < cmgb_plan->repeats && n < 64; i++) {
    double sum = 0;
    for (int p = 0; p < NPATHS; p++)
      sum += cmgb_get("repeat.%d.%s.added_med", i, path_names[p]) -
             cmgb_get("untimed.%d.%s.added_med", i, path_names[p]);
    if (isnan(sum))
      return NAN;
    diff[n++] = sum / NPATHS;
  }
  return n > 0 ? cmgb_median(diff, (size_t)n) : NAN;
}

static double
bytes_per_alloc(long n)
{
  return (cmgb_get("mem.%ld.with.rss_delta", n) -
          cmgb_get("mem.%ld.bare.rss_delta", n)) /
         (double)n;
}

static double
bytes_per_stack(void)
{
  return (cmgb_get("mem.stacks.distinct.rss_delta") -
          cmgb_get("mem.stacks.single.rss_delta")) /
         (double)cmgb_plan->mem_stacks;
}

static double
worst_thread_ratio(void)
{
  double a = cmgb_get("threads.each.0.with.ratio_med");
  double b = cmgb_get("threads.each.32.with.ratio_med");
  return a < b ? a : b;
}

/* Every figure of the table must have come back: a child that printed
 * "ok" but left a figure out is a cmgb_broken harness too. */
static void
require(const char *key)
{
  if (isnan(cmgb_get("%s", key))) {
    fprintf(stderr, "cmgbench: no figure %s\n", key);
    cmgb_broken = 1;
  }
}

void
cmgb_check_complete(void)
{
  char key[112];
  require("calls.0.floor.ns_med");
  for (int d = 0; d < CMGB_NDEPTHS; d++)
    for (int p = 0; p < NPATHS; p++) {
      snprintf(key, sizeof(key), "calls.%d.%s.added_med", cmgb_depths[d],
               path_names[p]);
      require(key);
    }
  static const char *const v[] = { "floor", "bare", "with" };
  for (int l = 0; l < 2; l++)
    for (int d = 0; d < 2; d++)
      for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof(key), "threads.%s.%d.%s.ratio_med",
                 cmgb_layouts[l], cmgb_thread_depths[d], v[i]);
        require(key);
      }
  for (int d = 0; d < 2; d++)
    for (const char *s = cmgb_plan->scale_live; *s;) {
      long n = strtol(s, (char **)&s, 10);
      snprintf(key, sizeof(key), "scale.%d.%ld.churn.added_med",
               cmgb_thread_depths[d], n);
      require(key);
      if (*s == ',')
        s++;
    }
  for (int i = 0; i < 2; i++) {
    snprintf(key, sizeof(key), "mem.%ld.with.rss_delta",
             cmgb_plan->mem_live[i]);
    require(key);
    snprintf(key, sizeof(key), "mem.%ld.bare.rss_delta",
             cmgb_plan->mem_live[i]);
    require(key);
  }
  cmgb_modes_require();
  cmgb_deep_require();
  cmgb_vmm_require();
  require("mem.stacks.distinct.rss_delta");
  require("report.write.s_med");
  cmgb_snapshot_require();
  for (int i = 0; i < cmgb_plan->repeats; i++)
    for (int p = 0; p < NPATHS; p++) {
      snprintf(key, sizeof(key), "repeat.%d.%s.added_med", i, path_names[p]);
      require(key);
      snprintf(key, sizeof(key), "untimed.%d.%s.added_med", i, path_names[p]);
      require(key);
    }
}

struct target {
  const char *name;
  double value, limit;
  const char *unit;
  bool at_most;
};

/* Room for more rows than there are: each feature's budget gets one. */
static struct target targets[16];
static int ntargets;

static void
make_targets(void)
{
  int i = 0;
  targets[i++] =
      (struct target){ "added per pair, stacks off (median process)",
                       stacks_off_added(NULL, NULL), 25, "ns", true };
  targets[i++] =
      (struct target){ "added per pair, 32 frames with frame pointers",
                       cmgb_modes_fp32(), 300, "ns", true };
  targets[i++] = (struct target){ "32 frames without them: auto minus dwarf",
                                  cmgb_modes_nofp32_extra(), 10, "ns", true };
  targets[i++] = (struct target){ "added per pair, 32 frames (worst path)",
                                  worst_added(32), 1500, "ns", true };
  targets[i++] = (struct target){ "the timeline: added per pair (median)",
                                  timeline_added(), 15, "ns", true };
  targets[i++] = (struct target){ "2 threads / 1 thread (one device each)",
                                  worst_thread_ratio(), 1.8, "x", false };
  targets[i++] =
      (struct target){ "bytes per live allocation",
                       bytes_per_alloc(cmgb_plan->mem_live[1]), 64, "B", true };
  targets[i++] =
      (struct target){ "report written", cmgb_get("report.write.s_med"), 2, "s",
                       true };
  targets[i++] = (struct target){ "report read and summarized",
                                  cmgb_get("report.read.s_med"), 2, "s", true };
  targets[i++] =
      (struct target){ "report's HTML page, size", cmgb_get("html.bytes") / 1e6,
                       20, "MB", true };
  targets[i++] =
      (struct target){ "report's HTML page, ready in chromium",
                       cmgb_get("html.ready.ms_med") / 1e3, 3, "s", true };
  targets[i++] =
      (struct target){ "framework-shaped pair at the default options: added",
                       cmgb_framework_added(), 400, "ns", true };
  targets[i++] = (struct target){ "at stack_depth=8, 254 frames' added / 32 "
                                  "frames'",
                                  cmgb_deep_ratio(), 1.25, "x", true };
  ntargets = i;
}

static const char *
verdict(const struct target *t)
{
  if (isnan(t->value))
    return "n/a";
  return (t->at_most ? t->value <= t->limit : t->value >= t->limit) ? "PASS"
                                                                    : "MISS";
}

/* One row per repeat process whose figures are under prefix. */
static void
print_repeat_rows(const char *prefix)
{
  for (int i = 0; i < cmgb_plan->repeats; i++) {
    printf("   %-7d %6.0f | %-5s", i + 1,
           cmgb_get("%s.%d.direct.bare_med", prefix, i), "");
    for (int p = 0; p < NPATHS; p++)
      printf("%+9.0f",
             cmgb_get("%s.%d.%s.added_med", prefix, i, path_names[p]));
    printf("\n");
  }
}

static void
print_repeats(void)
{
  double lo = NAN, hi = NAN;
  printf("\n5. Stacks off again, in %d short processes spread over the run "
         "(%d rounds each).\n   This VM moves between a fast and a slow "
         "state (docs/PERFORMANCE.md); the bare\n   direct pair (w/o) "
         "tells which one a process met.\n",
         cmgb_plan->repeats, cmgb_plan->repeat_rounds);
  printf("   %-7s %6s | %-5s", "process", "w/o", "added");
  for (int p = 0; p < NPATHS; p++)
    printf("%9s", path_names[p]);
  printf("\n");
  print_repeat_rows("repeat");
  double med = stacks_off_added(&lo, &hi);
  printf("   the same with timeline=0, each right after its pair above:\n");
  print_repeat_rows("untimed");
  printf("   the timeline's cost, the median over pairs of the difference "
         "(mean of the paths): %+.1f ns\n",
         timeline_added());
  printf("   worst path per process, these and section 1's: median %+.0f "
         "ns, from %+.0f to %+.0f\n   (the stacks-off target below is "
         "this median)\n",
         med, lo, hi);
}

void
cmgb_print_table(void)
{
  make_targets();
  printf("\ncumemguard benchmark (%s run)\n", cmgb_plan->mode);
  printf("machine: %s, %ld cores, %s, glibc %s, gcc %s, clock %s\n",
         cmgb_machine.cpu, cmgb_machine.cores, cmgb_machine.kernel,
         gnu_get_libc_version(), __VERSION__, cmgb_machine.clocksource);
  printf("load average (1 min): %.2f at the start, %.2f at the end%s\n",
         cmgb_machine.load_start, cmgb_machine.load_end,
         cmgb_machine.load_start > 0.5 || cmgb_machine.load_end > 1.5
             ? " (other processes were running: figures are noisier)"
             : "");
  printf("against: the simulated driver and runtime (tests/sim); "
         "interposer %s\n",
         cmgb_lib);

  printf("\n1. Per-call cost: ns per alloc+free pair of 1 MiB, called %d "
         "frames deep.\n   Without and with the interposer in the same "
         "process, interleaved; median of %d rounds (min).\n",
         CMGB_CALL_DEPTH, cmgb_plan->rounds);
  printf("   floor (empty pair through pointers): %.1f (%.1f)\n",
         cmgb_get("calls.0.floor.ns_med"), cmgb_get("calls.0.floor.ns_min"));
  printf("   the least any interposer with these guarantees adds: 4 locked "
         "read-modify-writes\n   (limit reserve/release, ledger "
         "insert/remove) and 2 coarse clock reads: %.1f (%.1f)\n",
         cmgb_get("calls.0.least.ns_med"), cmgb_get("calls.0.least.ns_min"));
  printf("   %-8s %-6s %14s %14s %16s %7s  %s\n", "path", "stacks", "without",
         "with", "added", "ratio", "target");
  for (int d = 0; d < CMGB_NDEPTHS; d++)
    for (int p = 0; p < NPATHS; p++) {
      const char *k = path_names[p];
      int dd = cmgb_depths[d];
      double added = cmgb_get("calls.%d.%s.added_med", dd, k);
      double limit = dd == 32 ? 1500 : NAN;
      char target[32] = "";
      if (!isnan(limit))
        snprintf(target, sizeof(target), "<= %4.0f %s", limit,
                 isnan(added)     ? "n/a"
                 : added <= limit ? "PASS"
                                  : "MISS");
      printf("   %-8s %-6s %6.0f (%5.0f) %6.0f (%5.0f) %+7.0f (%+6.0f) "
             "%6.2fx  %s\n",
             k, stacks_name(dd), cmgb_get("calls.%d.%s.bare_med", dd, k),
             cmgb_get("calls.%d.%s.bare_min", dd, k),
             cmgb_get("calls.%d.%s.with_med", dd, k),
             cmgb_get("calls.%d.%s.with_min", dd, k), added,
             cmgb_get("calls.%d.%s.added_min", dd, k),
             cmgb_get("calls.%d.%s.ratio_med", dd, k), target);
    }
  printf("   stacks off: the target (at most 25 ns) is judged on the median "
         "of several processes, in 5.\n");
  cmgb_modes_print();

  printf("\n2. Threads: direct path, million pairs/s (median of %d rounds); "
         "2 threads vs 1.\n   empty: the empty pair, what this machine's "
         "cores give to work sharing nothing.\n   cpu: CPU ns per pair "
         "and thread with the interposer; equal at 1 and 2 threads when\n"
         "   the threads share nothing, even if the machine runs them on "
         "one core.\n",
         cmgb_plan->rounds);
  printf("   %-8s %-6s %6s | %6s %6s %6s | %6s %6s %6s | %6s %6s\n", "devices",
         "stacks", "empty", "w/o 1", "2", "ratio", "with 1", "2", "ratio",
         "cpu 1", "2");
  for (int l = 0; l < 2; l++)
    for (int d = 0; d < 2; d++) {
      const char *L = cmgb_layouts[l];
      int dd = cmgb_thread_depths[d];
      printf("   %-8s %-6s %5.2fx | %6.2f %6.2f %5.2fx | %6.2f %6.2f %5.2fx "
             "| %6.0f %6.0f\n",
             l == 0 ? "one each" : "same one", stacks_name(dd),
             cmgb_get("threads.%s.%d.floor.ratio_med", L, dd),
             cmgb_get("threads.%s.%d.bare.t1_med", L, dd) / 1e6,
             cmgb_get("threads.%s.%d.bare.t2_med", L, dd) / 1e6,
             cmgb_get("threads.%s.%d.bare.ratio_med", L, dd),
             cmgb_get("threads.%s.%d.with.t1_med", L, dd) / 1e6,
             cmgb_get("threads.%s.%d.with.t2_med", L, dd) / 1e6,
             cmgb_get("threads.%s.%d.with.ratio_med", L, dd),
             cmgb_get("threads.%s.%d.with.cpu1_med", L, dd),
             cmgb_get("threads.%s.%d.with.cpu2_med", L, dd));
    }

  printf("\n3. Scale: ns per pair with N live allocations held (direct path)."
         "\n   pair: alloc+free of one more; churn: free a random held one "
         "and allocate again.\n");
  printf("   %-8s %-6s %8s %8s %8s   %8s %8s %8s\n", "live", "stacks",
         "pair w/o", "with", "added", "churn w/o", "with", "added");
  for (int d = 0; d < 2; d++) {
    const char *s = cmgb_plan->scale_live;
    while (*s) {
      long n = strtol(s, (char **)&s, 10);
      int dd = cmgb_thread_depths[d];
      printf("   %-8ld %-6s %8.0f %8.0f %+8.0f   %8.0f %8.0f %+8.0f\n", n,
             stacks_name(dd), cmgb_get("scale.%d.%ld.pair.bare_med", dd, n),
             cmgb_get("scale.%d.%ld.pair.with_med", dd, n),
             cmgb_get("scale.%d.%ld.pair.added_med", dd, n),
             cmgb_get("scale.%d.%ld.churn.bare_med", dd, n),
             cmgb_get("scale.%d.%ld.churn.with_med", dd, n),
             cmgb_get("scale.%d.%ld.churn.added_med", dd, n));
      if (*s == ',')
        s++;
    }
  }
  printf("   memory (RssAnon with the interposer minus without, fresh "
         "processes):\n");
  for (int i = 0; i < 2; i++)
    printf("     per live allocation, %ld live: %.1f B\n",
           cmgb_plan->mem_live[i], bytes_per_alloc(cmgb_plan->mem_live[i]));
  printf("     per interned stack (32 frames), %ld stacks: %.1f B\n",
         cmgb_plan->mem_stacks, bytes_per_stack());

  printf("\n4. Report: %ld live allocations from %ld stacks "
         "(allocated at %.0f ns each)\n",
         cmgb_plan->report_live, cmgb_plan->report_stacks,
         cmgb_get("report.fill_ns_per_alloc"));
  printf("   cmg_dump:          %.3f s (min %.3f), %.1f MB\n",
         cmgb_get("report.write.s_med"), cmgb_get("report.write.s_min"),
         cmgb_get("report.bytes") / 1e6);
  if (!isnan(cmgb_get("report.read.s_med"))) {
    printf("   cumemguard-report: %.3f s (min %.3f)\n",
           cmgb_get("report.read.s_med"), cmgb_get("report.read.s_min"));
    if (!isnan(cmgb_get("report.read_nosym.s_med")))
      printf("   cumemguard-report --no-symbolize: %.3f s (min %.3f)\n",
             cmgb_get("report.read_nosym.s_med"),
             cmgb_get("report.read_nosym.s_min"));
  } else
    printf("   cumemguard-report: %s\n", cmgb_tool_state);
  cmgb_print_page();

  print_repeats();

  printf("\nTargets (informational: a miss does not fail make bench)\n");
  for (int i = 0; i < ntargets; i++) {
    const struct target *t = &targets[i];
    char value[32] = "n/a";
    if (!isnan(t->value))
      snprintf(value, sizeof(value), "%.*f",
               strcmp(t->unit, "ns") == 0 || strcmp(t->unit, "B") == 0 ? 0 : 2,
               t->value);
    printf("   %-52s %10s %-2s  %s %6g %-2s  %s\n", t->name, value, t->unit,
           t->at_most ? "<=" : ">=", t->limit, t->unit, verdict(t));
  }
  cmgb_deep_print_floor();
  double least = cmgb_get("calls.0.least.ns_med");
  if (least > 25 * 0.8)
    printf("   (stacks off: the 4 locked read-modify-writes and 2 coarse "
           "clock reads that the\n    limit, the ledger and the timeline "
           "need take %.0f ns here alone; section 1.)\n",
           least);
  double ceiling = cmgb_get("threads.each.0.floor.ratio_med");
  if (ceiling < 1.8)
    printf("   (2 threads: the empty pair itself ran only %.2fx faster on 2 "
           "threads here, so this\n    machine could not show 1.8x for "
           "anything; compare the cpu columns.)\n",
           ceiling);
  if (cmgb_broken)
    printf("\nThe harness FAILED: a child did not complete (see above).\n");
  fflush(stdout);
}

int
cmgb_write_json(const char *path)
{
  make_targets();
  FILE *f = fopen(path, "w");
  if (f == NULL)
    return -errno;
  fprintf(f, "{\n  \"schema\": \"cumemguard-bench/1\",\n  \"mode\": ");
  cmgb_jstr(f, cmgb_plan->mode);
  fprintf(f, ",\n  \"complete\": %s,\n  \"machine\": {\"cpu\": ",
          cmgb_broken ? "false" : "true");
  cmgb_jstr(f, cmgb_machine.cpu);
  fprintf(f, ", \"cores\": %ld, \"kernel\": ", cmgb_machine.cores);
  cmgb_jstr(f, cmgb_machine.kernel);
  fputs(", \"glibc\": ", f);
  cmgb_jstr(f, gnu_get_libc_version());
  fputs(", \"compiler\": ", f);
  cmgb_jstr(f, "gcc " __VERSION__);
  fputs(", \"clocksource\": ", f);
  cmgb_jstr(f, cmgb_machine.clocksource);
  fputs(", \"loadavg_start\": ", f);
  cmgb_jnum(f, cmgb_machine.load_start);
  fputs(", \"loadavg_end\": ", f);
  cmgb_jnum(f, cmgb_machine.load_end);
  fprintf(f, "},\n  \"units\": {\"calls\": \"ns per alloc+free pair\", "
             "\"threads\": \"pairs per second; cpu: ns per pair\", "
             "\"scale\": \"ns per pair\", "
             "\"memory\": \"bytes\", \"report\": \"seconds\"},\n");
  fprintf(f,
          "  \"params\": {\"rounds\": %d, \"call_depth\": %d, "
          "\"alloc_bytes\": %d, \"held_bytes\": 256},\n",
          cmgb_plan->rounds, CMGB_CALL_DEPTH, 1 << 20);

  fputs("  \"floor\": {", f);
  cmgb_jstat(f, "ns", cmgb_get("calls.0.floor.ns_med"),
             cmgb_get("calls.0.floor.ns_min"));
  fputs("},\n  \"least_added\": {", f);
  cmgb_jstat(f, "ns", cmgb_get("calls.0.least.ns_med"),
             cmgb_get("calls.0.least.ns_min"));
  fputs("},\n  \"calls\": [", f);
  for (int d = 0; d < CMGB_NDEPTHS; d++)
    for (int p = 0; p < NPATHS; p++) {
      const char *k = path_names[p];
      int dd = cmgb_depths[d];
      fprintf(f, "%s\n    {\"path\": \"%s\", \"stack_depth\": %d, ",
              d + p ? "," : "", k, dd);
      cmgb_jstat(f, "without", cmgb_get("calls.%d.%s.bare_med", dd, k),
                 cmgb_get("calls.%d.%s.bare_min", dd, k));
      fputs(", ", f);
      cmgb_jstat(f, "with", cmgb_get("calls.%d.%s.with_med", dd, k),
                 cmgb_get("calls.%d.%s.with_min", dd, k));
      fputs(", ", f);
      cmgb_jstat(f, "added", cmgb_get("calls.%d.%s.added_med", dd, k),
                 cmgb_get("calls.%d.%s.added_min", dd, k));
      fputs(", \"ratio\": ", f);
      cmgb_jnum(f, cmgb_get("calls.%d.%s.ratio_med", dd, k));
      fputs("}", f);
    }
  fputs("\n  ],\n", f);
  cmgb_modes_json(f);
  fputs("  \"threads\": [", f);
  for (int l = 0; l < 2; l++)
    for (int d = 0; d < 2; d++) {
      const char *L = cmgb_layouts[l];
      int dd = cmgb_thread_depths[d];
      fprintf(f, "%s\n    {\"devices\": \"%s\", \"stack_depth\": %d",
              l + d ? "," : "", l == 0 ? "one each" : "same one", dd);
      static const char *const v[] = { "floor", "bare", "with" };
      static const char *const jv[] = { "empty_pair", "without", "with" };
      for (int i = 0; i < 3; i++) {
        fprintf(f, ", \"%s\": {", jv[i]);
        cmgb_jstat(f, "one_thread",
                   cmgb_get("threads.%s.%d.%s.t1_med", L, dd, v[i]),
                   cmgb_get("threads.%s.%d.%s.t1_min", L, dd, v[i]));
        fputs(", ", f);
        cmgb_jstat(f, "two_threads",
                   cmgb_get("threads.%s.%d.%s.t2_med", L, dd, v[i]),
                   cmgb_get("threads.%s.%d.%s.t2_min", L, dd, v[i]));
        fputs(", ", f);
        cmgb_jstat(f, "ratio",
                   cmgb_get("threads.%s.%d.%s.ratio_med", L, dd, v[i]),
                   cmgb_get("threads.%s.%d.%s.ratio_min", L, dd, v[i]));
        fputs(", ", f);
        cmgb_jstat(f, "cpu_ns_per_pair_one_thread",
                   cmgb_get("threads.%s.%d.%s.cpu1_med", L, dd, v[i]),
                   cmgb_get("threads.%s.%d.%s.cpu1_min", L, dd, v[i]));
        fputs(", ", f);
        cmgb_jstat(f, "cpu_ns_per_pair_two_threads",
                   cmgb_get("threads.%s.%d.%s.cpu2_med", L, dd, v[i]),
                   cmgb_get("threads.%s.%d.%s.cpu2_min", L, dd, v[i]));
        fputs("}", f);
      }
      fputs("}", f);
    }
  fputs("\n  ],\n  \"scale\": [", f);
  bool first = true;
  for (int d = 0; d < 2; d++) {
    const char *s = cmgb_plan->scale_live;
    while (*s) {
      long n = strtol(s, (char **)&s, 10);
      int dd = cmgb_thread_depths[d];
      fprintf(f, "%s\n    {\"live\": %ld, \"stack_depth\": %d",
              first ? "" : ",", n, dd);
      first = false;
      static const char *const kinds[] = { "pair", "churn" };
      for (int k = 0; k < 2; k++) {
        const char *K = kinds[k];
        fprintf(f, ", \"%s\": {", K);
        cmgb_jstat(f, "without", cmgb_get("scale.%d.%ld.%s.bare_med", dd, n, K),
                   cmgb_get("scale.%d.%ld.%s.bare_min", dd, n, K));
        fputs(", ", f);
        cmgb_jstat(f, "with", cmgb_get("scale.%d.%ld.%s.with_med", dd, n, K),
                   cmgb_get("scale.%d.%ld.%s.with_min", dd, n, K));
        fputs(", ", f);
        cmgb_jstat(f, "added", cmgb_get("scale.%d.%ld.%s.added_med", dd, n, K),
                   cmgb_get("scale.%d.%ld.%s.added_min", dd, n, K));
        fputs("}", f);
      }
      fputs("}", f);
      if (*s == ',')
        s++;
    }
  }
  fputs("\n  ],\n  \"memory\": {\"method\": \"RssAnon after minus before "
        "allocating N, through the interposer minus around it, in fresh "
        "processes\", \"per_live_allocation\": [",
        f);
  for (int i = 0; i < 2; i++) {
    fprintf(f, "%s{\"live\": %ld, \"bytes\": ", i ? ", " : "",
            cmgb_plan->mem_live[i]);
    cmgb_jnum(f, bytes_per_alloc(cmgb_plan->mem_live[i]));
    fputs("}", f);
  }
  fprintf(f,
          "], \"per_stack\": {\"stacks\": %ld, \"stack_depth\": 32, "
          "\"bytes\": ",
          cmgb_plan->mem_stacks);
  cmgb_jnum(f, bytes_per_stack());
  fprintf(f,
          "}},\n  \"report\": {\"live\": %ld, \"stacks\": %ld, "
          "\"file_bytes\": ",
          cmgb_plan->report_live, cmgb_plan->report_stacks);
  cmgb_jnum(f, cmgb_get("report.bytes"));
  fputs(", ", f);
  cmgb_jstat(f, "write_s", cmgb_get("report.write.s_med"),
             cmgb_get("report.write.s_min"));
  fputs(", ", f);
  if (isnan(cmgb_get("report.read.s_med")))
    fputs("\"read_s\": null", f);
  else
    cmgb_jstat(f, "read_s", cmgb_get("report.read.s_med"),
               cmgb_get("report.read.s_min"));
  fputs(", ", f);
  if (isnan(cmgb_get("report.read_nosym.s_med")))
    fputs("\"read_nosym_s\": null", f);
  else
    cmgb_jstat(f, "read_nosym_s", cmgb_get("report.read_nosym.s_med"),
               cmgb_get("report.read_nosym.s_min"));
  fputs(", \"read_state\": ", f);
  cmgb_jstr(f, cmgb_tool_state);
  cmgb_page_json(f);
  fputs("},\n  \"repeats\": [", f);
  for (int i = 0; i < cmgb_plan->repeats; i++) {
    fprintf(f,
            "%s\n    {\"process\": %d, \"stack_depth\": 0, "
            "\"rounds\": %d, \"without_direct\": ",
            i ? "," : "", i + 1, cmgb_plan->repeat_rounds);
    cmgb_jnum(f, cmgb_get("repeat.%d.direct.bare_med", i));
    fputs(", \"added\": {", f);
    for (int p = 0; p < NPATHS; p++) {
      fprintf(f, "%s\"%s\": ", p ? ", " : "", path_names[p]);
      cmgb_jnum(f, cmgb_get("repeat.%d.%s.added_med", i, path_names[p]));
    }
    fputs("}}", f);
  }
  fputs("\n  ],\n  \"targets\": [", f);
  for (int i = 0; i < ntargets; i++) {
    fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
    cmgb_jstr(f, targets[i].name);
    fputs(", \"value\": ", f);
    cmgb_jnum(f, targets[i].value);
    fprintf(f, ", \"%s\": %g, \"unit\": \"%s\", \"verdict\": \"%s\"}",
            targets[i].at_most ? "at_most" : "at_least", targets[i].limit,
            targets[i].unit, verdict(&targets[i]));
  }
  fputs("\n  ]", f);
  cmgb_python_json(f);
  cmgb_snapshot_json(f);
  cmgb_framework_json(f);
  cmgb_deep_json(f);
  cmgb_vmm_json(f);
  fputs("\n}\n", f);
  return fclose(f) == 0 ? 0 : -errno;
}
