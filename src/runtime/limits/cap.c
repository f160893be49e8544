/*
 * The cap decision, once for both caps.  Each cap gives three answers of
 * its own: reserve within it, count past it, wait for room in it; the
 * process's limit from policy.c, the group's from group.c.  What on_exceed
 * makes of a full cap is decided here only: fail refuses, warn counts past
 * it (said on stderr the first time on each device, for each cap), wait
 * tells the caller to wait, since only the caller knows what it must let
 * go of first.
 *
 * Host memory has a limit but no group and no on_exceed: past it, a pinned
 * allocation is refused, as the driver refuses one when the host is full.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>

#include "core/base.h"
#include "core/conf.h"
#include "core/size.h"
#include "runtime/limits/cap.h"
#include "runtime/group/group.h"
#include "runtime/limits/policy.h"

static _Atomic bool warned[2][CMG__SLOTS];

bool CMG__HOT
cmg__cap_group_applies(int device)
{
  return device >= 0 && device < CMG__MAX_DEVICES && cmg__group_counting();
}

/* Out of line: inlined, the group's machinery (its scans' arrays) would
 * make every hook's frame large and realigned, a frame that stack capture
 * cannot step through by its frame pointer. */
static CMG__COLD int
reserve_in_group(const struct cmg__ask *a, uint64_t *used, uint64_t *limit)
{
  return cmg__group_reserve(a->device, a->bytes,
                            cmg__policy_physical(a->device), used, limit);
}

/* The cap's own answer within it: 0 with the bytes reserved, or why not.
 * A process in no group counts in the registry's lane, inline. */
static inline int
try_reserve(enum cmg__cap cap, const struct cmg__ask *a, uint64_t *used,
            uint64_t *limit)
{
  if (cap == CMG__CAP_PROCESS)
    return cmg__policy_prepare(a->device, a->bytes, a->r, used);
  if (cmg__group_solo_add(a->device, a->bytes))
    return 0;
  return reserve_in_group(a, used, limit);
}

int
cmg__cap_force(enum cmg__cap cap, const struct cmg__ask *a)
{
  if (cap == CMG__CAP_PROCESS) {
    cmg__policy_force(a->device, a->bytes, a->r);
    return 0;
  }
  if (cmg__group_solo_add(a->device, a->bytes))
    return 0;
  return cmg__group_force(a->device, a->bytes, cmg__policy_physical(a->device));
}

uint64_t CMG__HOT
cmg__cap_release(enum cmg__cap cap, int device, uint64_t bytes)
{
  if (cap == CMG__CAP_PROCESS)
    return cmg__policy_release(device, bytes);
  cmg__group_release(device, bytes);
  return 0;
}

/* A full cap, by on_exceed. */
static CMG__COLD void
past(enum cmg__cap cap, const struct cmg__ask *a, struct cmg__verdict *v)
{
  if (cap == CMG__CAP_PROCESS && a->device == CMG__HOST)
    return;
  if (a->on_exceed == CMG__ON_EXCEED_WARN && cmg__cap_force(cap, a) == 0) {
    v->kind = CMG__WARN;
    v->say = !atomic_exchange(&warned[cap][a->device], true);
  } else if (a->on_exceed == CMG__ON_EXCEED_WAIT)
    v->kind = CMG__WAIT;
}

void CMG__HOT
cmg__cap_decide(enum cmg__cap cap, const struct cmg__ask *a,
                struct cmg__verdict *v)
{
  uint64_t used = 0, limit = CMG__NO_LIMIT;
  int err = try_reserve(cap, a, &used, &limit);
  if (cmg__likely(err == 0)) {
    *v = (struct cmg__verdict){ .kind = CMG__GRANT, .cap = (uint8_t)cap };
    return;
  }
  if (cap == CMG__CAP_PROCESS)
    limit = cmg__policy_limit(a->device);
  *v = (struct cmg__verdict){ .kind = CMG__DENY,
                              .cap = (uint8_t)cap,
                              .err = err,
                              .used = used,
                              .limit = limit };
  if (err == -ENOMEM)
    past(cap, a, v);
}

void CMG__COLD
cmg__cap_wait(enum cmg__cap cap, const struct cmg__ask *a, uint64_t timeout_ns,
              struct cmg__verdict *v)
{
  int err;
  if (cap == CMG__CAP_PROCESS)
    err = cmg__policy_wait(a->device, a->bytes, timeout_ns, a->r, &v->used);
  else
    err = cmg__group_wait(a->device, a->bytes, cmg__policy_physical(a->device),
                          timeout_ns, &v->used, &v->limit);
  v->waited = true;
  v->kind = err == 0 ? CMG__GRANT : CMG__DENY;
  v->err = err;
}

/* ---- what is said ------------------------------------------------------- */

const char *
cmg__cap_where(int device, char *buf, size_t len)
{
  if (device == CMG__HOST)
    snprintf(buf, len, "host memory");
  else
    snprintf(buf, len, "device %d", device);
  return buf;
}

/* Who holds what a full cap counts: the process says no name, a group
 * says its own. */
static const char *
holder(const struct cmg__verdict *v, char *buf, size_t len)
{
  if (v->cap == CMG__CAP_PROCESS)
    return "";
  snprintf(buf, len, "group '%s' has ", cmg__group_name());
  return buf;
}

static void
warn_line(const struct cmg__verdict *v, const char *call, int device,
          uint64_t bytes, char *buf, size_t len)
{
  char want[32], have[32], cap[32], dev[32], who[160];
  snprintf(buf, len,
           "allowed %s of %s on %s over %s: %s%s in use, %s %s "
           "(on_exceed=warn; later ones are only in the report)",
           call, cmg__format_size(bytes, want, sizeof(want)),
           cmg__cap_where(device, dev, sizeof(dev)),
           v->cap == CMG__CAP_PROCESS ? "the limit" : "the group's cap",
           holder(v, who, sizeof(who)),
           cmg__format_size(v->used, have, sizeof(have)),
           v->cap == CMG__CAP_PROCESS ? "limit" : "group limit",
           cmg__format_size(v->limit, cap, sizeof(cap)));
}

/* Why a cap refused, other than by being full. */
static const char *
reason(const struct cmg__verdict *v, char *buf, size_t len)
{
  char cap[32];
  const char *group = cmg__group_name();
  switch (v->err) {
  case -E2BIG:
    snprintf(buf, len, "larger than max_alloc=%s",
             cmg__format_size(cmg__policy_max_alloc(), cap, sizeof(cap)));
    return buf;
  case -EPERM:
    snprintf(buf, len, "group '%s' failed closed, as its line said", group);
    return buf;
  case -EAGAIN:
    snprintf(buf, len,
             "group '%s' is not joined yet: %s; the next allocation tries "
             "again",
             group, cmg__group_why());
    return buf;
  case -EBUSY:
    snprintf(buf, len,
             "group '%s' cannot count on this device yet: %s; the next "
             "allocation tries again",
             group, cmg__group_why());
    return buf;
  default:
    return NULL;
  }
}

/* A process that fails closed says why once, in a line of its own shape. */
static void
closed_line(const char *call, const char *want, const char *dev, char *buf,
            size_t len)
{
  const char *why = cmg__policy_take_why();
  if (why != NULL)
    snprintf(buf, len,
             "denied %s of %s on %s: %s; no device allocation will succeed",
             call, want, dev, why);
  else
    snprintf(buf, len,
             "denied %s of %s on %s: no device allocation succeeds (failed "
             "closed, as the first denial said)",
             call, want, dev);
}

static void
deny_line(const struct cmg__verdict *v, const char *call, int device,
          uint64_t bytes, char *buf, size_t len)
{
  char want[32], have[32], cap[32], dev[32], who[160], why[640];
  cmg__format_size(bytes, want, sizeof(want));
  cmg__cap_where(device, dev, sizeof(dev));
  if (v->cap == CMG__CAP_PROCESS && v->err == -EPERM) {
    closed_line(call, want, dev, buf, len);
    return;
  }
  const char *r = reason(v, why, sizeof(why));
  if (r != NULL) {
    snprintf(buf, len, "denied %s of %s (%" PRIu64 " bytes) on %s: %s", call,
             want, bytes, dev, r);
    return;
  }
  snprintf(buf, len,
           "denied %s of %s (%" PRIu64 " bytes) on %s: %s%s in use, %s %s%s",
           call, want, bytes, dev, holder(v, who, sizeof(who)),
           cmg__format_size(v->used, have, sizeof(have)),
           v->cap == CMG__CAP_PROCESS ? "limit" : "group limit",
           cmg__format_size(v->limit, cap, sizeof(cap)),
           v->err == -ETIMEDOUT ? " (waited wait_timeout for frees)" : "");
}

void CMG__COLD
cmg__cap_line(const struct cmg__verdict *v, const char *call, int device,
              uint64_t bytes, char *buf, size_t len)
{
  if (v->kind == CMG__WARN)
    warn_line(v, call, device, bytes, buf, len);
  else if (v->kind == CMG__DENY)
    deny_line(v, call, device, bytes, buf, len);
  else if (len > 0)
    buf[0] = '\0';
}
