/*
 * The timed blocks of the child processes and the "key value" lines they
 * print from them (work.c, deep.c, vmm.c).  A block is timed as a whole,
 * never call by call: the clock costs some 20 ns a read.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "cmgbench.h"

double
cmgb_time(cmgb_loop loop, void *arg, bool with, long n)
{
  uint64_t t0 = cmgb_now_ns();
  if (loop(arg, with, n) != 0)
    return NAN;
  return (double)(cmgb_now_ns() - t0) / (double)n;
}

long
cmgb_calibrate(cmgb_loop loop, void *arg, double block_ms)
{
  /* The first calls set up what later ones reuse; not timed. */
  cmgb_time(loop, arg, false, 200);
  double ns = cmgb_time(loop, arg, true, 1000);
  double b = cmgb_time(loop, arg, false, 1000);
  if (isnan(ns + b))
    return -1;
  if (b > ns)
    ns = b;
  long n = (long)(block_ms * 1e6 / (ns > 1 ? ns : 1));
  return n < 100 ? 100 : n;
}

void
cmgb_put2(const char *a, const char *b, double v)
{
  char key[256];
  snprintf(key, sizeof(key), "%s.%s", a, b);
  cmgb_put(key, v);
}

void
cmgb_put_stats(const char *prefix, const char *name, double *v, int n)
{
  char key[256];
  snprintf(key, sizeof(key), "%s.%s_min", prefix, name);
  cmgb_put(key, cmgb_min(v, (size_t)n));
  snprintf(key, sizeof(key), "%s.%s_med", prefix, name);
  cmgb_put(key, cmgb_median(v, (size_t)n));
}

void
cmgb_put_pair(const char *prefix, double *bare, double *with, int n)
{
  double diff[CMGB_MAX_ROUNDS], ratio[CMGB_MAX_ROUNDS];
  for (int i = 0; i < n; i++) {
    diff[i] = with[i] - bare[i];
    ratio[i] = with[i] / bare[i];
  }
  double bmin = cmgb_min(bare, (size_t)n), wmin = cmgb_min(with, (size_t)n);
  cmgb_put2(prefix, "added_med", cmgb_median(diff, (size_t)n));
  cmgb_put2(prefix, "ratio_med", cmgb_median(ratio, (size_t)n));
  cmgb_put2(prefix, "added_min", wmin - bmin);
  cmgb_put_stats(prefix, "bare", bare, n);
  cmgb_put_stats(prefix, "with", with, n);
}
