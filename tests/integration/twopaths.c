/*
 * libcmgtpaths.so, for t-python-frames.sh: two native paths of the same
 * depth to one allocation.  pyframes.py calls cmgt_path_a and cmgt_path_b
 * in turn from the same Python instruction, so the two allocations' Python
 * frames are the same and their native stacks differ in one return
 * address: each must still get a stack of its own.  Every function is
 * noipa and uses its call's result after it, so each is a frame of its
 * own: none is inlined, merged with the other or turned into a jump.
 */
#include "config.h"

#include <stddef.h>

typedef int (*alloc_fn)(void **, size_t);

#define EXPORT __attribute__((visibility("default")))

EXPORT int cmgt_path_a(alloc_fn alloc, size_t bytes);
EXPORT int cmgt_path_b(alloc_fn alloc, size_t bytes);

static void *kept;

static __attribute__((noipa)) int
call(alloc_fn alloc, size_t bytes)
{
  int rc = alloc(&kept, bytes);
  return rc + (kept == NULL);
}

__attribute__((noipa)) int
cmgt_path_a(alloc_fn alloc, size_t bytes)
{
  int rc = call(alloc, bytes);
  return rc == 0 ? 0 : rc + 1;
}

__attribute__((noipa)) int
cmgt_path_b(alloc_fn alloc, size_t bytes)
{
  int rc = call(alloc, bytes);
  return rc == 0 ? 0 : rc + 2;
}
