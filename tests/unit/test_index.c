/*
 * Unit tests of index.c, what makes a call path one stack in every report:
 * modules by base name (another machine or container has another path),
 * native frames by (module, offset, function) and never by address, which
 * ASLR moves, unless a frame has nothing else; Python frames by function,
 * file and line; stacks by their frames.  Then what the index says of
 * each: a frame's class and whose code it is (a cut being nobody's), the
 * range shown by default (CUDA frames off the inner end, start-up frames
 * off the outer end, never the whole stack), whether a truncated stack
 * says where, and that thousands of frames keep their ids as it grows.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "reader/model/code.h"
#include "reader/model/frame_class.h"
#include "reader/model/index.h"
#include "reader/tool.h"
#include "report_builder.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The frames both reports have, in the order of the stack that lists
 * them all. */
enum {
  F_ALLOC,   /* libmodel.so+0x10 alloc */
  F_ALLOC2,  /* libmodel.so+0x10 alloc2: same place, another name */
  F_APP,     /* app+0x10 alloc: same offset, another module */
  F_UNNAMED, /* libmodel.so+0x30, no name */
  F_PY,      /* build, model.py:3 */
  F_PY_LINE, /* build, model.py:4 */
  F_PY_FILE, /* build, other.py:3 */
  F_DWARF,   /* app+0x40 train: a file and line in the first report only */
  N_SHARED
};

/* Adds the shared frames to r, in the order given by perm, their
 * addresses moved by slide; the frame ids, by the enum above, in out. */
static void
add_shared(struct cmg__model_report *r, uint32_t lib, uint32_t app,
           const int *perm, uint64_t slide, bool dwarf, uint32_t *out)
{
  for (int i = 0; i < N_SHARED; i++) {
    uint32_t f = 0;

    switch (perm[i]) {
    case F_ALLOC:
      f = report_frame(r, lib, 0x10, "alloc");
      break;
    case F_ALLOC2:
      f = report_frame(r, lib, 0x10, "alloc2");
      break;
    case F_APP:
      f = report_frame(r, app, 0x10, "alloc");
      break;
    case F_UNNAMED:
      f = report_frame(r, lib, 0x30, NULL);
      break;
    case F_PY:
      f = report_py_frame(r, "build", "/u/model.py", 3);
      break;
    case F_PY_LINE:
      f = report_py_frame(r, "build", "/u/model.py", 4);
      break;
    case F_PY_FILE:
      f = report_py_frame(r, "build", "/u/other.py", 3);
      break;
    case F_DWARF:
      f = report_frame(r, app, 0x40, "train");
      if (dwarf) {
        r->frames[f].file = strdup("/src/train.c");
        r->frames[f].line = 12;
      }
      break;
    }
    r->frames[f].address += slide;
    out[perm[i]] = f;
  }
}

static void
test_identity(void)
{
  static const int order_a[N_SHARED] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  static const int order_b[N_SHARED] = { 7, 5, 3, 1, 0, 2, 4, 6 };
  struct cmg__model_report a, b;
  struct cmg__index ix;
  uint32_t fa[N_SHARED], fb[N_SHARED], ids_a[4], ids_b[4];

  report_init(&a, "a.json", 1);
  uint32_t lib = report_module(&a, "/opt/a/lib/libmodel.so", "a1");
  uint32_t app = report_module(&a, "/opt/app/bin/app", "a2");
  a.modules[lib].note = "a note";
  add_shared(&a, lib, app, order_a, 0, true, fa);
  uint32_t addr_a = report_frame(&a, CMG__TOOL_NONE, 0x5555, NULL);
  uint32_t nooff_a = report_frame(&a, lib, 0x50, "jit");
  a.frames[nooff_a].has_offset = false;
  REPORT_STACK(&a, fa[0], fa[1], fa[2], fa[3], fa[4], fa[5], fa[6], fa[7]);
  REPORT_STACK(&a, fa[F_ALLOC], fa[F_APP]);
  REPORT_STACK(&a, addr_a, nooff_a);
  REPORT_STACK(&a, fa[F_APP], fa[F_ALLOC]);

  /* Another run elsewhere: other paths, other build-ids, its tables in
   * another order, its addresses moved. */
  report_init(&b, "b.json", 2);
  app = report_module(&b, "/srv/app", "b2");
  lib = report_module(&b, "/srv/b/libmodel.so", "b1");
  add_shared(&b, lib, app, order_b, 0x100000, false, fb);
  uint32_t addr_b = report_frame(&b, CMG__TOOL_NONE, 0x6666, NULL);
  uint32_t nooff_b = report_frame(&b, lib, 0x50, "jit");
  b.frames[nooff_b].has_offset = false;
  b.frames[nooff_b].address += 0x100000;
  REPORT_STACK(&b, fb[F_APP], fb[F_ALLOC]);
  REPORT_STACK(&b, fb[0], fb[1], fb[2], fb[3], fb[4], fb[5], fb[6], fb[7]);
  REPORT_STACK(&b, addr_b, nooff_b);
  b.stacks[0].truncated = true;

  cmg__index_init(&ix);
  is_int(cmg__index_add(&ix, &a, ids_a), 0, "the first report is indexed");
  is_int(ix.n_modules, 2, "two modules");
  is_int(ix.n_frames, N_SHARED + 2, "each of its frames once");
  is_int(ix.n_stacks, 4, "each of its stacks");
  ok(ids_a[0] != ids_a[1] && ids_a[1] != ids_a[3],
     "stacks of other frames, or the same in another order, are others");
  is_int(cmg__index_add(&ix, &b, ids_b), 0, "the second report is indexed");
  is_int(ix.n_modules, 2, "modules of the same base name are one");
  is_str(ix.modules[0].path, "/opt/a/lib/libmodel.so",
         "and keep the path of the first report");
  is_str(ix.modules[0].build_id, "a1", "and its build-id");
  is_str(ix.modules[0].name, "libmodel.so", "named by the base of the path");
  ok(ix.modules[0].name > ix.modules[0].path &&
         ix.modules[0].name < ix.modules[0].path + 23,
     "which points into the index's own copy");
  ok(ix.modules[0].note != NULL && strcmp(ix.modules[0].note, "a note") == 0,
     "a module's note is kept");
  is_int(ix.n_frames, N_SHARED + 4,
         "the frames by place and name are one; by address, two more");
  is_int(ids_b[1], ids_a[0], "the same call path is the same stack");
  is_int(ids_b[0], ids_a[3], "whatever the order of the report's tables");
  ok(ids_b[2] != ids_a[2], "frames known by their addresses alone differ");
  ok(ix.stacks[ids_a[3]].truncated,
     "a stack truncated in any report is truncated");
  ok(!ix.stacks[ids_a[0]].truncated, "and the others are not");

  const uint32_t *all = ix.stacks[ids_a[0]].frames;
  bool distinct = true;
  for (int i = 0; i < N_SHARED; i++)
    for (int j = i + 1; j < N_SHARED; j++)
      distinct = distinct && all[i] != all[j];
  ok(distinct, "another name, module, line or file: another frame");
  const struct cmg__index_frame *dw = &ix.frames[all[F_DWARF]];
  ok(dw->file != NULL && strcmp(dw->file, "/src/train.c") == 0 &&
         dw->line == 12,
     "a native frame's file is no part of its identity: the first's kept");
  const struct cmg__index_frame *py = &ix.frames[all[F_PY_LINE]];
  ok(py->python && py->module == CMG__TOOL_NONE && py->line == 4 &&
         strcmp(py->file, "/u/model.py") == 0 &&
         strcmp(py->function, "build") == 0,
     "a Python frame keeps its function, file and line");
  ok(ix.frames[all[F_UNNAMED]].function == NULL &&
         ix.frames[all[F_ALLOC]].offset == 0x10 &&
         ix.frames[all[F_ALLOC]].address == 0x7f0000000010ull,
     "a frame keeps its offset and the first report's address");
  cmg__index_free(&ix);
  ok(ix.n_frames == 0 && ix.frames == NULL && ix.module_map.cap == 0,
     "freed, the index is empty");
  cmg__read_report_free(&a);
  cmg__read_report_free(&b);
}

/* ---- what the index says of frames and stacks ---------------------------- */

struct range_case {
  const char *what;
  uint32_t lo, hi; /* wanted */
};

static void
test_ranges(void)
{
  static const struct range_case cases[] = {
    { "CUDA frames off the inner end, start-up off the outer", 2, 4 },
    { "all CUDA: the whole stack", 0, 2 },
    { "all start-up: the whole stack", 0, 2 },
    { "CUDA, then start-up, nothing between: the whole stack", 0, 2 },
    { "a Python frame of a CUDA name stays", 0, 2 },
    { "start-up frames inside the stack stay", 0, 3 },
    { "an empty stack", 0, 0 },
  };
  struct cmg__model_report r;
  struct cmg__index ix;
  uint32_t ids[N(cases)], lo, hi;

  report_init(&r, "r.json", 1);
  uint32_t drv = report_module(&r, "/usr/lib/libcuda.so.1", "1");
  uint32_t libc = report_module(&r, "/lib/x86_64-linux-gnu/libc.so.6", "2");
  uint32_t app = report_module(&r, "/opt/app/bin/app", "3");
  uint32_t cu = report_frame(&r, drv, 0x10, "cuMemAlloc_v2");
  uint32_t rt = report_frame(&r, app, 0x20, "cudaMalloc");
  uint32_t train = report_frame(&r, app, 0x30, "train");
  uint32_t main_ = report_frame(&r, app, 0x40, "main");
  uint32_t libc_start = report_frame(&r, libc, 0x50, "__libc_start_main");
  uint32_t start = report_frame(&r, app, 0x60, "_start");
  uint32_t thread = report_frame(&r, libc, 0x70, "start_thread");
  uint32_t py = report_py_frame(&r, "cudaMalloc", "/u/x.py", 1);
  uint32_t cut = report_frame(&r, CMG__TOOL_NONE, 0, "[3 frames left out]");
  r.frames[cut].cut = 3;
  REPORT_STACK(&r, cu, rt, train, main_, libc_start, start);
  REPORT_STACK(&r, cu, rt);
  REPORT_STACK(&r, libc_start, start);
  REPORT_STACK(&r, cu, libc_start);
  REPORT_STACK(&r, py, main_);
  REPORT_STACK(&r, train, thread, main_);
  report_stack_of(&r, NULL, 0);
  /* For the cuts: truncated without saying where, and saying. */
  uint32_t unplaced = REPORT_STACK(&r, train, main_);
  uint32_t placed = REPORT_STACK(&r, train, cut, main_);
  r.stacks[unplaced].truncated = r.stacks[placed].truncated = true;

  uint32_t all_ids[N(cases) + 2];
  cmg__index_init(&ix);
  is_int(cmg__index_add(&ix, &r, all_ids), 0, "indexed");
  memcpy(ids, all_ids, sizeof(ids));
  for (size_t i = 0; i < N(cases); i++) {
    cmg__index_stack_range(&ix, ids[i], false, &lo, &hi);
    ok(lo == cases[i].lo && hi == cases[i].hi, "%s: [%u, %u)", cases[i].what,
       cases[i].lo, cases[i].hi);
    if (lo != cases[i].lo || hi != cases[i].hi)
      printf("#   got [%u, %u)\n", lo, hi);
  }
  cmg__index_stack_range(&ix, ids[0], true, &lo, &hi);
  ok(lo == 0 && hi == 6, "with all frames, every one");
  lo = hi = 9;
  cmg__index_stack_range(&ix, CMG__TOOL_NONE, false, &lo, &hi);
  ok(lo == 0 && hi == 0, "no stack: nothing");

  const uint32_t *fr = ix.stacks[ids[0]].frames;
  is_int(ix.frames[fr[0]].class, CMG__FRAME_CLASS_CUDA, "the driver: CUDA");
  is_int(ix.frames[fr[4]].class, CMG__FRAME_CLASS_STARTUP, "libc: start-up");
  is_int(ix.frames[fr[2]].class, 0, "the program's: neither");
  is_int(ix.frames[ix.stacks[ids[4]].frames[0]].class, 0,
         "a Python frame: never a class");
  is_int(ix.frames[fr[0]].code, CMG__CODE_LIBRARY, "the driver is a library");
  is_int(ix.frames[fr[2]].code, CMG__CODE_USER, "the program is the user's");
  is_int(ix.frames[ix.stacks[all_ids[8]].frames[1]].code, CMG__CODE_LIBRARY,
         "a cut is nobody's code, never the user's");
  is_int(ix.frames[ix.stacks[ids[4]].frames[0]].code, CMG__CODE_USER,
         "a Python file of the user's is the user's");

  ok(cmg__index_is_cut_unplaced(&ix, all_ids[7]),
     "truncated with no cut: the cut is not placed");
  ok(!cmg__index_is_cut_unplaced(&ix, all_ids[8]),
     "truncated with a cut frame: placed");
  ok(!cmg__index_is_cut_unplaced(&ix, ids[0]), "not truncated: nothing cut");
  cmg__index_free(&ix);
  cmg__read_report_free(&r);
}

/* Thousands of frames and stacks: the tables grow, the ids stay. */
static void
test_growth(void)
{
  enum { FRAMES = 3000, STACKS = 1500 };
  struct cmg__model_report r;
  struct cmg__index ix;
  static uint32_t ids[STACKS], again[STACKS];
  char name[32];

  report_init(&r, "big.json", 1);
  uint32_t lib = report_module(&r, "/opt/lib/libbig.so", "ff");
  for (int i = 0; i < FRAMES; i++) {
    snprintf(name, sizeof(name), "fn%d", i);
    report_frame(&r, lib, 0x1000 + 16 * (uint64_t)i, name);
  }
  for (uint32_t i = 0; i < STACKS; i++)
    REPORT_STACK(&r, 2 * i, 2 * i + 1, (7 * i) % FRAMES);
  cmg__index_init(&ix);
  is_int(cmg__index_add(&ix, &r, ids), 0, "a report of %d frames", FRAMES);
  is_int(ix.n_frames, FRAMES, "each frame once");
  is_int(ix.n_stacks, STACKS, "each stack once");
  is_int(cmg__index_add(&ix, &r, again), 0, "the same report again");
  ok(ix.n_frames == FRAMES && ix.n_stacks == STACKS &&
         memcmp(ids, again, sizeof(ids)) == 0,
     "adds nothing, and gives every stack its id");
  bool kept = true;
  for (uint32_t i = 0; i < STACKS; i++) {
    const struct cmg__index_stack *s = &ix.stacks[ids[i]];
    snprintf(name, sizeof(name), "fn%u", 2 * i + 1);
    kept = kept && s->n == 3 &&
           strcmp(ix.frames[s->frames[1]].function, name) == 0;
  }
  ok(kept, "and each stack still names its frames");
  cmg__index_free(&ix);
  cmg__read_report_free(&r);
}

int
main(void)
{
  test_identity();
  test_ranges();
  test_growth();
  return done_testing();
}
