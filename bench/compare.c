/*
 * make bench-compare: the per-pair rows of two builds of the interposer,
 * measured in one run.  The harness alternates the two libraries' children
 * (which goes first alternates too), so a slow spell of the machine falls
 * on both; each row gives both medians and the range of the differences
 * over the alternations, and a change shows as a difference of one sign in
 * every alternation.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cmgbench.h"

/* The median over the alternations of one library's added ns, and the
 * least and most of new minus base, alternation by alternation. */
static void
row(int depth, const char *path, int alternations)
{
  double base[16], cur[16], diff[16], lo = INFINITY, hi = -INFINITY;
  int n = 0;
  for (int a = 0; a < alternations && n < 16; a++) {
    base[n] = cmgb_get("cmp.base.%d.%d.%s.added_med", a, depth, path);
    cur[n] = cmgb_get("cmp.new.%d.%d.%s.added_med", a, depth, path);
    if (isnan(base[n]) || isnan(cur[n]))
      continue;
    diff[n] = cur[n] - base[n];
    lo = fmin(lo, diff[n]);
    hi = fmax(hi, diff[n]);
    n++;
  }
  if (n == 0) {
    printf("  %-8s %6d  %10s %10s %10s  %s\n", path, depth, "n/a", "n/a", "n/a",
           "n/a");
    return;
  }
  double b = cmgb_median(base, (size_t)n), c = cmgb_median(cur, (size_t)n);
  /* One alternation or two say nothing of a sign. */
  const char *sign = n < 3    ? ""
                     : lo > 0 ? "  slower in every one"
                     : hi < 0 ? "  faster in every one"
                              : "";
  printf("  %-8s %6d  %+10.1f %+10.1f %+10.1f  %+.1f .. %+.1f%s\n", path, depth,
         b, c, cmgb_median(diff, (size_t)n), lo, hi, sign);
}

void
cmgb_print_compare(const char *base_lib, int alternations)
{
  printf("cumemguard benchmark: two builds, per allocation + free pair\n"
         "  base: %s\n  new:  %s\n"
         "  ns added over the bare pair, median of %d alternations "
         "(each the median of its rounds)\n\n",
         base_lib, cmgb_lib, alternations);
  printf("  %-8s %6s  %10s %10s %10s  %s\n", "path", "depth", "base", "new",
         "new-base", "new-base in each alternation");
  for (int d = 0; d < CMGB_NDEPTHS; d++)
    for (int p = CMGB_DIRECT; p < CMGB_NPATHS; p++)
      row(cmgb_depths[d], cmgb_path_names[p], alternations);
  printf("\n  depth: stack_depth (0: stacks off); every row at %s%s "
         "otherwise.\n",
         cmgb_options ? cmgb_options : "the default options",
         cmgb_options ? " (OPTIONS)" : "");
}

/*
 * The framework-shaped pair (framework.c) of both builds: the Python frames
 * and the deep native stack that the C rows above do not have.  Each
 * alternation is a bare process, then each build at the default options
 * and at python_frames=0, which build goes first alternating; a figure is
 * a process's ns minus its alternation's bare one.  More alternations than
 * the C rows have, as each is one process: the machine's slow spells last
 * seconds and fall on a whole alternation, which the pairing cancels, and
 * the least over each build's processes shows its quiet state.  Their
 * medians swing by a hundred ns or more between runs; how many of 41
 * alternations each build wins does not, and shows a change of 15-30 ns.
 */
static const char *const fw_tags[2] = { "base", "new" };
static const char *const fw_keys[2] = { "default", "nopy" };
static const char *const fw_opts[2] = { "", "python_frames=0," };

static void __attribute__((format(printf, 2, 3)))
put(double value, const char *fmt, ...)
{
  char key[96];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(key, sizeof(key), fmt, ap);
  va_end(ap);
  cmgb_store(key, value);
}

void
cmgb_run_compare_framework(const char *base_lib, const char *sim,
                           const char *chain, const char *tmpdir)
{
  bool smoke = strcmp(cmgb_plan->mode, "smoke") == 0;
  int alternations = smoke ? 3 : 41;
  long pairs = smoke ? 300 : 20000;
  const char *libs[2] = { base_lib, cmgb_lib };
  double frames = NAN;
  if (sim == NULL || !cmgb_framework_can_run(chain))
    return;
  fprintf(stderr, "  %-24s", "framework, both builds");
  fflush(stderr);
  uint64_t t0 = cmgb_now_ns();
  bool good = true;
  for (int a = 0; a < alternations; a++) {
    double ns =
        cmgb_framework_once(NULL, NULL, sim, chain, tmpdir, pairs, &frames);
    good &= !isnan(ns);
    put(ns, "fwcmp.bare.%d", a);
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < 2; i++) {
        int which = (a + i) % 2;
        double f;
        ns = cmgb_framework_once(fw_opts[k], libs[which], sim, chain, tmpdir,
                                 pairs, &f);
        good &= !isnan(ns);
        put(ns, "fwcmp.%s.%d.%s", fw_tags[which], a, fw_keys[k]);
      }
  }
  cmgb_store("fwcmp.alternations", alternations);
  cmgb_store("fwcmp.frames", frames);
  cmgb_framework_end(t0, good);
}

/* ns added over the bare process of alternation a: the configuration's
 * (k 0 or 1), or with k 2 the Python frames' part (default minus
 * python_frames=0, where the bare pair cancels). */
static double
fw_added(int which, int a, int k)
{
  double d = cmgb_get("fwcmp.%s.%d.default", fw_tags[which], a),
         n = cmgb_get("fwcmp.%s.%d.nopy", fw_tags[which], a);
  if (k == 2)
    return d - n;
  return (k == 0 ? d : n) - cmgb_get("fwcmp.bare.%d", a);
}

/* The least over the processes, as fw_added over each build's least. */
static double
fw_least(int which, int k, int alternations)
{
  double v[3][64];
  int n = 0;
  for (int a = 0; a < alternations && n < 64; a++, n++) {
    v[0][n] = cmgb_get("fwcmp.%s.%d.default", fw_tags[which], a);
    v[1][n] = cmgb_get("fwcmp.%s.%d.nopy", fw_tags[which], a);
    v[2][n] = cmgb_get("fwcmp.bare.%d", a);
  }
  double d = cmgb_min(v[0], (size_t)n), p = cmgb_min(v[1], (size_t)n),
         bare = cmgb_min(v[2], (size_t)n);
  return k == 2 ? d - p : (k == 0 ? d : p) - bare;
}

/* The chance of k or fewer heads, or as few tails, in n tosses of a fair
 * coin (a two-sided sign test): how often the machine alone would make
 * one build faster in so few, or so many, of n alternations. */
static double
sign_test(int k, int n)
{
  int least = k < n - k ? k : n - k;
  double term = pow(0.5, n), tail = 0;
  for (int i = 0; i <= least; i++) {
    tail += term;
    term = term * (n - i) / (i + 1);
  }
  return fmin(1, 2 * tail);
}

static void
fw_row(const char *label, int k, int alternations)
{
  double v[2][64], diff[64], lo = INFINITY, hi = -INFINITY;
  int n = 0, faster = 0, ties = 0;
  for (int a = 0; a < alternations && n < 64; a++, n++) {
    for (int w = 0; w < 2; w++)
      v[w][n] = fw_added(w, a, k);
    diff[n] = v[1][n] - v[0][n];
    lo = fmin(lo, diff[n]);
    hi = fmax(hi, diff[n]);
    faster += diff[n] < 0;
    ties += diff[n] == 0;
  }
  printf("  %-17s %+7.0f (%+5.0f) %+7.0f (%+5.0f) %+8.0f  %+.0f .. %+.0f",
         label, cmgb_median(v[0], (size_t)n), fw_least(0, k, alternations),
         cmgb_median(v[1], (size_t)n), fw_least(1, k, alternations),
         cmgb_median(diff, (size_t)n), lo, hi);
  /* One alternation or two say nothing of a sign. */
  if (n >= 3)
    printf("  faster in %d of %d, p %.3f", faster, n,
           sign_test(faster, n - ties));
  printf("\n");
}

void
cmgb_print_compare_framework(void)
{
  int alternations = (int)cmgb_get("fwcmp.alternations");
  if (strcmp(cmgb_framework_state, "ok") != 0) {
    printf("\nFramework-shaped pair, both builds: left out,\n   %s\n",
           cmgb_framework_state);
    return;
  }
  printf("\nFramework-shaped pair, both builds: cudaMalloc(4096) + cudaFree "
         "under %d Python\nframes and %.0f native ones (bench/framework.c). "
         "ns added over the bare pair\nof the same alternation, median of %d "
         "alternations (least process minus\nleast bare one)\n\n",
         CMGB_FW_PY_FRAMES, cmgb_get("fwcmp.frames"), alternations);
  printf("  %-17s %15s %15s %8s  %s\n", "options", "base", "new", "new-base",
         "new-base in each alternation");
  fw_row("default", 0, alternations);
  fw_row("python_frames=0", 1, alternations);
  fw_row("Python frames", 2, alternations);
  printf("\n  Python frames: the default minus python_frames=0, over %d "
         "frames.\n"
         "  p: how often the machine alone would make new faster in as few, "
         "or as many,\n  of the alternations (a sign test).  The medians "
         "swing with the machine's state;\n  a p under 0.01 is a change of "
         "the build's.\n",
         CMGB_FW_PY_FRAMES);
}
