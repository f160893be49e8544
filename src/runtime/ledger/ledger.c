/*
 * The ledger: every live allocation, keyed by its address or handle and its
 * kind (a device address and an array handle may hold the same number), and
 * the per-device counters derived from it.  Host memory has a slot of its
 * own after the devices; imported memory is recorded but never counted.
 *
 * The table is split into SHARDS shards chosen by a hash of the address,
 * each an open-addressing table (linear probing, backward-shift deletion,
 * no tombstones) under its own lock: a spinlock, since every critical
 * section is a few dozen instructions (a table's growth aside), and a
 * waiter that spins long yields.  A slot is an 8-byte key beside a 32-byte
 * packed entry, and a table grows by 1.2 at 80% full rather than doubling
 * at 75%, so a live allocation costs 50 to 60 bytes, not 64 to 128.  Two
 * threads allocating at once almost
 * always take different locks, and no lock is held across a call into the
 * driver: the wrappers insert after the real allocation returned and remove
 * before the real free is called.  Tables come from mmap, never malloc, so
 * the ledger works in a process whose malloc is itself interposed.
 *
 * The counts and bytes of allocations, frees and releases are tallies
 * (thread_tally.c): each thread adds to its own, and a reader sums them, so
 * counting writes no line another thread writes and takes no locked
 * operation.  The peak is the policy's (policy.c), whose counter of bytes
 * in use is atomic anyway.  Sequence numbers are taken by each
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

#include "core/base.h"
#include "runtime/ledger/ledger.h"
#include "runtime/table_memory.h"
#include "runtime/limits/policy.h"
#include "runtime/ledger/thread_tally.h"

#define SHARDS 64
#define MIN_SLOTS 64
#define SEQ_BLOCK 64
/* A table grows by 6/5 when it would pass 80% full, so it is between 67%
 * and 80% full: a slot of 40 bytes costs 50 to 60 bytes per allocation. */
#define LOAD_NUM 4
#define LOAD_DEN 5
#define GROW_NUM 6
#define GROW_DEN 5

/* struct cmg__alloc in 32 bytes, beside its key (the address) in a table
 * of keys of its own, so that a probe reads 8 keys a cache line.  Fields
 * wider than they need be are cut to what their sources can hold: thread
 * ids stop below 2^22 (PID_MAX_LIMIT), contexts below CMG__MAX_CONTEXTS;
 * time is in microseconds, what the report shows, and stops at 2^46 (two
 * years); sequence numbers wrap at 2^42. */
struct entry {
  uint64_t size;
  uint64_t time_refs;  /* time_us: 46 | refs: 16 */
  uint64_t seq_thread; /* seq: 42 | thread: 22 */
  uint64_t ids;        /* stack: 32 | ctx: 12 | fn: 8 | device: 7 | kind: 3 */
};

/* Bit positions and widths in the words above; explicit shifts rather
 * than bit-fields, so packing is a few instructions a word. */
#define REFS_AT 46
#define THREAD_AT 42
#define CTX_AT 32
#define FN_AT 44
#define DEVICE_AT 52
#define KIND_AT 59
#define BITS(x, at, width) (((x) >> (at)) & ((UINT64_C(1) << (width)) - 1))

_Static_assert(sizeof(struct entry) == 32, "a slot is 40 bytes");
_Static_assert(CMG__MAX_CONTEXTS <= 1 << (FN_AT - CTX_AT), "contexts fit");
_Static_assert(CMG__LEDGER_FNS <= 1 << (DEVICE_AT - FN_AT), "api labels fit");
_Static_assert(CMG__SLOTS <= 1 << (KIND_AT - DEVICE_AT), "device slots fit");
_Static_assert(CMG__KIND_COUNT <= 1 << (64 - KIND_AT), "kinds fit");

#define TIME_MAX ((UINT64_C(1) << REFS_AT) - 1)
#define SEQ_MASK ((UINT64_C(1) << THREAD_AT) - 1)

struct shard {
  _Atomic int lock;
  uint32_t n; /* slots, or 0 before the first insert */
  uint32_t count;
  uint32_t limit; /* count that makes the table grow */
  uint64_t *keys; /* 0 marks an empty slot */
  struct entry *entries;
} __attribute__((aligned(CMG__APART)));

/* Live allocations are allocations - frees - released, and live bytes
 * likewise, not counted apart. */
struct counters {
  _Atomic uint64_t denials;
} __attribute__((aligned(64)));

static struct shard shards[SHARDS];
static struct counters devices[CMG__SLOTS];
static _Atomic uint64_t untracked_frees;
static _Atomic uint64_t seq;
static CMG__TLS uint64_t seq_next, seq_end;

/* Fibonacci hashing: the top 6 bits of the product pick the shard and the
 * 32 below them the slot.  Addresses come in strides (an allocator's
 * alignment, an arena's layout), which a golden-ratio multiply spreads more
 * evenly than random, and it costs one multiply: deletion computes it for
 * every entry of the probe run behind the hole.  The fold lets an
 * address's top bits reach the slot bits too.  The kind is left out: the few
 * handles that share a number with an address of another kind share its
 * probe run. */
static inline uint64_t
hash(uint64_t addr)
{
  return (addr ^ (addr >> 29)) * 0x9e3779b97f4a7c15ull;
}

/* The home slot among n: a multiply and a shift rather than a modulo, so
 * that a table can grow by less than double. */
static inline uint32_t
home_of(uint64_t h, uint32_t n)
{
  return (uint32_t)((((h >> 26) & 0xffffffffu) * n) >> 32);
}

static inline uint32_t
next_slot(uint32_t i, uint32_t n)
{
  return i + 1 == n ? 0 : i + 1;
}

/* Fields are checked to fit (cmg__ledger_insert) or come from an entry. */
static void
pack(struct entry *e, const struct cmg__alloc *a)
{
  uint64_t us = a->time_ns / 1000;
  CMG_ASSERT(a->ctx < CMG__MAX_CONTEXTS && a->fn < CMG__LEDGER_FNS &&
             a->device >= 0 && a->device < CMG__SLOTS && a->kind < 8 &&
             a->thread < (1u << 22));
  e->size = a->size;
  e->time_refs = (us < TIME_MAX ? us : TIME_MAX) | (uint64_t)a->refs << REFS_AT;
  e->seq_thread = (a->seq & SEQ_MASK) | (uint64_t)a->thread << THREAD_AT;
  e->ids = a->stack | (uint64_t)a->ctx << CTX_AT | (uint64_t)a->fn << FN_AT |
           (uint64_t)a->device << DEVICE_AT | (uint64_t)a->kind << KIND_AT;
}

static inline unsigned
kind_of(const struct entry *e)
{
  return (unsigned)(e->ids >> KIND_AT);
}

static inline unsigned
refs_of(const struct entry *e)
{
  return (unsigned)(e->time_refs >> REFS_AT);
}

static void
unpack(uint64_t key, const struct entry *e, struct cmg__alloc *a)
{
  *a = (struct cmg__alloc){
    .addr = key,
    .size = e->size,
    .seq = e->seq_thread & SEQ_MASK,
    .time_ns = (e->time_refs & TIME_MAX) * 1000,
    .stack = (uint32_t)e->ids,
    .thread = (uint32_t)(e->seq_thread >> THREAD_AT),
    .device = (int16_t)BITS(e->ids, DEVICE_AT, KIND_AT - DEVICE_AT),
    .fn = (uint8_t)BITS(e->ids, FN_AT, DEVICE_AT - FN_AT),
    .kind = (uint8_t)kind_of(e),
    .ctx = (uint16_t)BITS(e->ids, CTX_AT, FN_AT - CTX_AT),
    .refs = (uint16_t)refs_of(e),
  };
}

static CMG__COLD void
lock_contended(struct shard *s)
{
  do {
    for (unsigned i = 0; atomic_load_explicit(&s->lock, memory_order_relaxed);
         i++) {
      if (i < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      } else
        sched_yield();
    }
  } while (atomic_exchange_explicit(&s->lock, 1, memory_order_acquire));
}

static inline void
lock(struct shard *s)
{
  if (cmg__unlikely(
          atomic_exchange_explicit(&s->lock, 1, memory_order_acquire)))
    lock_contended(s);
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

static size_t
table_bytes(uint32_t n)
{
  return (size_t)n * (sizeof(uint64_t) + sizeof(struct entry));
}

/* Keys and entries of n slots in one mapping, the keys first; NULL if mmap
 * fails. */
static uint64_t *
table_new(uint32_t n)
{
  return cmg__pages(table_bytes(n));
}

static void
table_free(uint64_t *keys, uint32_t n)
{
  if (n != 0)
    munmap(keys, table_bytes(n));
}

static void
table_set(struct shard *s, uint64_t *keys, uint32_t n)
{
  s->keys = keys;
  s->entries = keys ? (struct entry *)(keys + n) : NULL;
  s->n = n;
  s->limit = (uint32_t)((uint64_t)n * LOAD_NUM / LOAD_DEN);
}

/* One walk of a probe run in a table that has slots: the slot of (addr,
 * kind) if it is there, else the empty slot that ends the run (a table is
 * never full). */
static inline uint32_t
probe(const struct shard *s, uint64_t addr, unsigned kind)
{
  for (uint32_t i = home_of(hash(addr), s->n);; i = next_slot(i, s->n))
    if ((s->keys[i] == addr && kind_of(&s->entries[i]) == kind) ||
        s->keys[i] == 0)
      return i;
}

/* Into a table known not to hold key. */
static void
put(struct shard *s, uint64_t key, const struct entry *e)
{
  uint32_t i = probe(s, key, kind_of(e));
  s->keys[i] = key;
  s->entries[i] = *e;
}

/* Grows the shard's table by GROW_NUM/GROW_DEN (or makes its first);
 * -ENOMEM if mmap fails or it cannot grow. */
static CMG__COLD int
grow(struct shard *s)
{
  uint32_t old_n = s->n;
  uint64_t *old_keys = s->keys;
  struct entry *old_entries = s->entries;
  uint64_t n = old_n ? (uint64_t)old_n * GROW_NUM / GROW_DEN : MIN_SLOTS;
  n = (n + 7) & ~(uint64_t)7;
  uint64_t *keys = n <= UINT32_MAX / 2 ? table_new((uint32_t)n) : NULL;
  if (keys == NULL)
    return -ENOMEM;
  table_set(s, keys, (uint32_t)n);
  for (uint32_t i = 0; i < old_n; i++)
    if (old_keys[i] != 0)
      put(s, old_keys[i], &old_entries[i]);
  table_free(old_keys, old_n);
  return 0;
}

/* Index of (addr, kind) in the shard, or -1. */
static ptrdiff_t
find(const struct shard *s, uint64_t addr, unsigned kind)
{
  if (s->n == 0)
    return -1;
  uint32_t i = probe(s, addr, kind);
  return s->keys[i] != 0 ? (ptrdiff_t)i : -1;
}

/* Backward-shift deletion keeps every probe run unbroken without
 * tombstones, so lookups never slow down as allocations churn. */
static void
erase(struct shard *s, uint32_t i)
{
  uint32_t j = i;
  for (;;) {
    j = next_slot(j, s->n);
    if (s->keys[j] == 0)
      break;
    uint32_t home = home_of(hash(s->keys[j]), s->n);
    /* Move j into the hole unless its home lies cyclically in (i, j]. */
    if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
      continue;
    s->keys[i] = s->keys[j];
    s->entries[i] = s->entries[j];
    i = j;
  }
  s->keys[i] = 0;
  s->count--;
}

/* Returns 0, 1 when a stale record was replaced (copied to *stale), or
 * -ENOMEM. */
static CMG__HOT int
shard_insert(struct shard *s, const struct cmg__alloc *a,
             struct cmg__alloc *stale)
{
  int rc = 0;
  struct entry e;
  pack(&e, a);
  lock(s);
  if (cmg__unlikely(s->count >= s->limit))
    rc = grow(s);
  if (rc == 0) {
    uint32_t i = probe(s, a->addr, a->kind);
    if (s->keys[i] != 0) {
      unpack(s->keys[i], &s->entries[i], stale);
      rc = 1;
    } else
      s->count++;
    s->keys[i] = a->addr;
    s->entries[i] = e;
  }
  unlock(s);
  return rc;
}

static inline bool
is_slot(int device)
{
  return device >= 0 && device < CMG__SLOTS;
}

static struct counters *
counters_of(int device)
{
  return is_slot(device) ? &devices[device] : NULL;
}

static inline unsigned
tally(int device, enum cmg__tally_kind kind)
{
  return (unsigned)device * CMG__TALLY_KINDS + kind;
}

static inline struct shard *
shard_for(uint64_t addr)
{
  return shard_of(hash(addr));
}

int CMG__HOT
cmg__ledger_insert(const struct cmg__alloc *a, struct cmg__alloc *stale)
{
  if (!is_slot(a->device) || a->addr == 0 || a->kind >= CMG__KIND_COUNT ||
      a->ctx >= CMG__MAX_CONTEXTS || a->fn >= CMG__LEDGER_FNS)
    return -EINVAL;
  int rc = shard_insert(shard_for(a->addr), a, stale);
  if (rc < 0)
    return rc;
  /* The driver handed out an address we still hold: its free went by a
   * path we do not see, so the old record is freed now. */
  if (rc == 1)
    cmg__ledger_count_free(stale);
  if (!cmg__kind_counts(a->kind))
    return rc;
  cmg__tally_add2(tally(a->device, CMG__TALLY_ALLOCATIONS), 1,
                  tally(a->device, CMG__TALLY_BYTES), a->size);
  return rc;
}

int
cmg__ledger_restore(const struct cmg__alloc *a)
{
  struct cmg__alloc stale;
  int rc = shard_insert(shard_for(a->addr), a, &stale);
  return rc < 0 ? rc : 0;
}

int CMG__HOT
cmg__ledger_remove(uint64_t addr, unsigned kind, struct cmg__alloc *out)
{
  struct shard *s = shard_for(addr);
  lock(s);
  ptrdiff_t i = find(s, addr, kind);
  if (i >= 0) {
    unpack(addr, &s->entries[i], out);
    erase(s, (uint32_t)i);
  }
  unlock(s);
  return i >= 0 ? 0 : -ENOENT;
}

int
cmg__ledger_shrink(uint64_t addr, unsigned kind, uint64_t bytes,
                   struct cmg__alloc *out)
{
  struct shard *s = shard_for(addr);
  lock(s);
  ptrdiff_t i = find(s, addr, kind);
  int rc = i < 0 ? -ENOENT : s->entries[i].size <= bytes ? -EINVAL : 0;
  if (rc == 0) {
    s->entries[i].size -= bytes;
    unpack(addr, &s->entries[i], out);
  }
  unlock(s);
  if (rc == 0 && cmg__kind_counts(kind))
    cmg__tally_add(tally(out->device, CMG__TALLY_BYTES_GONE), bytes);
  return rc;
}

int
cmg__ledger_addref(uint64_t addr, unsigned kind)
{
  struct shard *s = shard_for(addr);
  lock(s);
  ptrdiff_t i = find(s, addr, kind);
  if (i >= 0 && refs_of(&s->entries[i]) < UINT16_MAX)
    s->entries[i].time_refs += UINT64_C(1) << REFS_AT;
  unlock(s);
  return i >= 0 ? 0 : -ENOENT;
}

int
cmg__ledger_unref(uint64_t addr, unsigned kind, struct cmg__alloc *out)
{
  struct shard *s = shard_for(addr);
  int rc = -ENOENT;
  lock(s);
  ptrdiff_t i = find(s, addr, kind);
  if (i >= 0 && refs_of(&s->entries[i]) > 0) {
    s->entries[i].time_refs -= UINT64_C(1) << REFS_AT;
    rc = 0;
  } else if (i >= 0) {
    unpack(addr, &s->entries[i], out);
    erase(s, (uint32_t)i);
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
      for (uint32_t j = 0; j < s->n && n < 64;) {
        if (s->keys[j] == 0) {
          j++;
          continue;
        }
        unpack(s->keys[j], &s->entries[j], &batch[n]);
        if (keep(&batch[n], arg)) {
          j++;
          continue;
        }
        n++;
        erase(s, j); /* an entry may shift into j: look at it again */
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
  struct shard *s = shard_for(addr);
  lock(s);
  ptrdiff_t i = find(s, addr, kind);
  if (i >= 0)
    unpack(addr, &s->entries[i], out);
  unlock(s);
  return i >= 0 ? 0 : -ENOENT;
}

static void
uncount(const struct cmg__alloc *a, bool released)
{
  if (!is_slot(a->device) || !cmg__kind_counts(a->kind))
    return;
  cmg__tally_add2(
      tally(a->device, released ? CMG__TALLY_RELEASED : CMG__TALLY_FREES), 1,
      tally(a->device, CMG__TALLY_BYTES_GONE), a->size);
}

void CMG__HOT
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

/* What left before what came: every free is counted after its
 * allocation, so read in this order the difference is never negative. */
uint64_t
cmg__ledger_live_bytes(int device)
{
  if (!is_slot(device))
    return 0;
  uint64_t gone = cmg__tally_sum(tally(device, CMG__TALLY_BYTES_GONE));
  return cmg__tally_sum(tally(device, CMG__TALLY_BYTES)) - gone;
}

void
cmg__ledger_stats(int device, struct cmg_device_stats *out)
{
  memset(out, 0, sizeof(*out));
  struct counters *c = counters_of(device);
  if (c == NULL)
    return;
  out->live_bytes = cmg__ledger_live_bytes(device);
  out->peak_bytes = cmg__policy_peak(device);
  /* Frees before allocations, as for the bytes. */
  out->frees = cmg__tally_sum(tally(device, CMG__TALLY_FREES));
  out->released = cmg__tally_sum(tally(device, CMG__TALLY_RELEASED));
  out->allocations = cmg__tally_sum(tally(device, CMG__TALLY_ALLOCATIONS));
  out->denials = atomic_load(&c->denials);
  out->live_allocations = out->allocations - out->frees - out->released;
}

static CMG__COLD void
seq_refill(void)
{
  seq_next =
      atomic_fetch_add_explicit(&seq, SEQ_BLOCK, memory_order_relaxed) + 1;
  seq_end = seq_next + SEQ_BLOCK;
}

uint64_t CMG__HOT
cmg__ledger_next_seq(void)
{
  if (cmg__unlikely(seq_next == seq_end))
    seq_refill();
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
      table_free(s->keys, s->n);
      table_set(s, NULL, 0);
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
    for (uint32_t j = 0; j < s->n; j++) {
      if (s->keys[j] == 0)
        continue;
      struct cmg__alloc a;
      unpack(s->keys[j], &s->entries[j], &a);
      fn(&a, arg);
    }
    unlock(s);
  }
}
