/*
 * The limit decision, and nothing else: no I/O, no CUDA, no locks.
 *
 * Each device has a `used` counter: bytes of live allocations plus bytes
 * reserved by allocations in flight.  A wrapper reserves before it calls the
 * real allocator (compare-and-swap against the limit), then keeps the
 * reservation if the call succeeded or releases it if it failed.  Because the
 * check and the increment are one atomic step, threads racing for the last
 * bytes under a limit can never overshoot it together.
 *
 * A device's limit is fixed the first time the device is used, when its
 * physical size is known (a percentage needs it).
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>

#include "internal.h"

enum { UNSET, SETTING, SET };

struct device {
  _Atomic uint64_t used;
  uint64_t limit;
  uint64_t physical;
  _Atomic int state;
} __attribute__((aligned(64)));

static struct device devices[CMG__MAX_DEVICES];
static _Atomic bool failed_closed;

static struct device *
device_of(int device)
{
  if (device < 0 || device >= CMG__MAX_DEVICES)
    return NULL;
  return &devices[device];
}

int
cmg__policy_set_device(int device, uint64_t limit, uint64_t physical)
{
  struct device *d = device_of(device);
  if (d == NULL)
    return -EINVAL;
  int expected = UNSET;
  if (!atomic_compare_exchange_strong(&d->state, &expected, SETTING))
    return -EALREADY;
  d->limit = limit;
  d->physical = physical;
  atomic_store_explicit(&d->state, SET, memory_order_release);
  return 0;
}

bool
cmg__policy_is_device_set(int device)
{
  struct device *d = device_of(device);
  return d && atomic_load_explicit(&d->state, memory_order_acquire) == SET;
}

/* A device is set up once, by whichever thread uses it first; another
 * thread that meets it half set up waits the few instructions it takes
 * rather than guess a limit.  A device never set up has no room at all, so
 * a caller that skipped the setup cannot let an allocation through uncapped. */
static uint64_t
limit_of(struct device *d)
{
  int state;
  while ((state = atomic_load_explicit(&d->state, memory_order_acquire)) ==
         SETTING)
    sched_yield();
  return state == SET ? d->limit : 0;
}

int
cmg__policy_prepare(int device, uint64_t bytes, struct cmg__reservation *r,
                    uint64_t *used_out)
{
  struct device *d = device_of(device);
  if (d == NULL)
    return -EINVAL;
  uint64_t cur = atomic_load_explicit(&d->used, memory_order_relaxed);
  if (atomic_load_explicit(&failed_closed, memory_order_relaxed)) {
    *used_out = cur;
    return -EPERM;
  }
  uint64_t limit = limit_of(d);
  do {
    if (bytes > limit || cur > limit - bytes) {
      *used_out = cur;
      return -ENOMEM;
    }
  } while (!atomic_compare_exchange_weak_explicit(&d->used, &cur, cur + bytes,
                                                  memory_order_relaxed,
                                                  memory_order_relaxed));
  r->device = device;
  r->bytes = bytes;
  return 0;
}

int
cmg__policy_grow(struct cmg__reservation *r, uint64_t extra)
{
  struct cmg__reservation more;
  uint64_t used;
  int err = cmg__policy_prepare(r->device, extra, &more, &used);
  if (err == 0)
    r->bytes += extra;
  return err;
}

void
cmg__policy_release(int device, uint64_t bytes)
{
  struct device *d = device_of(device);
  if (d != NULL)
    atomic_fetch_sub_explicit(&d->used, bytes, memory_order_relaxed);
}

uint64_t
cmg__policy_limit(int device)
{
  struct device *d = device_of(device);
  return d ? limit_of(d) : 0;
}

uint64_t
cmg__policy_physical(int device)
{
  struct device *d = device_of(device);
  if (d == NULL || atomic_load_explicit(&d->state, memory_order_acquire) != SET)
    return 0;
  return d->physical;
}

uint64_t
cmg__policy_used(int device)
{
  struct device *d = device_of(device);
  return d ? atomic_load_explicit(&d->used, memory_order_relaxed) : 0;
}

void
cmg__policy_fail_closed(void)
{
  atomic_store(&failed_closed, true);
}

bool
cmg__policy_is_failed_closed(void)
{
  return atomic_load_explicit(&failed_closed, memory_order_relaxed);
}

void
cmg__policy_reset_usage(void)
{
  for (int i = 0; i < CMG__MAX_DEVICES; i++)
    atomic_store(&devices[i].used, 0);
}
