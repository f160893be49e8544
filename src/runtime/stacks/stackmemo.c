/*
 * The outer part of a thread's stack, remembered.  A deep stack's
 * outermost frames are kept (stacks.c), so every capture walks the whole
 * stack, though between two allocations of a training loop only its inner
 * part changes.  Each step of the walk (unwind.c) is a function of the
 * frame's state (return address, stack pointer, rbp), of the verdict for
 * its return address, which never changes once made, and of the one or two
 * words it reads from the stack.  A memo holds, for each frame of the last
 * walk that reached the stack's end, its state and the words its step
 * read, with their addresses.  When a walk comes to a state that the memo
 * holds, and every word the remembered steps outward of it read still
 * holds the same value, the walk from there would read the same words and
 * take the same steps: its frames are the remembered ones.  The words are
 * checked in the walk's order, up to the first that differs, so that only
 * words the walk itself would read are read; their addresses are known
 * beforehand, so the loads run side by side, where the walk is a chain of
 * loads each waiting on the one before.  When a word differs the walk goes
 * on step by step.
 *
 * One memo per thread, mmap'd on its first walk, in a list that only grows:
 * a thread that exits gives its memo back, and the next new thread takes it
 * over (as thread_tally.c does with counters).  A signal handler's walk that
 * interrupts another of the same thread finds the memo busy and walks.
 */
#include "config.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "core/base.h"
#include "runtime/table_memory.h"
#include "runtime/stacks/stackmemo.h"

#define CHUNK (256u << 10)
/* A thread that has no memo and is not to get one. */
#define NONE ((struct cmg__memo *)1)

static CMG__TLS struct cmg__memo *mine;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct cmg__memo *) memos;
static struct cmg__chunks chunks = { .size = CHUNK };
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static bool have_key;

/* Thread exit: the memo goes back for the next thread to take over. */
static void
give_back(void *p)
{
  struct cmg__memo *m = p;
  mine = NONE;
  atomic_store_explicit(&m->taken, false, memory_order_release);
}

static void
make_key(void)
{
  have_key = pthread_key_create(&key, give_back) == 0;
}

/* Under the lock: a memo given back, or a new one. */
static struct cmg__memo *
take(void)
{
  struct cmg__memo *m = atomic_load_explicit(&memos, memory_order_relaxed);
  for (; m != NULL; m = m->next)
    if (!atomic_load_explicit(&m->taken, memory_order_acquire))
      goto found;
  if ((m = cmg__chunks_take(&chunks, sizeof(*m))) == NULL)
    return NULL;
  m->next = atomic_load_explicit(&memos, memory_order_relaxed);
  atomic_store_explicit(&memos, m, memory_order_release);
found:
  atomic_store_explicit(&m->taken, true, memory_order_relaxed);
  m->n = 0;
  m->busy = false;
  return m;
}

static CMG__COLD struct cmg__memo *
attach(void)
{
  pthread_once(&key_once, make_key);
  pthread_mutex_lock(&lock);
  struct cmg__memo *m = have_key ? take() : NULL;
  pthread_mutex_unlock(&lock);
  if (m != NULL && pthread_setspecific(key, m) != 0) {
    atomic_store_explicit(&m->taken, false, memory_order_release);
    m = NULL;
  }
  mine = m != NULL ? m : NONE;
  return m;
}

struct cmg__memo *
cmg__memo_enter(void)
{
  struct cmg__memo *m = mine;
  if (cmg__unlikely(m == NULL))
    m = attach();
  if (m == NULL || m == NONE || m->busy)
    return NULL;
  m->busy = true;
  return m;
}

static inline void
set(struct cmg__memo *m, unsigned i, const struct cmg__memo_frame *w)
{
  m->ra_out[CMG__MEMO_MAX - 1 - i] = w->ra;
  m->sp[i] = w->sp;
  m->rbp[i] = w->rbp;
  m->reads[i] = (struct cmg__memo_reads){ w->a1, w->v1, w->a2, w->v2 };
}

/* m->walk[0..k) as frames at..at + k, outermost first. */
static void
place(struct cmg__memo *m, unsigned at, unsigned k)
{
  for (unsigned t = 0; t < k; t++)
    set(m, at + t, &m->walk[k - 1 - t]);
  m->n = at + k;
}

int
cmg__memo_recall(struct cmg__memo *m, unsigned j, uintptr_t *ips, int k,
                 int max, unsigned *at)
{
  unsigned inner = (unsigned)k - 1;
  *at = j;
  if ((unsigned)k + j > (unsigned)max || j + 1 + inner > CMG__MEMO_MAX)
    return 0;
#pragma GCC unroll 4
  /* In the walk's order, stopping at the first word that differs: so only
   * words the walk itself would read now are read.  Their addresses are
   * known beforehand, so the loads need not wait on one another.  Unrolled,
   * as the loop is bound by its branches. */
  for (unsigned i = j; i > 0; i--) {
    const struct cmg__memo_reads *r = &m->reads[i];
    /* One branch a frame, not two: the loop is bound by branches. */
    if (((*(const uintptr_t *)r->a1 ^ r->v1) |
         (*(const uintptr_t *)r->a2 ^ r->v2)) != 0) {
      *at = i;
      return 0;
    }
  }
  memcpy(&ips[inner], &m->ra_out[CMG__MEMO_MAX - 1 - j],
         (j + 1) * sizeof(*ips));
  if (inner > 0)
    place(m, j + 1, inner);
  /* Its own thread's count: no cache line shared with another's. */
  atomic_store_explicit(
      &m->recalls, atomic_load_explicit(&m->recalls, memory_order_relaxed) + 1,
      memory_order_relaxed);
  return k + (int)j;
}

int
cmg__memo_resume(struct cmg__memo *m, unsigned j, unsigned at, uintptr_t *ips,
                 int k)
{
  memcpy(&ips[k - 1], &m->ra_out[CMG__MEMO_MAX - 1 - j],
         (j - at + 1) * sizeof(*ips));
  return k + (int)(j - at);
}

/* Frames [from, from + len) moved to [to, to + len). */
static void
move(struct cmg__memo *m, unsigned from, unsigned to, unsigned len)
{
  if (from == to || len == 0)
    return;
  memmove(&m->ra_out[CMG__MEMO_MAX - to - len],
          &m->ra_out[CMG__MEMO_MAX - from - len], len * sizeof(m->ra_out[0]));
  memmove(&m->sp[to], &m->sp[from], len * sizeof(m->sp[0]));
  memmove(&m->rbp[to], &m->rbp[from], len * sizeof(m->rbp[0]));
  memmove(&m->reads[to], &m->reads[from], len * sizeof(m->reads[0]));
}

void
cmg__memo_keep(struct cmg__memo *m, unsigned k, const struct cmg__memo_taken *t)
{
  if (t == NULL || t->k == 0) {
    if (k <= CMG__MEMO_MAX)
      place(m, 0, k);
    else
      m->n = 0;
    return;
  }
  /* walk[0..inner): the frames before the recall; the remembered frames
   * j..at + 1 in ips only; walk[t->k - 1..k): frame at onward, walked. */
  unsigned middle = t->j - t->at, outer = k - t->k + 1;
  unsigned inner = t->k - 1 - middle;
  if (outer + middle + inner > CMG__MEMO_MAX) {
    m->n = 0;
    return;
  }
  move(m, t->at + 1, outer, middle);
  for (unsigned i = 0; i < outer; i++)
    set(m, i, &m->walk[k - 1 - i]);
  for (unsigned i = 0; i < inner; i++)
    set(m, outer + middle + i, &m->walk[inner - 1 - i]);
  m->n = outer + middle + inner;
}

uint64_t
cmg__memo_recalls(void)
{
  uint64_t sum = 0;
  struct cmg__memo *m = atomic_load_explicit(&memos, memory_order_acquire);
  for (; m != NULL; m = m->next)
    sum += atomic_load_explicit(&m->recalls, memory_order_relaxed);
  return sum;
}

void
cmg__memo_after_fork(void)
{
  pthread_mutex_init(&lock, NULL);
  struct cmg__memo *m = atomic_load_explicit(&memos, memory_order_relaxed);
  for (; m != NULL; m = m->next)
    atomic_store_explicit(&m->taken, m == mine, memory_order_relaxed);
}
