/*
 * The process's state that every part of the library reads: the options,
 * read once at start-up (start.c), the frameworks' pool switches as they
 * were, and each thread's own state (state.c).  At the bottom: it calls
 * nothing of the library's.
 */
#ifndef CMG_PRELOAD_STATE_H
#define CMG_PRELOAD_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

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

/* The process whose state this is: the one that read the options, or the
 * forked child that made its state its own (start.c). */
extern pid_t cmg__state_pid;

/* Whether the calling process made this state its own: false in a child
 * that no fork handler ran for (a raw clone, a vfork child returning from
 * exec's failure or calling exit), which holds its parent's ledger, group
 * slot and report path, or shares them. */
bool cmg__state_is_mine(void);

/* The calling thread's kernel tid; the thread's first call also records
 * its name (runtime/ledger/thread_names.h). */
uint32_t cmg__tid(void);

#endif /* CMG_PRELOAD_STATE_H */
