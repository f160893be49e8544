/*
 * The largest allocations freed so far, with when each was made and freed,
 * so that a timeline can draw them from allocation to free (freed_largest.c).
 */
#ifndef CMG_RUNTIME_LEDGER_FREED_LARGEST_H
#define CMG_RUNTIME_LEDGER_FREED_LARGEST_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base.h"
#include "runtime/ledger/ledger.h"

/* How many are kept. */
#define CMG__FREED_KEEP 16

struct cmg__freed {
  struct cmg__alloc a;
  uint64_t free_ns; /* since the process started, as a.time_ns */
};

/* Once CMG__FREED_KEEP are kept, the smallest of them: a free no larger
 * is not kept, and costs its caller this one load. */
extern _Atomic uint64_t cmg__freed_floor;

void cmg__freed_add(const struct cmg__alloc *a, uint64_t free_ns);

/* Notes that *a was freed at free_ns. */
static inline void
cmg__freed_note(const struct cmg__alloc *a, uint64_t free_ns)
{
  if (cmg__unlikely(a->size > atomic_load_explicit(&cmg__freed_floor,
                                                   memory_order_relaxed)))
    cmg__freed_add(a, free_ns);
}

/* Copies up to max of those kept, largest first (the earlier first among
 * equals); returns how many. */
size_t cmg__freed_get(struct cmg__freed *out, size_t max);

/* Forgets them all (a forked child). */
void cmg__freed_reset(void);

#endif /* CMG_RUNTIME_LEDGER_FREED_LARGEST_H */
