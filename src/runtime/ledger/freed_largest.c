/*
 * The largest allocations freed so far.  A timeline wants the big ones
 * drawn from allocation to free, and a report only lists what is still
 * live, so the free path keeps the few largest it has seen.
 *
 * A free pays one relaxed load in the common case: the size is compared
 * with the floor, the smallest size kept once the table is full, and only
 * a larger one takes the lock.  A program whose frees keep growing takes
 * it on each of them; one that frees the same sizes over and over, only
 * for the first CMG__FREED_KEEP.  Equal sizes do not displace each other,
 * so among equals the earliest are kept.
 *
 * No allocation, no CUDA, no I/O: the table is static.
 */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "runtime/ledger/freed_largest.h"

_Atomic uint64_t cmg__freed_floor;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Unordered; n grows to CMG__FREED_KEEP and stays there. */
static struct cmg__freed kept[CMG__FREED_KEEP];
static size_t n;

static size_t
smallest(void)
{
  size_t s = 0;
  for (size_t i = 1; i < n; i++)
    if (kept[i].a.size < kept[s].a.size)
      s = i;
  return s;
}

void
cmg__freed_add(const struct cmg__alloc *a, uint64_t free_ns)
{
  pthread_mutex_lock(&lock);
  if (n < CMG__FREED_KEEP) {
    kept[n++] = (struct cmg__freed){ *a, free_ns };
  } else {
    /* Another thread may have raised the floor since this one looked. */
    size_t s = smallest();
    if (a->size > kept[s].a.size)
      kept[s] = (struct cmg__freed){ *a, free_ns };
  }
  if (n == CMG__FREED_KEEP)
    atomic_store_explicit(&cmg__freed_floor, kept[smallest()].a.size,
                          memory_order_relaxed);
  pthread_mutex_unlock(&lock);
}

static bool
before(const struct cmg__freed *x, const struct cmg__freed *y)
{
  if (x->a.size != y->a.size)
    return x->a.size > y->a.size;
  return x->a.seq < y->a.seq;
}

size_t
cmg__freed_get(struct cmg__freed *out, size_t max)
{
  pthread_mutex_lock(&lock);
  size_t got = n;
  struct cmg__freed all[CMG__FREED_KEEP];
  memcpy(all, kept, got * sizeof(all[0]));
  pthread_mutex_unlock(&lock);
  /* Insertion sort of at most CMG__FREED_KEEP. */
  for (size_t i = 1; i < got; i++) {
    struct cmg__freed f = all[i];
    size_t j = i;
    for (; j > 0 && before(&f, &all[j - 1]); j--)
      all[j] = all[j - 1];
    all[j] = f;
  }
  if (got > max)
    got = max;
  memcpy(out, all, got * sizeof(all[0]));
  return got;
}

void
cmg__freed_reset(void)
{
  pthread_mutex_init(&lock, NULL);
  n = 0;
  atomic_store_explicit(&cmg__freed_floor, 0, memory_order_relaxed);
}
