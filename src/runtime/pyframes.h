/*
 * Python frames in native stacks: finding the running CPython, reading the
 * calling thread's frame chain without the GIL, and splicing its frames
 * where the interpreter's eval loop stands in the native stack
 * (pyframes.c).
 */
#ifndef CMG_RUNTIME_PYFRAMES_H
#define CMG_RUNTIME_PYFRAMES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/stackword.h"

/* Looks for a CPython in the process and, when python_frames is on, stacks
 * are captured and its version is supported, turns Python frames on.
 * Once, before captures; dlsym, so never from a signal handler. */
void cmg__py_configure(bool python_frames, bool stacks);

/* Whether captures add Python frames. */
extern _Atomic bool cmg__py_on;

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

/* What the report says of Python: whether one was found, its version
 * ("3.11.2"), whether its frames are captured, and if not, why. */
struct cmg__py_status {
  bool found;
  bool frames;
  char version[16];
  char why[160];
};

void cmg__py_get_status(struct cmg__py_status *out);

#endif /* CMG_RUNTIME_PYFRAMES_H */
