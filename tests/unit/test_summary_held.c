/*
 * Device memory the summary lists apart from the leaks: what CUDA graph
 * memory pools grew by and what CUDA contexts took.  Neither is a leak, so
 * a reader must find them under their own heading, a section per device
 * with the note that says why, every group listed whatever --top and
 * --min-bytes say, none once a suppression hid it, and the SUMMARY line's
 * words for them exact to the byte.  The expected sections are those of
 * the tool's golden summaries of the same fixtures.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/model/symbolize.h"
#include "reader/model/view.h"
#include "reader/show/summary_held.h"
#include "reader/tool.h"
#include "reader_harness.h"
#include "../tap.h"

static const struct cmg__tool_opts defaults = { 0 };
static char *text, *golden;
static bool hidden;

/* What cmg__summary_held_text prints for v under o (hidden: what it
 * returned); the previous text freed. */
static const char *
held(const struct cmg__view *v, const struct cmg__tool_opts *o)
{
  struct harness_out out;

  free(text);
  hidden = cmg__summary_held_text(harness_catch(&out), v, o);
  text = harness_caught(&out);
  return text;
}

static const char *
held_line(const struct cmg__view *v)
{
  struct harness_out out;

  free(text);
  cmg__summary_held_line(harness_catch(&out), v);
  text = harness_caught(&out);
  return text;
}

static bool
starts(const char *s, const char *prefix)
{
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The part of golden file name from the line starting first through the
 * end of the paragraph holding last (its blank line included). */
static const char *
section(const char *name, const char *first, const char *last)
{
  char *from, *to;

  free(golden);
  golden = harness_slurp(name);
  if (golden == NULL || (from = strstr(golden, first)) == NULL ||
      (to = strstr(from, last)) == NULL || (to = strstr(to, "\n\n")) == NULL)
    return "(not in the golden file)";
  to[2] = '\0';
  return from;
}

/* The group of v with api, whose fields the tests change and put back. */
static struct cmg__view_leak *
group(struct cmg__view *v, const char *api)
{
  for (size_t i = 0; i < v->n_leaks; i++)
    if (strcmp(v->leaks[i].api, api) == 0)
      return &v->leaks[i];
  abort();
}

static void
test_graph(void)
{
  struct cmg__tool_opts all = { .all_frames = true };
  struct harness h;

  ok(harness_load(&h, "data/graph.json") == 0, "graph.json read");
  is_str(held(&h.v, &defaults),
         section("golden/summary-graph.txt", "Held by the CUDA graph",
                 "gives back what no graph is using."),
         "its graph memory section and note, as in its golden summary");
  ok(hidden, "CUDA and start-up frames hidden: it says so");
  ok(strstr(held(&h.v, &all),
            "1.0 GiB in 1 growth (cudaGraphLaunch) from:\n"
            "    #0 ? (libcudart.so.12+0x6c3a0)\n"
            "    #1 cudaGraphLaunch+0x64 (libcudart.so.12+0x6d1f4)\n"
            "    #2 launch_step+0x2a (trainer+0x2520)\n") != NULL,
     "--all-frames shows each stack whole");
  ok(!hidden, "and then nothing is hidden");
  is_str(held_line(&h.v),
         "; 1.5 GiB (1610612736 bytes) in 2 allocations held by CUDA graph "
         "memory pools",
         "the SUMMARY line's words on it");
  harness_free(&h);
}

static void
test_context(void)
{
  struct harness h;

  ok(harness_load(&h, "data/context.json") == 0, "context.json read");
  is_str(held(&h.v, &defaults),
         section("golden/summary-context.txt", "Contexts and modules on",
                 "unless count_context=0."),
         "its contexts section and note, as in its golden summary");
  is_str(held_line(&h.v),
         "; 780.0 MiB (817889280 bytes) taken by 2 CUDA contexts and their "
         "modules",
         "the SUMMARY line's words on it");
  harness_free(&h);
}

/* --top and --min-bytes choose among the leaks only. */
static void
test_all_listed(void)
{
  struct cmg__tool_opts few = { .top = 1, .min_bytes = UINT64_MAX };
  struct harness h;
  char *want;

  harness_load(&h, "data/context.json");
  want = strdup(held(&h.v, &defaults));
  is_str(held(&h.v, &few), want, "--top 1 --min-bytes max: every group still");
  free(want);
  harness_free(&h);
}

static void
test_none(void)
{
  struct harness h;

  ok(harness_load(&h, "data/job-a.json") == 0, "job-a.json read");
  is_str(held(&h.v, &defaults), "", "no graph memory or context: nothing");
  ok(!hidden, "and nothing hidden");
  is_str(held_line(&h.v), "", "nor words on the SUMMARY line");
  harness_free(&h);
}

/* A suppressed group is not held memory to show: it is gone from the
 * section and the line, which count the rest. */
static void
test_suppressed(void)
{
  struct harness h;
  struct cmg__view_leak *l;

  harness_load(&h, "data/context.json");
  l = group(&h.v, "cuCtxCreate_v4");
  l->rule = 0;
  held(&h.v, &defaults);
  ok(starts(text, "Contexts and modules on device 0 at exit: 518.0 MiB in 1 "
                  "context, made by:\n\n518.0 MiB in 1 context "
                  "(cuDevicePrimaryCtxRetain) from:\n"),
     "the heading counts the one left, in the singular");
  ok(strstr(text, "cuCtxCreate_v4") == NULL, "the suppressed one is not shown");
  is_str(held_line(&h.v),
         "; 518.0 MiB (543162368 bytes) taken by 1 CUDA context and its "
         "modules",
         "one context on the SUMMARY line: singular");
  group(&h.v, "cuDevicePrimaryCtxRetain")->rule = 0;
  is_str(held(&h.v, &defaults), "", "all suppressed: no section, no note");
  is_str(held_line(&h.v), "", "and no words on the line");
  harness_free(&h);
}

/* "at exit" only when every report was: a snapshot's pool may still grow,
 * its contexts may still be destroyed. */
static void
test_snapshot(void)
{
  struct harness h;
  char *reason;

  harness_load(&h, "data/graph.json");
  reason = h.v.sources[0].reason;
  h.v.sources[0].reason = "snapshot";
  ok(starts(held(&h.v, &defaults),
            "Held by the CUDA graph memory pool of device 0: 1.5 GiB, "
            "grown by:\n"),
     "a snapshot's heading does not say at exit");
  h.v.sources[0].reason = reason;
  harness_free(&h);
}

/* Memory on no device (a report's mistake) is shown, after the devices. */
static void
test_no_device(void)
{
  struct harness h;
  struct cmg__view_leak *l;
  const char *dev0, *none, *note;

  harness_load(&h, "data/context.json");
  l = group(&h.v, "cuCtxCreate_v4");
  l->device = CMG__TOOL_NONE;
  held(&h.v, &defaults);
  dev0 = strstr(text, "Contexts and modules on device 0 at exit: 518.0 MiB "
                      "in 1 context, made by:\n");
  none = strstr(text, "Contexts and modules on no device at exit: 262.0 MiB "
                      "in 1 context, made by:\n\n262.0 MiB in 1 context "
                      "(cuCtxCreate_v4) from:\n");
  ok(dev0 != NULL, "device 0's section keeps its own group");
  ok(none != NULL, "the other has a section of no device");
  ok(dev0 != NULL && none > dev0, "after the devices'");
  note = strstr(text, "Contexts are not leaks");
  ok(note != NULL && none != NULL && note > none &&
         strstr(note + 1, "Contexts are not leaks") == NULL,
     "one note, after the last section");
  l->device = 0;
  harness_free(&h);
}

/* A heading that counts contexts has nothing to say of groups of none. */
static void
test_count_zero(void)
{
  struct harness h;

  harness_load(&h, "data/context.json");
  group(&h.v, "cuCtxCreate_v4")->count = 0;
  group(&h.v, "cuDevicePrimaryCtxRetain")->count = 0;
  is_str(held(&h.v, &defaults), "", "contexts that count none: no section");
  harness_free(&h);
}

/* Both kinds in one view: graph memory first, each with its note. */
static void
test_both(void)
{
  char *files[] = { "data/graph.json", "data/context.json" };
  struct cmg__supp none = { 0 };
  struct harness h;
  const char *graph, *ctx;

  memset(&h, 0, sizeof(h));
  cmg__index_init(&h.ix);
  cmg__view_init(&h.v, &h.ix, true);
  ok(harness_enter() == 0 && cmg__run_load_all(&h.v, files, 2, &none) == 0,
     "graph.json and context.json merged");
  held(&h.v, &defaults);
  graph = strstr(text, "Held by the CUDA graph memory pool of device 0 at "
                       "exit: 1.5 GiB, grown by:\n");
  ctx = strstr(text, "Contexts and modules on device 0 at exit: 780.0 MiB in "
                     "2 contexts, made by:\n");
  ok(graph == text, "the graph memory section first");
  ok(ctx != NULL && ctx > strstr(text, "Graph memory is not a leak"),
     "then the contexts', after the graph memory's note");
  ok(strstr(text, "unless count_context=0.\n\n") ==
         text + strlen(text) - strlen("unless count_context=0.\n\n"),
     "the contexts' note last");
  is_str(held_line(&h.v),
         "; 1.5 GiB (1610612736 bytes) in 2 allocations held by CUDA graph "
         "memory pools; 780.0 MiB (817889280 bytes) taken by 2 CUDA "
         "contexts and their modules",
         "the SUMMARY line's words on both, graph memory first");
  harness_free(&h);
}

int
main(void)
{
  cmg__symbolize_off();
  test_graph();
  test_context();
  test_all_listed();
  test_none();
  test_suppressed();
  test_snapshot();
  test_no_device();
  test_count_zero();
  test_both();
  free(text);
  free(golden);
  return done_testing();
}
