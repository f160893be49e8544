/*
 * Unit tests of diff_text.c, the diff as a person reads it, on the
 * reports of tests/reader/data read as diff reads them.  The fixed pair
 * job-a/job-b must print exactly the tool's golden text; around it, what
 * a reader relies on when skimming a diff: every change said as grew,
 * still held or shrank with its sign and its "new" or "gone", a device
 * one report lacks shown as "-", what --top and --min-bytes leave out
 * counted (singular too), "No leak group changed." only when nothing
 * grew or shrank, and the memory of graph pools and contexts kept out of
 * the leaked total in the SUMMARY line.
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "reader/model/delta.h"
#include "reader/show/diff_text.h"
#include "reader/tool.h"
#include "reader_harness.h"
#include "../tap.h"

/* The diff text of BASE NEW with options o, malloc'd; NULL when the
 * reports cannot be read. */
static char *
diff_of(const char *base, const char *now, const struct cmg__tool_opts *o)
{
  struct harness h;
  struct harness_out out;
  struct cmg__delta *c;
  size_t n;
  char *text = NULL;

  if (harness_pair(&h, base, now) == 0 &&
      (c = cmg__delta_of(&h.v, &h.now, &n)) != NULL) {
    cmg__diff_text_print(harness_catch(&out), &h.v, &h.now, c, n, o);
    text = harness_caught(&out);
    free(c);
  }
  harness_free(&h);
  return text;
}

/* How many lines of text start with prefix. */
static int
lines_with(const char *text, const char *prefix)
{
  int n = 0;
  size_t len = strlen(prefix);

  for (const char *p = text; p != NULL && *p != '\0';) {
    n += strncmp(p, prefix, len) == 0;
    p = strchr(p, '\n');
    p = p != NULL ? p + 1 : NULL;
  }
  return n;
}

/* The last line of text, without its newline, in buf. */
static const char *
last_line(const char *text, char *buf, size_t len)
{
  size_t n = strlen(text);

  while (n > 0 && text[n - 1] == '\n')
    n--;
  size_t start = n;
  while (start > 0 && text[start - 1] != '\n')
    start--;
  snprintf(buf, len, "%.*s", (int)(n - start), text + start);
  return buf;
}

static bool
has(const char *text, const char *what)
{
  return text != NULL && strstr(text, what) != NULL;
}

static void
test_golden(void)
{
  struct cmg__tool_opts o = { 0 };
  char *want = harness_slurp("golden/diff-job-a-b.txt");
  char *got = diff_of("data/job-a.json", "data/job-b.json", &o);

  ok(want != NULL && got != NULL, "job-a against job-b, and its golden text");
  is_str(got, want, "job-a against job-b prints the golden text exactly");
  free(want);
  free(got);
}

static void
test_all_frames(void)
{
  struct cmg__tool_opts o = { .all_frames = true };
  char *got = diff_of("data/job-a.json", "data/job-b.json", &o);

  ok(has(got, "from:\n    #0 ? (libcudart.so.12+0x4a2f1)\n"
              "    #1 cudaMalloc+0x93 (libcudart.so.12+0x5b0c3)\n"
              "    #2 alloc_weights+0x12 (trainer+0x1a2b)\n"),
     "--all-frames: the CUDA runtime's frames are numbered too");
  is_int(lines_with(got, "Grew by "), 3, "--all-frames: the same changes");
  free(got);
}

static void
test_unchanged(void)
{
  struct cmg__tool_opts o = { 0 };
  char *got = diff_of("data/job-a.json", "data/job-a.json", &o);
  char line[512];

  is_int(lines_with(got, "Still held: "), 7,
         "a report against itself: every group still held");
  ok(has(got, "\nStill held: 3.0 GiB in 2 allocations (cudaMalloc, device 0), "
              "unchanged, from:\n    #0 alloc_weights+0x12"),
     "a held group: its size, count, API, where, then its frames");
  ok(has(got, "Still held: 64.0 MiB in 1 allocation (cuMemHostAlloc, "
              "pinned host memory), unchanged, from:\n"),
     "host memory is named as such, one allocation in the singular");
  is_int(lines_with(got, "Grew by ") + lines_with(got, "Shrank by "), 0,
         "nothing grew or shrank");
  is_int(lines_with(got, "No leak group changed."), 1, "and it says so");
  is_str(last_line(got, line, sizeof(line)),
         "SUMMARY: cumemguard: leaked 0 B (+0 bytes) in +0 allocations; 0 "
         "leak groups grew, 0 shrank, 7 held",
         "the SUMMARY line of no change");
  ok(has(got, "     0     3.8 GiB    3.8 GiB        0 B     4.0 GiB    4.0 "
              "GiB  NVIDIA H100 80GB HBM3\n"),
     "an unchanged device: a change of 0 B, without a sign");
  free(got);
}

static void
test_empty(void)
{
  struct cmg__tool_opts o = { 0 };
  const char *f = "data/gpu/torch-three-sites-nopools.json";
  char *got = diff_of(f, f, &o);
  char line[512];

  ok(has(got, "\n\nNo leak group changed.\n\nSUMMARY: "),
     "no group on either side: nothing changed");
  is_str(last_line(got, line, sizeof(line)),
         "SUMMARY: cumemguard: leaked 0 B (+0 bytes) in +0 allocations; 0 "
         "leak groups grew, 0 shrank, 0 held",
         "and nothing held");
  free(got);
}

static void
test_missing_device(void)
{
  struct cmg__tool_opts o = { 0 };
  const char *f = "data/gpu/torch-three-sites-nopools.json";
  char *grew = diff_of(f, "data/job-a.json", &o);
  char *gone = diff_of("data/job-a.json", f, &o);
  char line[512];

  ok(has(grew, "     0         0 B    3.8 GiB   +3.8 GiB   352.0 MiB    4.0 "
               "GiB  NVIDIA H100 80GB HBM3\n"
               "     1           -  528.0 MiB +528.0 MiB           -  528.0 "
               "MiB  NVIDIA H100 80GB HBM3\n\n"),
     "a device only NEW has: \"-\" for BASE, the change counted from 0");
  ok(has(gone, "     1   528.0 MiB          - -528.0 MiB   528.0 MiB         "
               " -  NVIDIA H100 80GB HBM3\n"),
     "a device only BASE has: \"-\" for NEW, and its name kept");
  is_int(lines_with(grew, "Grew by "), 7, "every group of NEW grew");
  ok(has(grew, "(cudaMalloc, device 0, new) from:"), "and is new");
  ok(has(gone, "Shrank by 3.0 GiB (-2 allocations), to 0 B in 0 allocations "
               "(cudaMalloc, device 0, gone) from:"),
     "what NEW lacks shrank to nothing and is gone");
  is_str(last_line(gone, line, sizeof(line)),
         "SUMMARY: cumemguard: leaked -4.3 GiB (-4581232640 bytes) in -10 "
         "allocations; 0 leak groups grew, 7 shrank, 0 held",
         "the SUMMARY line counts down");
  is_int(lines_with(grew, "No leak group changed."), 0,
         "growth alone is a change");
  free(grew);
  free(gone);
}

static void
test_top_and_min_bytes(void)
{
  struct cmg__tool_opts top = { .top = 1 }, min = { .min_bytes = 100 << 20 };
  char *t = diff_of("data/job-a.json", "data/job-b.json", &top);
  char *m = diff_of("data/job-a.json", "data/job-b.json", &min);
  char line[512];

  is_int(lines_with(t, "Grew by "), 1, "--top 1: one group that grew");
  is_int(lines_with(t, "Shrank by "), 1, "and, counted apart, one that shrank");
  ok(has(t, "\n... and 8 smaller changes (see --top and --min-bytes)\n\n"),
     "--top 1: the 8 others are counted");
  is_str(last_line(t, line, sizeof(line)),
         "SUMMARY: cumemguard: leaked -529.0 MiB (-554700800 bytes) in -6 "
         "allocations; 3 leak groups grew, 7 shrank, 0 held",
         "--top 1: the SUMMARY line still counts every change");
  is_int(lines_with(m, "Grew by ") + lines_with(m, "Shrank by "), 6,
         "--min-bytes 100M: the six changes of 256 MiB and more");
  ok(has(m, "... and 4 smaller changes"), "the four smaller are counted");
  ok(!has(m, "Shrank by 64.0 MiB"), "a 64 MiB change is left out");
  free(t);
  free(m);
}

static void
test_apart(void)
{
  struct cmg__tool_opts o = { 0 }, top = { .top = 2 };
  char *got = diff_of("data/graph.json", "data/context.json", &o);
  char *t = diff_of("data/graph.json", "data/context.json", &top);
  char line[1024];

  ok(has(got, "Grew by 262.0 MiB (+1 allocation), to 262.0 MiB in 1 "
              "allocation (cuCtxCreate_v4, context, device 0, new) from:"),
     "a context's group grows as any");
  ok(has(got, "Shrank by 1.0 GiB (-1 allocation), to 0 B in 0 allocations "
              "(cudaGraphLaunch, graph memory pool, device 0, gone) from:"),
     "a graph memory pool's shrinks as any");
  ok(has(got, "Shrank by 2.0 GiB (+0 allocations), to 1.0 GiB in 2 "
              "allocations (cudaMalloc, device 0) from:"),
     "fewer bytes in as many allocations: shrank, +0, neither new nor gone");
  ok(has(got, "Still held: 512.0 MiB in 1 allocation (cuMemAlloc_v2, "
              "device 1), unchanged"),
     "the same stack under another id in each report is one group");
  is_str(last_line(got, line, sizeof(line)),
         "SUMMARY: cumemguard: leaked -2.0 GiB (-2147483648 bytes) in +0 "
         "allocations; 0 leak groups grew, 1 shrank, 1 held; CUDA graph "
         "memory pools -1.5 GiB (-1610612736 bytes), not leaked; CUDA "
         "contexts and modules +780.0 MiB (+817889280 bytes), not leaked",
         "the pools and contexts are counted apart from the leaks");
  is_int(lines_with(got, "No leak group changed."), 0,
         "a leak that shrank is a change");
  ok(has(t, "\n... and 1 smaller change (see --top and --min-bytes)\n"),
     "--top 2 leaves one change, said in the singular");
  is_int(lines_with(t, "Still held: "), 1, "--top counts what is held apart");
  free(got);
  free(t);
}

static void
test_title(void)
{
  struct cmg__tool_opts o = { 0 }, all = { .all_frames = true };
  const char *a = "data/gpu/torch-release-before.json";
  const char *b = "data/gpu/torch-release-after.json";
  char *got = diff_of(a, b, &o);
  char *every = diff_of(a, b, &all);

  ok(has(got, "(cuMemAlloc_v2, device 0), unchanged, from:\n  train "
              "(s1_release.py:11) > Module._wrapped_call_impl "
              "(torch/nn/modules/module.py:1779)\n    ... 24 frames in "),
     "a Python group: its title line, then its frames folded");
  ok(has(got, "unchanged, from:\n    #0 ? (libcublas.so.13+0x5b45ee)\n"),
     "a group without the user's code: no title, no threads, its frames");
  ok(!has(every, "  train (s1_release.py:11) > "),
     "--all-frames: no title, every frame instead");
  free(got);
  free(every);
}

int
main(void)
{
  test_golden();
  test_all_frames();
  test_unchanged();
  test_empty();
  test_missing_device();
  test_top_and_min_bytes();
  test_apart();
  test_title();
  return done_testing();
}
