/*
 * The ledger: every live allocation, keyed by its address or handle and its
 * kind (a device address and an array handle may hold the same number), and
 * the per-device counters derived from it.  Host memory has a slot of its
 * own after the devices; imported memory is recorded but never counted.
 *
 * The table is split into SHARDS shards chosen by a hash of the address, each
 * an open-addressing table (linear probing, backward-shift deletion, no
 * tombstones) under its own lock: a spinlock, since every critical section
 * is a few dozen instructions (a table's growth aside), and a waiter that
 * spins long yields.  Two threads allocating at once almost
 * always take different locks, and no lock is held across a call into the
 * driver: the wrappers insert after the real allocation returned and remove
 * before the real free is called.  Tables come from mmap, never malloc, so
 * the ledger works in a process whose malloc is itself interposed.
 *
 * Live and peak bytes are per-device atomics beside the table, read
 * without any lock by cuMemGetInfo and the public API; a peak must be the
 * true maximum, so live bytes cannot be split by thread.  The counts of
 * allocations, frees and releases are tallies (tally.c): each thread adds
 * to its own, and a reader sums them.  Sequence numbers are taken by each
 * thread SEQ_BLOCK at a time, so no cache line is written by every
 * allocating thread: they are unique and, within a thread, in order.
 *
 * Never call CUDA or do blocking I/O here.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#define SHARDS 64
#define MIN_SLOTS 64
#define SEQ_BLOCK 64

struct shard {
  _Atomic int lock;
  struct cmg__alloc *slots;  /* addr == 0 marks an empty slot */
  size_t mask;               /* slots - 1, or 0 before the first insert */
  size_t count;
} __attribute__((aligned(64)));

/* Live allocations are allocations - frees - released, not counted apart. */
struct counters {
  _Atomic uint64_t live_bytes;
  _Atomic uint64_t peak_bytes;
  _Atomic uint64_t denials;
} __attribute__((aligned(64)));

static struct shard shards[SHARDS];
static struct counters devices[CMG__SLOTS];
static _Atomic uint64_t untracked_frees;
static _Atomic uint64_t seq;
static CMG__TLS uint64_t seq_next, seq_end;

/* Device addresses are aligned to at least 256 bytes, so the low bits carry
 * no information.  The top bits pick the shard and the low bits the slot, so
 * both must be well mixed: murmur3's finalizer does that in a few cycles. */
static inline uint64_t
hash(uint64_t addr, unsigned kind)
{
  uint64_t h = (addr >> 8) ^ ((uint64_t)kind << 59);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

static inline void
lock(struct shard *s)
{
  while (atomic_exchange_explicit(&s->lock, 1, memory_order_acquire)) {
    for (unsigned i = 0;
         atomic_load_explicit(&s->lock, memory_order_relaxed); i++) {
      if (i < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      } else
        sched_yield();
    }
  }
}

static inline void
unlock(struct shard *s)
{
  atomic_store_explicit(&s->lock, 0, memory_order_release);
}

static inline struct shard *
shard_of(uint64_t h)
{
  return &shards[h >> 58];
}

static struct cmg__alloc *
table_new(size_t nslots)
{
  void *p = mmap(NULL, nslots * sizeof(struct cmg__alloc),
                 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static void
table_free(struct cmg__alloc *slots, size_t nslots)
{
  if (slots != NULL)
    munmap(slots, nslots * sizeof(struct cmg__alloc));
}

static void
put(struct cmg__alloc *slots, size_t mask, const struct cmg__alloc *a)
{
  size_t i = hash(a->addr, a->kind) & mask;
  while (slots[i].addr != 0)
    i = (i + 1) & mask;
  slots[i] = *a;
}

/* Doubles the shard's table (or makes its first); -ENOMEM if mmap fails. */
static int
grow(struct shard *s)
{
  size_t old_n = s->mask ? s->mask + 1 : 0;
  size_t n = old_n ? old_n * 2 : MIN_SLOTS;
  struct cmg__alloc *slots = table_new(n);
  if (slots == NULL)
    return -ENOMEM;
  for (size_t i = 0; i < old_n; i++)
    if (s->slots[i].addr != 0)
      put(slots, n - 1, &s->slots[i]);
  table_free(s->slots, old_n);
  s->slots = slots;
  s->mask = n - 1;
  return 0;
}

/* Index of (addr, kind) in the shard, or -1. */
static ptrdiff_t
find(const struct shard *s, uint64_t addr, unsigned kind)
{
  if (s->mask == 0)
    return -1;
  for (size_t i = hash(addr, kind) & s->mask;; i = (i + 1) & s->mask) {
    if (s->slots[i].addr == addr && s->slots[i].kind == kind)
      return (ptrdiff_t)i;
    if (s->slots[i].addr == 0)
      return -1;
  }
}

/* Backward-shift deletion keeps every probe chain unbroken without
 * tombstones, so lookups never slow down as allocations churn. */
static void
erase(struct shard *s, size_t i)
{
  size_t j = i;
  for (;;) {
    j = (j + 1) & s->mask;
    if (s->slots[j].addr == 0)
      break;
    size_t home = hash(s->slots[j].addr, s->slots[j].kind) & s->mask;
    /* Move j into the hole unless its home lies cyclically in (i, j]. */
    if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
      s->slots[i] = s->slots[j];
      i = j;
    }
  }
  s->slots[i].addr = 0;
  s->count--;
}

/* Returns 0, 1 when a stale record was replaced (copied to *stale), or
 * -ENOMEM. */
static int
shard_insert(struct shard *s, const struct cmg__alloc *a,
             struct cmg__alloc *stale)
{
  int rc = 0;
  lock(s);
  if ((s->count + 1) * 4 > (s->mask + 1) * 3 || s->mask == 0)
    rc = grow(s);
  if (rc == 0) {
    ptrdiff_t i = find(s, a->addr, a->kind);
    if (i >= 0) {
      *stale = s->slots[i];
      s->slots[i] = *a;
      rc = 1;
    } else {
      put(s->slots, s->mask, a);
      s->count++;
    }
  }
  unlock(s);
  return rc;
}

static void
raise_peak(struct counters *c, uint64_t live)
{
  uint64_t peak = atomic_load_explicit(&c->peak_bytes, memory_order_relaxed);
  while (live > peak &&
         !atomic_compare_exchange_weak_explicit(&c->peak_bytes, &peak, live,
                                                memory_order_relaxed,
                                                memory_order_relaxed))
    ;
}

static struct counters *
counters_of(int device)
{
  if (device < 0 || device >= CMG__SLOTS)
    return NULL;
  return &devices[device];
}

static inline unsigned
tally(int device, enum cmg__tally_kind kind)
{
  return (unsigned)device * CMG__TALLY_KINDS + kind;
}

static inline struct shard *
shard_for(uint64_t addr, unsigned kind)
{
  return shard_of(hash(addr, kind));
}

int
cmg__ledger_insert(const struct cmg__alloc *a, struct cmg__alloc *stale)
{
  struct counters *c = counters_of(a->device);
  if (c == NULL || a->addr == 0 || a->kind >= CMG__KIND_COUNT)
    return -EINVAL;
  int rc = shard_insert(shard_for(a->addr, a->kind), a, stale);
  if (rc < 0)
    return rc;
  /* The driver handed out an address we still hold: its free went by a
   * path we do not see, so the old record is freed now. */
  if (rc == 1)
    cmg__ledger_count_free(stale);
  if (!cmg__kind_counts(a->kind))
    return rc;
  cmg__tally_add(tally(a->device, CMG__TALLY_ALLOCATIONS), 1);
  uint64_t live = atomic_fetch_add_explicit(&c->live_bytes, a->size,
                                            memory_order_relaxed) + a->size;
  raise_peak(c, live);
  return rc;
}

int
cmg__ledger_restore(const struct cmg__alloc *a)
{
  struct cmg__alloc stale;
  int rc = shard_insert(shard_for(a->addr, a->kind), a, &stale);
  return rc < 0 ? rc : 0;
}

int
cmg__ledger_remove(uint64_t addr, unsigned kind, struct cmg__alloc *out)
{
  struct shard *s = shard_for(addr, kind);
  lock(s);
  ptrdiff_t i = find(s, addr, kind);
  if (i >= 0) {
    *out = s->slots[i];
    erase(s, (size_t)i);
  }
  unlock(s);
  return i >= 0 ? 0 : -ENOENT;
}

int
cmg__ledger_addref(uint64_t addr, unsigned kind)
{
  struct shard *s = shard_for(addr, kind);
  lock(s);
  ptrdiff_t i = find(s, addr, kind);
  if (i >= 0 && s->slots[i].refs < UINT16_MAX)
    s->slots[i].refs++;
  unlock(s);
  return i >= 0 ? 0 : -ENOENT;
}

int
cmg__ledger_unref(uint64_t addr, unsigned kind, struct cmg__alloc *out)
{
  struct shard *s = shard_for(addr, kind);
  int rc = -ENOENT;
  lock(s);
  ptrdiff_t i = find(s, addr, kind);
  if (i >= 0 && s->slots[i].refs > 0) {
    s->slots[i].refs--;
    rc = 0;
  } else if (i >= 0) {
    *out = s->slots[i];
    erase(s, (size_t)i);
    rc = 1;
  }
  unlock(s);
  return rc;
}

void
cmg__ledger_remove_if(bool (*keep)(const struct cmg__alloc *, void *),
                      void (*gone)(const struct cmg__alloc *, void *),
                      void *arg)
{
  for (int i = 0; i < SHARDS; i++) {
    struct shard *s = &shards[i];
    struct cmg__alloc batch[64];
    size_t n;
    do {
      n = 0;
      lock(s);
      for (size_t j = 0; s->mask != 0 && j <= s->mask && n < 64;) {
        if (s->slots[j].addr != 0 && !keep(&s->slots[j], arg)) {
          batch[n++] = s->slots[j];
          erase(s, j);  /* an entry may shift into j: look at it again */
        } else
          j++;
      }
      unlock(s);
      for (size_t k = 0; k < n; k++)
        gone(&batch[k], arg);
    } while (n == 64);
  }
}

int
cmg__ledger_lookup(uint64_t addr, unsigned kind, struct cmg__alloc *out)
{
  struct shard *s = shard_for(addr, kind);
  lock(s);
  ptrdiff_t i = find(s, addr, kind);
  if (i >= 0)
    *out = s->slots[i];
  unlock(s);
  return i >= 0 ? 0 : -ENOENT;
}

static void
uncount(const struct cmg__alloc *a, bool released)
{
  struct counters *c = counters_of(a->device);
  if (c == NULL || !cmg__kind_counts(a->kind))
    return;
  cmg__tally_add(tally(a->device, released ? CMG__TALLY_RELEASED
                                            : CMG__TALLY_FREES), 1);
  atomic_fetch_sub_explicit(&c->live_bytes, a->size, memory_order_relaxed);
}

void
cmg__ledger_count_free(const struct cmg__alloc *a)
{
  uncount(a, false);
}

void
cmg__ledger_count_release(const struct cmg__alloc *a)
{
  uncount(a, true);
}

void
cmg__ledger_count_denial(int device)
{
  struct counters *c = counters_of(device);
  if (c != NULL)
    atomic_fetch_add_explicit(&c->denials, 1, memory_order_relaxed);
}

void
cmg__ledger_count_untracked_free(void)
{
  atomic_fetch_add_explicit(&untracked_frees, 1, memory_order_relaxed);
}

uint64_t
cmg__ledger_untracked_frees(void)
{
  return atomic_load_explicit(&untracked_frees, memory_order_relaxed);
}

uint64_t
cmg__ledger_live_bytes(int device)
{
  struct counters *c = counters_of(device);
  return c ? atomic_load_explicit(&c->live_bytes, memory_order_relaxed) : 0;
}

void
cmg__ledger_stats(int device, struct cmg_device_stats *out)
{
  memset(out, 0, sizeof(*out));
  struct counters *c = counters_of(device);
  if (c == NULL)
    return;
  out->live_bytes = atomic_load(&c->live_bytes);
  out->peak_bytes = atomic_load(&c->peak_bytes);
  /* Frees before allocations: every free follows its allocation, so read
   * in this order the difference can never go below zero. */
  out->frees = cmg__tally_sum(tally(device, CMG__TALLY_FREES));
  out->released = cmg__tally_sum(tally(device, CMG__TALLY_RELEASED));
  out->allocations = cmg__tally_sum(tally(device, CMG__TALLY_ALLOCATIONS));
  out->denials = atomic_load(&c->denials);
  out->live_allocations = out->allocations - out->frees - out->released;
}

uint64_t
cmg__ledger_next_seq(void)
{
  if (cmg__unlikely(seq_next == seq_end)) {
    seq_next = atomic_fetch_add_explicit(&seq, SEQ_BLOCK,
                                         memory_order_relaxed) + 1;
    seq_end = seq_next + SEQ_BLOCK;
  }
  return seq_next++;
}

void
cmg__ledger_prefork(void)
{
  for (int i = 0; i < SHARDS; i++)
    lock(&shards[i]);
  cmg__tally_prefork();
}

/* The child's allocations are its own: the parent's device memory is not
 * reachable from a forked child (CUDA state does not survive fork), so the
 * child starts with an empty ledger and zeroed counters. */
void
cmg__ledger_postfork(bool child)
{
  cmg__tally_postfork(child);
  for (int i = 0; i < SHARDS; i++) {
    struct shard *s = &shards[i];
    if (child) {
      table_free(s->slots, s->mask ? s->mask + 1 : 0);
      s->slots = NULL;
      s->mask = 0;
      s->count = 0;
    }
    unlock(s);
  }
  if (child) {
    memset(devices, 0, sizeof(devices));
    atomic_store(&untracked_frees, 0);
    atomic_store(&seq, 0);
    seq_next = seq_end = 0;
  }
}

void
cmg__ledger_foreach(void (*fn)(const struct cmg__alloc *, void *), void *arg)
{
  for (int i = 0; i < SHARDS; i++) {
    struct shard *s = &shards[i];
    lock(s);
    for (size_t j = 0; s->mask != 0 && j <= s->mask; j++)
      if (s->slots[j].addr != 0)
        fn(&s->slots[j], arg);
    unlock(s);
  }
}
