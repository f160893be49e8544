/*
 * Memory over time.  Each device keeps a series of points, each the bytes
 * in use over a span of time: the value right after the first change in
 * the span, and the least and the most seen in it.  Spans are aligned
 * buckets of 2^shift nanoseconds, about a millisecond at first (the coarse
 * clock that stamps allocations ticks every 1-4 ms, so a finer bucket would
 * only split one tick).  A denial opens a point of its own at its exact
 * time and value (the first denial of a bucket: a loop of retries must
 * not fill the series).
 *
 * The series is bounded: when a device's CMG__TIMELINE_POINTS are used up,
 * the buckets double in width, as often as it takes to free half of them,
 * and the points that fall into one wider bucket merge, keeping the least
 * and the most, so a peak or a trough survives any number of mergings and
 * a run of any length fits in the same 32 KiB per device.  The arrays are
 * static: the pages of a device that is never used are never touched.
 *
 * The hot path (an allocation committed, a free counted) is lock-free and
 * mostly read-only: one load of the open point's word, which packs the
 * end of its bucket and its index, then a compare against the point's
 * least and most.  Only a new bucket takes the device's lock; a merge
 * happens under it after the open point's word is cleared, so new callers
 * wait on the lock.  A caller that loaded the word just before a merge may
 * still widen the old slot: a lost widening, never a stray write out of the
 * array.  The exact peak is kept beside the series and put back into the
 * point that holds its time when the series is read, so the series always
 * reaches the device's peak.
 *
 * No CUDA calls, no allocation, no I/O.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "core/base.h"
#include "runtime/ledger/timeline.h"

/* About a millisecond: the coarse clock's finest tick. */
#define FIRST_SHIFT 20
#define LAST_SHIFT 62

/* The open point's word: the end of its bucket, (bucket + 1) << shift,
 * whose low FIRST_SHIFT bits are zero and hold the point's index; 0 when
 * no point is open.  A change at or past the end opens a point; one
 * stamped before the bucket began (a clock read older than the open
 * point) widens the open point, the last, as open_point would. */
#define INDEX_MASK ((UINT64_C(1) << FIRST_SHIFT) - 1)
#define WORD(bucket, shift, index)                                             \
  ((((bucket) + 1) << (shift)) | (uint64_t)(index))
#define WORD_END(w) ((w) & ~INDEX_MASK)
#define WORD_INDEX(w) ((w)&INDEX_MASK)
_Static_assert(CMG__TIMELINE_POINTS <= INDEX_MASK, "an index fits the word");

struct point {
  _Atomic uint64_t time_ns;
  _Atomic uint64_t live;
  _Atomic uint64_t min, max;
};

struct device {
  _Alignas(CMG__APART) _Atomic uint64_t open; /* the open point's word */
  _Atomic uint64_t peak, peak_time_ns;
  pthread_mutex_t lock; /* guards what follows */
  unsigned shift;
  size_t n;
  bool last_marked; /* the last point is a denial's */
  _Alignas(CMG__APART) struct point points[CMG__TIMELINE_POINTS];
};

static struct device devices[CMG__MAX_DEVICES] = {
  [0 ... CMG__MAX_DEVICES - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER,
                                   .shift = FIRST_SHIFT }
};

bool cmg__timeline_on = true;

static pthread_mutex_t dumps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cmg__timeline_dump dumps[CMG__TIMELINE_DUMPS];
static uint64_t n_dumps;

#define RELAXED memory_order_relaxed

static void
store_max(_Atomic uint64_t *p, uint64_t v)
{
  uint64_t old = atomic_load_explicit(p, RELAXED);
  while (v > old &&
         !atomic_compare_exchange_weak_explicit(p, &old, v, RELAXED, RELAXED))
    ;
}

static void
store_min(_Atomic uint64_t *p, uint64_t v)
{
  uint64_t old = atomic_load_explicit(p, RELAXED);
  while (v < old &&
         !atomic_compare_exchange_weak_explicit(p, &old, v, RELAXED, RELAXED))
    ;
}

static void
note_peak(struct device *d, uint64_t live, uint64_t now)
{
  uint64_t peak = atomic_load_explicit(&d->peak, RELAXED);
  while (live > peak) {
    if (atomic_compare_exchange_weak_explicit(&d->peak, &peak, live, RELAXED,
                                              RELAXED)) {
      atomic_store_explicit(&d->peak_time_ns, now, RELAXED);
      break;
    }
  }
}

/* A new most in the open point; perhaps a new peak of the device.  Out of
 * line: it is the rarer branch of a hot function that should stay small. */
static __attribute__((noinline)) void
raise_point(struct device *d, struct point *p, uint64_t live, uint64_t now)
{
  store_max(&p->max, live);
  note_peak(d, live, now);
}

static void
widen(struct device *d, struct point *p, uint64_t live, uint64_t now)
{
  if (live > atomic_load_explicit(&p->max, RELAXED))
    raise_point(d, p, live, now);
  store_min(&p->min, live);
}

static void
publish(struct device *d, uint64_t bucket, size_t index)
{
  atomic_store_explicit(&d->open, WORD(bucket, d->shift, index),
                        memory_order_release);
}

static uint64_t
load(_Atomic uint64_t *p)
{
  return atomic_load_explicit(p, RELAXED);
}

/* Doubles the buckets until at most half the points are used, merging the
 * points that share a bucket.  Called with the lock held and the open word
 * cleared. */
static void
coarsen(struct device *d)
{
  while (d->n > CMG__TIMELINE_POINTS / 2 && d->shift < LAST_SHIFT) {
    d->shift++;
    size_t out = 0;
    for (size_t i = 0; i < d->n; i++) {
      struct point *p = &d->points[i], *q = &d->points[out ? out - 1 : 0];
      if (out > 0 &&
          load(&p->time_ns) >> d->shift == load(&q->time_ns) >> d->shift) {
        store_min(&q->min, load(&p->min));
        store_max(&q->max, load(&p->max));
        continue;
      }
      struct point *to = &d->points[out++];
      if (to != p) {
        atomic_store_explicit(&to->time_ns, load(&p->time_ns), RELAXED);
        atomic_store_explicit(&to->live, load(&p->live), RELAXED);
        atomic_store_explicit(&to->min, load(&p->min), RELAXED);
        atomic_store_explicit(&to->max, load(&p->max), RELAXED);
      }
    }
    d->n = out;
  }
}

/* Room for one more point: merges when the series is full. */
static void
make_room(struct device *d)
{
  if (d->n < CMG__TIMELINE_POINTS)
    return;
  atomic_store_explicit(&d->open, 0, memory_order_release);
  coarsen(d);
  d->last_marked = false;
}

static void
append(struct device *d, uint64_t live, uint64_t now)
{
  struct point *p = &d->points[d->n++];
  atomic_store_explicit(&p->time_ns, now, RELAXED);
  atomic_store_explicit(&p->live, live, RELAXED);
  atomic_store_explicit(&p->min, live, RELAXED);
  atomic_store_explicit(&p->max, live, RELAXED);
  note_peak(d, live, now);
  publish(d, now >> d->shift, d->n - 1);
}

/* A change whose time is not in the open point's bucket: widens the last
 * point if another thread opened the bucket first (or the caller's clock
 * read is older than the last point), else opens a point. */
static CMG__COLD void
open_point(struct device *d, uint64_t live, uint64_t now)
{
  pthread_mutex_lock(&d->lock);
  for (;;) {
    if (d->n > 0) {
      struct point *last = &d->points[d->n - 1];
      uint64_t bucket = load(&last->time_ns) >> d->shift;
      if (now >> d->shift <= bucket) {
        widen(d, last, live, now);
        publish(d, bucket, d->n - 1);
        pthread_mutex_unlock(&d->lock);
        return;
      }
    }
    if (d->n < CMG__TIMELINE_POINTS)
      break;
    make_room(d);
  }
  append(d, live, now);
  d->last_marked = false;
  pthread_mutex_unlock(&d->lock);
}

void CMG__HOT
cmg__timeline_note(int device, uint64_t live, uint64_t now_ns)
{
  if (cmg__unlikely((unsigned)device >= CMG__MAX_DEVICES))
    return;
  struct device *d = &devices[device];
  uint64_t w = atomic_load_explicit(&d->open, memory_order_acquire);
  if (cmg__unlikely(now_ns >= WORD_END(w))) {
    open_point(d, live, now_ns);
    return;
  }
  struct point *p = &d->points[WORD_INDEX(w)];
  if (live > atomic_load_explicit(&p->max, RELAXED))
    raise_point(d, p, live, now_ns);
  else if (live < atomic_load_explicit(&p->min, RELAXED))
    store_min(&p->min, live);
}

void
cmg__timeline_mark(int device, uint64_t live, uint64_t now_ns)
{
  if ((unsigned)device >= CMG__MAX_DEVICES)
    return;
  struct device *d = &devices[device];
  pthread_mutex_lock(&d->lock);
  make_room(d);
  struct point *last = d->n > 0 ? &d->points[d->n - 1] : NULL;
  /* A denial's clock and the coarse clock of the hot path differ by up to
   * a tick: the series stays in order. */
  if (last != NULL && now_ns < load(&last->time_ns))
    now_ns = load(&last->time_ns);
  /* A program that retries a refused allocation in a loop would otherwise
   * fill the series with denials: the first of a bucket is exact, the
   * others widen it. */
  if (last != NULL && d->last_marked &&
      now_ns >> d->shift == load(&last->time_ns) >> d->shift)
    widen(d, last, live, now_ns);
  else {
    append(d, live, now_ns);
    d->last_marked = true;
  }
  pthread_mutex_unlock(&d->lock);
}

void
cmg__timeline_dump(unsigned reason, uint64_t now_ns)
{
  pthread_mutex_lock(&dumps_lock);
  if (n_dumps < CMG__TIMELINE_DUMPS)
    dumps[n_dumps] = (struct cmg__timeline_dump){ now_ns, reason };
  n_dumps++;
  pthread_mutex_unlock(&dumps_lock);
}

/* The exact peak, into the point whose span holds its time: a widening
 * lost to a merge must not lower the series below the device's peak. */
static void
restore_peak(struct cmg__timeline *t)
{
  size_t i = t->n - 1;
  while (i > 0 && t->points[i].time_ns > t->peak_time_ns)
    i--;
  if (t->points[i].max < t->peak_bytes)
    t->points[i].max = t->peak_bytes;
}

bool
cmg__timeline_get(int device, struct cmg__timeline *out)
{
  out->n = 0;
  if ((unsigned)device >= CMG__MAX_DEVICES)
    return false;
  struct device *d = &devices[device];
  pthread_mutex_lock(&d->lock);
  out->n = d->n;
  out->resolution_ns = 1ull << d->shift;
  out->peak_bytes = load(&d->peak);
  out->peak_time_ns = load(&d->peak_time_ns);
  for (size_t i = 0; i < d->n; i++) {
    struct point *p = &d->points[i];
    out->points[i] =
        (struct cmg__timeline_point){ load(&p->time_ns), load(&p->live),
                                      load(&p->min), load(&p->max) };
  }
  pthread_mutex_unlock(&d->lock);
  if (out->n > 0)
    restore_peak(out);
  return out->n > 0;
}

size_t
cmg__timeline_dumps(struct cmg__timeline_dump *out, size_t max, uint64_t *total)
{
  pthread_mutex_lock(&dumps_lock);
  size_t n = n_dumps < CMG__TIMELINE_DUMPS ? n_dumps : CMG__TIMELINE_DUMPS;
  if (n > max)
    n = max;
  memcpy(out, dumps, n * sizeof(*out));
  *total = n_dumps;
  pthread_mutex_unlock(&dumps_lock);
  return n;
}

void
cmg__timeline_reset(void)
{
  for (int i = 0; i < CMG__MAX_DEVICES; i++) {
    struct device *d = &devices[i];
    pthread_mutex_init(&d->lock, NULL);
    atomic_store(&d->open, 0);
    atomic_store(&d->peak, 0);
    atomic_store(&d->peak_time_ns, 0);
    d->shift = FIRST_SHIFT;
    d->n = 0;
    d->last_marked = false;
  }
  pthread_mutex_init(&dumps_lock, NULL);
  n_dumps = 0;
}
