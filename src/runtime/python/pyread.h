/*
 * Reading the calling thread's Python frames (pyread.c): checked words,
 * its innermost frame, and what a frame's site is named from.
 */
#ifndef CMG_RUNTIME_PYTHON_PYREAD_H
#define CMG_RUNTIME_PYTHON_PYREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/python/pyline.h"

/* An aligned user-space address: what every word read as a pointer must
 * be before it is followed. */
static inline bool
cmg__py_is_pointer(uintptr_t p)
{
  return p >= 4096 && p < ((uintptr_t)1 << 47) && (p & 7) == 0;
}

/* The calling thread's innermost frame, or 0. */
uintptr_t cmg__py_current_frame(void);

/* What frame f's site is named from, when it has one: not for a frame
 * that is not a code object's, or one CPython's own walkers (tracebacks,
 * sys._getframe, PyFrame_GetBack) pass over as incomplete: not a
 * generator's, and its instruction before the code's _co_firsttraceable
 * (_PyFrame_IsIncomplete, the same test in 3.11 to 3.13, 3.13 adding the
 * C stack's shims, which pyframes.c passes over first).  That is a frame
 * not yet started, or 3.13's __init__ shim (_Py_InitCleanup), which a
 * specialized class call pushes between the caller and __init__. */
bool cmg__py_where_of(uintptr_t f, struct cmg__py_where *w);

#endif /* CMG_RUNTIME_PYTHON_PYREAD_H */
