/*
 * Unit tests of one_line.c, a group's stack in one line: the title (the
 * user's frame, then the call it made, " > ... > " where the capture cut
 * between them, a library's Python file named from its package down), or
 * the innermost frames joined by " < " with " < ..." when more follow, or
 * "(no stack)"; and the title line a group's frames are headed with,
 * printed only where there is a title.  The same line names a group in
 * its title, at a peak, at a denial and in the diff, so it is checked on
 * stacks built by hand, each frame's code given, and on the fixtures'
 * groups as the tool's golden text shows them.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reader/model/code.h"
#include "reader/model/index.h"
#include "reader/show/one_line.h"
#include "reader/tool.h"
#include "reader_harness.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define END UINT32_MAX
#define SITE "/opt/venv/lib/python3.12/site-packages/"

enum {
  CU_RT,     /* cudaMalloc */
  AT_EMPTY,  /* at::empty, a library's */
  LIB_ANON,  /* an unnamed frame of a library */
  C10_ALLOC, /* c10::cuda::CUDACachingAllocator::malloc */
  TRAIN,     /* train_step, the user's native code */
  MAIN,      /* main */
  START,     /* __libc_start_main */
  PY_LIB,    /* Linear.forward in torch/nn/modules/linear.py */
  PY_LIB2,   /* Module._call_impl in torch/nn/modules/module.py */
  PY_USER,   /* train_step in the user's train.py */
  PY_NOLINE, /* build in the user's model.py, no line known */
  EVAL,      /* _PyEval_EvalFrameDefault */
  CUT,       /* "[12 frames left out]" */
  N_FRAMES
};

#define LIB CMG__CODE_LIBRARY
#define USER CMG__CODE_USER

static struct cmg__index_frame frames[N_FRAMES] = {
  [CU_RT] = { .function = "cudaMalloc", .code = LIB },
  [AT_EMPTY] = { .function = "at::empty(long)",
                 .name = "at::empty",
                 .code = LIB },
  [LIB_ANON] = { .code = LIB, .has_offset = true, .offset = 0x40 },
  [C10_ALLOC] = { .function = "c10::cuda::CUDACachingAllocator::malloc",
                  .code = LIB },
  [TRAIN] = { .function = "train_step", .code = USER },
  [MAIN] = { .function = "main", .code = USER },
  [START] = { .function = "__libc_start_main", .code = LIB },
  [PY_LIB] = { .function = "Linear.forward",
               .python = true,
               .code = LIB,
               .file = SITE "torch/nn/modules/linear.py",
               .line = 134 },
  [PY_LIB2] = { .function = "Module._call_impl",
                .python = true,
                .code = LIB,
                .file = SITE "torch/nn/modules/module.py",
                .line = 1779 },
  [PY_USER] = { .function = "train_step",
                .python = true,
                .code = USER,
                .file = "/home/user/work/train.py",
                .line = 42 },
  [PY_NOLINE] = { .function = "build",
                  .python = true,
                  .code = USER,
                  .file = "/home/user/work/model.py" },
  [EVAL] = { .function = "_PyEval_EvalFrameDefault", .code = CMG__CODE_INTERP },
  [CUT] = { .function = "[12 frames left out]", .code = LIB, .cut = 12 },
};

static struct cmg__index_module mods[] = { { .name = "libtorch_cuda.so" } };

/* A stack, innermost first, its default view [lo, hi) (hi 0: all), and
 * its one-line view, with all frames, and whether it is a title. */
static const struct line_case {
  const char *what;
  uint32_t frames[12];
  uint32_t lo, hi;
  const char *line, *all;
  bool title;
} cases[] = {
  { "a Python title: the package's file from the package down",
    { CU_RT, EVAL, PY_LIB, EVAL, PY_USER, EVAL, END },
    0,
    0,
    "train_step (train.py:42) > Linear.forward "
    "(torch/nn/modules/linear.py:134)",
    "Linear.forward (linear.py:134) < train_step (train.py:42)",
    true },
  { "a native title",
    { CU_RT, AT_EMPTY, TRAIN, MAIN, START, END },
    1,
    4,
    "train_step > at::empty",
    "cudaMalloc < at::empty < train_step < ...",
    true },
  { "a cut between the user's frame and the call",
    { CU_RT, AT_EMPTY, CUT, TRAIN, MAIN, END },
    0,
    0,
    "train_step > ... > at::empty",
    "cudaMalloc < at::empty < [12 frames left out] < ...",
    true },
  { "a Python frame without a line in a title",
    { CU_RT, EVAL, PY_LIB2, EVAL, PY_NOLINE, END },
    0,
    0,
    "build (model.py) > Module._call_impl (torch/nn/modules/module.py:1779)",
    NULL,
    true },
  { "no user frame: three innermost named frames, and more",
    { CU_RT, LIB_ANON, AT_EMPTY, C10_ALLOC, START, END },
    0,
    0,
    "cudaMalloc < at::empty < c10::cuda::CUDACachingAllocator::malloc "
    "< ...",
    NULL,
    false },
  { "the user's frame innermost: it leads, nothing more",
    { TRAIN, LIB_ANON, MAIN, START, END },
    0,
    0,
    "train_step < main < __libc_start_main",
    NULL,
    false },
  { "no user frame, Python frames: their labels, base names",
    { CU_RT, C10_ALLOC, EVAL, PY_LIB, EVAL, PY_LIB2, END },
    0,
    0,
    "Linear.forward (linear.py:134) < Module._call_impl (module.py:1779)",
    NULL,
    false },
  { "no name at all: the module and offset",
    { LIB_ANON, END },
    0,
    0,
    "libtorch_cuda.so+0x40",
    NULL,
    false },
};

static struct cmg__index_stack stacks[N(cases)];
static uint32_t stack_frames[N(cases)][12];

static void
make_index(struct cmg__index *ix)
{
  memset(ix, 0, sizeof(*ix));
  for (size_t f = 0; f < N_FRAMES; f++)
    frames[f].module = f == LIB_ANON ? 0 : CMG__TOOL_NONE;
  for (size_t i = 0; i < N(cases); i++) {
    uint32_t n = 0;

    while (cases[i].frames[n] != END)
      n++;
    memcpy(stack_frames[i], cases[i].frames, n * sizeof(uint32_t));
    stacks[i] = (struct cmg__index_stack){
      .n = n,
      .frames = stack_frames[i],
      .lo = cases[i].lo,
      .hi = cases[i].hi != 0 ? cases[i].hi : n,
    };
  }
  ix->frames = frames;
  ix->n_frames = N_FRAMES;
  ix->stacks = stacks;
  ix->n_stacks = N(cases);
  ix->modules = mods;
  ix->n_modules = N(mods);
}

static char *
put(const struct cmg__index *ix, uint32_t stack, bool all)
{
  struct harness_out o;

  cmg__one_line_put(harness_catch(&o), ix, stack, all);
  return harness_caught(&o);
}

static void
test_lines(const struct cmg__index *ix)
{
  for (uint32_t i = 0; i < N(cases); i++) {
    const struct line_case *c = &cases[i];
    char *line = put(ix, i, false);

    is_str(line, c->line, "%s", c->what);
    free(line);
    if (c->all != NULL) {
      line = put(ix, i, true);
      is_str(line, c->all, "%s: with all frames, the innermost labels",
             c->what);
      free(line);
    }
  }
  char *none = put(ix, CMG__TOOL_NONE, false);
  is_str(none, "(no stack)", "no stack");
  free(none);
  char *text = cmg__one_line_text(ix, 1, false);
  is_str(text, "train_step > at::empty", "the line as a string");
  free(text);
}

static void
test_title(const struct cmg__index *ix)
{
  for (uint32_t i = 0; i < N(cases); i++) {
    const struct line_case *c = &cases[i];
    struct harness_out o;
    char want[256];
    bool titled = cmg__one_line_title(harness_catch(&o), "  ", ix, i);
    char *got = harness_caught(&o);

    snprintf(want, sizeof(want), "  %s", c->line);
    is_int(titled, c->title, "%s: %s", c->what,
           c->title ? "a title" : "no title");
    is_str(got, c->title ? want : "", "%s: %s", c->what,
           c->title ? "the prefix, then the title" : "nothing printed");
    free(got);
  }
  struct harness_out o;
  bool titled =
      cmg__one_line_title(harness_catch(&o), "> ", ix, CMG__TOOL_NONE);
  char *got = harness_caught(&o);
  ok(!titled && got[0] == '\0', "no stack: no title, nothing printed");
  free(got);
}

/* The one-line view of the first group of v with api and bytes. */
static char *
group_line(const struct cmg__view *v, const char *api, uint64_t bytes)
{
  for (size_t i = 0; i < v->n_leaks; i++)
    if (strcmp(v->leaks[i].api, api) == 0 && v->leaks[i].bytes == bytes)
      return cmg__one_line_text(v->ix, v->leaks[i].stack, false);
  return strdup("(no such group)");
}

static void
test_fixtures(void)
{
  struct harness h;
  char *line;

  ok(harness_load(&h, "data/job-a.json") == 0, "job-a read");
  line = group_line(&h.v, "cudaMalloc", 3221225472u);
  is_str(line, "alloc_weights < load_model < main",
         "job-a: the CUDA runtime's and start-up frames are not named");
  free(line);
  line = group_line(&h.v, "cudaMalloc", 805306368u);
  is_str(line, "model::Buffer::grow < train_step < main",
         "job-a: a demangled name, without its parameters");
  free(line);
  line = group_line(&h.v, "cudaMalloc", 16777216u);
  is_str(line, "run_layer < train_step < main",
         "job-a: an unnamed frame is passed over");
  free(line);
  line = group_line(&h.v, "cuMemAlloc_v2", 4096);
  is_str(line, "(no stack)", "job-a: the group without a stack");
  free(line);
  harness_free(&h);

  ok(harness_load(&h, "data/gpu/torch-release-before.json") == 0,
     "a PyTorch report read");
  line = group_line(&h.v, "cudaMalloc", 32 << 20);
  is_str(line,
         "train (s1_release.py:11) > Module._wrapped_call_impl "
         "(torch/nn/modules/module.py:1779)",
         "PyTorch: the user's line, then the call into torch");
  free(line);
  harness_free(&h);
}

int
main(void)
{
  struct cmg__index ix;

  make_index(&ix);
  test_lines(&ix);
  test_title(&ix);
  test_fixtures();
  return done_testing();
}
