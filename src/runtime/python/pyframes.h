/*
 * Python frames in native stacks: reading the calling thread's frame chain
 * without the GIL, and splicing its frames where the interpreter's eval
 * loop stands in the native stack (pyframes.c).
 */
#ifndef CMG_RUNTIME_PYTHON_PYFRAMES_H
#define CMG_RUNTIME_PYTHON_PYFRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/stacks/stack_words.h"

struct cmg__memo;

/* What a splice found of the thread's last capture: when its words were
 * the same, the stack they were interned as (id); and the thread's memo,
 * held until cmg__py_again_done. */
struct cmg__py_again {
  struct cmg__memo *memo;
  uint32_t id;
};

/* Writes into out (room for max words) the native frames ips[0..n) with
 * the calling thread's Python frames in place of the eval loop's frames,
 * innermost first; Python frames no eval frame took are appended.  At a
 * cut in ips, the Python frames of the eval frames it left out are placed
 * after it.  A Python stack deeper than its budget keeps its innermost and
 * outermost frames, with a cut between them.  Sets *cut when anything was
 * cut, and ends out with a cut when the stack did not fit in max words.
 * Returns the words written.
 *
 * When the native frames and the Python frames are those of the thread's
 * last capture, whose splice was interned as a stack, nothing is written:
 * 0 is returned, with that stack in again->id (else again->id is 0).
 * Every call is followed by cmg__py_again_done. */
unsigned cmg__py_splice(const uintptr_t *ips, unsigned n, uintptr_t *out,
                        unsigned max, bool *cut, struct cmg__py_again *again);

/* After cmg__py_splice: id is the stack its words were interned as (0:
 * none).  Gives back the thread's memo. */
void cmg__py_again_done(struct cmg__py_again *again, uint32_t id);

#endif /* CMG_RUNTIME_PYTHON_PYFRAMES_H */
