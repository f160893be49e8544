/*
 * A device's limit and counter, and nothing else: no I/O, no CUDA, and no
 * lock on the path of an allocation that fits.
 *
 * Each device has a `used` counter: bytes of live allocations plus bytes
 * reserved by allocations in flight.  A wrapper reserves before it calls the
 * real allocator (compare-and-swap against the limit), then keeps the
 * reservation if the call succeeded or releases it if it failed.  Because the
 * check and the increment are one atomic step, threads racing for the last
 * bytes under a limit can never overshoot it together.
 *
 * The same counter is the device's live bytes for cuMemGetInfo and its
 * peak: a second exact counter would cost two more locked operations per
 * allocation and free, the largest part of our cost.  So a peak may include
 * a reservation another thread held, for the length of its real call, at
 * the moment an allocation succeeded; in a single thread it is exact.
 *
 * A device's limit is fixed the first time the device is used, when its
 * physical size is known (a percentage needs it).  Host memory has the slot
 * after the devices.
 *
 * on_exceed=wait parks the allocating thread on the device's condition
 * variable; a release wakes the waiters only when there are any, so frees
 * pay one relaxed load for the feature.  A soft limit is armed while usage
 * is below it and fires once per crossing.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <stdatomic.h>

#include "core/base.h"
#include "runtime/limits/policy.h"

enum { UNSET, SETTING, SET };

struct device {
  _Atomic uint64_t used;
  _Atomic uint64_t peak;
  uint64_t limit;
  uint64_t soft;
  uint64_t physical;
  _Atomic int state;
  _Atomic bool soft_armed;
  _Atomic unsigned waiters;
  pthread_mutex_t lock; /* only for waiting */
  pthread_cond_t freed;
} __attribute__((aligned(CMG__APART)));

static struct device devices[CMG__SLOTS] = {
  [0 ... CMG__SLOTS - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER,
                             .freed = PTHREAD_COND_INITIALIZER }
};
static _Atomic bool failed_closed;
static char failed_why[640];
static _Atomic bool why_taken;
static uint64_t max_alloc = CMG__NO_LIMIT;

static struct device *
device_of(int device)
{
  if (device < 0 || device >= CMG__SLOTS)
    return NULL;
  return &devices[device];
}

/* Waits on the monotonic clock, as pthread_cond_clockwait would (glibc
 * 2.30, above the portable build's floor): the condition variable is made
 * with that clock, which pthread_cond_timedwait then uses. */
static void
make_freed(struct device *d)
{
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&d->freed, &attr);
  pthread_condattr_destroy(&attr);
}

int
cmg__policy_set_device(int device, uint64_t limit, uint64_t soft,
                       uint64_t physical)
{
  struct device *d = device_of(device);
  if (d == NULL)
    return -EINVAL;
  int expected = UNSET;
  if (!atomic_compare_exchange_strong(&d->state, &expected, SETTING))
    return -EALREADY;
  make_freed(d);
  d->limit = limit;
  d->soft = soft;
  d->physical = physical;
  atomic_store(&d->soft_armed, soft != CMG__NO_LIMIT);
  atomic_store_explicit(&d->state, SET, memory_order_release);
  return 0;
}

void
cmg__policy_set_max_alloc(uint64_t bytes)
{
  max_alloc = bytes;
}

uint64_t
cmg__policy_max_alloc(void)
{
  return max_alloc;
}

bool CMG__HOT
cmg__policy_is_device_set(int device)
{
  struct device *d = device_of(device);
  return d && atomic_load_explicit(&d->state, memory_order_acquire) == SET;
}

/* A device is set up once, by whichever thread uses it first; another
 * thread that meets it half set up waits the few instructions it takes
 * rather than guess a limit.  A device never set up has no room at all, so
 * a caller that skipped the setup cannot let an allocation through uncapped. */
static CMG__COLD int
wait_set(struct device *d)
{
  int state;
  while ((state = atomic_load_explicit(&d->state, memory_order_acquire)) ==
         SETTING)
    sched_yield();
  return state;
}

static inline uint64_t
limit_of(struct device *d)
{
  int state = atomic_load_explicit(&d->state, memory_order_acquire);
  if (cmg__unlikely(state == SETTING))
    state = wait_set(d);
  return state == SET ? d->limit : 0;
}

int CMG__HOT
cmg__policy_prepare(int device, uint64_t bytes, struct cmg__reservation *r,
                    uint64_t *used_out)
{
  struct device *d = device_of(device);
  if (d == NULL)
    return -EINVAL;
  uint64_t cur = atomic_load_explicit(&d->used, memory_order_relaxed);
  *used_out = cur;
  if (atomic_load_explicit(&failed_closed, memory_order_relaxed))
    return -EPERM;
  if (bytes > max_alloc && device != CMG__HOST)
    return -E2BIG;
  uint64_t limit = limit_of(d);
  do {
    if (bytes > limit || cur > limit - bytes) {
      *used_out = cur;
      return -ENOMEM;
    }
  } while (!atomic_compare_exchange_weak_explicit(
      &d->used, &cur, cur + bytes, memory_order_relaxed, memory_order_relaxed));
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

void CMG__COLD
cmg__policy_force(int device, uint64_t bytes, struct cmg__reservation *r)
{
  struct device *d = device_of(device);
  if (d != NULL)
    atomic_fetch_add_explicit(&d->used, bytes, memory_order_relaxed);
  r->device = device;
  r->bytes = bytes;
}

uint64_t CMG__HOT
cmg__policy_release(int device, uint64_t bytes)
{
  struct device *d = device_of(device);
  if (d == NULL)
    return 0;
  uint64_t had =
      atomic_fetch_sub_explicit(&d->used, bytes, memory_order_relaxed);
  CMG_ASSERT(had >= bytes); /* gives back only what a reservation took */
  uint64_t used = had - bytes;
  if (used < d->soft &&
      !atomic_load_explicit(&d->soft_armed, memory_order_relaxed))
    atomic_store_explicit(&d->soft_armed, true, memory_order_relaxed);
  if (atomic_load_explicit(&d->waiters, memory_order_relaxed) != 0) {
    pthread_mutex_lock(&d->lock);
    pthread_cond_broadcast(&d->freed);
    pthread_mutex_unlock(&d->lock);
  }
  return used;
}

uint64_t CMG__HOT
cmg__policy_commit(int device)
{
  struct device *d = device_of(device);
  if (d == NULL)
    return 0;
  uint64_t used = atomic_load_explicit(&d->used, memory_order_relaxed);
  uint64_t peak = atomic_load_explicit(&d->peak, memory_order_relaxed);
  while (used > peak &&
         !atomic_compare_exchange_weak_explicit(
             &d->peak, &peak, used, memory_order_relaxed, memory_order_relaxed))
    ;
  return used;
}

uint64_t
cmg__policy_peak(int device)
{
  struct device *d = device_of(device);
  return d ? atomic_load_explicit(&d->peak, memory_order_relaxed) : 0;
}

int CMG__COLD
cmg__policy_wait(int device, uint64_t bytes, uint64_t timeout_ns,
                 struct cmg__reservation *r, uint64_t *used_out)
{
  struct device *d = device_of(device);
  if (d == NULL)
    return -EINVAL;
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += (time_t)(timeout_ns / 1000000000u);
  deadline.tv_nsec += (long)(timeout_ns % 1000000000u);
  if (deadline.tv_nsec >= 1000000000) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000;
  }
  int err;
  pthread_mutex_lock(&d->lock);
  atomic_fetch_add(&d->waiters, 1);
  /* A free between the failed attempt and the wait broadcasts under the
   * lock we hold, so no wake-up is lost. */
  while ((err = cmg__policy_prepare(device, bytes, r, used_out)) == -ENOMEM &&
         pthread_cond_timedwait(&d->freed, &d->lock, &deadline) != ETIMEDOUT)
    ;
  if (err == -ENOMEM)
    err = cmg__policy_prepare(device, bytes, r, used_out) == 0 ? 0 : -ETIMEDOUT;
  atomic_fetch_sub(&d->waiters, 1);
  pthread_mutex_unlock(&d->lock);
  return err;
}

bool CMG__HOT
cmg__policy_soft_crossed(int device)
{
  struct device *d = device_of(device);
  if (d == NULL || d->soft == CMG__NO_LIMIT ||
      atomic_load_explicit(&d->used, memory_order_relaxed) <= d->soft)
    return false;
  return atomic_exchange(&d->soft_armed, false);
}

uint64_t
cmg__policy_soft_limit(int device)
{
  struct device *d = device_of(device);
  return d ? d->soft : CMG__NO_LIMIT;
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
cmg__policy_fail_closed(const char *why)
{
  if (failed_why[0] == '\0')
    snprintf(failed_why, sizeof(failed_why), "%s", why);
  atomic_store(&failed_closed, true);
}

const char *
cmg__policy_take_why(void)
{
  if (!atomic_load_explicit(&failed_closed, memory_order_acquire))
    return NULL;
  return atomic_exchange(&why_taken, true) ? NULL : failed_why;
}

bool
cmg__policy_is_failed_closed(void)
{
  return atomic_load_explicit(&failed_closed, memory_order_relaxed);
}

/* A forked child: only the forking thread exists, so the waiters' state
 * can be made anew. */
void
cmg__policy_reset_usage(void)
{
  for (int i = 0; i < CMG__SLOTS; i++) {
    struct device *d = &devices[i];
    atomic_store(&d->used, 0);
    atomic_store(&d->peak, 0);
    atomic_store(&d->waiters, 0);
    atomic_store(&d->soft_armed, d->soft != CMG__NO_LIMIT);
    pthread_mutex_init(&d->lock, NULL);
    make_freed(d);
  }
}
