/*
 * Unit tests of user_first.c, the rule a stack's one-line view follows:
 * the user's frame and the call it made (a title) where the default view
 * has the user's code below a library's named frame, the interpreter's
 * frames never that call, a cut between the two said; else the user's
 * innermost named frame first, then the frames that say something (Python
 * ones, named ones); with all frames, the whole stack.  The stacks are
 * built by hand, each frame's code given, so that only the rule is tested.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "reader/model/code.h"
#include "reader/model/index.h"
#include "reader/model/user_first.h"
#include "reader/tool.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The frames the stacks are made of, by id. */
enum {
  CU_DRV,    /* cuMemAlloc_v2 in libcuda: a CUDA frame */
  CU_RT,     /* cudaMalloc in libcudart */
  AT_EMPTY,  /* at::empty in libtorch_cpu.so */
  LIB_ANON,  /* an address in libtorch_cuda.so, no name */
  C10_ALLOC, /* c10::cuda::CUDACachingAllocator::malloc */
  TRAIN,     /* train_step in the user's program */
  MAIN,      /* main in the user's program */
  START,     /* __libc_start_main: start-up code */
  USER_ANON, /* an address in the user's program, no name */
  PY_LIB,    /* Python: torch/nn/modules/linear.py forward */
  PY_LIB2,   /* Python: torch/nn/modules/module.py _call_impl */
  PY_USER,   /* Python: model.py build */
  PY_MAIN,   /* Python: train.py <module> */
  EVAL,      /* _PyEval_EvalFrameDefault: the interpreter */
  EXT,       /* myext_alloc in the user's own native extension */
  CUT,       /* "[12 frames left out]": a place where the capture cut */
  N_FRAMES
};

static const struct {
  const char *function;
  unsigned code;
  bool python;
  uint32_t cut;
} frame_table[N_FRAMES] = {
  [CU_DRV] = { "cuMemAlloc_v2", CMG__CODE_LIBRARY, false, 0 },
  [CU_RT] = { "cudaMalloc", CMG__CODE_LIBRARY, false, 0 },
  [AT_EMPTY] = { "at::empty", CMG__CODE_LIBRARY, false, 0 },
  [LIB_ANON] = { NULL, CMG__CODE_LIBRARY, false, 0 },
  [C10_ALLOC] = { "c10::cuda::CUDACachingAllocator::malloc", CMG__CODE_LIBRARY,
                  false, 0 },
  [TRAIN] = { "train_step", CMG__CODE_USER, false, 0 },
  [MAIN] = { "main", CMG__CODE_USER, false, 0 },
  [START] = { "__libc_start_main", CMG__CODE_LIBRARY, false, 0 },
  [USER_ANON] = { NULL, CMG__CODE_USER, false, 0 },
  [PY_LIB] = { "Linear.forward", CMG__CODE_LIBRARY, true, 0 },
  [PY_LIB2] = { "Module._call_impl", CMG__CODE_LIBRARY, true, 0 },
  [PY_USER] = { "Model.build", CMG__CODE_USER, true, 0 },
  [PY_MAIN] = { "<module>", CMG__CODE_USER, true, 0 },
  [EVAL] = { "_PyEval_EvalFrameDefault", CMG__CODE_INTERP, false, 0 },
  [EXT] = { "myext_alloc", CMG__CODE_USER, false, 0 },
  [CUT] = { "[12 frames left out]", CMG__CODE_LIBRARY, false, 12 },
};

#define END UINT32_MAX
#define MAX_DEPTH 12

/* A stack, innermost frame first, and its default view [lo, hi); hi 0 is
 * the whole stack. */
struct stack_case {
  const char *what;
  uint32_t frames[MAX_DEPTH + 1]; /* up to END */
  uint32_t lo, hi;
  bool all_frames;
  /* The headline wanted. */
  enum cmg__user_first_kind kind;
  uint32_t user, call; /* TITLE */
  bool cut;
  uint32_t want[CMG__USER_FIRST_MAX + 1]; /* FRAMES, up to END */
  bool more;
  bool has_user; /* cmg__user_first_has_user_frame */
};

#define TITLE(u, c, x) CMG__USER_FIRST_TITLE, u, c, x, { END }, false
#define FRAMES(more, ...)                                                      \
  CMG__USER_FIRST_FRAMES, 0, 0, false, { __VA_ARGS__, END }, more

/* Each case: what it shows, the stack, lo, hi, all_frames, the headline
 * wanted, and whether the stack holds the user's code. */
/* clang-format off */
static const struct stack_case cases[] = {
  { "a native program: its frame, then the library call it made",
    { CU_DRV, CU_RT, AT_EMPTY, TRAIN, MAIN, START, END },
    2, 5, false, TITLE(TRAIN, AT_EMPTY, false), true },
  { "the call is the nearest named frame inside the user's",
    { CU_RT, C10_ALLOC, LIB_ANON, TRAIN, MAIN, END },
    1, 0, false, TITLE(TRAIN, C10_ALLOC, false), true },
  { "the user's innermost frame is the title's, not an outer one",
    { AT_EMPTY, TRAIN, LIB_ANON, C10_ALLOC, MAIN, END },
    0, 0, false, TITLE(TRAIN, AT_EMPTY, false), true },
  { "the interpreter's frames are never the call",
    { CU_RT, EVAL, PY_USER, EVAL, PY_MAIN, END },
    0, 0, false, TITLE(PY_USER, CU_RT, false), true },
  { "a Python program: its line, then the package's frame it called",
    { CU_RT, C10_ALLOC, EVAL, PY_LIB, EVAL, PY_LIB2, EVAL, PY_USER, EVAL,
      PY_MAIN, END },
    1, 0, false, TITLE(PY_USER, PY_LIB2, false), true },
  { "frames cut between the two: the nearest recorded, and the cut said",
    { CU_RT, AT_EMPTY, CUT, TRAIN, MAIN, END },
    0, 0, false, TITLE(TRAIN, AT_EMPTY, true), true },
  { "a named frame outside the cut is the call, with no cut",
    { CU_RT, CUT, AT_EMPTY, TRAIN, END },
    0, 0, false, TITLE(TRAIN, AT_EMPTY, false), true },
  { "the user's frame innermost: it leads, then the named frames",
    { TRAIN, LIB_ANON, MAIN, START, END },
    0, 0, false, FRAMES(false, TRAIN, MAIN, START), true },
  { "an unnamed frame of the user's innermost: the named one leads",
    { USER_ANON, AT_EMPTY, TRAIN, MAIN, END },
    0, 0, false, FRAMES(false, TRAIN, MAIN), true },
  { "an extension of the user's innermost, called through a package",
    { EXT, EVAL, PY_LIB, EVAL, PY_USER, EVAL, PY_MAIN, END },
    0, 0, false, FRAMES(true, EXT, PY_LIB, PY_USER), true },
  { "no user frame: the innermost named frames, at most three",
    { CU_RT, LIB_ANON, AT_EMPTY, C10_ALLOC, START, END },
    0, 0, false, FRAMES(true, CU_RT, AT_EMPTY, C10_ALLOC), false },
  { "no user frame and no name: the innermost frames as they are",
    { LIB_ANON, LIB_ANON, END },
    0, 0, false, FRAMES(false, LIB_ANON, LIB_ANON), false },
  { "no user frame, Python frames: only those",
    { CU_RT, C10_ALLOC, EVAL, PY_LIB, EVAL, PY_LIB2, END },
    0, 0, false, FRAMES(false, PY_LIB, PY_LIB2), false },
  { "user frames outside the default view do not count",
    { CU_RT, AT_EMPTY, TRAIN, MAIN, END },
    0, 2, false, FRAMES(false, CU_RT, AT_EMPTY), false },
  { "every frame: the whole stack, innermost first",
    { CU_DRV, CU_RT, AT_EMPTY, TRAIN, MAIN, START, END },
    2, 5, true, FRAMES(true, CU_DRV, CU_RT, AT_EMPTY), true },
  { "every frame: no title, and the user's frame does not lead",
    { LIB_ANON, AT_EMPTY, TRAIN, END },
    0, 0, true, FRAMES(false, AT_EMPTY, TRAIN), true },
};
/* clang-format on */

static struct cmg__index_frame frames[N_FRAMES];
static struct cmg__index_stack stacks[N(cases)];
static uint32_t stack_frames[N(cases)][MAX_DEPTH];

static void
make_index(struct cmg__index *ix)
{
  memset(ix, 0, sizeof(*ix));
  for (size_t f = 0; f < N_FRAMES; f++) {
    frames[f].module = CMG__TOOL_NONE;
    frames[f].function = (char *)frame_table[f].function;
    frames[f].code = frame_table[f].code;
    frames[f].python = frame_table[f].python;
    frames[f].cut = frame_table[f].cut;
  }
  for (size_t i = 0; i < N(cases); i++) {
    uint32_t n = 0;

    while (cases[i].frames[n] != END)
      n++;
    memcpy(stack_frames[i], cases[i].frames, n * sizeof(uint32_t));
    stacks[i].n = n;
    stacks[i].frames = stack_frames[i];
    stacks[i].lo = cases[i].lo;
    stacks[i].hi = cases[i].hi != 0 ? cases[i].hi : n;
  }
  ix->frames = frames;
  ix->n_frames = N_FRAMES;
  ix->stacks = stacks;
  ix->n_stacks = N(cases);
}

static const char *
name(uint32_t f)
{
  return f < N_FRAMES && frame_table[f].function != NULL
             ? frame_table[f].function
             : "(unnamed)";
}

static void
test_headline(const struct cmg__index *ix)
{
  for (size_t i = 0; i < N(cases); i++) {
    const struct stack_case *c = &cases[i];
    struct cmg__user_first h;

    cmg__user_first_headline(ix, (uint32_t)i, c->all_frames, &h);
    is_int(h.kind, c->kind, "%s: kind", c->what);
    if (c->kind == CMG__USER_FIRST_TITLE) {
      ok(h.user == c->user && h.call == c->call && h.cut == c->cut,
         "%s: %s, calling %s%s", c->what, name(c->user), name(c->call),
         c->cut ? ", cut" : "");
      if (h.user != c->user || h.call != c->call || h.cut != c->cut)
        printf("#   got %s, calling %s%s\n", name(h.user), name(h.call),
               h.cut ? ", cut" : "");
      continue;
    }
    uint32_t n = 0;
    bool same = true;
    while (c->want[n] != END)
      n++;
    same = h.n == n && h.more == c->more;
    for (uint32_t k = 0; same && k < n; k++)
      same = h.frames[k] == c->want[k];
    ok(same, "%s: %u frames, %s first%s", c->what, n, name(c->want[0]),
       c->more ? ", more" : "");
    if (!same) {
      printf("#   got:");
      for (uint32_t k = 0; k < h.n && k < CMG__USER_FIRST_MAX; k++)
        printf(" %s", name(h.frames[k]));
      printf("%s\n", h.more ? " ..." : "");
    }
  }

  struct cmg__user_first h;
  memset(&h, 0xa5, sizeof(h));
  cmg__user_first_headline(ix, CMG__TOOL_NONE, false, &h);
  ok(h.kind == CMG__USER_FIRST_NONE && h.n == 0 && !h.more,
     "no stack: no headline");
}

static void
test_has_user_frame(const struct cmg__index *ix)
{
  for (size_t i = 0; i < N(cases); i++)
    is_int(cmg__user_first_has_user_frame(ix, (uint32_t)i), cases[i].has_user,
           "%s: %s the user's code", cases[i].what,
           cases[i].has_user ? "holds" : "does not hold");
  ok(!cmg__user_first_has_user_frame(ix, CMG__TOOL_NONE),
     "no stack holds no user's code");
}

static void
test_left_out(const struct cmg__index *ix)
{
  /* cases[3]: CU_RT, EVAL, PY_USER, EVAL, PY_MAIN. */
  const uint32_t py = 3;
  /* cases[0]: CU_DRV, CU_RT, AT_EMPTY, TRAIN, MAIN, START. */
  const uint32_t native = 0;

  ok(cmg__user_first_has_python(ix, py, 0, 5), "a Python stack has Python");
  ok(!cmg__user_first_has_python(ix, py, 0, 2),
     "its native frames alone do not");
  ok(cmg__user_first_has_python(ix, py, 2, 3), "one Python frame is enough");
  ok(!cmg__user_first_has_python(ix, native, 0, 6),
     "a native stack has no Python");
  ok(!cmg__user_first_has_python(ix, py, 2, 2), "an empty range has none");
  ok(cmg__user_first_is_left_out(ix, py, 1, true) &&
         cmg__user_first_is_left_out(ix, py, 3, true),
     "the interpreter's frames are left out of a Python stack");
  ok(!cmg__user_first_is_left_out(ix, py, 1, false),
     "but kept in a stack without Python frames");
  ok(!cmg__user_first_is_left_out(ix, py, 0, true) &&
         !cmg__user_first_is_left_out(ix, py, 2, true),
     "a library's and the user's frames are kept");
}

int
main(void)
{
  struct cmg__index ix;

  make_index(&ix);
  test_headline(&ix);
  test_has_user_frame(&ix);
  test_left_out(&ix);
  return done_testing();
}
