/*
 * The lock of a preload module whose calls take ledger locks while holding
 * it (graph memory, context footprints): a fork must find it free, and the
 * child must forget what the module knew, as it starts without CUDA
 * (forklock.c).
 */
#ifndef CMG_PRELOAD_FORKLOCK_H
#define CMG_PRELOAD_FORKLOCK_H

#include <pthread.h>
#include <stdbool.h>

struct cmg__forklock {
  pthread_mutex_t lock;
  void (*child)(void); /* in the child, after the lock is made anew */
  _Atomic bool joined; /* among the locks a fork takes */
};

#define CMG__FORKLOCK(child)                                                   \
  {                                                                            \
    PTHREAD_MUTEX_INITIALIZER, child, false                                    \
  }

/* Takes the lock; the first time, also puts it among the locks a fork
 * takes, before the ledger's. */
void cmg__forklock_take(struct cmg__forklock *l);

/* The fork handler's steps (start.c): before the fork, every joined lock
 * taken; after it, given back in the parent, made anew in the child with
 * each module's child step run. */
void cmg__forklock_prefork(void);
void cmg__forklock_parent(void);
void cmg__forklock_child(void);

static inline void
cmg__forklock_give(struct cmg__forklock *l)
{
  pthread_mutex_unlock(&l->lock);
}

#endif /* CMG_PRELOAD_FORKLOCK_H */
