/*
 * Which frames say nothing about the program, so that the commands hide
 * them by default: at the innermost end of a stack, frames inside the
 * CUDA runtime and driver (the group's API already names the call); at
 * the outermost end, the C start-up and thread start frames, which every
 * stack shares.  The index classes each native frame once, when it is
 * interned, by its module's base name and its function.
 *
 * A statically linked runtime leaves cudaMalloc inside the program, where
 * the library saw only the driver call it made (cuMemAlloc_v2): the
 * runtime entry of such a stack is what the program called, and names its
 * group.
 */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "reader/model/frame_class.h"
#include "reader/model/index.h"
#include "core/base.h"
#include "reader/tool.h"

/* cudaMalloc, cuMemAlloc_v2: an entry point of the runtime or the driver,
 * which a statically linked runtime leaves inside the program itself. */
static bool
is_cuda_api(const char *fn)
{
  /* The static runtime's own functions, once .symtab names them. */
  if (cmg__has_prefix(fn, "cudart::") || cmg__has_prefix(fn, "__cudart"))
    return true;
  if (cmg__has_prefix(fn, "cuda"))
    return fn[4] >= 'A' && fn[4] <= 'Z';
  if (cmg__has_prefix(fn, "cu"))
    return fn[2] >= 'A' && fn[2] <= 'Z';
  return false;
}

const char *
cmg__frame_class_runtime_entry(const struct cmg__index *ix, uint32_t stack,
                               const char *api)
{
  const char *entry = NULL;

  if (stack == CMG__TOOL_NONE || !cmg__has_prefix(api, "cu") || api[2] < 'A' ||
      api[2] > 'Z')
    return api;
  const struct cmg__index_stack *s = &ix->stacks[stack];
  for (uint32_t k = 0; k < s->n; k++) {
    const struct cmg__index_frame *f = &ix->frames[s->frames[k]];

    if (!(f->class & CMG__FRAME_CLASS_CUDA))
      break;
    if (cmg__has_prefix(f->function, "cuda") && f->function[4] >= 'A' &&
        f->function[4] <= 'Z')
      entry = f->name != NULL ? f->name : f->function;
  }
  return entry != NULL ? entry : api;
}

unsigned
cmg__frame_class_of(const char *module, const char *fn)
{
  static const char *const cuda_modules[] = { "libcuda.so", "libcudart.so" };
  static const char *const startup_modules[] = {
    "libc.so", "libc-", "ld-linux", "ld-musl", "libpthread",
  };
  static const char *const startup_functions[] = {
    "_start",
    "__libc_start_main",
    "__libc_start_call_main",
    "start_thread",
    "clone",
    "clone3",
    "__clone",
    "__clone3",
  };
  unsigned c = 0;

  for (size_t i = 0; i < sizeof(cuda_modules) / sizeof(*cuda_modules); i++) {
    if (cmg__has_prefix(module, cuda_modules[i]))
      c |= CMG__FRAME_CLASS_CUDA;
  }
  if (is_cuda_api(fn))
    c |= CMG__FRAME_CLASS_CUDA;
  for (size_t i = 0; i < sizeof(startup_modules) / sizeof(*startup_modules);
       i++) {
    if (cmg__has_prefix(module, startup_modules[i]))
      c |= CMG__FRAME_CLASS_STARTUP;
  }
  for (size_t i = 0;
       fn != NULL && i < sizeof(startup_functions) / sizeof(*startup_functions);
       i++) {
    if (strcmp(fn, startup_functions[i]) == 0)
      c |= CMG__FRAME_CLASS_STARTUP;
  }
  return c;
}
