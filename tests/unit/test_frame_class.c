/*
 * Unit tests of frame_class.c: which native frames are the CUDA runtime's
 * and driver's (hidden at a stack's inner end: the group's API already
 * names the call) and which the C start-up code's (hidden at the outer
 * end: every stack has them), by module and by function, where a name
 * that merely begins like a CUDA entry must not be hidden; and the runtime
 * entry a statically linked runtime leaves in the program, which names a
 * group instead of the driver call the library saw: the outermost one of
 * the CUDA frames at the stack's inner end, nothing past them.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "reader/model/frame_class.h"
#include "reader/model/index.h"
#include "reader/tool.h"
#include "report_builder.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

#define CUDA CMG__FRAME_CLASS_CUDA
#define START CMG__FRAME_CLASS_STARTUP

static void
test_class_of(void)
{
  static const struct {
    const char *module, *fn;
    unsigned want;
  } cases[] = {
    { NULL, NULL, 0 },
    { "app", "main", 0 },
    /* By module: anything in the driver or the shared runtime. */
    { "libcuda.so.1", NULL, CUDA },
    { "libcuda.so.1", "some_internal", CUDA },
    { "libcudart.so.12", "cudaMalloc", CUDA },
    { "libcudart_static.a", NULL, 0 },
    { "libcublas.so.12", NULL, 0 },
    /* By function: an entry point of the runtime or the driver. */
    { "app", "cudaMalloc", CUDA },
    { NULL, "cuMemAlloc_v2", CUDA },
    { "app", "cudart::globalState::initializeDriver", CUDA },
    { "app", "__cudart1234", CUDA },
    { "app", "cudaforward", 0 },
    { "app", "cublasCreate_v2", 0 },
    { "app", "curand_init", 0 },
    { "app", "cuda", 0 },
    { "app", "cu", 0 },
    { "app", "CudaMalloc", 0 },
    /* Start-up code, by module and by function. */
    { "libc.so.6", "malloc", START },
    { "libc-2.31.so", NULL, START },
    { "ld-linux-x86-64.so.2", NULL, START },
    { "ld-musl-x86_64.so.1", NULL, START },
    { "libpthread.so.0", NULL, START },
    { "app", "_start", START },
    { NULL, "__libc_start_main", START },
    { NULL, "__libc_start_call_main", START },
    { NULL, "start_thread", START },
    { NULL, "clone3", START },
    { NULL, "__clone", START },
    { "app", "_start_training", 0 },
    { "app", "clone_model", 0 },
    { "libcmath.so", NULL, 0 },
    /* Both at once. */
    { "libc.so.6", "cudaMalloc", CUDA | START },
    { "libcuda.so.1", "start_thread", CUDA | START },
  };

  for (size_t i = 0; i < N(cases); i++)
    is_int(cmg__frame_class_of(cases[i].module, cases[i].fn), cases[i].want,
           "%s in %s: class %u", cases[i].fn ? cases[i].fn : "(unnamed)",
           cases[i].module ? cases[i].module : "(no module)", cases[i].want);
}

/* ---- the runtime entry --------------------------------------------------- */

static void
test_runtime_entry(void)
{
  struct cmg__model_report r;
  struct cmg__index ix;
  uint32_t ids[16];

  report_init(&r, "entry.json", 1);
  uint32_t drv = report_module(&r, "/usr/lib/libcuda.so.1", "aa");
  uint32_t app = report_module(&r, "/opt/app/bin/app", "bb");
  uint32_t alloc = report_frame(&r, drv, 0x100, "cuMemAlloc_v2");
  uint32_t drv_anon = report_frame(&r, drv, 0x180, NULL);
  uint32_t rt_state = report_frame(&r, app, 0x200, "cudart::contextState::x");
  uint32_t malloc_ = report_frame(&r, app, 0x300, "cudaMalloc");
  uint32_t pitch = report_frame(&r, app, 0x400, "cudaMallocPitch");
  uint32_t main_ = report_frame(&r, app, 0x500, "main");
  uint32_t named =
      report_frame(&r, app, 0x600, "cudaMallocHost(void**, unsigned long)");
  r.frames[named].name = strdup("cudaMallocHost");
  uint32_t py = report_py_frame(&r, "cudaMalloc", "/home/u/x.py", 3);

  /* clang-format off */
  static const struct {
    const char *what, *api, *want;
  } cases[] = {
    { "the driver call under the static runtime: the entry called",
      "cuMemAlloc_v2", "cudaMalloc" },
    { "the outermost entry of the CUDA frames", "cuMemAlloc_v2",
      "cudaMallocPitch" },
    { "an entry past the program's frame does not count", "cuMemAlloc_v2",
      "cuMemAlloc_v2" },
    { "only driver frames: the API itself", "cuMemAlloc_v2",
      "cuMemAlloc_v2" },
    { "the entry by its name without parameters", "cuMemAlloc_v2",
      "cudaMallocHost" },
    { "a runtime API already names the call", "cudaMallocManaged",
      "cudaMallocManaged" },
    { "a Python frame is no CUDA frame", "cuMemAlloc_v2", "cuMemAlloc_v2" },
    { "an empty stack: the API", "cuMemAlloc_v2", "cuMemAlloc_v2" },
  };
  /* clang-format on */
  /* One stack for each case, in order. */
  REPORT_STACK(&r, alloc, drv_anon, rt_state, malloc_, main_);
  REPORT_STACK(&r, alloc, malloc_, pitch, main_);
  REPORT_STACK(&r, alloc, main_, malloc_);
  REPORT_STACK(&r, alloc, drv_anon);
  REPORT_STACK(&r, alloc, named, main_);
  REPORT_STACK(&r, alloc, rt_state, malloc_, main_);
  REPORT_STACK(&r, alloc, py, main_);
  report_stack_of(&r, NULL, 0);

  cmg__index_init(&ix);
  is_int(cmg__index_add(&ix, &r, ids), 0, "the stacks are indexed");
  for (size_t i = 0; i < N(cases); i++)
    is_str(cmg__frame_class_runtime_entry(&ix, ids[i], cases[i].api),
           cases[i].want, "%s: %s", cases[i].what, cases[i].want);
  is_str(cmg__frame_class_runtime_entry(&ix, CMG__TOOL_NONE, "cuMemAlloc_v2"),
         "cuMemAlloc_v2", "no stack: the API");
  ok(cmg__frame_class_runtime_entry(&ix, ids[0], "cuMemAlloc_v2") ==
         ix.frames[ix.stacks[ids[0]].frames[3]].function,
     "the entry is the index's own string, which outlives the report");
  cmg__index_free(&ix);
  cmg__read_report_free(&r);
}

int
main(void)
{
  test_class_of();
  test_runtime_entry();
  return done_testing();
}
