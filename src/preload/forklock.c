/*
 * Fork handlers for the modules' locks: one pthread_atfork for all of them,
 * registered once the library's own are (handlers registered later run
 * their prepare step first).  A module registers on its first call, so the
 * table holds a handful.
 */
#include "config.h"

#include <stdatomic.h>

#include "preload/forklock.h"
#include "preload/init.h"

#define MAX_LOCKS 8

static struct cmg__forklock *locks[MAX_LOCKS];
static _Atomic unsigned n_locks;
static pthread_mutex_t table = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t handlers = PTHREAD_ONCE_INIT;

static void
prefork(void)
{
  pthread_mutex_lock(&table);
  for (unsigned i = 0; i < atomic_load(&n_locks); i++)
    pthread_mutex_lock(&locks[i]->lock);
}

static void
postfork_parent(void)
{
  for (unsigned i = atomic_load(&n_locks); i-- > 0;)
    pthread_mutex_unlock(&locks[i]->lock);
  pthread_mutex_unlock(&table);
}

static void
postfork_child(void)
{
  pthread_mutex_init(&table, NULL);
  for (unsigned i = 0; i < atomic_load(&n_locks); i++) {
    pthread_mutex_init(&locks[i]->lock, NULL);
    locks[i]->child();
  }
}

static void
register_handlers(void)
{
  pthread_atfork(prefork, postfork_parent, postfork_child);
}

static void
join(struct cmg__forklock *l)
{
  pthread_once(&handlers, register_handlers);
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
  cmg__init();
  if (!atomic_load_explicit(&l->joined, memory_order_acquire))
    join(l);
  pthread_mutex_lock(&l->lock);
}
