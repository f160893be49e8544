/*
 * The lines under the summary's device table.  The footprint line is what
 * an engineer reads to see why nvidia-smi shows more than the program
 * allocated, and what an operator reads to check the caps against it: each
 * of its parts (NVML's total, the allocations, the contexts and how they
 * were measured, the rest, whether the caps count the contexts) must
 * follow what the report knows and say nothing it does not.  The graph
 * memory line says what the pool held and by whose count.  The fixtures'
 * lines are those of the tool's golden summaries; the other cases are
 * device rows made here, one field changed at a time.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/model/symbolize.h"
#include "reader/model/view.h"
#include "reader/show/summary_devices.h"
#include "reader/tool.h"
#include "reader_harness.h"
#include "../tap.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static char *text;

/* What one of the two functions prints for v; the previous text freed. */
static const char *
shown(void (*fn)(FILE *, const struct cmg__view *), const struct cmg__view *v)
{
  struct harness_out o;

  free(text);
  fn(harness_catch(&o), v);
  text = harness_caught(&o);
  return text;
}

static bool
starts(const char *s, const char *prefix)
{
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *
footprint(const struct cmg__view *v)
{
  return shown(cmg__summary_devices_footprint, v);
}

static const char *
graph(const struct cmg__view *v)
{
  return shown(cmg__summary_devices_graph, v);
}

static void
test_fixtures(void)
{
  struct harness h;

  ok(harness_load(&h, "data/context.json") == 0, "context.json read");
  is_str(footprint(&h.v),
         "device 0 on the card: 1.8 GiB (NVML) = 1.0 GiB allocated + 780.0 "
         "MiB in 2 contexts + 36.0 MiB unexplained; the caps count the "
         "contexts\n"
         "device 0 cross-check of 1 context: NVML 262.0 MiB, the driver's "
         "free memory 268.0 MiB (+6.0 MiB)\n"
         "device 1 on the card: not measured (NVML does not know "
         "GPU-0b0b0b0b-5555-6666-7777-888888888888); 512.0 MiB allocated, 1 "
         "context; the caps count allocations only\n",
         "context.json: the footprint lines of its golden summary");
  is_str(graph(&h.v), "", "and no graph memory line");
  harness_free(&h);

  ok(harness_load(&h, "data/graph.json") == 0, "graph.json read");
  is_str(graph(&h.v),
         "device 0 graph memory: 1.5 GiB reserved (high 1.5 GiB), 1.0 GiB in "
         "use (high 1.5 GiB), the driver's count; 4 launches, 1 upload, 0 "
         "trims, 1 denied\n"
         "device 1 graph memory: 0 B reserved (high 256.0 MiB), 0 B in use "
         "(high 256.0 MiB), cumemguard's estimate; 2 launches, 0 uploads, 1 "
         "trim, 0 denied\n",
         "graph.json: the graph memory lines of its golden summary");
  is_str(footprint(&h.v), "", "and no footprint line");
  harness_free(&h);

  ok(harness_load(&h, "data/job-a.json") == 0, "job-a.json read");
  is_str(footprint(&h.v), "", "a report from before footprints: no line");
  is_str(graph(&h.v), "", "nor one of graph memory");
  harness_free(&h);
}

/* A merge where only one process's report has a footprint sums that one,
 * and says of how many processes. */
static void
test_merged(void)
{
  char *files[] = { "data/context.json", "data/job-a.json" };
  struct cmg__supp none = { 0 };
  struct harness h;

  memset(&h, 0, sizeof(h));
  cmg__index_init(&h.ix);
  cmg__view_init(&h.v, &h.ix, true);
  ok(harness_enter() == 0 && cmg__run_load_all(&h.v, files, 2, &none) == 0,
     "context.json and job-a.json merged");
  is_str(footprint(&h.v),
         "device 0 on the card (1 of 2 processes): 1.8 GiB (NVML) = 1.0 GiB "
         "allocated + 780.0 MiB in 2 contexts + 36.0 MiB unexplained; the "
         "caps count the contexts\n"
         "device 0 cross-check of 1 context: NVML 262.0 MiB, the driver's "
         "free memory 268.0 MiB (+6.0 MiB)\n"
         "device 1 on the card (1 of 2 processes): not measured (NVML does "
         "not know GPU-0b0b0b0b-5555-6666-7777-888888888888); 512.0 MiB "
         "allocated, 1 context; the caps count allocations only\n",
         "each line says of how many processes it is");
  harness_free(&h);
}

/* ---- device rows made here -------------------------------------------- */

static struct cmg__view_device dev;
static struct cmg__view view = { .n_devices = 1, .devices = &dev };

/* Device 3 of one process, measured by NVML: 2.0 GiB on the card, 1.0 GiB
 * allocated, 768.0 MiB in 2 contexts, 256.0 MiB unexplained, counted. */
static void
measured(void)
{
  dev = (struct cmg__view_device){ .ordinal = 3,
                                   .processes = 1,
                                   .footprints = 1 };
  dev.footprint = (struct cmg__model_footprint){
    .present = true,
    .counted = true,
    .has_context_bytes = true,
    .has_process_bytes = true,
    .has_unexplained_bytes = true,
    .source = CMG__MODEL_FP_NVML,
    .contexts = 2,
    .context_bytes = 768 * MiB,
    .allocated_bytes = 1 * GiB,
    .process_bytes = 2 * GiB,
    .unexplained_bytes = 256 * MiB,
  };
}

static void
test_measured(void)
{
  struct cmg__model_footprint *fp = &dev.footprint;

  measured();
  is_str(footprint(&view),
         "device 3 on the card: 2.0 GiB (NVML) = 1.0 GiB allocated + 768.0 "
         "MiB in 2 contexts + 256.0 MiB unexplained; the caps count the "
         "contexts\n",
         "every part, NVML's total first");
  fp->contexts = 1;
  is_str(footprint(&view),
         "device 3 on the card: 2.0 GiB (NVML) = 1.0 GiB allocated + 768.0 "
         "MiB in 1 context + 256.0 MiB unexplained; the caps count the "
         "context\n",
         "one context: singular, twice");
  measured();
  fp->source = CMG__MODEL_FP_DRIVER;
  is_str(footprint(&view),
         "device 3 on the card: 2.0 GiB (NVML) = 1.0 GiB allocated + 768.0 "
         "MiB in 2 contexts (the driver's count) + 256.0 MiB unexplained; "
         "the caps count the contexts\n",
         "contexts measured by the driver say so");
  dev.mixed_sources = true;
  is_str(footprint(&view),
         "device 3 on the card: 2.0 GiB (NVML) = 1.0 GiB allocated + 768.0 "
         "MiB in 2 contexts (NVML's and the driver's counts) + 256.0 MiB "
         "unexplained; the caps count the contexts\n",
         "some measured each way: both named");
  measured();
  fp->has_unexplained_bytes = false;
  is_str(footprint(&view),
         "device 3 on the card: 2.0 GiB (NVML) = 1.0 GiB allocated + 768.0 "
         "MiB in 2 contexts; the caps count the contexts\n",
         "no unexplained figure: no such part");
  fp->has_process_bytes = false;
  is_str(footprint(&view),
         "device 3 on the card: 1.0 GiB allocated + 768.0 MiB in 2 contexts "
         "(NVML's count); NVML gave no figure for the whole process; the caps "
         "count the contexts\n",
         "no figure for the process: no total, and it says so");
}

static void
test_caps(void)
{
  measured();
  dev.footprint.counted = false;
  ok(strstr(footprint(&view), "; the caps count allocations only\n") != NULL,
     "not counted: allocations only");
  dev.counted_any = true;
  ok(strstr(footprint(&view),
            "; the caps of some processes count their contexts\n") != NULL,
     "counted by some of the merged processes: says so");
  dev.footprint.counted = true;
  ok(strstr(footprint(&view), "; the caps count the contexts\n") != NULL,
     "counted by all: the contexts");
}

static void
test_not_measured(void)
{
  struct cmg__model_footprint *fp = &dev.footprint;

  measured();
  fp->has_context_bytes = false;
  fp->source = CMG__MODEL_FP_NONE;
  fp->why = "no NVML";
  is_str(footprint(&view),
         "device 3 on the card: not measured (no NVML); 1.0 GiB allocated, 2 "
         "contexts, 2.0 GiB in all (NVML); the caps count the contexts that "
         "were measured\n",
         "not measured: why, the allocations, NVML's total; counted where "
         "measured");
  fp->why = NULL;
  fp->has_process_bytes = false;
  fp->counted = false;
  fp->contexts = 1;
  is_str(footprint(&view),
         "device 3 on the card: not measured; 1.0 GiB allocated, 1 context; "
         "the caps count allocations only\n",
         "without a reason or a total: neither said");
  measured();
  dev.processes = 3;
  dev.footprints = 2;
  ok(starts(footprint(&view),
            "device 3 on the card (2 of 3 processes): 2.0 GiB (NVML)"),
     "a merge with fewer footprints than processes: how many of them");
}

static void
test_cross_check(void)
{
  struct cmg__model_footprint *fp = &dev.footprint;

  measured();
  fp->checked = 2;
  fp->checked_nvml = 520 * MiB;
  fp->checked_driver = 516 * MiB;
  ok(strstr(footprint(&view),
            "\ndevice 3 cross-check of 2 contexts: NVML 520.0 MiB, the "
            "driver's free memory 516.0 MiB (-4.0 MiB)\n") != NULL,
     "the driver's count below NVML's: a minus");
  fp->checked_driver = 520 * MiB;
  ok(strstr(footprint(&view), "memory 520.0 MiB (+0 B)\n") != NULL,
     "the same: +0 B");
  fp->checked = 0;
  ok(strstr(footprint(&view), "cross-check") == NULL,
     "none measured both ways: no cross-check line");
}

/* Rows without a footprint or graph memory are skipped, the others kept in
 * the table's order. */
static void
test_rows(void)
{
  struct cmg__view_device rows[3] = { { .ordinal = 0 },
                                      { .ordinal = 1 },
                                      { .ordinal = 2 } };
  struct cmg__view v = { .n_devices = 3, .devices = rows };
  struct cmg__model_graphmem g = {
    .present = true,
    .estimate = true,
    .reserved_bytes = 64 * MiB,
    .reserved_high_bytes = 128 * MiB,
    .used_bytes = 32 * MiB,
    .used_high_bytes = 96 * MiB,
    .launches = 1,
    .uploads = 1,
    .trims = 1,
    .denied = 7,
  };

  measured();
  rows[2].footprint = dev.footprint;
  rows[2].footprints = rows[2].processes = 1;
  rows[0].graph = g;
  is_str(graph(&v),
         "device 0 graph memory: 64.0 MiB reserved (high 128.0 MiB), 32.0 "
         "MiB in use (high 96.0 MiB), cumemguard's estimate; 1 launch, 1 "
         "upload, 1 trim, 7 denied\n",
         "one of each: singular; only the row that has graph memory");
  ok(starts(footprint(&v), "device 2 on the card: ") &&
         strchr(text, '\n') == text + strlen(text) - 1,
     "only the row that has a footprint");
  rows[1].graph = g;
  rows[1].graph.estimate = false;
  rows[1].graph.launches = rows[1].graph.uploads = rows[1].graph.trims = 0;
  is_str(graph(&v),
         "device 0 graph memory: 64.0 MiB reserved (high 128.0 MiB), 32.0 "
         "MiB in use (high 96.0 MiB), cumemguard's estimate; 1 launch, 1 "
         "upload, 1 trim, 7 denied\n"
         "device 1 graph memory: 64.0 MiB reserved (high 128.0 MiB), 32.0 "
         "MiB in use (high 96.0 MiB), the driver's count; 0 launches, 0 "
         "uploads, 0 trims, 7 denied\n",
         "none: plural; the rows in the table's order");
  rows[0].graph.present = rows[1].graph.present = false;
  rows[2].footprint.present = false;
  is_str(graph(&v), "", "no row has graph memory: nothing");
  is_str(footprint(&v), "", "no row has a footprint: nothing");
}

int
main(void)
{
  cmg__symbolize_off();
  test_fixtures();
  test_merged();
  test_measured();
  test_caps();
  test_not_measured();
  test_cross_check();
  test_rows();
  free(text);
  return done_testing();
}
