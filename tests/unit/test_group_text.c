/*
 * Unit tests of group_text.c, how a group's stack reads in the text of
 * summary, merge, check and diff: where its memory is, its numbered frames
 * read from the user's code first (a run of library frames folded into
 * one line naming its places, but for the call the user's code made; the
 * interpreter's frames of a Python stack left out; every frame keeping its
 * depth, past cuts too), and a group's title or, where none of its frames
 * is the user's, the threads it was made on.  The stacks are built by
 * hand, each frame's code given, so the expected text is worked out from
 * the rules alone; the fixtures' groups are checked against the golden
 * text of the tool.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reader/load/model.h"
#include "reader/model/code.h"
#include "reader/model/index.h"
#include "reader/model/view.h"
#include "reader/show/group_text.h"
#include "reader/tool.h"
#include "reader_harness.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define END UINT32_MAX
#define SITE "/opt/venv/lib/python3.12/site-packages/"
#define LIB CMG__CODE_LIBRARY
#define USER CMG__CODE_USER

static void
test_where(void)
{
  static const struct {
    const char *kind;
    int ordinal;
    const char *want;
  } cases[] = {
    { "device", 0, "device 0" },
    { "device", -1, "no device" },
    { "host", -1, "pinned host memory" },
    { "host", 2, "pinned host memory" },
    { "vmm_host", -1, "VMM host memory" },
    { "vmm", 1, "VMM, device 1" },
    { "import", 2, "imported, device 2" },
    { "graph", 0, "graph memory pool, device 0" },
    { "context", 3, "context, device 3" },
    { "array", 1, "array, device 1" },
    { "managed", -1, "managed" },
  };
  char buf[64], small[8];

  for (size_t i = 0; i < N(cases); i++)
    is_str(cmg__group_text_where(cases[i].kind, cases[i].ordinal, buf,
                                 sizeof(buf)),
           cases[i].want, "where: %s, ordinal %d", cases[i].kind,
           cases[i].ordinal);
  ok(cmg__group_text_where("graph", 0, small, sizeof(small)) == small &&
         strcmp(small, "graph m") == 0,
     "where: cut to the buffer, terminated");
}

enum { M_CUDART, M_C10, M_CPU, M_CUDA, M_APP, M_LIBC, M_PY, M_L1, N_MODS = 14 };

static struct cmg__index_module mods[N_MODS] = {
  [M_CUDART] = { .name = "libcudart.so" },
  [M_C10] = { .name = "libc10_cuda.so" },
  [M_CPU] = { .name = "libtorch_cpu.so" },
  [M_CUDA] = { .name = "libtorch_cuda.so" },
  [M_APP] = { .name = "app" },
  [M_LIBC] = { .name = "libc.so.6" },
  [M_PY] = { .name = "libpython3.12.so" },
  [M_L1] = { .name = "lib1.so" },
  [M_L1 + 1] = { .name = "lib2.so" },
  [M_L1 + 2] = { .name = "lib3.so" },
  [M_L1 + 3] = { .name = "lib4.so" },
  [M_L1 + 4] = { .name = "lib5.so" },
  [M_L1 + 5] = { .name = "lib6.so" },
};

enum {
  CU_RT,
  C10,
  AT1,
  AT2,
  AT3,
  TRAIN,
  MAIN,
  START,
  EVAL,
  PY_LIB,
  PY_LIB2,
  PY_USER,
  PY_MAIN,
  CUT38,
  CUTU,
  CUTX,
  L1,
  N_FRAMES = L1 + 6
};

#define NATIVE(m, off, fn, c)                                                  \
  {                                                                            \
    .module = (m), .has_offset = true, .offset = (off), .function = (fn),      \
    .code = (c)                                                                \
  }
#define PY(fn, path, ln, c)                                                    \
  {                                                                            \
    .module = CMG__TOOL_NONE, .python = true, .function = (fn),                \
    .file = (path), .line = (ln), .code = (c)                                  \
  }
#define CUTF(fn, n)                                                            \
  {                                                                            \
    .module = CMG__TOOL_NONE, .function = (fn), .cut = (n), .code = LIB        \
  }

static struct cmg__index_frame frames[N_FRAMES] = {
  [CU_RT] = NATIVE(M_CUDART, 0x10, "cudaMalloc", LIB),
  [C10] = NATIVE(M_C10, 0x20, "c10::alloc", LIB),
  [AT1] = NATIVE(M_CPU, 0x30, "at::empty", LIB),
  [AT2] = NATIVE(M_CPU, 0x40, "at::zeros", LIB),
  [AT3] = NATIVE(M_CUDA, 0x50, "at::mm", LIB),
  [TRAIN] = NATIVE(M_APP, 0x60, "train_step", USER),
  [MAIN] = NATIVE(M_APP, 0x70, "main", USER),
  [START] = NATIVE(M_LIBC, 0x80, "__libc_start_main", LIB),
  [EVAL] = NATIVE(M_PY, 0x90, "_PyEval_EvalFrameDefault", CMG__CODE_INTERP),
  [PY_LIB] = PY("Linear.forward", SITE "torch/nn/modules/linear.py", 134, LIB),
  [PY_LIB2] =
      PY("Module._call_impl", SITE "torch/nn/modules/module.py", 1779, LIB),
  [PY_USER] = PY("train_step", "/home/u/train.py", 42, USER),
  [PY_MAIN] = PY("<module>", "/home/u/train.py", 50, USER),
  [CUT38] = CUTF("[38 native frames not recorded]", 38),
  [CUTU] = CUTF("[native frames not recorded]", CMG__MODEL_CUT_UNKNOWN),
  [CUTX] = CUTF("5 frames lost", 5),
};

/* The stacks, innermost first, with their default view [lo, hi) (hi 0:
 * all) and whether the capture said it was truncated. */
static const struct {
  uint32_t frames[16];
  uint32_t lo, hi;
  bool truncated;
} specs[] = {
#define S_NATIVE 0
  { { CU_RT, C10, AT1, AT2, TRAIN, MAIN, START, END }, 1, 6, false },
#define S_SHORT 1
  { { AT1, TRAIN, MAIN, END }, 0, 0, false },
#define S_OUTER 2
  { { TRAIN, AT1, AT2, AT3, END }, 0, 0, false },
#define S_NOUSER 3
  { { CU_RT, C10, AT1, END }, 0, 0, false },
#define S_PYTHON 4
  { { CU_RT, C10, AT1, EVAL, PY_LIB, EVAL, PY_LIB2, EVAL, PY_USER, EVAL,
      PY_MAIN, END },
    1,
    0,
    false },
#define S_PLACES 5
  { { L1, L1 + 1, L1 + 2, L1 + 3, L1 + 4, L1 + 5, TRAIN, END }, 0, 0, false },
#define S_CUT 6
  { { AT1, CUT38, AT2, TRAIN, MAIN, END }, 0, 0, false },
#define S_CUTS 7
  { { TRAIN, CUTU, MAIN, CUTX, START, END }, 0, 0, true },
#define S_DEEPER 8
  { { TRAIN, MAIN, END }, 0, 0, true },
#define S_DEEPER_HIDDEN 9
  { { TRAIN, MAIN, START, END }, 0, 2, true },
#define S_USER_ONLY 10
  { { TRAIN, MAIN, END }, 0, 0, false },
};

static struct cmg__index_stack stacks[N(specs)];
static uint32_t stack_frames[N(specs)][16];

static void
make_index(struct cmg__index *ix)
{
  memset(ix, 0, sizeof(*ix));
  for (int i = 0; i < 6; i++) {
    static const char *names[] = { "f1", "f2", "f3", "f4", "f5", "f6" };
    frames[L1 + i] = (struct cmg__index_frame)NATIVE(
        (uint32_t)(M_L1 + i), 0x100u + (unsigned)i, (char *)names[i], LIB);
  }
  for (size_t i = 0; i < N(specs); i++) {
    uint32_t n = 0;

    while (specs[i].frames[n] != END)
      n++;
    memcpy(stack_frames[i], specs[i].frames, n * sizeof(uint32_t));
    stacks[i] = (struct cmg__index_stack){
      .truncated = specs[i].truncated,
      .n = n,
      .frames = stack_frames[i],
      .lo = specs[i].lo,
      .hi = specs[i].hi != 0 ? specs[i].hi : n,
    };
  }
  *ix = (struct cmg__index){ .modules = mods,
                             .n_modules = N_MODS,
                             .frames = frames,
                             .n_frames = N_FRAMES,
                             .stacks = stacks,
                             .n_stacks = N(specs) };
}

static char *
frames_of(const struct cmg__index *ix, uint32_t stack, bool all)
{
  struct harness_out o;

  cmg__group_text_frames(harness_catch(&o), ix, stack, all);
  return harness_caught(&o);
}

static void
check_frames(const struct cmg__index *ix, uint32_t stack, bool all,
             const char *want, const char *what)
{
  char *got = frames_of(ix, stack, all);

  is_str(got, want, "%s", what);
  free(got);
}

static void
test_frames(const struct cmg__index *ix)
{
  check_frames(ix, CMG__TOOL_NONE, false,
               "    (no stack was recorded: stack_depth=0, or the capture "
               "failed)\n",
               "no stack: said so");
  check_frames(ix, S_NATIVE, false,
               "    ... 2 frames in libc10_cuda.so, libtorch_cpu.so\n"
               "    #2 at::zeros (libtorch_cpu.so+0x40)\n"
               "    #3 train_step (app+0x60)\n"
               "    #4 main (app+0x70)\n",
               "a library's run folded but for the call the user made, "
               "numbered from the shown range");
  check_frames(ix, S_NATIVE, true,
               "    #0 cudaMalloc (libcudart.so+0x10)\n"
               "    #1 c10::alloc (libc10_cuda.so+0x20)\n"
               "    #2 at::empty (libtorch_cpu.so+0x30)\n"
               "    #3 at::zeros (libtorch_cpu.so+0x40)\n"
               "    #4 train_step (app+0x60)\n"
               "    #5 main (app+0x70)\n"
               "    #6 __libc_start_main (libc.so.6+0x80)\n",
               "all frames: every frame, none folded");
  check_frames(ix, S_SHORT, false,
               "    #0 at::empty (libtorch_cpu.so+0x30)\n"
               "    #1 train_step (app+0x60)\n"
               "    #2 main (app+0x70)\n",
               "a run of one frame is not folded");
  check_frames(ix, S_OUTER, false,
               "    #0 train_step (app+0x60)\n"
               "    ... 3 frames in libtorch_cpu.so, libtorch_cuda.so\n",
               "a run the user's code did not call folds whole, each place "
               "once");
  check_frames(ix, S_NOUSER, false,
               "    #0 cudaMalloc (libcudart.so+0x10)\n"
               "    #1 c10::alloc (libc10_cuda.so+0x20)\n"
               "    #2 at::empty (libtorch_cpu.so+0x30)\n",
               "no frame of the user's: nothing folded");
  check_frames(ix, S_PLACES, false,
               "    ... 5 frames in lib1.so, lib2.so, lib3.so, lib4.so, ...\n"
               "    #5 f6 (lib6.so+0x105)\n"
               "    #6 train_step (app+0x60)\n",
               "a fold names four places, then \"...\"");
}

static void
test_python(const struct cmg__index *ix)
{
  check_frames(ix, S_PYTHON, false,
               "    ... 3 frames in libc10_cuda.so, libtorch_cpu.so, torch\n"
               "    #5 Module._call_impl (" SITE
               "torch/nn/modules/module.py:1779)\n"
               "    #7 train_step (/home/u/train.py:42)\n"
               "    #9 <module> (/home/u/train.py:50)\n",
               "Python: the interpreter's frames left out, a package named "
               "by its top folder, depths kept");
  char *all = frames_of(ix, S_PYTHON, true);
  ok(strstr(all, "    #0 cudaMalloc (libcudart.so+0x10)\n") != NULL &&
         strstr(all, "    #3 _PyEval_EvalFrameDefault (libpython3.12.so+0x90)\n"
                     "    #4 Linear.forward (" SITE
                     "torch/nn/modules/linear.py:134)\n") != NULL &&
         strstr(all, "    #10 <module> (/home/u/train.py:50)\n") != NULL &&
         strstr(all, "...") == NULL,
     "Python, all frames: the interpreter's too, nothing folded");
  free(all);
}

static void
test_cuts(const struct cmg__index *ix)
{
  check_frames(ix, S_CUT, false,
               "    #0 at::empty (libtorch_cpu.so+0x30)\n"
               "    ... 38 native frames not recorded here\n"
               "    #39 at::zeros (libtorch_cpu.so+0x40)\n"
               "    #40 train_step (app+0x60)\n"
               "    #41 main (app+0x70)\n",
               "a cut is said, and the frames past it counted in");
  check_frames(ix, S_CUTS, false,
               "    #0 train_step (app+0x60)\n"
               "    ... native frames not recorded here\n"
               "    #1 main (app+0x70)\n"
               "    ... 5 frames lost\n"
               "    #7 __libc_start_main (libc.so.6+0x80)\n",
               "a cut of unknown size counts none; a name without brackets "
               "as it is; a placed cut is no unplaced truncation");
  check_frames(ix, S_DEEPER, false,
               "    #0 train_step (app+0x60)\n"
               "    #1 main (app+0x70)\n"
               "    ... (the stack was deeper than stack_depth)\n",
               "truncated without a cut: said after the last frame");
  check_frames(ix, S_DEEPER_HIDDEN, false,
               "    #0 train_step (app+0x60)\n"
               "    #1 main (app+0x70)\n",
               "not said when the shown range stops short of the end");
}

static char *
print_of(const struct cmg__index *ix, const struct cmg__view_leak *l, bool all)
{
  struct harness_out o;

  cmg__group_text_print(harness_catch(&o), ix, l, all);
  return harness_caught(&o);
}

static void
test_print(const struct cmg__index *ix)
{
  struct cmg__model_thread named[] = {
    { .tid = 1, .name = "pt_autograd_0" },
    { .tid = 2, .name = NULL },
    { .tid = 3, .name = "pt_autograd_1" },
  };
  struct cmg__model_thread five[] = {
    { .tid = 1, .name = "a" }, { .tid = 2, .name = "b" },
    { .tid = 3, .name = "c" }, { .tid = 4, .name = "d" },
    { .tid = 5, .name = "e" },
  };
  struct cmg__view_leak l = { .stack = S_NATIVE,
                              .threads = { .n = 3, .list = named } };
  char *got = print_of(ix, &l, false);
  char *want = frames_of(ix, S_NATIVE, false);
  char head[] = "  train_step > at::zeros\n";

  ok(strncmp(got, head, strlen(head)) == 0 &&
         strcmp(got + strlen(head), want) == 0,
     "a title, then the frames; no threads beside the user's code");
  free(got);
  free(want);

  l.stack = S_NOUSER;
  got = print_of(ix, &l, false);
  ok(strncmp(got,
             "  on thread pt_autograd_0, pt_autograd_1, ... (no frame of your "
             "code)\n    #0 cudaMalloc",
             strlen("  on thread pt_autograd_0, pt_autograd_1, ... (no frame "
                    "of your code)\n    #0 cudaMalloc")) == 0,
     "no frame of the user's: the named threads, \"...\" for an unnamed one");
  free(got);
  l.threads = (struct cmg__model_threads){ .n = 2, .list = five };
  got = print_of(ix, &l, false);
  ok(strncmp(got, "  on thread a, b (no frame of your code)\n", 41) == 0,
     "every thread named: no \"...\"");
  free(got);
  l.threads = (struct cmg__model_threads){ .n = 5, .list = five };
  got = print_of(ix, &l, false);
  ok(strncmp(got, "  on thread a, b, c, d, ... (no frame of your code)\n",
             51) == 0,
     "at most four threads named");
  free(got);
  l.threads = (struct cmg__model_threads){ .n = 1, .list = &named[1] };
  got = print_of(ix, &l, false);
  ok(strncmp(got, "    #0 cudaMalloc", 17) == 0, "no named thread: no line");
  free(got);

  l.stack = S_USER_ONLY;
  l.threads = (struct cmg__model_threads){ .n = 3, .list = named };
  got = print_of(ix, &l, false);
  is_str(got, "    #0 train_step (app+0x60)\n    #1 main (app+0x70)\n",
         "the user's frames but no title: the frames alone");
  free(got);
  l.stack = S_NOUSER;
  got = print_of(ix, &l, true);
  want = frames_of(ix, S_NOUSER, true);
  is_str(got, want, "all frames: no title and no threads, every frame");
  free(got);
  free(want);
}

static void
test_fixture(void)
{
  struct harness h;
  char *golden = harness_slurp("golden/summary-job-a.txt");
  size_t checked = 0, same = 0;

  ok(harness_load(&h, "data/job-a.json") == 0 && golden != NULL,
     "job-a read, and its golden summary");
  for (size_t i = 0; golden != NULL && i < h.v.n_leaks; i++) {
    char *got = print_of(&h.ix, &h.v.leaks[i], false);
    char *at = strstr(golden, got);

    checked++;
    same += at != NULL && at[-1] == '\n' && at[strlen(got)] == '\n';
    free(got);
  }
  is_u64(checked, 7, "job-a: seven groups");
  is_u64(same, 7, "each prints as in the golden summary, a whole block");
  free(golden);
  harness_free(&h);
}

int
main(void)
{
  struct cmg__index ix;

  test_where();
  make_index(&ix);
  test_frames(&ix);
  test_python(&ix);
  test_cuts(&ix);
  test_print(&ix);
  test_fixture();
  return done_testing();
}
