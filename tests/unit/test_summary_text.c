/*
 * The text summary a person reads, and the leaks and SUMMARY line that
 * check prints.  The fixtures' summaries must be the tool's golden ones
 * (less the paragraph on which modules this machine could not read, which
 * depends on the machine: the frames here keep the report's names), with
 * --all-frames, --top and --min-bytes, and merged.  Beyond them: groups
 * that read the same folded into one block, pool blocks and the hint to
 * rerun without pools, how the report was written, suppressions and the
 * totals they move, an empty view; each a line a person or a script
 * relies on.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/model/supp.h"
#include "reader/model/symbolize.h"
#include "reader/show/summary_text.h"
#include "reader/tool.h"
#include "reader_harness.h"
#include "../tap.h"

static char *text, *golden;

/* The summary of v under o; the previous text freed. */
static const char *
print(const struct cmg__view *v, const struct cmg__tool_opts *o,
      bool leaks_only)
{
  struct harness_out out;

  free(text);
  cmg__summary_text_print(harness_catch(&out), v, o, leaks_only);
  text = harness_caught(&out);
  return text;
}

/* golden/NAME less its paragraph on the modules not read here. */
static const char *
golden_of(const char *name)
{
  static const char unread[] = "\nNot read on this machine";
  char path[128], *p, *end;

  free(golden);
  snprintf(path, sizeof(path), "golden/%s", name);
  if ((golden = harness_slurp(path)) == NULL)
    return "(no golden file)";
  if ((p = strstr(golden, unread)) != NULL &&
      (end = strstr(p + 1, "\n\n")) != NULL)
    memmove(p + 1, end + 2, strlen(end + 2) + 1);
  return golden;
}

static int
lines_starting(const char *s, const char *prefix)
{
  int n = 0;

  for (const char *p = s; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
    p += *p == '\n';
    n += strncmp(p, prefix, strlen(prefix)) == 0;
  }
  return n;
}

static const char *
last_line(const char *s)
{
  static char buf[512];
  size_t n = strlen(s);
  const char *p;

  if (n == 0)
    return "";
  for (p = s + n - 1; p > s && p[-1] != '\n'; p--)
    ;
  snprintf(buf, sizeof(buf), "%s", p);
  buf[strcspn(buf, "\n")] = '\0';
  return buf;
}

static bool
has(const char *s, const char *part)
{
  return strstr(s, part) != NULL;
}

static void
test_golden(void)
{
  struct cmg__tool_opts o = { 0 };
  struct harness h;

  ok(harness_load(&h, "data/job-a.json") == 0, "job-a.json read");
  is_str(print(&h.v, &o, false), golden_of("summary-job-a.txt"),
         "job-a: its golden summary");
  o.all_frames = true;
  is_str(print(&h.v, &o, false), golden_of("summary-job-a-all.txt"),
         "--all-frames: its golden summary");
  o = (struct cmg__tool_opts){ .top = 2, .min_bytes = 512ull << 20 };
  is_str(print(&h.v, &o, false), golden_of("summary-job-a-top.txt"),
         "--top 2 --min-bytes 512M: its golden summary");
  harness_free(&h);

  o = (struct cmg__tool_opts){ 0 };
  harness_load(&h, "data/context.json");
  is_str(print(&h.v, &o, false), golden_of("summary-context.txt"),
         "context: its golden summary");
  harness_free(&h);
  harness_load(&h, "data/graph.json");
  is_str(print(&h.v, &o, false), golden_of("summary-graph.txt"),
         "graph: its golden summary");
  harness_free(&h);
}

/* Reports into one view as merge reads them, with the suppressions. */
static int
load_all(struct harness *h, char **files, int n, struct cmg__supp *supp)
{
  struct cmg__supp none = { 0 };

  memset(h, 0, sizeof(*h));
  cmg__index_init(&h->ix);
  cmg__view_init(&h->v, &h->ix, true);
  return harness_enter() == 0 &&
                 cmg__run_load_all(&h->v, files, n, supp ? supp : &none) == 0
             ? 0
             : -1;
}

static void
test_merged(void)
{
  char *files[] = { "data/job-a.json", "data/job-b.json" };
  struct cmg__tool_opts o = { 0 };
  struct harness h;

  ok(load_all(&h, files, 2, NULL) == 0, "job-a and job-b merged");
  is_str(print(&h.v, &o, false), golden_of("merge-job-a-b.txt"),
         "merge: its golden summary");
  harness_free(&h);
}

/* check: the leaks and the SUMMARY line only. */
static void
test_leaks_only(void)
{
  struct cmg__tool_opts o = { 0 };
  struct harness h;
  char *want, *end;

  harness_load(&h, "data/job-a.json");
  want = strdup(strstr(golden_of("summary-job-a.txt"), "Leaked "));
  end = strstr(want, "Live at the peak");
  strcpy(end, strstr(golden, "SUMMARY: "));
  is_str(print(&h.v, &o, true), want,
         "leaks only: the golden summary's leaks and its SUMMARY line");
  free(want);

  o.min_bytes = 1ull << 30;
  print(&h.v, &o, true);
  is_int(lines_starting(text, "Leaked "), 1, "--min-bytes 1G: one group");
  ok(has(text, "\n... and 6 more leak groups: 1.3 GiB in 9 allocations (see "
               "--top and --min-bytes)\n\n"),
     "and what the others hold");
  is_str(last_line(text),
         "SUMMARY: cumemguard: 4.3 GiB (4581232640 bytes) leaked in 10 "
         "allocations; 64.0 MiB (67108864 bytes) in 1 allocation of host or "
         "imported memory",
         "the SUMMARY line counts them all");
  o.min_bytes = 512ull << 20;
  print(&h.v, &o, true);
  ok(lines_starting(text, "Leaked 512.0 MiB in 1 allocation (") == 1 &&
         has(text, "\n... and 4 more leak groups: "),
     "--min-bytes 512M keeps a group of exactly 512 MiB");
  harness_free(&h);
}

/* When the report was written, in the header's third line. */
static const char *
written(struct harness *h, const char *reason, int status, char *killed_by)
{
  static char line[256];
  struct cmg__view_source *s = &h->v.sources[0];
  struct cmg__tool_opts o = { 0 };
  char *old_reason = s->reason, *old_killed = s->killed_by;
  int old_status = s->exit_status;
  const char *p;

  s->reason = (char *)reason;
  s->exit_status = status;
  s->killed_by = killed_by;
  p = strstr(print(&h->v, &o, false), "  written ");
  snprintf(line, sizeof(line), "%s", p != NULL ? p + 2 : "(none)");
  line[strcspn(line, "\n")] = '\0';
  s->reason = old_reason;
  s->exit_status = old_status;
  s->killed_by = old_killed;
  return line;
}

static void
test_header(void)
{
  struct cmg__tool_opts o = { 0 };
  struct harness h;
  const char *tail = ", 42.500 s after the process started, on node17";
  char want[160];

  harness_load(&h, "data/job-a.json");
  snprintf(want, sizeof(want), "written at exit (status 3)%s", tail);
  is_str(written(&h, "exit", 3, NULL), want, "an exit with its status");
  snprintf(want, sizeof(want), "written as SIGTERM killed it%s", tail);
  is_str(written(&h, "signal", -1, "SIGTERM"), want, "a killing signal");
  snprintf(want, sizeof(want), "written on a signal%s", tail);
  is_str(written(&h, "signal", -1, NULL), want, "a dump signal");
  snprintf(want, sizeof(want), "written on request (cmg_dump)%s", tail);
  is_str(written(&h, "request", -1, NULL), want, "a request");
  snprintf(want, sizeof(want), "written as a snapshot while the process ran%s",
           tail);
  is_str(written(&h, "snapshot", -1, NULL), want, "a snapshot");
  snprintf(want, sizeof(want), "written some-new-reason%s", tail);
  is_str(written(&h, "some-new-reason", -1, NULL), want,
         "a reason this tool does not know, as it is");

  h.v.sources[0].end_time = h.v.sources[0].start_time - 1;
  ok(has(print(&h.v, &o, false), "written at exit, 0.000 s after the process"),
     "an end before the start: no negative time");
  h.v.python_note = "Python frames were not captured (python=0)";
  ok(has(print(&h.v, &o, false), "on node17\n  Python frames were not "
                                 "captured (python=0)\n\n"),
     "a Python note under the header");
  h.v.python_note = NULL;
  harness_free(&h);
}

static void
test_devices(void)
{
  struct cmg__tool_opts o = { 0 };
  struct harness h;
  char *name;

  harness_load(&h, "data/job-a.json");
  h.v.devices[1].limit_varies = true;
  name = h.v.devices[1].name;
  h.v.devices[1].name = "";
  ok(has(print(&h.v, &o, false),
         "\n  1    80.0 GiB     varies  528.0 MiB  528.0 MiB        4        0 "
         "      0  ?\n"),
     "a limit that varies, and a device without a name");
  h.v.devices[1].name = name;
  h.v.host.allocations = 0;
  h.v.host.has_limit = false;
  ok(!has(print(&h.v, &o, false), "pinned host memory\n"),
     "no host row when host memory was neither used nor limited");
  h.v.denials[0].has_limit = false;
  ok(has(print(&h.v, &o, false),
         "  refused: cudaMalloc of 13.0 GiB (limit none) from "),
     "a denial without a limit");
  harness_free(&h);
}

/* Groups that read the same in the default view are one block. */
static void
test_blocks(void)
{
  struct cmg__tool_opts o = { 0 };
  struct harness h;

  ok(harness_load(&h, "data/gpu/jax-three-functions.json") == 0,
     "jax-three-functions.json read");
  print(&h.v, &o, false);
  is_int(lines_starting(text, "Leaked "), 2, "six groups in two blocks");
  ok(has(text, "Leaked 49.5 KiB in 4 allocations, 4 stacks (cuMemAlloc_v2, "
               "device 0), kept by a cuDNN handle (cudnnCreate) for the life "
               "of the process, from:\n"),
     "a block sums its groups and says how many stacks");
  ok(has(text, "    162.0 MiB in 2 allocations, 2 stacks: head "
               "(jax_frames.py:7) > full "
               "(jax/_src/numpy/array_creation.py:259)\n"),
     "composition lines that read the same are one");
  o.all_frames = true;
  print(&h.v, &o, false);
  is_int(lines_starting(text, "Leaked "), 6, "--all-frames keeps them apart");
  ok(!has(text, " stacks ("), "and none says stacks");
  harness_free(&h);
}

static void
test_pools(void)
{
  struct cmg__tool_opts o = { 0 };
  struct harness h;

  ok(harness_load(&h, "data/gpu/torch-gpt2-compile.json") == 0,
     "torch-gpt2-compile.json read");
  print(&h.v, &o, false);
  ok(has(text, "Leaked 140.0 MiB in 7 allocations, 5 stacks (cudaMalloc, "
               "device 0), a pool block of the PyTorch caching allocator, "
               "from:\n"),
     "a pool block's heading names the pool");
  ok(has(text, "\n\nMost of the leaked device memory (328.0 MiB of 456.3 MiB) "
               "is in pool blocks of the PyTorch caching allocator, which say "
               "where the pool grew, not which tensor leaked: rerun with "
               "--no-pools to see the tensors.\n\n"),
     "most of it in pool blocks: rerun with --no-pools");
  h.v.no_pools = true;
  ok(has(print(&h.v, &o, false),
         "Most of the leaked device memory (328.0 MiB of 456.3 MiB) is still "
         "in pool blocks of the PyTorch caching allocator although pools "
         "were asked off (no_pools=1): "),
     "under no_pools=1: a switch kept or the program's own allocator");
  harness_free(&h);

  harness_load(&h, "data/job-a.json");
  ok(!has(print(&h.v, &o, false), "Most of the leaked"),
     "no pool blocks: no hint");
  harness_free(&h);
}

static void
test_nothing_leaked(void)
{
  struct cmg__tool_opts o = { 0 };
  struct harness h;

  ok(harness_load(&h, "data/gpu/torch-three-sites-nopools.json") == 0,
     "torch-three-sites-nopools.json read");
  print(&h.v, &o, false);
  ok(has(text, "\n\nNo device memory leaked.\n\nLive at the peak of device 0"),
     "no leak: says so");
  ok(!has(text, "Frames inside"), "and has no frames to hide");
  is_str(last_line(text),
         "SUMMARY: cumemguard: 0 B (0 bytes) leaked in 0 allocations",
         "SUMMARY: nothing");
  harness_free(&h);
}

static void
test_suppressions(void)
{
  char path[] = "/tmp/cmg-supp-XXXXXX", err[CMG__TOOL_ERR_MAX];
  const char rules[] = "leak:alloc_weights\nleak:never_called\n";
  char *files[] = { "data/job-a.json" };
  struct cmg__supp supp = { 0 };
  struct cmg__tool_opts o = { .supp = &supp };
  struct harness h;
  int fd = mkstemp(path);

  if (fd < 0 || write(fd, rules, sizeof(rules) - 1) != sizeof(rules) - 1)
    abort();
  close(fd);
  ok(cmg__supp_load(&supp, path, err, sizeof(err)) == 0 &&
         load_all(&h, files, 1, &supp) == 0,
     "job-a with two suppressions");
  print(&h.v, &o, false);
  ok(has(text, "shown; --all-frames shows them.\n\n"
               "-----------------------------------------------------\n"
               "Suppressions used:\n"
               "  count      bytes template\n"
               "      2 3221225472 alloc_weights\n"
               "      0          0 never_called\n"
               "-----------------------------------------------------\n\n"
               "Live at the peak"),
     "the table of rules, after the leaks, with what each hid");
  ok(!has(text, "alloc_weights+0x12"), "the suppressed group is not listed");
  ok(has(text, "    3.0 GiB in 2 allocations: alloc_weights < load_model"),
     "but still counts in what was live at the peak");
  is_str(last_line(text),
         "SUMMARY: cumemguard: 1.3 GiB (1360007168 bytes) leaked in 8 "
         "allocations; 64.0 MiB (67108864 bytes) in 1 allocation of host or "
         "imported memory; 3.0 GiB (3221225472 bytes) in 2 allocations "
         "suppressed",
         "SUMMARY: the leaks less the suppressed, which it counts apart");
  o.supp = NULL;
  ok(!has(print(&h.v, &o, false), "Suppressions used"),
     "no rules given: no table");
  harness_free(&h);
  cmg__supp_free(&supp);
  unlink(path);
}

/* A view of no report, every part said as empty. */
static void
test_empty(void)
{
  struct cmg__tool_opts o = { 0 };
  struct cmg__index ix;
  struct cmg__view v;

  cmg__index_init(&ix);
  cmg__view_init(&v, &ix, true);
  is_str(print(&v, &o, false),
         "cumemguard reports of 0 processes, merged\n\n"
         "No device was used.\n\n"
         "No device memory leaked.\n\n"
         "SUMMARY: cumemguard: 0 B (0 bytes) leaked in 0 allocations\n",
         "an empty view");
  cmg__view_free(&v);
  cmg__index_free(&ix);
}

int
main(void)
{
  cmg__symbolize_off();
  test_golden();
  test_merged();
  test_leaks_only();
  test_header();
  test_devices();
  test_blocks();
  test_pools();
  test_nothing_leaked();
  test_suppressions();
  test_empty();
  free(text);
  free(golden);
  return done_testing();
}
