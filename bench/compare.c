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
#include <stdio.h>

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
    printf("  %-8s %6d  %10s %10s %10s  %s\n", path, depth, "n/a", "n/a",
           "n/a", "n/a");
    return;
  }
  double b = cmgb_median(base, (size_t)n), c = cmgb_median(cur, (size_t)n);
  /* One alternation or two say nothing of a sign. */
  const char *sign = n < 3    ? ""
                     : lo > 0 ? "  slower in every one"
                     : hi < 0 ? "  faster in every one"
                              : "";
  printf("  %-8s %6d  %+10.1f %+10.1f %+10.1f  %+.1f .. %+.1f%s\n", path,
         depth, b, c, cmgb_median(diff, (size_t)n), lo, hi, sign);
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
  printf("\n  depth: stack_depth (0: stacks off); every row at the "
         "default options otherwise.\n");
}
