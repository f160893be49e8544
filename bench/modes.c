/*
 * Section 1b of the benchmark: the direct path at 16, 32 and 64 frames in
 * each stack mode (auto, fp, dwarf), called from frames with frame
 * pointers and from the same frames without (frames_nofp.c).  main.c runs
 * the children ("modes.CHAIN.MODE.DEPTH"); this file prints their table
 * and JSON and says which figures must be there.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "cmgbench.h"

const char *const cmgb_modes[CMGB_NMODES] = { "auto", "fp", "dwarf" };
const int cmgb_mode_depths[CMGB_NMODE_DEPTHS] = { 16, 32, 64 };
const char *const cmgb_chains[2] = { "fp", "nofp" };

static double
get(int c, int m, int d, const char *what)
{
  return cmgb_get("modes.%s.%s.%d.direct.%s", cmgb_chains[c], cmgb_modes[m],
                  cmgb_mode_depths[d], what);
}

double
cmgb_modes_fp32(void)
{
  return get(0, 0, 1, "added_med");
}

double
cmgb_modes_nofp32_extra(void)
{
  return get(1, 0, 1, "added_med") - get(1, 2, 1, "added_med");
}

void
cmgb_modes_require(void)
{
  for (int c = 0; c < 2; c++)
    for (int m = 0; m < CMGB_NMODES; m++)
      for (int d = 0; d < CMGB_NMODE_DEPTHS; d++)
        if (isnan(get(c, m, d, "added_med"))) {
          fprintf(stderr, "cmgbench: no figure modes.%s.%s.%d\n",
                  cmgb_chains[c], cmgb_modes[m], cmgb_mode_depths[d]);
          cmgb_broken = 1;
        }
}

void
cmgb_modes_print(void)
{
  printf("\n1b. Stack modes: the direct path, ns per pair, median of %d "
         "rounds (min), from the\n    same %d frames built with frame "
         "pointers (fp) and without (nofp).\n    auto: each step proven "
         "against DWARF once, libunwind from a frame that cannot be;\n"
         "    fp: frame pointers only (wrong stacks through code built "
         "without); dwarf: libunwind.\n",
         cmgb_plan->rounds, CMGB_CALL_DEPTH);
  printf("    %-6s %-6s %-6s %14s %14s %16s %7s\n", "frames", "mode", "stacks",
         "without", "with", "added", "ratio");
  for (int c = 0; c < 2; c++)
    for (int m = 0; m < CMGB_NMODES; m++)
      for (int d = 0; d < CMGB_NMODE_DEPTHS; d++)
        printf("    %-6s %-6s %-6d %6.0f (%5.0f) %6.0f (%5.0f) %+7.0f "
               "(%+6.0f) %6.2fx\n",
               cmgb_chains[c], cmgb_modes[m], cmgb_mode_depths[d],
               get(c, m, d, "bare_med"), get(c, m, d, "bare_min"),
               get(c, m, d, "with_med"), get(c, m, d, "with_min"),
               get(c, m, d, "added_med"), get(c, m, d, "added_min"),
               get(c, m, d, "ratio_med"));
}

static void
jnum(FILE *f, const char *name, double v)
{
  fprintf(f, "\"%s\": ", name);
  if (isnan(v) || isinf(v))
    fputs("null", f);
  else
    fprintf(f, "%.6g", v);
}

void
cmgb_modes_json(FILE *f)
{
  static const char *const what[] = { "bare_med", "bare_min",  "with_med",
                                      "with_min", "added_med", "added_min",
                                      "ratio_med" };
  static const char *const names[] = { "without",  "without_min", "with",
                                       "with_min", "added",       "added_min",
                                       "ratio" };
  fputs("  \"stack_modes\": [", f);
  bool first = true;
  for (int c = 0; c < 2; c++)
    for (int m = 0; m < CMGB_NMODES; m++)
      for (int d = 0; d < CMGB_NMODE_DEPTHS; d++) {
        fprintf(f,
                "%s\n    {\"frames\": \"%s\", \"stack_mode\": \"%s\", "
                "\"stack_depth\": %d",
                first ? "" : ",", cmgb_chains[c], cmgb_modes[m],
                cmgb_mode_depths[d]);
        first = false;
        for (size_t i = 0; i < sizeof(what) / sizeof(*what); i++) {
          fputs(", ", f);
          jnum(f, names[i], get(c, m, d, what[i]));
        }
        fputs("}", f);
      }
  fputs("\n  ],\n", f);
}
