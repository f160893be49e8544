/*
 * What one run of the harness collected, and under which settings: the
 * figures the children printed ("calls.32.direct.added_med" and its value),
 * the plan, the stack depths and device layouts it ran, the machine, and
 * whether the harness itself broke.  main.c fills all of it in; table.c
 * only reads it (and sets cmgb_broken when a figure is missing), so the
 * table is printed from here and never calls back into the harness.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmgbench.h"

#define MAX_VALUES 4096

struct value {
  char key[112];
  double v;
};

static struct value values[MAX_VALUES];
static int nvalues;

int cmgb_broken;
const struct cmgb_plan *cmgb_plan;

const int cmgb_depths[CMGB_NDEPTHS] = { 0, 16, 32, 64 };
const int cmgb_thread_depths[2] = { 0, 32 };
const char *const cmgb_layouts[2] = { "each", "same" };
struct cmgb_machine cmgb_machine = {
  .cpu = "unknown",
  .kernel = "unknown",
  .clocksource = "unknown",
};
const char *cmgb_lib;

/* Why there is no read time until run_tool() says otherwise: a tool that
 * fails is reported, not counted as the harness breaking (it is not
 * ours). */
const char *cmgb_tool_state = "n/a";

void
cmgb_store(const char *key, double v)
{
  for (int i = 0; i < nvalues; i++)
    if (strcmp(values[i].key, key) == 0) {
      values[i].v = v;
      return;
    }
  if (nvalues < MAX_VALUES) {
    snprintf(values[nvalues].key, sizeof(values[0].key), "%s", key);
    values[nvalues++].v = v;
  }
}

double
cmgb_get(const char *fmt, ...)
{
  char key[112];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(key, sizeof(key), fmt, ap);
  va_end(ap);
  for (int i = 0; i < nvalues; i++)
    if (strcmp(values[i].key, key) == 0)
      return values[i].v;
  return NAN;
}
