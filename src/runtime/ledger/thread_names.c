/*
 * Thread names: a fixed table of (tid, name), one entry per thread that
 * allocated, filled at each thread's first allocation.  Frameworks allocate
 * from threads that run no Python (PyTorch's autograd threads, named
 * pt_autograd_N), whose stacks show C++ frames only; the name they gave
 * themselves says where the memory came from.
 *
 * The name is read once, when the thread first allocates, not per
 * allocation: the caller (preload/init.c) notes a thread when it first
 * needs its tid, behind the thread-local test it makes anyway.  A thread
 * that renames itself later keeps the name it had then.
 *
 * The table is static and zeroed, so noting takes no malloc and no lock: a
 * thread claims the next entry with one atomic add, fills it, then marks
 * it ready with a release store, which the report's acquire load pairs
 * with.  Entries are never reused: a thread that exits may still own live
 * allocations, and those are what a report is for.  When the table is
 * full, later threads go unnamed.
 */
#include "config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "core/base.h"
#include "runtime/ledger/thread_names.h"

struct entry {
  _Atomic bool ready;
  struct cmg__thread_name t;
};

static struct entry table[CMG__THREADS_MAX];
/* Entries claimed; past CMG__THREADS_MAX when threads were turned away. */
static _Atomic size_t claimed;

void CMG__COLD
cmg__threads_note(uint32_t tid)
{
  char name[CMG__THREAD_NAME] = { 0 };
  /* One system call; pthread_getname_np makes the same one for the
   * calling thread, but is not async-signal-safe for others. */
  if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
    return;
  size_t i = atomic_fetch_add_explicit(&claimed, 1, memory_order_relaxed);
  if (i >= CMG__THREADS_MAX)
    return;
  struct entry *e = &table[i];
  e->t.tid = tid;
  memcpy(e->t.name, name, sizeof(name));
  e->t.name[CMG__THREAD_NAME - 1] = '\0';
  atomic_store_explicit(&e->ready, true, memory_order_release);
}

struct ordered {
  struct cmg__thread_name t;
  size_t at; /* the entry's index: a later one names a reused tid */
};

static int
by_tid(const void *x, const void *y)
{
  const struct ordered *a = x, *b = y;
  if (a->t.tid != b->t.tid)
    return a->t.tid < b->t.tid ? -1 : 1;
  return a->at < b->at ? -1 : a->at > b->at;
}

struct cmg__thread_name *
cmg__threads_sorted(size_t *n)
{
  size_t max = atomic_load_explicit(&claimed, memory_order_acquire);
  if (max > CMG__THREADS_MAX)
    max = CMG__THREADS_MAX;
  *n = 0;
  if (max == 0)
    return NULL;
  struct ordered *o = malloc(max * sizeof(*o));
  struct cmg__thread_name *out = malloc(max * sizeof(*out));
  if (o == NULL || out == NULL) {
    free(o);
    free(out);
    return NULL;
  }
  size_t k = 0;
  for (size_t i = 0; i < max; i++)
    if (atomic_load_explicit(&table[i].ready, memory_order_acquire))
      o[k++] = (struct ordered){ table[i].t, i };
  qsort(o, k, sizeof(*o), by_tid);
  for (size_t i = 0; i < k; i++) {
    if (i + 1 < k && o[i + 1].t.tid == o[i].t.tid)
      continue;
    out[(*n)++] = o[i].t;
  }
  free(o);
  if (*n == 0) {
    free(out);
    return NULL;
  }
  return out;
}

const char *
cmg__threads_find(const struct cmg__thread_name *t, size_t n, uint32_t tid)
{
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (t[mid].tid == tid)
      return t[mid].name;
    if (t[mid].tid < tid)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

static int
by_value(const void *x, const void *y)
{
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  return a < b ? -1 : a > b;
}

size_t
cmg__threads_distinct(uint32_t *t, size_t n)
{
  size_t i = 1;
  while (i < n && t[i] == t[0]) /* most groups: one thread, no sort */
    i++;
  if (i >= n)
    return n < 1 ? n : 1;
  qsort(t, n, sizeof(*t), by_value);
  size_t k = 1;
  for (i = 1; i < n; i++)
    if (t[i] != t[k - 1])
      t[k++] = t[i];
  return k;
}

void
cmg__threads_reset(void)
{
  size_t max = atomic_load_explicit(&claimed, memory_order_relaxed);
  if (max > CMG__THREADS_MAX)
    max = CMG__THREADS_MAX;
  for (size_t i = 0; i < max; i++)
    atomic_store_explicit(&table[i].ready, false, memory_order_relaxed);
  atomic_store_explicit(&claimed, 0, memory_order_release);
}
