/*
 * Stacks: the native call stack of an allocation, captured with libunwind
 * and interned to a small id, and each stack's live bytes per device
 * (stacks.c).
 */
#ifndef CMG_RUNTIME_STACKS_STACKS_H
#define CMG_RUNTIME_STACKS_STACKS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/base.h"

#define CMG__STACK_NONE 0u
/* Per-stack live accounts are kept for devices 0 .. CMG__STACK_DEVICES-1;
 * allocations on higher ordinals are attributed to their stacks in leaks
 * but not in peak compositions. */
#define CMG__STACK_DEVICES 8

/* Sets the capture depth (0 disables capture) before the first capture. */
void cmg__stacks_configure(unsigned depth);

extern _Atomic unsigned cmg__stack_depth;
uint32_t cmg__stacks_walk(void);

/* Captures the calling thread's stack, skipping the frames inside
 * libcumemguard itself, and interns it.  Returns its id (>= 1), or
 * CMG__STACK_NONE when capture is off or failed.  Never symbolizes, never
 * takes a lock when the stack is already known.  Inline, so that with
 * capture off an allocation pays one load for it. */
static inline uint32_t
cmg__stacks_capture(void)
{
  if (atomic_load_explicit(&cmg__stack_depth, memory_order_relaxed) == 0)
    return CMG__STACK_NONE;
  return cmg__stacks_walk();
}

/* Interns a given array of return addresses (tests, and capture). */
uint32_t cmg__stacks_intern(const uintptr_t *ips, unsigned depth,
                            bool truncated);

void cmg__stacks_add(uint32_t id, int device, int64_t bytes, int64_t count);

/* Adds (or, negative, removes) live bytes and allocations of a stack on a
 * device. */
static inline void
cmg__stacks_account(uint32_t id, int device, int64_t bytes, int64_t count)
{
  if (id != CMG__STACK_NONE)
    cmg__stacks_add(id, device, bytes, count);
}

struct cmg__stack_view {
  uint32_t id;
  unsigned depth;
  bool truncated;
  const uintptr_t *ips; /* innermost first */
  uint64_t live_bytes[CMG__STACK_DEVICES];
  uint64_t live_count[CMG__STACK_DEVICES];
};

/* Number of interned stacks; ids run from 1 to this. */
uint32_t cmg__stacks_count(void);

/* Fills *out for stack id; -ENOENT for an unknown id. */
int cmg__stacks_get(uint32_t id, struct cmg__stack_view *out);

/* Zeroes every stack's live accounts (fork child); stacks stay interned. */
void cmg__stacks_reset_accounts(void);

#endif /* CMG_RUNTIME_STACKS_STACKS_H */
