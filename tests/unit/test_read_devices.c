/*
 * Unit tests of read_devices.c: a report's devices[], each with its
 * optional graph_memory and footprint.  The summary prints what these
 * hold as sums and cross-checks, so a device's values are read exactly
 * (a null limit is no limit, a null or absent object is not present),
 * an ordinal is listed once, and an object that is given must be whole
 * and agree with itself: the footprint's source is "nvml" or "driver"
 * exactly when context_bytes is known, unexplained_bytes only beside the
 * two it is the rest of, and a cross-check only of NVML's contexts, of 1
 * to all of them, never more than they took.  Each refusal is the one
 * line of tests/reader/broken/expected.txt for that case.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reader/load/fields.h"
#include "reader/load/model.h"
#include "reader/load/read.h"
#include "reader/load/read_devices.h"
#include "reader/tool.h"
#include "../tap.h"
#include "report_harness.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define FP "devices[0].footprint"

static char err[CMG__TOOL_ERR_MAX];
static struct cmg__fields_reader rd = { err, sizeof(err) };
static struct cmg__model_report r;

/* The base report's devices[] with up to two members set, into r. */
static int
read_with(const char *p1, const char *v1, const char *p2, const char *v2)
{
  cJSON *root = report_tree();
  int rc;

  if (p1 != NULL)
    report_set(root, p1, v1);
  if (p2 != NULL)
    report_set(root, p2, v2);
  cmg__read_report_free(&r);
  err[0] = '\0';
  rc = cmg__read_devices(&rd, root, &r);
  cJSON_Delete(root);
  return rc;
}

static void
test_base(void)
{
  is_int(read_with(NULL, NULL, NULL, NULL), 0, "the base devices read");
  is_str(err, "", "without a line");
  is_int(r.n_devices, 2, "both of them");
  const struct cmg__model_device *d = &r.devices[0];
  ok(d->ordinal == 0 && strcmp(d->name, "GPU zero") == 0 &&
         strcmp(d->uuid, "GPU-0000") == 0,
     "device 0: ordinal, name, UUID");
  ok(d->physical_bytes == 85899345920ull && d->has_limit &&
         d->limit_bytes == 17179869184ull,
     "device 0: its memory and limit");
  ok(d->live_bytes == 5242880 && d->peak_bytes == 6291456 &&
         d->allocations == 9 && d->frees == 3 && d->denied == 1,
     "device 0: its counts");
  const struct cmg__model_graphmem *g = &d->graph;
  ok(g->present && !g->estimate && g->reserved_bytes == 10 &&
         g->reserved_high_bytes == 20 && g->used_bytes == 5 &&
         g->used_high_bytes == 15 && g->launches == 4 && g->uploads == 1 &&
         g->trims == 2 && g->denied == 0,
     "device 0: its graph memory, the driver's");
  const struct cmg__model_footprint *fp = &d->footprint;
  ok(fp->present && fp->counted && fp->source == CMG__MODEL_FP_NVML &&
         fp->contexts == 2 && fp->has_context_bytes &&
         fp->context_bytes == 1000 && fp->why == NULL &&
         fp->allocated_bytes == 5242880,
     "device 0: its footprint, NVML's");
  ok(fp->has_process_bytes && fp->process_bytes == 5243980 &&
         fp->has_unexplained_bytes && fp->unexplained_bytes == 100,
     "device 0: the process's bytes and the rest");
  ok(fp->checked == 1 && fp->checked_nvml == 500 && fp->checked_driver == 520,
     "device 0: its cross-check");
  d = &r.devices[1];
  ok(d->ordinal == 3 && !d->has_limit && d->limit_bytes == 0,
     "device 3: a null limit is none");
  ok(!d->graph.present && !d->footprint.present,
     "device 3: no graph memory or footprint where the report has none");
}

static void
test_variants(void)
{
  is_int(
      read_with("devices[0].graph_memory.source", "\"estimate\"", NULL, NULL),
      0, "graph memory the library estimated");
  ok(r.devices[0].graph.present && r.devices[0].graph.estimate, "... says so");
  read_with("devices[0].graph_memory", "null", "devices[0].footprint", "null");
  ok(!r.devices[0].graph.present && !r.devices[0].footprint.present,
     "null graph memory and footprint are not present");

  cJSON *root = report_tree();
  report_set(root, FP,
             "{\"contexts\": 1, \"context_bytes\": null, \"source\": null,"
             " \"why\": \"no NVML\\n\", \"allocated_bytes\": 7,"
             " \"process_bytes\": null, \"unexplained_bytes\": null,"
             " \"counted\": false, \"cross_check\": null}");
  cmg__read_report_free(&r);
  is_int(cmg__read_devices(&rd, root, &r), 0, "a footprint not measured");
  cJSON_Delete(root);
  const struct cmg__model_footprint *fp = &r.devices[0].footprint;
  ok(fp->present && !fp->counted && fp->source == CMG__MODEL_FP_NONE &&
         !fp->has_context_bytes && !fp->has_process_bytes &&
         !fp->has_unexplained_bytes && fp->allocated_bytes == 7,
     "... read as unknown");
  is_str(fp->why, "no NVML?", "... with why, cleaned");
  ok(fp->checked == 0, "... and no cross-check");

  is_int(read_with(FP ".source", "\"driver\"", FP ".cross_check", "null"), 0,
         "a footprint from the driver's free memory");
  is_int(r.devices[0].footprint.source, CMG__MODEL_FP_DRIVER, "... says so");
  is_int(read_with(FP ".cross_check.contexts", "2", NULL, NULL), 0,
         "a cross-check of all the contexts");
  is_int(read_with(FP ".cross_check.nvml_bytes", "1000", NULL, NULL), 0,
         "a cross-check of all the contexts' bytes");
  is_int(read_with("devices", "[]", NULL, NULL), 0, "no devices");
  ok(r.n_devices == 0 && r.devices != NULL, "... an empty table");
}

static void
test_refused(void)
{
  static const struct {
    const char *p1, *v1, *p2, *v2, *want;
  } cases[] = {
    { "devices", NULL, 0, 0, "devices: missing" },
    { "devices", "{}", 0, 0, "devices: expected an array, got an object" },
    { "devices[1]", "5", 0, 0, "devices[1]: expected an object, got a number" },
    { "devices[0].ordinal", "64", 0, 0,
      "devices[0].ordinal: expected an integer from 0 to 63, got 64" },
    { "devices[0].ordinal", "null", 0, 0,
      "devices[0].ordinal: expected an integer from 0 to 63, got null" },
    { "devices[1].ordinal", "0", 0, 0,
      "devices[1].ordinal: device 0 is listed twice" },
    { "devices[0].name", "null", 0, 0,
      "devices[0].name: expected a string, got null" },
    { "devices[1].uuid", NULL, 0, 0, "devices[1].uuid: missing" },
    { "devices[0].live_bytes", "\"1 GiB\"", 0, 0,
      "devices[0].live_bytes: expected an integer from 0 to 2^53, got "
      "\"1 GiB\"" },
    { "devices[0].limit_bytes", "-5", 0, 0,
      "devices[0].limit_bytes: expected an integer from 0 to 2^53 or null, "
      "got -5" },
    { "devices[1].denied", NULL, 0, 0, "devices[1].denied: missing" },
    { "devices[0].graph_memory", "1610612736", 0, 0,
      "devices[0].graph_memory: expected an object or null, got "
      "1610612736" },
    { "devices[1].graph_memory", "[]", 0, 0,
      "devices[1].graph_memory: expected an object or null, got an array" },
    { "devices[0].graph_memory.reserved_bytes", "-1", 0, 0,
      "devices[0].graph_memory.reserved_bytes: expected an integer from 0 to "
      "2^53, got -1" },
    { "devices[0].graph_memory.launches", "2.5", 0, 0,
      "devices[0].graph_memory.launches: expected an integer from 0 to 2^53, "
      "got 2.5" },
    { "devices[0].graph_memory.trims", NULL, 0, 0,
      "devices[0].graph_memory.trims: missing" },
    { "devices[0].graph_memory.source", "\"nvml\"", 0, 0,
      "devices[0].graph_memory.source: expected \"driver\" or \"estimate\", "
      "got \"nvml\"" },
    { "devices[0].graph_memory.source", NULL, 0, 0,
      "devices[0].graph_memory.source: missing" },
    { FP, "1", 0, 0, FP ": expected an object or null, got 1" },
    { FP ".contexts", NULL, 0, 0, FP ".contexts: missing" },
    { FP ".context_bytes", "-1", 0, 0,
      FP ".context_bytes: expected an integer from 0 to 2^53 or null, got "
         "-1" },
    { FP ".source", "\"smi\"", 0, 0,
      FP ".source: expected \"nvml\", \"driver\" or null, got \"smi\"" },
    { FP ".source", "null", 0, 0,
      FP ".source: expected \"nvml\" or \"driver\" where context_bytes is a "
         "number, got null" },
    { FP ".context_bytes", "null", 0, 0,
      FP ".source: expected null where context_bytes is null, got \"nvml\"" },
    { FP ".why", "3", 0, 0, FP ".why: expected a string or null, got 3" },
    { FP ".allocated_bytes", "1.5", 0, 0,
      FP ".allocated_bytes: expected an integer from 0 to 2^53, got 1.5" },
    { FP ".process_bytes", "\"1.8 GiB\"", 0, 0,
      FP ".process_bytes: expected an integer from 0 to 2^53 or null, got "
         "\"1.8 GiB\"" },
    { FP ".process_bytes", "null", 0, 0,
      FP ".unexplained_bytes: expected null where process_bytes or "
         "context_bytes is null, got 100" },
    { FP ".counted", "\"yes\"", 0, 0,
      FP ".counted: expected true or false, got \"yes\"" },
    { FP ".counted", NULL, 0, 0, FP ".counted: missing" },
    { FP ".cross_check", "1", 0, 0,
      FP ".cross_check: expected an object or null, got 1" },
    { FP ".cross_check.driver_bytes", NULL, 0, 0,
      FP ".cross_check.driver_bytes: missing" },
    { FP ".cross_check.contexts", "0", 0, 0,
      FP ".cross_check.contexts: expected 1 to footprint.contexts (2), got "
         "0" },
    { FP ".cross_check.contexts", "3", 0, 0,
      FP ".cross_check.contexts: expected 1 to footprint.contexts (2), got "
         "3" },
    { FP ".cross_check.nvml_bytes", "1001", 0, 0,
      FP ".cross_check.nvml_bytes: expected at most footprint.context_bytes "
         "(1000), got 1001" },
    { FP ".source", "\"driver\"", 0, 0,
      FP ".cross_check: expected null where source is not \"nvml\", got an "
         "object" },
    /* The same checks on a later device, named by its own index. */
    { "devices[1].footprint", "[]", 0, 0,
      "devices[1].footprint: expected an object or null, got an array" },
  };

  for (size_t i = 0; i < N(cases); i++) {
    is_int(read_with(cases[i].p1, cases[i].v1, cases[i].p2, cases[i].v2),
           -EINVAL, "refused: %s = %s", cases[i].p1,
           cases[i].v1 ? cases[i].v1 : "(removed)");
    is_str(err, cases[i].want, "... in one line");
  }
}

int
main(void)
{
  test_base();
  test_variants();
  test_refused();
  cmg__read_report_free(&r);
  return done_testing();
}
