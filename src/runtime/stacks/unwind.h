/*
 * The native unwinder of stack capture (unwind.c): a walk that steps each
 * frame as libunwind is proven to (frame-pointer frames and ordinary ones
 * without), libunwind's unw_backtrace from the first frame it cannot
 * prove.  stack_mode=auto|fp|dwarf picks the policy.
 */
#ifndef CMG_RUNTIME_STACKS_UNWIND_H
#define CMG_RUNTIME_STACKS_UNWIND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "core/conf.h"
#include "runtime/stacks/unwind_pipe.h"

extern _Atomic int cmg__unwind_mode;

/* Sets the mode (enum cmg__stack_mode) before the first capture. */
void cmg__unwind_configure(enum cmg__stack_mode mode);

/* The walk of auto and fp modes.  Fills ips[0..*n) with return addresses,
 * ips[0] the one into the caller's frame, as unw_backtrace called from the
 * caller would.  True when the walk is complete (max frames, or the end of
 * the stack); false when auto mode met a frame it cannot prove
 * and the caller must ask libunwind: ips[0..*n) are then libunwind's first
 * *n frames all the same. */
bool cmg__unwind_fp(uintptr_t *ips, int max, int *n);

/* What capture calls: unw_backtrace's array, from whichever walk may give
 * it (libunwind alone in dwarf mode).  Always inline, so that
 * unw_backtrace's first frame is the caller's own, as it was before the
 * walk existed. */
static inline __attribute__((always_inline)) int
cmg__unwind(uintptr_t *ips, int max)
{
  int n = 0;
  if (atomic_load_explicit(&cmg__unwind_mode, memory_order_relaxed) !=
          CMG__STACK_MODE_DWARF &&
      cmg__unwind_fp(ips, max, &n))
    return n;
  if (!cmg__unwind_enter())
    return n;
  n = unw_backtrace((void **)ips, max);
  cmg__unwind_leave();
  return n;
}

/* The end (highest address) of the calling thread's stack, found once per
 * thread; 0 when unknown. */
uintptr_t cmg__stack_top(void);

/* In a forked child, before anything else runs. */
void cmg__unwind_after_fork(void);

/* Tests: how many return addresses have each verdict so far: libunwind
 * only, frame-pointer step, stack-pointer step, end of the stack. */
void cmg__unwind_counts(unsigned counts[4]);

#endif /* CMG_RUNTIME_STACKS_UNWIND_H */
