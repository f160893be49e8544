/*
 * Per-thread counters, summed on read (thread_tally.c): a thread adds to its own
 * block with plain stores, so counting an allocation takes no locked
 * operation.
 */
#ifndef CMG_RUNTIME_LEDGER_THREAD_TALLY_H
#define CMG_RUNTIME_LEDGER_THREAD_TALLY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/base.h"

/* What each device slot counts per thread. */
enum cmg__tally_kind {
  CMG__TALLY_ALLOCATIONS,
  CMG__TALLY_FREES,
  CMG__TALLY_RELEASED,
  CMG__TALLY_BYTES,      /* allocated */
  CMG__TALLY_BYTES_GONE, /* freed or released */
  CMG__TALLY_KINDS
};

/* The counters before the devices' and host memory's: CMG__SLOTS of each
 * kind, counter (slot * CMG__TALLY_KINDS + kind). */
#define CMG__TALLIES (CMG__SLOTS * CMG__TALLY_KINDS)

struct cmg__tally {
  _Atomic uint64_t n[CMG__TALLIES];
  struct cmg__tally *next;
  _Atomic bool taken;
  unsigned number; /* 1, 2, ... in the order made; 0 the shared block */
} __attribute__((aligned(CMG__APART)));

extern CMG__TLS struct cmg__tally *cmg__tally_self;
extern struct cmg__tally cmg__tally_shared;

/* The calling thread's block, taken on first use. */
struct cmg__tally *cmg__tally_attach(void);

/* The calling thread's block, attached on its first count. */
static inline struct cmg__tally *
cmg__tally_mine(void)
{
  struct cmg__tally *t = cmg__tally_self;
  return cmg__likely(t != NULL) ? t : cmg__tally_attach();
}

/* Adds n to counter i of block t, the calling thread's. */
static inline void
cmg__tally_bump(struct cmg__tally *t, unsigned i, uint64_t n)
{
  if (cmg__unlikely(t == &cmg__tally_shared))
    atomic_fetch_add_explicit(&t->n[i], n, memory_order_release);
  else
    atomic_store_explicit(
        &t->n[i], atomic_load_explicit(&t->n[i], memory_order_relaxed) + n,
        memory_order_release);
}

/* Adds n to counter i of the calling thread. */
static inline void
cmg__tally_add(unsigned i, uint64_t n)
{
  cmg__tally_bump(cmg__tally_mine(), i, n);
}

/* Adds n to counter i and m to counter j: what an allocation or a free
 * counts, with the thread's block looked up once. */
static inline void
cmg__tally_add2(unsigned i, uint64_t n, unsigned j, uint64_t m)
{
  struct cmg__tally *t = cmg__tally_mine();
  cmg__tally_bump(t, i, n);
  cmg__tally_bump(t, j, m);
}

/* The number of the calling thread's block: while the thread runs, no
 * other running thread has it, so it names a slot of per-thread data only
 * this thread writes (the registry's lanes); 0 for the shared block. */
static inline unsigned
cmg__tally_number(void)
{
  return cmg__tally_mine()->number;
}

/* Counter i summed over every thread. */
uint64_t cmg__tally_sum(unsigned i);

/* fork: the child's counts start from zero. */
void cmg__tally_prefork(void);
void cmg__tally_postfork(bool child);

#endif /* CMG_RUNTIME_LEDGER_THREAD_TALLY_H */
