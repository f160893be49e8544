/*
 * The library's critical sections on a thread, and the deadly signal that
 * arrived during one (defer.c).
 */
#ifndef CMG_PRELOAD_DEFER_H
#define CMG_PRELOAD_DEFER_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "core/base.h"

struct cmg__defer {
  unsigned depth;               /* nested critical sections entered */
  volatile sig_atomic_t signal; /* a deadly signal put off, or 0 */
};

extern CMG__TLS struct cmg__defer cmg__defer;

/* Raises the signal put off (cold). */
void cmg__defer_raise(void);

/* Enters a stretch of the library that takes locks the report needs:
 * a deadly signal arriving here is put off until the stretch is left. */
static inline void
cmg__defer_enter(void)
{
  cmg__defer.depth++;
  atomic_signal_fence(memory_order_seq_cst);
}

static inline void
cmg__defer_leave(void)
{
  atomic_signal_fence(memory_order_seq_cst);
  CMG_ASSERT(cmg__defer.depth > 0);
  if (--cmg__defer.depth == 0 && cmg__unlikely(cmg__defer.signal != 0))
    cmg__defer_raise();
}

/* From a deadly signal's handler: true when the thread is inside a
 * critical section, the signal then being put off; async-signal-safe. */
bool cmg__defer_postpone(int sig);

#endif /* CMG_PRELOAD_DEFER_H */
