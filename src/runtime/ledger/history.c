/*
 * What the report tells beyond the live ledger: when the process started,
 * whether it touched device memory at all, each device's identity, what was
 * live at each device's peak, and every denied allocation.
 *
 * Peaks are recorded with hysteresis: a snapshot of live memory by stack is
 * taken when a device's live bytes pass the last snapshot by 1% or by 1 MiB,
 * whichever comes first, so the recorded composition is never further than
 * that from the true peak.  A snapshot walks the interned stacks, not the live
 * allocations, so its cost does not grow with the number of allocations,
 * and the hot path pays one relaxed load and a compare.
 *
 * Policy decisions (denials, allocations allowed over the limit, waits,
 * soft-limit crossings) are kept in a fixed table (the first MAX_EVENTS,
 * then only counted); the first denial on each device also keeps the
 * composition of live memory by stack at that moment.  Allocations released
 * by context teardown are kept grouped by (stack, api, device, kind).
 *
 * One mutex per device guards its snapshot; a thread that finds it taken
 * skips the snapshot (the next growth takes it).  Snapshots are made with
 * malloc, outside any ledger lock.  No CUDA calls here.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/base.h"
#include "runtime/ledger/history.h"
#include "runtime/ledger/ledger.h"
#include "runtime/stacks/stacks.h"
#include "runtime/ledger/timeline.h"

#define MiB (1ull << 20)

struct device {
  pthread_mutex_t lock;
  _Atomic uint64_t next_snapshot; /* live bytes that trigger the next */
  struct cmg__composition peak;   /* owned; items malloc'd */
  struct cmg__composition first_denial;
  bool denied;
  char name[256];
  char uuid[48];
};

static struct device devices[CMG__MAX_DEVICES] = {
  [0 ... CMG__MAX_DEVICES - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER }
};

static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cmg__event events[CMG__MAX_EVENTS];
static size_t n_events;
static _Atomic uint64_t all_events[4];
static struct cmg__released *released;
static size_t n_released, cap_released;
static _Atomic bool touched;
static uint64_t start_mono_ns;
static double start_unix;

static uint64_t
clock_ns(clockid_t clock)
{
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t
mono_ns(void)
{
  return clock_ns(CLOCK_MONOTONIC);
}

void
cmg__history_start(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  start_unix = (double)ts.tv_sec + ts.tv_nsec / 1e9;
  start_mono_ns = mono_ns();
}

uint64_t
cmg__now_ns(void)
{
  return mono_ns() - start_mono_ns;
}

/* The kernel's tick-resolution clock reads in a third of the time, which
 * matters on every allocation; its few milliseconds of resolution do not
 * matter to a leak's timestamp.  It is the monotonic clock as of the last
 * tick, so measured from the same start it is never later than
 * cmg__now_ns(): a coarse stamp never comes after a precise one taken
 * later (a denial, a report). */
uint64_t CMG__HOT
cmg__now_coarse_ns(void)
{
  uint64_t now = clock_ns(CLOCK_MONOTONIC_COARSE);
  return now > start_mono_ns ? now - start_mono_ns : 0;
}

double
cmg__start_unix(void)
{
  return start_unix;
}

bool CMG__HOT
cmg__history_touch(void)
{
  if (cmg__likely(atomic_load_explicit(&touched, memory_order_relaxed)))
    return false;
  return !atomic_exchange(&touched, true);
}

bool
cmg__history_touched(void)
{
  return atomic_load_explicit(&touched, memory_order_relaxed);
}

static struct device *
device_of(int device)
{
  if (device < 0 || device >= CMG__MAX_DEVICES)
    return NULL;
  return &devices[device];
}

void
cmg__history_set_device(int device, const char *name, const char *uuid)
{
  struct device *d = device_of(device);
  if (d == NULL)
    return;
  pthread_mutex_lock(&d->lock);
  snprintf(d->name, sizeof(d->name), "%s", name ? name : "");
  snprintf(d->uuid, sizeof(d->uuid), "%s", uuid ? uuid : "");
  pthread_mutex_unlock(&d->lock);
}

/* The composition of live memory on `device` by stack, into *out (whose old
 * items are freed).  Returns 0 or -ENOMEM (then *out is left empty). */
static int
compose(int device, uint64_t live, struct cmg__composition *out)
{
  uint32_t n = cmg__stacks_count();
  free(out->items);
  memset(out, 0, sizeof(*out));
  out->bytes = live;
  out->time_ns = cmg__now_ns();
  if (device >= CMG__STACK_DEVICES || n == 0)
    return 0;
  out->items = malloc(n * sizeof(*out->items));
  if (out->items == NULL)
    return -ENOMEM;
  for (uint32_t id = 1; id <= n; id++) {
    struct cmg__stack_view v;
    if (cmg__stacks_get(id, &v) < 0 || v.live_count[device] == 0)
      continue;
    out->items[out->n].stack = id;
    out->items[out->n].bytes = v.live_bytes[device];
    out->items[out->n].count = v.live_count[device];
    out->n++;
  }
  return 0;
}

/* Live bytes passed the last composition by its step: a new one. */
static CMG__COLD void
snapshot(struct device *d, int device, uint64_t live)
{
  if (pthread_mutex_trylock(&d->lock) != 0)
    return;
  if (live >= atomic_load_explicit(&d->next_snapshot, memory_order_relaxed)) {
    uint64_t step = live / 100 < MiB ? live / 100 : MiB;
    if (step == 0)
      step = 1;
    compose(device, live, &d->peak);
    atomic_store_explicit(&d->next_snapshot, live + step, memory_order_relaxed);
  }
  pthread_mutex_unlock(&d->lock);
}

void CMG__HOT
cmg__history_peak(int device, uint64_t live)
{
  struct device *d = device_of(device);
  if (d != NULL &&
      live >= atomic_load_explicit(&d->next_snapshot, memory_order_relaxed))
    snapshot(d, device, live);
}

void
cmg__history_event(const struct cmg__event *e)
{
  atomic_fetch_add_explicit(&all_events[e->kind], 1, memory_order_relaxed);
  pthread_mutex_lock(&events_lock);
  if (n_events < CMG__MAX_EVENTS)
    events[n_events++] = *e;
  pthread_mutex_unlock(&events_lock);
  struct device *d = device_of(e->device);
  if (d == NULL || e->kind != CMG__EVENT_DENIAL)
    return;
  cmg__timeline_mark(e->device, e->live_bytes, e->time_ns);
  pthread_mutex_lock(&d->lock);
  if (!d->denied) {
    d->denied = true;
    compose(e->device, e->live_bytes, &d->first_denial);
    d->first_denial.time_ns = e->time_ns;
  }
  pthread_mutex_unlock(&d->lock);
}

size_t
cmg__history_events(struct cmg__event *out, size_t max, uint64_t totals[4])
{
  pthread_mutex_lock(&events_lock);
  size_t n = n_events < max ? n_events : max;
  memcpy(out, events, n * sizeof(*out));
  pthread_mutex_unlock(&events_lock);
  for (int k = 0; k < 4; k++)
    totals[k] = atomic_load_explicit(&all_events[k], memory_order_relaxed);
  return n;
}

void
cmg__history_released(const struct cmg__alloc *a)
{
  pthread_mutex_lock(&events_lock);
  size_t i = 0;
  while (i < n_released &&
         !(released[i].stack == a->stack && released[i].device == a->device &&
           released[i].fn == a->fn && released[i].kind == a->kind))
    i++;
  if (i == n_released && n_released == cap_released) {
    size_t cap = cap_released ? cap_released * 2 : 16;
    struct cmg__released *p = realloc(released, cap * sizeof(*p));
    if (p == NULL) {
      pthread_mutex_unlock(&events_lock);
      return;
    }
    released = p;
    cap_released = cap;
  }
  if (i == n_released)
    released[n_released++] = (struct cmg__released){
      .stack = a->stack, .device = a->device, .fn = a->fn, .kind = a->kind
    };
  released[i].count++;
  released[i].bytes += a->size;
  released[i].time_ns = cmg__now_ns();
  pthread_mutex_unlock(&events_lock);
}

struct cmg__released *
cmg__history_released_groups(size_t *n)
{
  pthread_mutex_lock(&events_lock);
  struct cmg__released *copy =
      malloc((n_released ? n_released : 1) * sizeof(*copy));
  *n = copy ? n_released : 0;
  /* released is NULL until the first teardown; memcpy takes no NULL. */
  if (copy != NULL && n_released > 0)
    memcpy(copy, released, n_released * sizeof(*copy));
  pthread_mutex_unlock(&events_lock);
  return copy;
}

static int
copy_composition(const struct cmg__composition *from,
                 struct cmg__composition *to)
{
  *to = *from;
  to->items = NULL;
  if (from->n == 0)
    return 0;
  to->items = malloc(from->n * sizeof(*to->items));
  if (to->items == NULL) {
    to->n = 0;
    return -ENOMEM;
  }
  memcpy(to->items, from->items, from->n * sizeof(*to->items));
  return 0;
}

int
cmg__history_device(int device, struct cmg__device_history *out)
{
  struct device *d = device_of(device);
  if (d == NULL)
    return -EINVAL;
  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&d->lock);
  memcpy(out->name, d->name, sizeof(out->name));
  memcpy(out->uuid, d->uuid, sizeof(out->uuid));
  out->has_peak = atomic_load(&d->next_snapshot) != 0;
  out->has_first_denial = d->denied;
  int err = copy_composition(&d->peak, &out->peak);
  if (err == 0)
    err = copy_composition(&d->first_denial, &out->first_denial);
  pthread_mutex_unlock(&d->lock);
  return err;
}

void
cmg__history_device_free(struct cmg__device_history *h)
{
  free(h->peak.items);
  free(h->first_denial.items);
  h->peak.items = h->first_denial.items = NULL;
}

/* A forked child keeps the devices' identities and forgets the rest; its
 * own life starts at the fork. */
void
cmg__history_reset(void)
{
  cmg__history_start();
  for (int i = 0; i < CMG__MAX_DEVICES; i++) {
    struct device *d = &devices[i];
    pthread_mutex_init(&d->lock, NULL);
    free(d->peak.items);
    free(d->first_denial.items);
    memset(&d->peak, 0, sizeof(d->peak));
    memset(&d->first_denial, 0, sizeof(d->first_denial));
    d->denied = false;
    atomic_store(&d->next_snapshot, 0);
  }
  pthread_mutex_init(&events_lock, NULL);
  n_events = 0;
  for (int k = 0; k < 4; k++)
    atomic_store(&all_events[k], 0);
  free(released);
  released = NULL;
  n_released = cap_released = 0;
  atomic_store(&touched, false);
}
