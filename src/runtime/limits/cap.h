/*
 * The cap decision: an allocation passes the process's limit on its device,
 * then its group's cap, and on_exceed means the same past either (cap.c).
 * The caller only sequences: decide, wait where told, make the real call,
 * then keep the bytes or give them back.
 */
#ifndef CMG_RUNTIME_LIMITS_CAP_H
#define CMG_RUNTIME_LIMITS_CAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/limits/policy.h"

/* The two caps an allocation passes, in this order. */
enum cmg__cap { CMG__CAP_PROCESS, CMG__CAP_GROUP };

enum cmg__verdict_kind {
  CMG__GRANT, /* reserved within the cap */
  CMG__WARN,  /* reserved past it (on_exceed=warn) */
  CMG__WAIT,  /* full: cmg__cap_wait waits for frees (on_exceed=wait) */
  CMG__DENY,  /* refused, for the reason in err */
};

struct cmg__verdict {
  uint8_t kind; /* enum cmg__verdict_kind */
  uint8_t cap;  /* enum cmg__cap: the cap that gave it */
  bool say;     /* a warning that is the first past this cap on its device */
  bool waited;  /* given after a wait */
  /* 0 for a grant within the cap, -ENOMEM for a full one (which a
   * warning passes, or a wait waits for); a denial's reason: -ENOMEM
   * full, -ETIMEDOUT full after the wait, -E2BIG above max_alloc, -EPERM
   * failed closed, -EAGAIN a group not joined yet, -EBUSY a GPU the group
   * cannot count on yet. */
  int err;
  uint64_t used;  /* what the cap counted, without these bytes */
  uint64_t limit; /* the cap; CMG__NO_LIMIT for none */
};

struct cmg__ask {
  int device; /* a device, or CMG__HOST (the process's cap only) */
  uint64_t bytes;
  uint8_t on_exceed;          /* enum cmg__on_exceed */
  struct cmg__reservation *r; /* what the process's cap reserved */
};

/* Whether the group's cap (or the registry) counts allocations on
 * `device`. */
bool cmg__cap_group_applies(int device);

/* Reserves a->bytes under `cap` as a->on_exceed says: *v is a grant or a
 * warning (the bytes are reserved), a wait, or a denial (nothing is). */
void cmg__cap_decide(enum cmg__cap cap, const struct cmg__ask *a,
                     struct cmg__verdict *v);

/* After a wait verdict: waits up to timeout_ns for frees (another thread's,
 * or for the group's cap any member's, or a death), holding no lock of the
 * caller's; *v becomes a grant or a denial. */
void cmg__cap_wait(enum cmg__cap cap, const struct cmg__ask *a,
                   uint64_t timeout_ns, struct cmg__verdict *v);

/* Counts bytes the driver has already handed out, past the cap if need
 * be: 0, or -EPERM for a broken group (nothing counted). */
int cmg__cap_force(enum cmg__cap cap, const struct cmg__ask *a);

/* Gives back bytes a grant, a warning or cmg__cap_force counted: for the
 * process's limit, the bytes in use on the device right after; 0 for the
 * group's cap. */
uint64_t cmg__cap_release(enum cmg__cap cap, int device, uint64_t bytes);

/* The one line a warning or a denial says, for the call named `call` of
 * `bytes` on `device`; "" for a grant.  A denial of a process that fails
 * closed says why the first time only. */
void cmg__cap_line(const struct cmg__verdict *v, const char *call, int device,
                   uint64_t bytes, char *buf, size_t len);

/* What a line names as the place: "device N", or "host memory". */
const char *cmg__cap_where(int device, char *buf, size_t len);

#endif /* CMG_RUNTIME_LIMITS_CAP_H */
