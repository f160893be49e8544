/*
 * Deep C stacks: the direct path's pair with 32, 104 and 254 frames on the
 * stack, at stack_depth=8 and 32, and the floor of a walk that reads every
 * frame.  The interposer keeps a deep stack's outermost frames as well as
 * its innermost, so it walks the whole stack whatever stack_depth says; the
 * target asks that 254 frames cost at most 1.25 times what 32 cost at
 * stack_depth=8.
 *
 * The child (`cmgbench --child deep`, one process per stack_depth, since
 * the interposer reads its options once) counts the frames on the stack
 * where the pairs are called with backtrace(3), then adds frames.c's
 * levels (distinct functions, frame pointers kept) until there are 32, 104
 * and 254.  Each round runs every stack in turn, bare and interposed
 * blocks back to back, and a block of the floor: following the
 * frame-pointer chain from the same place to the stack's top, reading
 * each frame's return address, once per iteration, in this process alone.
 * The harness side prints the rows, the target and the floor beside it.
 */
#include "config.h"

#include <execinfo.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cmgbench.h"

#define TARGET_RATIO 1.25
#define BYTES (1 << 20)

const int cmgb_deep_depths[2] = { 8, 32 };
const int cmgb_deep_frames[CMGB_NDEEP] = { 32, 104, 254 };

/* ---- the child ---------------------------------------------------------- */

struct stack {
  unsigned depth;  /* levels of frames.c to add */
  long n, walks;   /* pairs and walks per block */
  int frames;      /* frames at the call, by backtrace(3) */
  unsigned walked; /* frames the floor's walk followed */
  double bare[CMGB_MAX_ROUNDS], with[CMGB_MAX_ROUNDS];
  double walk[CMGB_MAX_ROUNDS];
};

struct deep {
  int rounds, round;
  double block_ms;
  struct stack s[CMGB_NDEEP];
  struct stack *at;
  bool failed;
};

static uintptr_t stack_top;

static int
direct_loop(void *arg, bool with, long n)
{
  return cmgb_pairs(CMGB_DIRECT, with, n, BYTES);
}

/* Sits where direct_loop does (cmgb_pairs and its loop are tail calls), so
 * it sees the frames the pairs' calls are made from. */
__attribute__((noipa)) static int
probe_loop(void *arg, bool with, long n)
{
  void *pcs[CMGB_MAX_DEPTH + 64];
  *(int *)arg = backtrace(pcs, CMGB_MAX_DEPTH + 64);
  return 0;
}

/* Follows the frame-pointer chain from its own frame to the stack's top,
 * reading each return address; the frames followed.  What any walk that
 * reads every frame must at least do. */
__attribute__((noipa)) static unsigned
fp_walk(uintptr_t *sum)
{
  const uintptr_t *fp = __builtin_frame_address(0);
  unsigned n = 0;
  uintptr_t s = 0;
  while ((uintptr_t)fp + 16 <= stack_top) {
    const uintptr_t *next = (const uintptr_t *)fp[0];
    s += fp[1];
    n++;
    if (next <= fp || ((uintptr_t)next & 7) != 0)
      break;
    fp = next;
  }
  *sum += s;
  return n;
}

static int
walk_loop(void *arg, bool with, long n)
{
  struct stack *st = arg;
  uintptr_t sum = 0;
  for (long i = 0; i < n; i++)
    st->walked = fp_walk(&sum);
  __asm__ volatile("" : : "r"(sum) : "memory");
  return 0;
}

/* Shaped as round_body is: the probe is called from its frame. */
__attribute__((noipa)) static void
count_body(void *arg)
{
  double ns = cmgb_time(probe_loop, arg, false, 1);
  __asm__ volatile("" : : "x"(ns) : "memory");
}

/* Frames at the call with `depth` levels added. */
static int
frames_at(unsigned depth)
{
  int frames = 0;
  cmgb_at_depth(depth, count_body, &frames);
  return frames;
}

/* The first visit to a stack: its block sizes, and a block of each unrecorded,
 * so that the unwinder's first look at new return addresses is not timed. */
static void
first_visit(struct deep *d, struct stack *st)
{
  st->n = cmgb_calibrate(direct_loop, NULL, d->block_ms);
  double ns = cmgb_time(walk_loop, st, false, 1000);
  st->walks = (long)(d->block_ms * 1e6 / 4 / (ns > 1 ? ns : 1));
  st->walks = st->walks < 100 ? 100 : st->walks;
  if (st->n < 0 || isnan(cmgb_time(direct_loop, NULL, true, st->n / 4 + 1)))
    d->failed = true;
}

static void
round_body(void *arg)
{
  struct deep *d = arg;
  struct stack *st = d->at;
  int r = d->round;
  if (r < 0) {
    first_visit(d, st);
    return;
  }
  for (int k = 0; k < 2; k++) {
    bool with = k ^ (r & 1);
    double ns = cmgb_time(direct_loop, NULL, with, st->n);
    d->failed |= isnan(ns);
    (with ? st->with : st->bare)[r] = ns;
  }
  st->walk[r] = cmgb_time(walk_loop, st, false, st->walks);
}

static int
find_stack_top(void)
{
  pthread_attr_t attr;
  void *addr;
  size_t size;
  if (pthread_getattr_np(pthread_self(), &attr) != 0)
    return -1;
  int rc = pthread_attr_getstack(&attr, &addr, &size);
  pthread_attr_destroy(&attr);
  stack_top = (uintptr_t)addr + size;
  return rc == 0 ? 0 : -1;
}

/* Sets each stack's depth from the frames already on the stack: those at
 * one level, less that level (at none, cmgb_at_depth's own frame is gone in
 * a tail call). */
static int
plan_depths(struct deep *d)
{
  int base = frames_at(1) - 1;
  for (int i = 0; i < CMGB_NDEEP; i++) {
    int depth = cmgb_deep_frames[i] - base;
    if (depth < 0 || depth > CMGB_MAX_DEPTH) {
      fprintf(stderr,
              "cmgbench: %d frames on the stack already, cannot "
              "make %d\n",
              base, cmgb_deep_frames[i]);
      return -1;
    }
    d->s[i].depth = (unsigned)depth;
    d->s[i].frames = frames_at(d->s[i].depth);
  }
  return 0;
}

static void
put_stack(struct deep *d, int i)
{
  char prefix[32];
  struct stack *st = &d->s[i];
  snprintf(prefix, sizeof(prefix), "f%d", cmgb_deep_frames[i]);
  cmgb_put_pair(prefix, st->bare, st->with, d->rounds);
  cmgb_put_stats(prefix, "walk_ns", st->walk, d->rounds);
  cmgb_put2(prefix, "frames", st->frames);
  cmgb_put2(prefix, "walked", st->walked);
  cmgb_put2(prefix, "pairs", (double)st->n);
}

int
cmgb_deep_child(int rounds, double block_ms)
{
  static struct deep d;
  d.rounds = rounds;
  d.block_ms = block_ms;
  if (cmgb_use_device(0) != 0 || find_stack_top() != 0 || plan_depths(&d) != 0)
    return 1;
  /* Round -1 calibrates; the stacks take turns at being first. */
  for (d.round = -1; d.round < rounds && !d.failed; d.round++)
    for (int k = 0; k < CMGB_NDEEP; k++) {
      d.at = &d.s[(k + d.round + 1) % CMGB_NDEEP];
      cmgb_at_depth(d.at->depth, round_body, &d);
    }
  if (d.failed)
    return 1;
  for (int i = 0; i < CMGB_NDEEP; i++)
    put_stack(&d, i);
  return 0;
}

/* ---- the harness side --------------------------------------------------- */

static double
get(int depth, int frames, const char *what)
{
  return cmgb_get("deep.%d.f%d.%s", depth, frames, what);
}

double
cmgb_deep_ratio(void)
{
  return get(8, 254, "added_med") / get(8, 32, "added_med");
}

void
cmgb_deep_require(void)
{
  for (int d = 0; d < 2; d++)
    for (int i = 0; i < CMGB_NDEEP; i++)
      if (isnan(get(cmgb_deep_depths[d], cmgb_deep_frames[i], "added_med")) ||
          isnan(get(cmgb_deep_depths[d], cmgb_deep_frames[i], "walk_ns_med"))) {
        fprintf(stderr, "cmgbench: no figure deep.%d.f%d\n",
                cmgb_deep_depths[d], cmgb_deep_frames[i]);
        cmgb_broken = 1;
      }
}

/* The least ratio a walk reading every frame could reach: 32 frames' added
 * cost, plus what following 254 frames costs over following 32. */
static double
floor_ratio(void)
{
  double a32 = get(8, 32, "added_med");
  return (a32 + get(8, 254, "walk_ns_med") - get(8, 32, "walk_ns_med")) / a32;
}

void
cmgb_deep_print_floor(void)
{
  printf("   (254 frames: the floor, following the frame-pointer chain, "
         "takes %.0f ns at 254\n    frames and %.0f at 32 here, so a walk "
         "that reads every frame can do no\n    better than %.2fx; the "
         "Deep C stacks rows, further down.)\n",
         get(8, 254, "walk_ns_med"), get(8, 32, "walk_ns_med"), floor_ratio());
}

void
cmgb_print_deep(void)
{
  printf("\nDeep C stacks: the direct path, ns per pair of 1 MiB, median of "
         "%d rounds (min),\nwith N frames on the stack (backtrace); floor: "
         "following the frame-pointer chain\nof the same stack to its top, "
         "in the bench process alone.\n",
         cmgb_plan->rounds);
  printf("   %-6s %6s %14s %14s %16s %8s %7s\n", "stacks", "frames", "without",
         "with", "added", "floor", "walked");
  for (int d = 0; d < 2; d++)
    for (int i = 0; i < CMGB_NDEEP; i++) {
      int dd = cmgb_deep_depths[d], f = cmgb_deep_frames[i];
      printf("   %-6d %6.0f %6.0f (%5.0f) %6.0f (%5.0f) %+7.0f (%+6.0f) "
             "%8.1f %7.0f\n",
             dd, get(dd, f, "frames"), get(dd, f, "bare_med"),
             get(dd, f, "bare_min"), get(dd, f, "with_med"),
             get(dd, f, "with_min"), get(dd, f, "added_med"),
             get(dd, f, "added_min"), get(dd, f, "walk_ns_med"),
             get(dd, f, "walked"));
    }
  double ratio = cmgb_deep_ratio();
  printf("   stack_depth=8: 254 frames add %.2fx what 32 add (target <= "
         "%.2fx %s);\n   the least a walk that reads every frame could "
         "give: %.2fx (32 frames' added\n   plus the floor's 254 minus its "
         "32, over 32 frames' added)\n",
         ratio, TARGET_RATIO,
         isnan(ratio)            ? "n/a"
         : ratio <= TARGET_RATIO ? "PASS"
                                 : "MISS",
         floor_ratio());
}

void
cmgb_deep_json(FILE *f)
{
  fprintf(f,
          ",\n  \"deep_stacks\": {\"path\": \"direct\", \"bytes\": %d, "
          "\"target_ratio_at_most\": %.2f, \"ratio\": ",
          BYTES, TARGET_RATIO);
  cmgb_jnum(f, cmgb_deep_ratio());
  fputs(", \"floor_ratio\": ", f);
  cmgb_jnum(f, floor_ratio());
  fputs(", \"rows\": [", f);
  for (int d = 0; d < 2; d++)
    for (int i = 0; i < CMGB_NDEEP; i++) {
      int dd = cmgb_deep_depths[d], fr = cmgb_deep_frames[i];
      fprintf(f,
              "%s\n    {\"stack_depth\": %d, \"frames\": %d, "
              "\"frames_counted\": ",
              d + i ? "," : "", dd, fr);
      cmgb_jnum(f, get(dd, fr, "frames"));
      fputs(", ", f);
      cmgb_jstat(f, "without", get(dd, fr, "bare_med"),
                 get(dd, fr, "bare_min"));
      fputs(", ", f);
      cmgb_jstat(f, "with", get(dd, fr, "with_med"), get(dd, fr, "with_min"));
      fputs(", ", f);
      cmgb_jstat(f, "added", get(dd, fr, "added_med"),
                 get(dd, fr, "added_min"));
      fputs(", ", f);
      cmgb_jstat(f, "floor_walk_ns", get(dd, fr, "walk_ns_med"),
                 get(dd, fr, "walk_ns_min"));
      fputs(", \"floor_frames_walked\": ", f);
      cmgb_jnum(f, get(dd, fr, "walked"));
      fputs("}", f);
    }
  fputs("\n  ]}", f);
}
