/*
 * The accounting every wrapper shares.  Every allocation is counted at the
 * driver level, exactly once, whichever way the program reached the
 * driver; the runtime wrappers only set the label recorded with it.
 *
 * An allocation: reserve the bytes against the limit (or, by on_exceed,
 * allow and record, or wait for frees), then the group's cap; after the
 * real call, record the allocation or give the reservation back.  A free:
 * take the entry out of the ledger before the real call, then count it, or
 * put it back if the free failed.  No lock is held across a real call.
 *
 * A wrapper called while another runs on the same thread (a driver calling
 * its own exports) forwards without counting.  A denial becomes
 * CUDA_ERROR_OUT_OF_MEMORY, the code every framework already handles.
 *
 * The memory of a context dies with it: its entries leave the ledger, their
 * bytes stop counting, and the report lists them as released by context
 * teardown, apart from leaks.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "runtime/limits/cap.h"
#include "runtime/ledger/freed_largest.h"
#include "runtime/group/group.h"
#include "runtime/ledger/history.h"
#include "runtime/ledger/ledger.h"
#include "core/log.h"
#include "core/size.h"
#include "runtime/limits/policy.h"
#include "runtime/stacks/stacks.h"
#include "runtime/ledger/timeline.h"
#include "preload/account.h"
#include "preload/device.h"
#include "preload/context.h"
#include "preload/death.h"
#include "preload/defer.h"
#include "preload/dump.h"
#include "preload/state.h"
#include "preload/real.h"

/* What a line names as the call: the API, or for the memory of a context
 * it made, "API's context". */
static const char *
call_name(const struct cmg__call *c, char *buf, size_t len)
{
  if (c->kind != CMG__KIND_CONTEXT)
    return cmg__fn_name(c->fn);
  snprintf(buf, len, "%s's context", cmg__fn_name(c->fn));
  return buf;
}

static CMG__COLD struct cmg__event
event(const struct cmg__call *c, enum cmg__event_kind kind, uint64_t bytes)
{
  return (struct cmg__event){
    .kind = kind,
    .time_ns = cmg__now_ns(),
    .requested_bytes = bytes,
    .live_bytes = cmg__ledger_live_bytes(c->device),
    .limit_bytes = cmg__policy_limit(c->device),
    .stack = c->stack,
    .device = (int16_t)c->device,
    .fn = c->fn,
  };
}

static CMG__COLD void
say(const struct cmg__call *c, const struct cmg__verdict *v, uint64_t bytes)
{
  char call[64], line[1024];
  cmg__cap_line(v, call_name(c, call, sizeof(call)), c->device, bytes, line,
                sizeof(line));
  cmg__log("%s", line);
}

/* A verdict past a cap, as the report and stderr show it: a wait is
 * waited out first, with the deadly signals it may take delivered; a
 * warning is recorded (and said the first time), a denial counted,
 * recorded and said.  0 when the allocation goes ahead. */
static CMG__COLD int
settle(struct cmg__call *c, const struct cmg__ask *a, struct cmg__verdict *v,
       uint64_t said_bytes)
{
  struct cmg__event e;
  if (v->kind == CMG__WAIT) {
    uint64_t t0 = cmg__now_ns();
    cmg__defer_leave();
    cmg__cap_wait(v->cap, a, cmg__cfg.wait_timeout_ns, v);
    cmg__defer_enter();
    e = event(c, CMG__EVENT_WAIT, a->bytes);
    e.waited_ns = cmg__now_ns() - t0;
    e.granted = v->kind == CMG__GRANT;
    e.limit_bytes = v->limit;
    cmg__history_event(&e);
  }
  if (v->kind == CMG__GRANT)
    return 0;
  e = event(c, v->kind == CMG__WARN ? CMG__EVENT_WARN : CMG__EVENT_DENIAL,
            a->bytes);
  e.limit_bytes = v->err == -EPERM ? 0 : v->limit;
  if (v->kind == CMG__DENY) {
    e.requested_bytes = said_bytes;
    cmg__ledger_count_denial(c->device);
    cmg__group_count_denial();
  }
  cmg__history_event(&e);
  if (v->kind == CMG__DENY || v->say)
    say(c, v, said_bytes);
  return v->kind == CMG__WARN ? 0 : v->err;
}

/* Passes one cap: 0 with the bytes reserved, or the denial's error after
 * it was said. */
static CMG__HOT int
pass(struct cmg__call *c, enum cmg__cap cap, const struct cmg__ask *a)
{
  struct cmg__verdict v;
  cmg__cap_decide(cap, a, &v);
  if (cmg__likely(v.kind == CMG__GRANT))
    return 0;
  return settle(c, a, &v, a->bytes);
}

static CMG__HOT bool
in_group(int device, unsigned kind)
{
  return cmg__kind_counts(kind) && cmg__cap_group_applies(device);
}

/* Reserves against the process's limit, then the group's cap: 0, or an
 * error once the denial is said. */
static CMG__HOT int
reserve(struct cmg__call *c, uint64_t bytes)
{
  struct cmg__ask a = { .device = c->device,
                        .bytes = bytes,
                        .on_exceed = (uint8_t)cmg__cfg.on_exceed,
                        .r = &c->r };
  int err = pass(c, CMG__CAP_PROCESS, &a);
  if (err < 0 || !in_group(c->device, c->kind))
    return err;
  if ((err = pass(c, CMG__CAP_GROUP, &a)) < 0)
    cmg__cap_release(CMG__CAP_PROCESS, c->device, c->r.bytes);
  return err;
}

/* Fills in who calls, where and from which stack: false when there is no
 * device to count on (the driver then refuses the call itself). */
static CMG__HOT bool
setup(struct cmg__call *c, enum cmg__fn fn, unsigned kind, int device)
{
  c->fn = cmg__self.label ? cmg__self.label : (uint8_t)fn;
  c->kind = (uint8_t)kind;
  /* Device memory, arrays and graph pools die with the context. */
  c->ctx = 0;
  if (kind == CMG__KIND_HOST)
    device = CMG__HOST;
  else if (kind == CMG__KIND_DEVICE || kind == CMG__KIND_ARRAY ||
           kind == CMG__KIND_GRAPH) {
    int current = cmg__context_device(&c->ctx);
    if (device == CMG__CURRENT)
      device = current;
  } else if (device == CMG__CURRENT)
    device = cmg__current_device();
  c->device = device;
  if (device < 0 || device >= CMG__SLOTS)
    return false;
  if (cmg__unlikely(cmg__history_touch()))
    cmg__death_arm();
  if (device != CMG__HOST)
    cmg__device_setup(device);
  c->stack = cmg__stacks_capture();
  return true;
}

static CUresult CMG__HOT
begin(struct cmg__call *c, enum cmg__fn fn, unsigned kind, int device,
      uint64_t bytes)
{
  c->tracked = false;
  if (cmg__self.depth++ > 0 || !setup(c, fn, kind, device))
    return CUDA_SUCCESS;
  c->r = (struct cmg__reservation){ .device = c->device, .bytes = bytes };
  if (cmg__kind_counts(kind) && reserve(c, bytes) < 0) {
    cmg__self.depth--;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  c->tracked = true;
  return CUDA_SUCCESS;
}

CUresult CMG__HOT
cmg__alloc_begin(struct cmg__call *c, enum cmg__fn fn, unsigned kind,
                 int device, uint64_t bytes)
{
  cmg__defer_enter();
  CUresult rc = begin(c, fn, kind, device, bytes);
  cmg__defer_leave();
  return rc;
}

static CUresult end(struct cmg__call *c, CUresult rc, uint64_t key);

/* The driver took the memory without asking: it is in use, so it counts,
 * past any limit. */
static void CMG__COLD
taken(enum cmg__fn fn, unsigned kind, int device, uint64_t bytes, uint64_t key,
      const uint16_t *ctx)
{
  struct cmg__call c;
  c.tracked = false;
  if (cmg__self.depth++ > 0 || !setup(&c, fn, kind, device) ||
      !cmg__kind_counts(kind)) {
    cmg__self.depth--;
    return;
  }
  if (ctx != NULL)
    c.ctx = *ctx;
  struct cmg__ask a = { .device = c.device, .bytes = bytes, .r = &c.r };
  cmg__cap_force(CMG__CAP_PROCESS, &a);
  if (in_group(c.device, kind))
    cmg__cap_force(CMG__CAP_GROUP, &a);
  c.tracked = true;
  end(&c, CUDA_SUCCESS, key);
}

void CMG__COLD
cmg__alloc_taken(enum cmg__fn fn, unsigned kind, int device, uint64_t bytes,
                 uint64_t key, const uint16_t *ctx)
{
  cmg__defer_enter();
  taken(fn, kind, device, bytes, key, ctx);
  cmg__defer_leave();
}

CUresult CMG__COLD
cmg__alloc_made(enum cmg__fn fn, unsigned kind, int device, uint64_t bytes,
                uint64_t key, uint16_t ctx)
{
  struct cmg__call c;
  CUresult rc = cmg__alloc_begin(&c, fn, kind, device, bytes);
  if (rc != CUDA_SUCCESS)
    return rc;
  c.ctx = ctx;
  return cmg__alloc_end(&c, CUDA_SUCCESS, key);
}

/* Reserves `extra` more for an allocation begun with cmg__alloc_begin whose
 * size the real call decided (a pitch): the limit, which a denial names
 * with the whole size, then the group.  The allocation is already made, so
 * past the process's limit it is refused whatever on_exceed says. */
static CUresult CMG__COLD
grow(struct cmg__call *c, uint64_t extra)
{
  struct cmg__reservation more;
  struct cmg__ask a = { .device = c->device, .bytes = extra, .r = &more };
  struct cmg__verdict v;
  cmg__cap_decide(CMG__CAP_PROCESS, &a, &v);
  if (v.kind != CMG__GRANT) {
    v.used -= c->r.bytes;
    settle(c, &a, &v, c->r.bytes + extra);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  a.on_exceed = (uint8_t)cmg__cfg.on_exceed;
  if (in_group(c->device, c->kind) && pass(c, CMG__CAP_GROUP, &a) < 0) {
    cmg__cap_release(CMG__CAP_PROCESS, c->device, extra);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  c->r.bytes += extra;
  return CUDA_SUCCESS;
}

CUresult CMG__COLD
cmg__alloc_grow(struct cmg__call *c, uint64_t extra)
{
  cmg__defer_enter();
  CUresult rc = grow(c, extra);
  cmg__defer_leave();
  return rc;
}

/* The bytes in use on the device right after, which the timeline notes. */
static CMG__HOT uint64_t
give_back(int device, unsigned kind, uint64_t bytes)
{
  if (!cmg__kind_counts(kind))
    return 0;
  uint64_t used = cmg__cap_release(CMG__CAP_PROCESS, device, bytes);
  if (in_group(device, kind))
    cmg__cap_release(CMG__CAP_GROUP, device, bytes);
  return used;
}

/* A soft limit crossed: one line, an event, and a snapshot report. */
static CMG__COLD void
soft_limit_crossed(const struct cmg__call *c)
{
  char soft[32], dev[32];
  struct cmg__event e = event(c, CMG__EVENT_SOFT_LIMIT, c->r.bytes);
  e.limit_bytes = cmg__policy_soft_limit(c->device);
  cmg__history_event(&e);
  cmg__log("%s passed its soft limit of %s; writing a snapshot report",
           cmg__cap_where(c->device, dev, sizeof(dev)),
           cmg__format_size(e.limit_bytes, soft, sizeof(soft)));
  cmg__dump_request(CMG__REASON_SOFT_LIMIT);
}

static CUresult CMG__HOT
end(struct cmg__call *c, CUresult rc, uint64_t key)
{
  cmg__self.depth--;
  if (!c->tracked)
    return rc;
  if (rc != CUDA_SUCCESS || key == 0) {
    give_back(c->device, c->kind, c->r.bytes);
    return rc;
  }
  struct cmg__alloc a = {
    .addr = key,
    .size = c->r.bytes,
    .seq = cmg__ledger_next_seq(),
    .time_ns = cmg__now_coarse_ns(),
    .stack = c->stack,
    .thread = cmg__tid(),
    .device = (int16_t)c->device,
    .fn = c->fn,
    .kind = c->kind,
    .ctx = c->ctx,
  };
  struct cmg__alloc stale;
  int err = cmg__ledger_insert(&a, &stale);
  /* A ledger that cannot grow must not make the program fail: the
   * allocation goes on untracked and its bytes stop counting. */
  if (err < 0) {
    give_back(c->device, c->kind, c->r.bytes);
    return rc;
  }
  if (err == 1) {
    give_back(stale.device, stale.kind, stale.size);
    cmg__stacks_account(stale.stack, stale.device, -(int64_t)stale.size, -1);
  }
  if (!cmg__kind_counts(a.kind))
    return rc;
  cmg__stacks_account(a.stack, a.device, (int64_t)a.size, 1);
  uint64_t used = cmg__policy_commit(a.device);
  cmg__history_peak(a.device, used);
  cmg__group_peak(a.device, used);
  if (cmg__timeline_on)
    cmg__timeline_note(a.device, used, a.time_ns);
  if (cmg__policy_soft_crossed(a.device))
    soft_limit_crossed(c);
  return rc;
}

CUresult CMG__HOT
cmg__alloc_end(struct cmg__call *c, CUresult rc, uint64_t key)
{
  cmg__defer_enter();
  CUresult out = end(c, rc, key);
  cmg__defer_leave();
  return out;
}

/* Before the real free: the entry leaves the ledger first, since the driver
 * may hand the same address to another thread as soon as it is freed. */
static bool CMG__HOT
free_begin(uint64_t key, unsigned kind, struct cmg__alloc *a)
{
  return key != 0 && cmg__ledger_remove(key, kind, a) == 0;
}

bool CMG__HOT
cmg__free_begin(uint64_t key, unsigned kind, struct cmg__alloc *a)
{
  cmg__defer_enter();
  bool rc = free_begin(key, kind, a);
  cmg__defer_leave();
  return rc;
}

static void CMG__HOT
uncount(const struct cmg__alloc *a, bool released)
{
  if (released)
    cmg__ledger_count_release(a);
  else
    cmg__ledger_count_free(a);
  if (!cmg__kind_counts(a->kind))
    return;
  cmg__stacks_account(a->stack, a->device, -(int64_t)a->size, -1);
  uint64_t used = give_back(a->device, a->kind, a->size);
  if (!cmg__timeline_on)
    return;
  uint64_t now = cmg__now_coarse_ns();
  cmg__timeline_note(a->device, used, now);
  cmg__freed_note(a, now);
}

void CMG__HOT
cmg__uncount(const struct cmg__alloc *a, bool released)
{
  cmg__defer_enter();
  uncount(a, released);
  cmg__defer_leave();
}

static void CMG__COLD
shrink(uint64_t key, unsigned kind, uint64_t bytes)
{
  struct cmg__alloc a;
  if (cmg__ledger_shrink(key, kind, bytes, &a) < 0 || !cmg__kind_counts(kind))
    return;
  cmg__stacks_account(a.stack, a.device, -(int64_t)bytes, 0);
  uint64_t used = give_back(a.device, a.kind, bytes);
  if (cmg__timeline_on)
    cmg__timeline_note(a.device, used, cmg__now_coarse_ns());
}

void CMG__COLD
cmg__shrink(uint64_t key, unsigned kind, uint64_t bytes)
{
  cmg__defer_enter();
  shrink(key, kind, bytes);
  cmg__defer_leave();
}

static CUresult CMG__HOT
free_end(bool tracked, const struct cmg__alloc *a, CUresult rc, uint64_t key)
{
  if (tracked && rc != CUDA_SUCCESS)
    cmg__ledger_restore(a);
  else if (tracked)
    uncount(a, false);
  else if (rc == CUDA_SUCCESS && key != 0)
    cmg__ledger_count_untracked_free();
  return rc;
}

CUresult CMG__HOT
cmg__free_end(bool tracked, const struct cmg__alloc *a, CUresult rc,
              uint64_t key)
{
  cmg__defer_enter();
  CUresult out = free_end(tracked, a, rc, key);
  cmg__defer_leave();
  return out;
}

/* The caps on `device` for a process whose own limit there is `limit` and
 * usage `used`, on a device of `physical` bytes: the smallest (*cap) and the
 * room the tightest leaves (*room), each CMG__NO_LIMIT where none is set.
 * A group's room is its cap less every member's usage; a broken group
 * leaves none. */
static void
caps_of(int device, uint64_t limit, uint64_t used, uint64_t physical,
        uint64_t *cap, uint64_t *room)
{
  uint64_t group_cap, group_used;
  *cap = limit;
  *room = limit == CMG__NO_LIMIT ? CMG__NO_LIMIT
          : used < limit         ? limit - used
                                 : 0;
  int rc = cmg__group_cap_used(device, physical, &group_cap, &group_used);
  if (rc < 0) {
    *room = 0;
    if (group_cap < *cap)
      *cap = group_cap;
  }
  if (rc != 0)
    return;
  uint64_t group_room = group_used < group_cap ? group_cap - group_used : 0;
  if (group_cap < *cap)
    *cap = group_cap;
  if (group_room < *room)
    *room = group_room;
}

/* The caps in force on `device`, set up as CUDA describes it. */
static void
caps_in_force(int device, uint64_t *cap, uint64_t *room)
{
  cmg__device_setup(device);
  caps_of(device, cmg__policy_limit(device), cmg__policy_used(device),
          cmg__policy_physical(device), cap, room);
}

/* The smallest cap as total (never above the card's `physical` bytes), and
 * free no higher than the least room any cap leaves. */
static void
view(uint64_t cap, uint64_t room, uint64_t physical, uint64_t *free,
     uint64_t *total)
{
  if (cap != CMG__NO_LIMIT)
    *total = physical && physical < cap ? physical : cap;
  if (room < *free)
    *free = room;
}

/* Frameworks size their pools from this (XLA takes 75% of total, TF free
 * minus a margin, vLLM a share of total), so under a cap they must see the
 * cap that binds, not the card: the smallest cap as total, and as free the
 * least room any cap leaves, so that free is what the next allocation can
 * get.  The driver's own answer is kept where no cap is set, and free never
 * rises above the driver's free memory. */
void
cmg__virtual_meminfo(int device, uint64_t *free, uint64_t *total)
{
  uint64_t cap, room;
  caps_in_force(device, &cap, &room);
  view(cap, room, cmg__policy_physical(device), free, total);
}

/* A process that has not started CUDA holds nothing on the card, and its
 * device must not be set up from a driver that cannot answer yet: its own
 * limit is read from the options against NVML's `physical` size, and its
 * group's cap and usage from the segment. */
void
cmg__virtual_meminfo_no_cuda(int device, const unsigned char *uuid,
                             uint64_t physical, uint64_t *free, uint64_t *total)
{
  uint64_t cap, room;
  if (uuid != NULL)
    cmg__group_know_device(device, uuid);
  caps_of(device, cmg__config_limit(&cmg__cfg, device, uuid, physical), 0,
          physical, &cap, &room);
  view(cap, room, physical, free, total);
}

bool
cmg__virtual_used(int device, uint64_t *used)
{
  uint64_t cap, room;
  caps_in_force(device, &cap, &room);
  if (cap == CMG__NO_LIMIT)
    return false;
  *used = cmg__policy_used(device);
  return true;
}

/* ---- context teardown --------------------------------------------------- */

struct teardown {
  uint16_t ctx; /* this context, or */
  int device;   /* the primary context of this device */
};

static bool
survives(const struct cmg__alloc *a, void *arg)
{
  const struct teardown *t = arg;
  if (a->ctx == 0)
    return true;
  if (t->ctx != 0)
    return a->ctx != t->ctx;
  return a->device != t->device || cmg__context_is_created(a->ctx);
}

static void
released(const struct cmg__alloc *a, void *arg)
{
  uncount(a, true);
  cmg__history_released(a);
}

static void
release_context(uint16_t ctx, int device)
{
  struct teardown t = { ctx, device };
  cmg__context_forget();
  if (ctx == 0 && (device < 0 || device >= CMG__MAX_DEVICES))
    return;
  cmg__ledger_remove_if(survives, released, &t);
}

void
cmg__release_context(uint16_t ctx, int device)
{
  cmg__defer_enter();
  release_context(ctx, device);
  cmg__defer_leave();
}
