/*
 * Stacks: the native call stack of every recorded allocation, captured raw,
 * interned to a dense uint32_t id, with live bytes and allocations kept per
 * (stack, device), and turned into module, offset, function and build-id
 * only when a report is written.
 *
 * Capture runs inside every allocation wrapper, so it unwinds with a walk
 * whose every step is proven against libunwind's, else with libunwind's
 * unw_backtrace (per-thread caches, no lock of its own; unwind.c) into a
 * fixed buffer on the stack and never symbolizes, mallocs or locks for a
 * stack already seen.  Each distinct (frames, truncated) pair is stored once
 * in a record that never moves and is never freed.  Records are found two
 * ways: by content through an open-addressing table of atomic record
 * pointers (linear probing, at most half full), and by id through a
 * two-level array of record pointers.  Both are read without a lock.  One
 * mutex serialises insertions: the inserter probes again under it, fills the
 * record, stores its id slot, publishes the count and then the table slot
 * with release stores.  A table that passes half full is replaced by one
 * twice the size, built under the mutex and published atomically; the old
 * one is left mapped because readers may still be probing it, and the sum
 * of all tables stays below twice the last.  Records, tables and id pages
 * come from mmap, never malloc: the library runs inside programs whose
 * malloc may itself be interposed, and inside CUDA calls.  Past 1M stacks,
 * or when mmap fails, a new stack gets CMG__STACK_NONE: the allocation is
 * still tracked, only without a stack.
 *
 * Accounts (live bytes and count of a stack on a device) are relaxed
 * atomics updated without any lock, kept apart from the records: one array
 * by stack id per device, in pages mapped on first use.  Threads
 * allocating from one call site on different devices then write different
 * cache lines, and a stack costs 16 bytes of accounts per device it
 * allocated on rather than 128.
 *
 * Never call CUDA, never do I/O, never symbolize on the capture path:
 * symbols.c turns addresses into names, at report time.
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "core/conf.h"
#include "runtime/table_memory.h"
#include "runtime/python/pyframes.h"
#include "runtime/python/pylayout.h"
#include "runtime/stacks/stacks.h"
#include "runtime/stacks/stack_words.h"
#include "runtime/stacks/unwind.h"

/* Frames of our own that capture may find on the stack above the
 * caller's first frame: capture itself, the allocation machinery and the
 * wrapper. */
#define SPARE 4
/* How far below the caller's first frame a runtime wrapper of ours can
 * stand: libcudart's few frames between its entry point and the driver. */
#define OURS_WITHIN 12
#define CAPTURE_MAX (CMG__STACK_DEPTH_MAX + SPARE + 1)
/* A stored stack: stack_depth native frames at most, Python frames on top,
 * and up to two cut words (one native, one Python). */
#define WORDS_MAX (CMG__STACK_DEPTH_MAX + 2)

#define MIN_SLOTS 1024
#define PAGE_IDS 4096u /* record pointers per id page */
#define DIR_PAGES 256u /* so at most 1M stacks */
#define MAX_IDS (PAGE_IDS * DIR_PAGES)
#define CHUNK (1u << 20) /* records are carved from these */

struct record {
  uint64_t hash;
  uint32_t id;
  uint16_t depth;
  bool truncated;
  uintptr_t ips[];
};

struct account {
  _Atomic uint64_t bytes;
  _Atomic uint64_t count;
};

struct table {
  size_t mask;
  _Atomic(struct record *) slots[];
};

/* The range of our own executable code, whose frames capture drops from the
 * top of the stack.  When stacks.c is linked into a program rather than
 * into the preload library (the unit tests), the frames above it are the
 * program's own and only capture's frame is dropped. */
struct self {
  uintptr_t lo, hi;
  bool is_library;
};

_Atomic unsigned cmg__stack_depth = CMG__STACK_DEPTH_DEFAULT;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static struct self self;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct table *) table;
/* The stack this thread interned last: a loop allocates from one stack
 * again and again (a model's layers from one line), and comparing with it
 * costs less than hashing and probing.  Records are never freed nor
 * written once published, so it stays true; a signal handler's capture
 * that replaces it in between leaves another true one. */
static CMG__TLS const struct record *last;
static _Atomic uint32_t nstacks;
/* Written under the lock before nstacks is published with a release store;
 * readers load nstacks with acquire before they look here. */
static struct record **dir[DIR_PAGES];
static struct cmg__chunks chunks = { .size = CHUNK };
/* By device, then by id as dir is; a page is published with a release
 * store, once, under the lock. */
static _Atomic(struct account *) accounts[CMG__STACK_DEVICES][DIR_PAGES];

/* ---- capture ---------------------------------------------------------- */

static int
find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
  unsigned *index = arg;
  uintptr_t me = (uintptr_t)&find_self, lo = UINTPTR_MAX, hi = 0;
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
      continue;
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    uintptr_t end = start + ph->p_memsz;
    mine |= me >= start && me < end;
    lo = start < lo ? start : lo;
    hi = end > hi ? end : hi;
  }
  /* glibc lists the main program first. */
  bool is_program = (*index)++ == 0;
  if (!mine)
    return 0;
  self.lo = lo;
  self.hi = hi;
  self.is_library = !is_program;
  return 1;
}

/* Per-thread caching lets unw_backtrace run without libunwind's global
 * lock, which is why jemalloc moved to it (jemalloc PR #75).  libunwind's
 * first call sets itself up, its pipe included (unwind.c). */
static void
setup(void)
{
  if (cmg__unwind_enter()) {
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    cmg__unwind_leave();
  }
  unsigned index = 0;
  dl_iterate_phdr(find_self, &index);
}

void
cmg__stacks_configure(unsigned depth)
{
  if (depth > CMG__STACK_DEPTH_MAX)
    depth = CMG__STACK_DEPTH_MAX;
  atomic_store_explicit(&cmg__stack_depth, depth, memory_order_relaxed);
  pthread_once(&setup_once, setup);
}

/* Splice step: the calling thread's Python frames in place of the
 * interpreter's eval-loop frames (pyframes.c).  stack_depth bounds the
 * native frames; the Python frames come on top, up to
 * WORDS_MAX words in all.  Out of line, so that a process
 * without Python pays one load for it and no stack space.  A loop
 * allocating again from the same native and Python frames makes the same
 * stack: the splice then gives its id, and neither the splicing nor the
 * interning is done again.  Aligned to a cache line: its loops are long,
 * and where the neighbours' sizes put them moved make bench's Python row
 * by 70 ns a pair at the same instruction count. */
static __attribute__((noinline, aligned(64))) uint32_t
with_python_frames(const uintptr_t *ips, unsigned n, bool truncated)
{
  uintptr_t words[WORDS_MAX];
  struct cmg__py_again again;
  unsigned m = cmg__py_splice(ips, n, words, WORDS_MAX, &truncated, &again);
  uint32_t id = again.id;
  if (id == CMG__STACK_NONE)
    id = cmg__stacks_intern(words, m, truncated);
  cmg__py_again_done(&again, id);
  return id;
}

/* A stack deeper than depth keeps its innermost frames (the allocation's
 * API and the library path to it) and its outermost quarter (main, the
 * thread's start, the program's own loop), with a cut word between them
 * that counts what was left out.  When the capture did not reach the
 * outermost frame, the cut ends the stack and its count is unknown.
 * Returns the words now in ips[0..). */
static unsigned
cut_to_depth(uintptr_t *ips, unsigned n, unsigned depth, bool complete)
{
  if (complete && n <= depth)
    return n;
  unsigned outer = complete ? depth / 4 : 0;
  unsigned inner = (n < depth ? n : depth) - outer;
  uintptr_t *tail = ips + n - outer;
  ips[inner] = cmg__cut_word(false, complete ? n - depth : CMG__CUT_UNKNOWN);
  memmove(ips + inner + 1, tail, outer * sizeof(*ips));
  return inner + 1 + outer;
}

/* Not inlined, so that __builtin_return_address(0) is the frame of
 * cmg__stacks_capture's caller as unw_backtrace reports it. */
__attribute__((noinline)) uint32_t CMG__HOT
cmg__stacks_walk(void)
{
  unsigned depth =
      atomic_load_explicit(&cmg__stack_depth, memory_order_relaxed);
  if (depth == 0)
    return CMG__STACK_NONE;
  pthread_once(&setup_once, setup);

  /* On the stack rather than in initial-exec TLS: 2 KiB of static TLS
   * would make the library fail to dlopen ("cannot allocate memory in
   * static TLS block"), and this keeps capture reentrant. */
  uintptr_t ips[CAPTURE_MAX];
  int n = cmg__unwind(ips, CAPTURE_MAX);
  /* libunwind can end a stack with null frames (KDE bug 379082). */
  while (n > 0 && ips[n - 1] == 0)
    n--;

  /* Frame 0 is capture itself; the caller's frame is the one holding our
   * return address.  In the preload library the caller is a wrapper, so
   * every frame inside our object is dropped as well. */
  uintptr_t ra = (uintptr_t)__builtin_return_address(0);
  int skip = 0;
  for (int i = 0; i < n && i <= SPARE; i++)
    if (ips[i] == ra) {
      skip = i;
      break;
    }
  /* Our runtime wrappers also stand mid-stack (the program's cudaMalloc
   * reaches libcudart through ours): those frames are ours too, and go.
   * The frames kept among the first few close up outward, so that the
   * long rest of the stack stays where it is. */
  int first = skip;
  if (self.is_library) {
    int near = n - skip < OURS_WITHIN ? n : skip + OURS_WITHIN;
    first = near;
    for (int i = near - 1; i >= skip; i--)
      if (ips[i] < self.lo || ips[i] >= self.hi)
        ips[--first] = ips[i];
  }

  if (n <= first)
    return CMG__STACK_NONE;
  /* The whole stack is walked, so that its outermost frames are known; a
   * full buffer means it went on past them. */
  unsigned keep =
      cut_to_depth(ips + first, (unsigned)(n - first), depth, n < CAPTURE_MAX);
  bool truncated = keep != (unsigned)(n - first) || n == CAPTURE_MAX;
  if (atomic_load_explicit(&cmg__py_on, memory_order_relaxed))
    return with_python_frames(ips + first, keep, truncated);
  return cmg__stacks_intern(ips + first, keep, truncated);
}

/* ---- interning -------------------------------------------------------- */

static inline uint64_t
rotl(uint64_t x, int r)
{
  return (x << r) | (x >> (64 - r));
}

/* Two independent multiply-rotate lanes halve the dependency chain of a
 * 32-frame stack; murmur3's finalizer then mixes every bit into the low
 * bits that pick the slot. */
static uint64_t
hash_frames(const uintptr_t *ips, unsigned depth, bool truncated)
{
  uint64_t a = 0x9e3779b97f4a7c15ull ^ depth;
  uint64_t b = 0xc2b2ae3d27d4eb4full ^ (uint64_t)truncated;
  unsigned i = 0;
  for (; i + 1 < depth; i += 2) {
    a = rotl((a ^ ips[i]) * 0x87c37b91114253d5ull, 31);
    b = rotl((b ^ ips[i + 1]) * 0x4cf5ad432745937full, 33);
  }
  if (i < depth)
    a = rotl((a ^ ips[i]) * 0x87c37b91114253d5ull, 31);
  uint64_t h = a ^ rotl(b, 17);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

/* Lock-free: the slots are filled once and never cleared, and the table is
 * never full, so a probe ends at the record or at an empty slot. */
static struct record *
find(struct table *t, uint64_t h, const uintptr_t *ips, unsigned depth,
     bool truncated)
{
  for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
    struct record *r = atomic_load_explicit(&t->slots[i], memory_order_acquire);
    if (r == NULL)
      return NULL;
    if (r->hash == h && r->depth == depth && r->truncated == truncated &&
        memcmp(r->ips, ips, depth * sizeof(*ips)) == 0)
      return r;
  }
}

static void
place(struct table *t, struct record *r)
{
  size_t i = r->hash & t->mask;
  while (atomic_load_explicit(&t->slots[i], memory_order_relaxed) != NULL)
    i = (i + 1) & t->mask;
  atomic_store_explicit(&t->slots[i], r, memory_order_release);
}

static struct record *
record_at(uint32_t index)
{
  return dir[index / PAGE_IDS][index % PAGE_IDS];
}

/* Under the lock: a table for n + 1 records at most half full, filled with
 * the n records there are, then published.  NULL if mmap fails. */
static struct table *
grow(struct table *old, uint32_t n)
{
  size_t slots = old ? (old->mask + 1) * 2 : MIN_SLOTS;
  while (((size_t)n + 1) * 2 > slots)
    slots *= 2;
  struct table *t = cmg__pages(sizeof(*t) + slots * sizeof(t->slots[0]));
  if (t == NULL)
    return NULL;
  t->mask = slots - 1;
  for (uint32_t i = 0; i < n; i++)
    place(t, record_at(i));
  atomic_store_explicit(&table, t, memory_order_release);
  return t;
}

/* Under the lock: bump-allocates a record, which is never written after
 * it is published. */
static struct record *
record_new(unsigned depth)
{
  return cmg__chunks_take(&chunks,
                          sizeof(struct record) + depth * sizeof(uintptr_t));
}

static uint32_t
insert(uint64_t h, const uintptr_t *ips, unsigned depth, bool truncated)
{
  uint32_t id = CMG__STACK_NONE;
  pthread_mutex_lock(&lock);
  struct table *t = atomic_load_explicit(&table, memory_order_relaxed);
  struct record *r = t ? find(t, h, ips, depth, truncated) : NULL;
  if (r != NULL) {
    id = r->id;
    goto out;
  }
  uint32_t n = atomic_load_explicit(&nstacks, memory_order_relaxed);
  if (n >= MAX_IDS)
    goto out;
  if (t == NULL || ((size_t)n + 1) * 2 > t->mask + 1)
    if ((t = grow(t, n)) == NULL)
      goto out;
  struct record ***page = &dir[n / PAGE_IDS];
  if (*page == NULL &&
      (*page = cmg__pages(PAGE_IDS * sizeof(struct record *))) == NULL)
    goto out;
  if ((r = record_new(depth)) == NULL)
    goto out;
  r->hash = h;
  r->id = n + 1;
  r->depth = (uint16_t)depth;
  r->truncated = truncated;
  memcpy(r->ips, ips, depth * sizeof(*ips));
  dir[n / PAGE_IDS][n % PAGE_IDS] = r;
  /* The count first, so that whoever finds the record through the table
   * also finds it by id. */
  atomic_store_explicit(&nstacks, n + 1, memory_order_release);
  place(t, r);
  id = n + 1;
out:
  pthread_mutex_unlock(&lock);
  return id;
}

uint32_t
cmg__stacks_intern(const uintptr_t *ips, unsigned depth, bool truncated)
{
  if (ips == NULL || depth == 0)
    return CMG__STACK_NONE;
  if (depth > WORDS_MAX) {
    depth = WORDS_MAX;
    truncated = true;
  }
  const struct record *r = last;
  if (r != NULL && r->depth == depth && r->truncated == truncated &&
      memcmp(r->ips, ips, depth * sizeof(*ips)) == 0)
    return r->id;
  uint64_t h = hash_frames(ips, depth, truncated);
  struct table *t = atomic_load_explicit(&table, memory_order_acquire);
  if (cmg__likely(t != NULL) &&
      (r = find(t, h, ips, depth, truncated)) != NULL) {
    last = r;
    return r->id;
  }
  return insert(h, ips, depth, truncated);
}

/* ---- accounts and views ----------------------------------------------- */

static struct record *
record_of(uint32_t id)
{
  if (id == CMG__STACK_NONE ||
      id > atomic_load_explicit(&nstacks, memory_order_acquire))
    return NULL;
  return record_at(id - 1);
}

static struct account *
account_page(int device, uint32_t page)
{
  pthread_mutex_lock(&lock);
  struct account *p =
      atomic_load_explicit(&accounts[device][page], memory_order_relaxed);
  /* Mapped memory is zero, so the accounts start at zero. */
  if (p == NULL && (p = cmg__pages(PAGE_IDS * sizeof(*p))) != NULL)
    atomic_store_explicit(&accounts[device][page], p, memory_order_release);
  pthread_mutex_unlock(&lock);
  return p;
}

/* The account of a known stack id on a device below CMG__STACK_DEVICES;
 * NULL when its page is not there (and is not to be made, or mmap
 * failed). */
static struct account *
account_of(uint32_t id, int device, bool make)
{
  uint32_t page = (id - 1) / PAGE_IDS;
  struct account *p =
      atomic_load_explicit(&accounts[device][page], memory_order_acquire);
  if (cmg__unlikely(p == NULL) && make)
    p = account_page(device, page);
  return p ? &p[(id - 1) % PAGE_IDS] : NULL;
}

void
cmg__stacks_add(uint32_t id, int device, int64_t bytes, int64_t count)
{
  if (record_of(id) == NULL || device < 0 || device >= CMG__STACK_DEVICES)
    return;
  struct account *a = account_of(id, device, true);
  if (a == NULL)
    return;
  /* Unsigned wrap-around makes adding a negative amount a subtraction. */
  atomic_fetch_add_explicit(&a->bytes, (uint64_t)bytes, memory_order_relaxed);
  atomic_fetch_add_explicit(&a->count, (uint64_t)count, memory_order_relaxed);
}

uint32_t
cmg__stacks_count(void)
{
  return atomic_load_explicit(&nstacks, memory_order_acquire);
}

int
cmg__stacks_get(uint32_t id, struct cmg__stack_view *out)
{
  struct record *r = record_of(id);
  if (r == NULL)
    return -ENOENT;
  out->id = r->id;
  out->depth = r->depth;
  out->truncated = r->truncated;
  out->ips = r->ips;
  for (int d = 0; d < CMG__STACK_DEVICES; d++) {
    struct account *a = account_of(id, d, false);
    out->live_bytes[d] =
        a ? atomic_load_explicit(&a->bytes, memory_order_relaxed) : 0;
    out->live_count[d] =
        a ? atomic_load_explicit(&a->count, memory_order_relaxed) : 0;
  }
  return 0;
}

/* The locks are made anew as well: a thread of the parent may have held one
 * at fork, and it does not exist in the child.  A parent thread stopped
 * between publishing an id and its table slot leaves at worst a stack that
 * is interned a second time under a new id. */
void
cmg__stacks_reset_accounts(void)
{
  pthread_mutex_init(&lock, NULL);
  uint32_t n = atomic_load_explicit(&nstacks, memory_order_relaxed);
  for (uint32_t id = 1; id <= n; id++)
    for (int d = 0; d < CMG__STACK_DEVICES; d++) {
      struct account *a = account_of(id, d, false);
      if (a == NULL)
        continue;
      atomic_store_explicit(&a->bytes, 0, memory_order_relaxed);
      atomic_store_explicit(&a->count, 0, memory_order_relaxed);
    }
}
