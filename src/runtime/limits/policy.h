/*
 * The process's limit on each device and the counter it binds: reserve
 * before the real call, then commit or give back, so two threads can never
 * pass a limit together (policy.c).  What a full limit means by on_exceed
 * is the cap decision's (cap.h).
 */
#ifndef CMG_RUNTIME_LIMITS_POLICY_H
#define CMG_RUNTIME_LIMITS_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/base.h"

struct cmg__reservation {
  int device;
  uint64_t bytes;
};

/* Gives `device` (or CMG__HOST) its limit and soft limit (CMG__NO_LIMIT
 * for none) and physical size.  The first call for a device wins; later
 * ones return -EALREADY. */
int cmg__policy_set_device(int device, uint64_t limit, uint64_t soft,
                           uint64_t physical);

/* A single allocation above this is refused (max_alloc). */
void cmg__policy_set_max_alloc(uint64_t bytes);
uint64_t cmg__policy_max_alloc(void);

bool cmg__policy_is_device_set(int device);

/* Reserves `bytes` on `device` before the real allocation.  Returns 0, or
 * -ENOMEM when the limit would be passed, -E2BIG when max_alloc forbids the
 * size, -EPERM when the process fails closed; *used_out holds the bytes in
 * use. */
int cmg__policy_prepare(int device, uint64_t bytes, struct cmg__reservation *r,
                        uint64_t *used_out);

/* Reserves regardless of the limit (on_exceed=warn). */
void cmg__policy_force(int device, uint64_t bytes, struct cmg__reservation *r);

/* Like prepare, but waits up to timeout_ns for frees to make room: 0, or
 * -ETIMEDOUT, or prepare's other errors (on_exceed=wait). */
int cmg__policy_wait(int device, uint64_t bytes, uint64_t timeout_ns,
                     struct cmg__reservation *r, uint64_t *used_out);

/* True once each time usage rises above the device's soft limit. */
bool cmg__policy_soft_crossed(int device);
uint64_t cmg__policy_soft_limit(int device);

/* Grows a reservation made by prepare; -ENOMEM leaves it unchanged. */
int cmg__policy_grow(struct cmg__reservation *r, uint64_t extra);

/* Gives back a reservation whose allocation failed or was freed: the
 * bytes in use right after. */
uint64_t cmg__policy_release(int device, uint64_t bytes);

/* After a reserved allocation succeeded: raises the device's peak to what
 * is in use now, and returns that. */
uint64_t cmg__policy_commit(int device);

/* The most bytes in use at once: live allocations plus, at that moment,
 * other threads' reservations whose real call had not yet returned. */
uint64_t cmg__policy_peak(int device);

uint64_t cmg__policy_limit(int device);
uint64_t cmg__policy_physical(int device);
uint64_t cmg__policy_used(int device);

/* After a configuration error: no device allocation succeeds.  `why` is
 * kept (truncated to a line) for the first denial to say; a second call
 * keeps the first reason. */
void cmg__policy_fail_closed(const char *why);
bool cmg__policy_is_failed_closed(void);

/* Why the process fails closed, the first time it is asked, and NULL every
 * later time or when it does not fail closed: the reason is said once, by the
 * first denial, in the process that allocates (a shell or launcher script that
 * never touches the device says nothing). */
const char *cmg__policy_take_why(void);

/* Forgets every reservation (fork child). */
void cmg__policy_reset_usage(void);

#endif /* CMG_RUNTIME_LIMITS_POLICY_H */
