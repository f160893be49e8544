/*
 * Tallies: counters that only grow, kept per thread so that counting an
 * allocation or a free writes no cache line another thread writes, and
 * summed over all threads when read.
 *
 * Each thread takes a block of CMG__TALLIES counters on its first count
 * and adds to it with a plain load and store (it is the block's only
 * writer).  Blocks are carved from mmap'd chunks, linked into a list that
 * only grows, and never freed: a thread that exits gives its block back,
 * counts and all, and the next new thread takes it over, so a sum over the
 * list stays exact and the list is as long as the most threads that ever
 * counted at once.  A thread counting after its block was given back (a
 * late thread-exit destructor freeing memory) or when mmap fails adds to
 * one shared block with atomic adds instead.
 *
 * Writers store with release and readers load with acquire, so a reader
 * that sees a count also sees every count that happened before it in any
 * thread (a free is counted after its allocation was).
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "core/base.h"
#include "runtime/table_memory.h"
#include "runtime/ledger/thread_tally.h"

#define CHUNK (64u << 10)

CMG__TLS struct cmg__tally *cmg__tally_self;
struct cmg__tally cmg__tally_shared;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct cmg__tally *) blocks;
static struct cmg__chunks chunks = { .size = CHUNK };
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static bool have_key;

/* Thread exit: the block goes back for the next thread to take over. */
static void
give_back(void *p)
{
  struct cmg__tally *t = p;
  cmg__tally_self = &cmg__tally_shared;
  atomic_store_explicit(&t->taken, false, memory_order_release);
}

static void
make_key(void)
{
  have_key = pthread_key_create(&key, give_back) == 0;
}

/* Under the lock: a block given back, or a new one. */
static struct cmg__tally *
take(void)
{
  struct cmg__tally *t = atomic_load_explicit(&blocks, memory_order_relaxed);
  for (; t != NULL; t = t->next)
    if (!atomic_load_explicit(&t->taken, memory_order_acquire))
      goto found;
  if ((t = cmg__chunks_take(&chunks, sizeof(*t))) == NULL)
    return NULL;
  t->next = atomic_load_explicit(&blocks, memory_order_relaxed);
  t->number = t->next != NULL ? t->next->number + 1 : 1;
  atomic_store_explicit(&blocks, t, memory_order_release);
found:
  atomic_store_explicit(&t->taken, true, memory_order_relaxed);
  return t;
}

struct cmg__tally *CMG__COLD
cmg__tally_attach(void)
{
  pthread_once(&key_once, make_key);
  pthread_mutex_lock(&lock);
  struct cmg__tally *t = have_key ? take() : NULL;
  pthread_mutex_unlock(&lock);
  if (t != NULL && pthread_setspecific(key, t) != 0) {
    atomic_store_explicit(&t->taken, false, memory_order_release);
    t = NULL;
  }
  cmg__tally_self = t != NULL ? t : &cmg__tally_shared;
  return cmg__tally_self;
}

uint64_t
cmg__tally_sum(unsigned i)
{
  uint64_t sum =
      atomic_load_explicit(&cmg__tally_shared.n[i], memory_order_acquire);
  struct cmg__tally *t = atomic_load_explicit(&blocks, memory_order_acquire);
  for (; t != NULL; t = t->next)
    sum += atomic_load_explicit(&t->n[i], memory_order_acquire);
  return sum;
}

void
cmg__tally_prefork(void)
{
  pthread_mutex_lock(&lock);
}

/* The child has only the forking thread: its counts start from zero, and
 * every other thread's block is free for the child's own threads. */
void
cmg__tally_postfork(bool child)
{
  if (child) {
    struct cmg__tally *t = atomic_load_explicit(&blocks, memory_order_relaxed);
    for (; t != NULL; t = t->next) {
      memset(t->n, 0, sizeof(t->n));
      atomic_store_explicit(&t->taken, t == cmg__tally_self,
                            memory_order_relaxed);
    }
    memset(cmg__tally_shared.n, 0, sizeof(cmg__tally_shared.n));
  }
  pthread_mutex_unlock(&lock);
}
