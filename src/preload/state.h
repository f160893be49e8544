/*
 * The process's state that every part of the library reads: the options,
 * read once at start-up (start.c), the frameworks' pool switches as they
 * were, and each thread's own state (state.c).  At the bottom: it calls
 * nothing of the library's.
 */
#ifndef CMG_PRELOAD_STATE_H
#define CMG_PRELOAD_STATE_H

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

extern struct cmg__config cmg__cfg;
/* The frameworks' pool switches as they were when the library started. */
extern struct cmg__pools cmg__pools_seen;

/* The calling thread's kernel tid; the thread's first call also records
 * its name (runtime/threads.h). */
uint32_t cmg__tid(void);

#endif /* CMG_PRELOAD_STATE_H */
