/*
 * The modules' locks a fork takes: start.c's one fork handler takes them
 * before the ledger's and makes them anew in the child.  A module joins on
 * its first call, so the table holds a handful.
 */
#include "config.h"

#include <stdatomic.h>

#include "preload/forklock.h"

#define MAX_LOCKS 8

static struct cmg__forklock *locks[MAX_LOCKS];
static _Atomic unsigned n_locks;
static pthread_mutex_t table = PTHREAD_MUTEX_INITIALIZER;

void
cmg__forklock_prefork(void)
{
  pthread_mutex_lock(&table);
  for (unsigned i = 0; i < atomic_load(&n_locks); i++)
    pthread_mutex_lock(&locks[i]->lock);
}

void
cmg__forklock_parent(void)
{
  for (unsigned i = atomic_load(&n_locks); i-- > 0;)
    pthread_mutex_unlock(&locks[i]->lock);
  pthread_mutex_unlock(&table);
}

void
cmg__forklock_child(void)
{
  pthread_mutex_init(&table, NULL);
  for (unsigned i = 0; i < atomic_load(&n_locks); i++) {
    pthread_mutex_init(&locks[i]->lock, NULL);
    locks[i]->child();
  }
}

static void
join(struct cmg__forklock *l)
{
  pthread_mutex_lock(&table);
  unsigned n = atomic_load(&n_locks);
  if (!atomic_load(&l->joined) && n < MAX_LOCKS) {
    locks[n] = l;
    atomic_store(&n_locks, n + 1);
  }
  atomic_store(&l->joined, true);
  pthread_mutex_unlock(&table);
}

void
cmg__forklock_take(struct cmg__forklock *l)
{
  if (!atomic_load_explicit(&l->joined, memory_order_acquire))
    join(l);
  pthread_mutex_lock(&l->lock);
}
