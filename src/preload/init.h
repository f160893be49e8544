/*
 * Process-wide state: the options, read once; the per-thread state every
 * wrapper uses; fork handling (init.c).
 */
#ifndef CMG_PRELOAD_INIT_H
#define CMG_PRELOAD_INIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/base.h"
#include "core/conf.h"
#include "core/pools.h"

struct cmg__thread {
  int depth;      /* > 0 inside a driver wrapper: nested calls forward */
  uint16_t label; /* runtime API being served, 0 = none */
  uint32_t tid;
};

extern CMG__TLS struct cmg__thread cmg__self;

extern _Atomic bool cmg__ready;
void cmg__init_slow(void);

/* Reads CUMEMGUARD_OPTIONS once; safe to call from any hook, at any time. */
static inline void
cmg__init(void)
{
  if (cmg__unlikely(!atomic_load_explicit(&cmg__ready, memory_order_acquire)))
    cmg__init_slow();
}

extern struct cmg__config cmg__cfg;
/* The frameworks' pool switches as they were when the library started. */
extern struct cmg__pools cmg__pools_seen;

/* The calling thread's kernel tid; the thread's first call also records
 * its name (core/threads.h). */
uint32_t cmg__tid(void);

#endif /* CMG_PRELOAD_INIT_H */
