/*
 * Python frames in native stacks: reading the calling thread's frame chain
 * without the GIL, and splicing its frames where the interpreter's eval
 * loop stands in the native stack (pyframes.c).
 */
#ifndef CMG_RUNTIME_PYFRAMES_H
#define CMG_RUNTIME_PYFRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/stackword.h"

/* Writes into out (room for max words) the native frames ips[0..n) with
 * the calling thread's Python frames in place of the eval loop's frames,
 * innermost first; Python frames no eval frame took are appended.  At a
 * cut in ips, the Python frames of the eval frames it left out are placed
 * after it.  A Python stack deeper than its budget keeps its innermost and
 * outermost frames, with a cut between them.  Sets *cut when anything was
 * cut, and ends out with a cut when the stack did not fit in max words.
 * Returns the words written. */
unsigned cmg__py_splice(const uintptr_t *ips, unsigned n, uintptr_t *out,
                        unsigned max, bool *cut);

#endif /* CMG_RUNTIME_PYFRAMES_H */
