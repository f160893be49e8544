/*
 * Address arenas and the live-allocation table of the simulated driver.
 *
 * Nothing here is ever dereferenced as device memory: an arena only
 * reserves numbers.  The free list is a sorted array of extents; first fit
 * from the lowest address makes reuse immediate and predictable, which is
 * the behaviour an interposer has to survive (an address freed by one
 * thread handed to another before the first thread has returned).  The
 * caller serialises all access.
 */
#include "arena.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Whole pages of their own: the arrays of two devices, used by two
 * threads, never share a cache line, nor a page, within which the
 * hardware prefetchers would carry one thread's lines into the other's
 * cache (sim_device). */
static void *
lines(size_t bytes)
{
  return aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
}

static int
reserve_extents(struct sim_arena *a, size_t need)
{
  if (need <= a->cap)
    return 0;
  size_t cap = a->cap ? a->cap * 2 : 16;
  while (cap < need)
    cap *= 2;
  struct sim_extent *p = lines(cap * sizeof(*p));
  if (p == NULL)
    return -ENOMEM;
  if (a->nfree > 0)
    memcpy(p, a->free, a->nfree * sizeof(*p));
  free(a->free);
  a->free = p;
  a->cap = cap;
  return 0;
}

int
sim_arena_init(struct sim_arena *a, uint64_t base, uint64_t size)
{
  memset(a, 0, sizeof(*a));
  a->base = base;
  a->size = size;
  if (reserve_extents(a, 1) != 0)
    return -ENOMEM;
  a->free[0].start = base;
  a->free[0].len = size;
  a->nfree = 1;
  return 0;
}

int
sim_arena_take(struct sim_arena *a, uint64_t len, uint64_t *addr)
{
  for (size_t i = 0; i < a->nfree; i++) {
    struct sim_extent *e = &a->free[i];
    if (e->len < len)
      continue;
    *addr = e->start;
    e->start += len;
    e->len -= len;
    if (e->len == 0) {
      memmove(e, e + 1, (a->nfree - i - 1) * sizeof(*e));
      a->nfree--;
    }
    return 0;
  }
  return -ENOMEM;
}

int
sim_arena_give(struct sim_arena *a, uint64_t addr, uint64_t len)
{
  /* Binary search for the first extent after addr. */
  size_t lo = 0, hi = a->nfree;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (a->free[mid].start < addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  bool join_prev = lo > 0 && a->free[lo - 1].start + a->free[lo - 1].len ==
                   addr;
  bool join_next = lo < a->nfree && addr + len == a->free[lo].start;

  if (join_prev && join_next) {
    a->free[lo - 1].len += len + a->free[lo].len;
    memmove(&a->free[lo], &a->free[lo + 1],
            (a->nfree - lo - 1) * sizeof(a->free[0]));
    a->nfree--;
  } else if (join_prev) {
    a->free[lo - 1].len += len;
  } else if (join_next) {
    a->free[lo].start = addr;
    a->free[lo].len += len;
  } else {
    if (reserve_extents(a, a->nfree + 1) != 0)
      return -ENOMEM;
    memmove(&a->free[lo + 1], &a->free[lo],
            (a->nfree - lo) * sizeof(a->free[0]));
    a->free[lo].start = addr;
    a->free[lo].len = len;
    a->nfree++;
  }
  return 0;
}

/* Addresses are multiples of SIM_ALIGN, so drop the zero bits and mix. */
static size_t
slot_of(uint64_t addr, size_t cap)
{
  uint64_t h = (addr >> 9) * UINT64_C(0x9e3779b97f4a7c15);
  return (size_t)(h >> 32) & (cap - 1);
}

static int
grow_table(struct sim_table *t)
{
  size_t cap = t->cap ? t->cap * 2 : 1024;
  struct sim_live *slots = lines(cap * sizeof(*slots));
  if (slots == NULL)
    return -ENOMEM;
  memset(slots, 0, cap * sizeof(*slots));
  for (size_t i = 0; i < t->cap; i++) {
    if (t->slots[i].addr == 0)
      continue;
    size_t j = slot_of(t->slots[i].addr, cap);
    while (slots[j].addr != 0)
      j = (j + 1) & (cap - 1);
    slots[j] = t->slots[i];
  }
  free(t->slots);
  t->slots = slots;
  t->cap = cap;
  return 0;
}

int
sim_table_insert(struct sim_table *t, const struct sim_live *rec)
{
  /* Keep the load under one half so probe runs stay short. */
  if ((t->count + 1) * 2 > t->cap && grow_table(t) != 0)
    return -ENOMEM;
  size_t j = slot_of(rec->addr, t->cap);
  while (t->slots[j].addr != 0)
    j = (j + 1) & (t->cap - 1);
  t->slots[j] = *rec;
  t->count++;
  return 0;
}

struct sim_live *
sim_table_get(struct sim_table *t, uint64_t addr)
{
  if (t->cap == 0 || addr == 0)
    return NULL;
  size_t mask = t->cap - 1;
  for (size_t i = slot_of(addr, t->cap); t->slots[i].addr != 0;
       i = (i + 1) & mask)
    if (t->slots[i].addr == addr)
      return &t->slots[i];
  return NULL;
}

bool
sim_table_remove(struct sim_table *t, uint64_t addr, struct sim_live *out)
{
  if (t->cap == 0 || addr == 0)
    return false;
  size_t mask = t->cap - 1;
  size_t i = slot_of(addr, t->cap);
  while (t->slots[i].addr != addr) {
    if (t->slots[i].addr == 0)
      return false;
    i = (i + 1) & mask;
  }
  *out = t->slots[i];
  t->count--;

  /* Backward-shift: pull later members of the probe run into the hole
   * when their home slot does not lie cyclically in (hole, j]. */
  size_t hole = i;
  for (size_t j = (i + 1) & mask; t->slots[j].addr != 0; j = (j + 1) & mask) {
    size_t home = slot_of(t->slots[j].addr, t->cap);
    bool stays = hole <= j ? (hole < home && home <= j)
                           : (hole < home || home <= j);
    if (stays)
      continue;
    t->slots[hole] = t->slots[j];
    hole = j;
  }
  memset(&t->slots[hole], 0, sizeof(t->slots[hole]));
  return true;
}

long
sim_table_owned(const struct sim_table *t, const void *owner, uint64_t **out)
{
  *out = NULL;
  if (t->count == 0)
    return 0;
  uint64_t *v = malloc(t->count * sizeof(*v));
  if (v == NULL)
    return -ENOMEM;
  long n = 0;
  for (size_t i = 0; i < t->cap; i++)
    if (t->slots[i].addr != 0 && t->slots[i].owner == owner)
      v[n++] = t->slots[i].addr;
  *out = v;
  return n;
}
