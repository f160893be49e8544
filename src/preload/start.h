/*
 * Start-up, at the top of the library (start.c): the options read, the
 * group joined, the report's thread and handlers set up, and the fork
 * handlers.  Every entry point (hooks/, api.c) calls cmg__init first;
 * nothing below them does.
 */
#ifndef CMG_PRELOAD_START_H
#define CMG_PRELOAD_START_H

#include <stdatomic.h>
#include <stdbool.h>

#include "core/base.h"

extern _Atomic bool cmg__ready;
void cmg__init_slow(void);

/* Reads CUMEMGUARD_OPTIONS once; safe to call from any hook, at any time. */
static inline void
cmg__init(void)
{
  if (cmg__unlikely(!atomic_load_explicit(&cmg__ready, memory_order_acquire)))
    cmg__init_slow();
}

#endif /* CMG_PRELOAD_START_H */
