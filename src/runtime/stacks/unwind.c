/*
 * The native unwinder of stack capture: a walk that steps through each
 * frame the way libunwind's DWARF unwinding is proven to, and libunwind
 * itself from the first frame it cannot prove.
 *
 * On x86-64 the frame of a return address R is stepped by the unwind rule
 * found for R - 1, which depends only on R: the caller's return address is
 * at CFA - 8, and the common rules are "CFA = rbp + 16, rbp saved at
 * CFA - 16" (a frame-pointer frame) and "CFA = rsp + k, rbp unchanged or
 * saved at CFA - c" (code built without frame pointers).  Either step needs
 * only rsp, rbp and the stack, which the walk carries from frame to frame.
 * Checking bounds alone cannot tell which rule applies: a function built
 * without a frame pointer leaves its caller's rbp in place, and a plain
 * frame-pointer walk then silently skips a frame.  So every R is proven
 * once, and the verdict kept.
 *
 * The proof asks libunwind itself.  libunwind is made to step once from a
 * made-up frame at R, twice: rsp the frame's real stack pointer, then 64
 * bytes lower (either way a rule relative to rsp reads live stack), rbp and
 * every other register pointing into a buffer of ours whose words all hold
 * addresses inside it, placed differently in the two.  A frame-pointer rule
 * is the only one that yields rbp + 16 as the caller's stack pointer and
 * the buffer's words at rbp + 8 and rbp as its return address and rbp in
 * both (other rules relative to rbp, as libffi's CFA = rbp + 32, are
 * proven the same way with their own offsets); a rule relative to rsp is
 * the one whose CFA moves with rsp by the same k in both, with the return
 * address at CFA - 8 and rbp unchanged or read at the same offset from the
 * CFA.  A rule relative to another register or an expression (GCC's
 * realigned frames, signal frames) gives neither and is left to libunwind.  A frame where libunwind's walk ends
 * (the return address undefined: _start, clone) ends the walk too, proven
 * by a third step from a stack of non-zero words.  R must have DWARF unwind
 * information (without it libunwind guesses, and checks what it reads) and
 * not be a signal frame.
 *
 * Verdicts live in a fixed table of atomic words, each a return address
 * and how to step from it, filled with a compare-and-swap and never
 * cleared: reads take no lock.  Like libunwind's own caches, the table
 * assumes that the code at an address stays the same while the process
 * runs (a library unloaded and another mapped in its place is not
 * noticed).  A full table proves nothing more, and those frames go to
 * libunwind.
 *
 * A walk that comes to a frame the thread's last walk passed through, with
 * the stack outward of it unchanged, takes the rest from that walk
 * (stackmemo.c).
 *
 * At the first frame that is not proven, auto mode hands over: capture
 * calls unw_backtrace, whose frames begin with the ones proven (a restart,
 * which costs a whole libunwind walk; libunwind 1.6 exports no way to
 * start its fast trace from a given frame).
 *
 * fp mode trusts frame pointers everywhere: each frame pointer must lie in
 * the thread's stack, above the last, 8-aligned, and each return address in
 * an executable segment of a loaded object, else the walk ends there.
 *
 * Every call into libunwind that may step goes through the pipe guard
 * (unwind_pipe.c).
 */
#include "config.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <ucontext.h>

#include "core/base.h"
#include "runtime/table_memory.h"
#include "runtime/stacks/stackmemo.h"
#include "runtime/stacks/unwind.h"

#define SLOTS_LOG 14
#define SLOTS (1u << SLOTS_LOG)
#define PROBES 16
/* A verdict word: the return address in the low 47 bits (every user-space
 * address on x86-64), then how to step from its frame: OTHER (libunwind
 * must), FP (K = 0: a frame-pointer frame; else CFA = rbp + 8 * K and rbp
 * at CFA - 8 * C), RSP with CFA = rsp + 8 * K and rbp at CFA - 8 * C
 * (C = 0: rbp unchanged), or END (libunwind's walk ends at this frame). */
#define RA_MASK ((1ull << 47) - 1)
#define TYPE_SHIFT 47
#define K_SHIFT 49
#define K_BITS 10
#define C_SHIFT 59
#define C_BITS 5
#define OTHER 0ull
#define FP 1ull
#define RSP 2ull
#define END 3ull
/* Below this libunwind's fast trace takes a return address for the end. */
#define LOWEST_RA 0x4000

_Atomic int cmg__unwind_mode = CMG__STACK_MODE_AUTO;

static _Atomic uint64_t verdicts[SLOTS];
/* The verdicts met lately, one per slot, looked at first: the big table's
 * slots lie scattered over 128 KiB, and the load of one was most of what a
 * step cost (a TLB miss more often than not); these fit in one page.  A
 * verdict never changes once made, so a copy is as good as the table's. */
#define NEAR_LOG 9
static _Atomic uint64_t near[1u << NEAR_LOG] __attribute__((aligned(4096)));
static _Atomic unsigned n_kind[4];

void
cmg__unwind_configure(enum cmg__stack_mode mode)
{
  atomic_store_explicit(&cmg__unwind_mode, (int)mode, memory_order_relaxed);
}

void
cmg__unwind_counts(unsigned counts[4])
{
  for (int i = 0; i < 4; i++)
    counts[i] = atomic_load_explicit(&n_kind[i], memory_order_relaxed);
}

/* ---- proof ------------------------------------------------------------ */

/* What one step of libunwind's from a made-up frame gave, as locations:
 * the caller's stack pointer (the CFA), where its return address and rbp
 * were read (0: rbp left as it was). */
struct step {
  int ret;
  uintptr_t sp, rbp_in, cfa, ip_at, rbp, rbp_at;
};

/* The made-up frames' memory: every word the address of another, so that
 * whatever a rule reads from it is defined and leads back into it.  Big
 * enough for a stack-pointer rule's largest CFA offset (K_BITS).  Shared,
 * under a lock that a proof never waits for. */
#define SCRATCH ((1u << K_BITS) + 256)
static uintptr_t scratch[SCRATCH];
static pthread_mutex_t scratch_lock = PTHREAD_MUTEX_INITIALIZER;

/* One step of libunwind's from a frame at ra whose stack pointer is sp,
 * whose rbp is scratch[at] and whose other registers are scratch[others];
 * ret < 0 when libunwind has no DWARF information for ra, or ra is a
 * signal frame. */
static void
trial(uintptr_t ra, uintptr_t sp, int at, int others, struct step *out)
{
  for (unsigned i = 0; i < SCRATCH; i++)
    scratch[i] = (uintptr_t)&scratch[(i * 7 + 3) % SCRATCH];
  scratch[at + 1] = ra + 1 + (uintptr_t)at;
  *out =
      (struct step){ .ret = -1, .sp = sp, .rbp_in = (uintptr_t)&scratch[at] };

  unw_context_t uc;
  if (unw_getcontext(&uc) != 0)
    return;
  greg_t *g = uc.uc_mcontext.gregs;
  static const int regs[] = { REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI,
                              REG_RDI, REG_R8,  REG_R9,  REG_R10, REG_R11,
                              REG_R12, REG_R13, REG_R14, REG_R15 };
  for (size_t i = 0; i < sizeof(regs) / sizeof(*regs); i++)
    g[regs[i]] = (greg_t)&scratch[others];
  g[REG_RIP] = (greg_t)ra;
  g[REG_RSP] = (greg_t)sp;
  g[REG_RBP] = (greg_t)out->rbp_in;

  /* unw_init_local looks R - 1 up, as for every caller's frame. */
  unw_cursor_t c;
  unw_proc_info_t pi;
  unw_save_loc_t ip_loc, rbp_loc;
  unw_word_t cfa, rbp;
  if (unw_init_local(&c, &uc) < 0 || unw_is_signal_frame(&c) != 0 ||
      unw_get_proc_info(&c, &pi) != 0)
    return;
  if ((out->ret = unw_step(&c)) <= 0)
    return;
  if (unw_get_reg(&c, UNW_REG_SP, &cfa) < 0 ||
      unw_get_reg(&c, UNW_X86_64_RBP, &rbp) < 0 ||
      unw_get_save_loc(&c, UNW_REG_IP, &ip_loc) < 0 ||
      unw_get_save_loc(&c, UNW_X86_64_RBP, &rbp_loc) < 0 ||
      ip_loc.type != UNW_SLT_MEMORY) {
    out->ret = -1;
    return;
  }
  out->cfa = cfa;
  out->ip_at = ip_loc.u.addr;
  out->rbp = rbp;
  /* An rbp left alone is "saved" in the context's own slot. */
  if (rbp_loc.type == UNW_SLT_MEMORY &&
      rbp_loc.u.addr != (unw_word_t)&g[REG_RBP])
    out->rbp_at = rbp_loc.u.addr;
}

/* A frame-pointer step: CFA = rbp + 16, the return address and rbp read
 * at rbp + 8 and rbp. */
static bool
is_fp(const struct step *s)
{
  return s->cfa == s->rbp_in + 16 && s->ip_at == s->rbp_in + 8 &&
         s->rbp_at == s->rbp_in;
}

/* A step relative to rbp with another layout, the same in both: CFA =
 * rbp + k, the return address at CFA - 8, rbp at CFA - c (libffi's
 * ffi_call_unix64, through which every ctypes and cffi call passes, keeps
 * its frame at rbp + 32).  Encoded as k / 8 and c / 8. */
static bool
is_rbp(const struct step *a, const struct step *b, uint64_t *kq, uint64_t *cq)
{
  uintptr_t k = a->cfa - a->rbp_in, c = a->cfa - a->rbp_at;
  if (b->cfa - b->rbp_in != k || k % 8 != 0 || k == 0 ||
      k / 8 >= (1u << K_BITS) || a->ip_at != a->cfa - 8 ||
      b->ip_at != b->cfa - 8 || a->rbp_at == 0 || b->rbp_at == 0 ||
      b->cfa - b->rbp_at != c || c % 8 != 0 || c == 0 ||
      c / 8 >= (1u << C_BITS))
    return false;
  *kq = k / 8;
  *cq = c / 8;
  return true;
}

/* The same step relative to rsp in both: CFA = rsp + k, the return address
 * at CFA - 8, rbp unchanged or read at CFA - c, the same k and c whatever
 * rsp and rbp were.  Encoded as k / 8 and c / 8 (0: unchanged), or false
 * when they do not fit the verdict word. */
static bool
is_rsp(const struct step *a, const struct step *b, uint64_t *kq, uint64_t *cq)
{
  uintptr_t k = a->cfa - a->sp;
  if (b->cfa - b->sp != k || k % 8 != 0 || k == 0 || k / 8 >= (1u << K_BITS) ||
      a->ip_at != a->cfa - 8 || b->ip_at != b->cfa - 8)
    return false;
  if (a->rbp_at == 0 && b->rbp_at == 0 && a->rbp == a->rbp_in &&
      b->rbp == b->rbp_in) {
    *kq = k / 8;
    *cq = 0;
    return true;
  }
  uintptr_t c = a->cfa - a->rbp_at;
  if (a->rbp_at == 0 || b->rbp_at == 0 || b->cfa - b->rbp_at != c ||
      c % 8 != 0 || c == 0 || c / 8 >= (1u << C_BITS))
    return false;
  *kq = k / 8;
  *cq = c / 8;
  return true;
}

/* The verdict word of ra: two made-up frames, the first on the frame's
 * real stack pointer (a rule relative to rsp then reads the live frame),
 * the second's stack and every register in scratch, placed differently;
 * and a third, all in scratch, for the end of the stack.  When another
 * thread is proving, or a signal handler interrupted a proof, nothing is
 * proven: the frame goes to libunwind this time. */
static uint64_t
prove(uintptr_t ra, uintptr_t sp, bool *done)
{
  struct step a, b, c;
  uint64_t kq, cq, word = ra;
  *done = pthread_mutex_trylock(&scratch_lock) == 0;
  if (!*done)
    return ra;
  if (!cmg__unwind_enter()) {
    pthread_mutex_unlock(&scratch_lock);
    *done = false;
    return ra;
  }
  trial(ra, sp, 10, 62, &a);
  trial(ra, (uintptr_t)&scratch[128], 20, 4, &b);
  if (a.ret == 0 && b.ret == 0) {
    /* The return address column undefined (the outermost frame), or a
     * zero read in the live frame and in scratch: a third step. */
    trial(ra, (uintptr_t)&scratch[136], 30, 8, &c);
    if (c.ret == 0)
      word = ra | END << TYPE_SHIFT;
  } else if (a.ret > 0 && b.ret > 0 && is_fp(&a) && is_fp(&b)) {
    word = ra | FP << TYPE_SHIFT;
  } else if (a.ret > 0 && b.ret > 0 && is_rbp(&a, &b, &kq, &cq)) {
    word = ra | FP << TYPE_SHIFT | kq << K_SHIFT | cq << C_SHIFT;
  } else if (a.ret > 0 && b.ret > 0 && is_rsp(&a, &b, &kq, &cq)) {
    word = ra | RSP << TYPE_SHIFT | kq << K_SHIFT | cq << C_SHIFT;
  }
  cmg__unwind_leave();
  pthread_mutex_unlock(&scratch_lock);
  return word;
}

static inline size_t
home(uintptr_t ra)
{
  return (size_t)((ra * 0x9e3779b97f4a7c15ull) >> (64 - SLOTS_LOG));
}

/* Proves ra, records the verdict, returns it.  Two threads may both prove
 * the same address; they reach the same verdict. */
static __attribute__((cold, noinline)) uint64_t
learn(uintptr_t ra, uintptr_t sp)
{
  bool done;
  uint64_t word = prove(ra, sp, &done);
  if (!done)
    return word;
  size_t i = home(ra);
  for (int p = 0; p < PROBES; p++, i = (i + 1) & (SLOTS - 1)) {
    uint64_t seen = 0;
    if (atomic_compare_exchange_strong_explicit(&verdicts[i], &seen, word,
                                                memory_order_relaxed,
                                                memory_order_relaxed)) {
      atomic_fetch_add_explicit(&n_kind[word >> TYPE_SHIFT & 3], 1,
                                memory_order_relaxed);
      break;
    }
    if ((seen & RA_MASK) == ra)
      break;
  }
  return word;
}

/* The big table's verdict of ra, copied into *seen; learnt when the
 * table has none (copied on the next call, once recorded: a proof given
 * up is not). */
static uint64_t
verdict_far(uintptr_t ra, uintptr_t sp, _Atomic uint64_t *seen)
{
  size_t i = home(ra);
  for (int p = 0; p < PROBES; p++, i = (i + 1) & (SLOTS - 1)) {
    uint64_t w = atomic_load_explicit(&verdicts[i], memory_order_relaxed);
    if (w == 0)
      return learn(ra, sp);
    if ((w & RA_MASK) == ra) {
      atomic_store_explicit(seen, w, memory_order_relaxed);
      return w;
    }
  }
  return ra;
}

/* The verdict word of ra, whose frame's stack pointer is sp: the return
 * address and how to step from its frame.  Lock-free on a known ra; a full
 * table answers OTHER, that is, libunwind. */
static inline uint64_t
verdict(uintptr_t ra, uintptr_t sp)
{
  _Atomic uint64_t *seen =
      &near[(ra * 0x9e3779b97f4a7c15ull) >> (64 - NEAR_LOG)];
  uint64_t w = atomic_load_explicit(seen, memory_order_relaxed);
  if (cmg__likely((w & RA_MASK) == ra && w != 0))
    return w;
  return verdict_far(ra, sp, seen);
}

/* ---- fp mode's bounds ------------------------------------------------- */

struct range {
  uintptr_t lo, hi;
};

/* The executable segments of the loaded objects, as of dlpi_adds/subs;
 * a snapshot is never changed once published, and never unmapped, since a
 * reader may still be looking at it (one per change of the object list). */
struct segments {
  unsigned long long adds, subs;
  size_t n;
  struct range r[];
};

static _Atomic(struct segments *) segments;
static pthread_mutex_t segments_lock = PTHREAD_MUTEX_INITIALIZER;

struct collect {
  struct segments *s;
  size_t cap;
  bool first;
};

static int
collect(struct dl_phdr_info *info, size_t size, void *arg)
{
  struct collect *c = arg;
  if (c->first) {
    c->s->adds = info->dlpi_adds;
    c->s->subs = info->dlpi_subs;
    c->first = false;
  }
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || c->s->n == c->cap)
      continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    c->s->r[c->s->n++] = (struct range){ lo, lo + ph->p_memsz };
  }
  return 0;
}

static int
changed(struct dl_phdr_info *info, size_t size, void *arg)
{
  const struct segments *s = arg;
  return s == NULL || info->dlpi_adds != s->adds || info->dlpi_subs != s->subs
             ? 1
             : 2;
}

/* The snapshot's ranges in address order, for a binary search. */
static void
sort_ranges(struct range *r, size_t n)
{
  for (size_t i = 1; i < n; i++) {
    struct range x = r[i];
    size_t j = i;
    for (; j > 0 && r[j - 1].lo > x.lo; j--)
      r[j] = r[j - 1];
    r[j] = x;
  }
}

/* A new snapshot if the object list changed since the last; the current
 * one otherwise. */
static __attribute__((cold, noinline)) struct segments *
refresh(void)
{
  pthread_mutex_lock(&segments_lock);
  struct segments *s = atomic_load_explicit(&segments, memory_order_relaxed);
  if (dl_iterate_phdr(changed, s) == 1) {
    size_t cap = 1024, bytes = sizeof(*s) + cap * sizeof(s->r[0]);
    void *m = cmg__pages(bytes);
    if (m != NULL) {
      struct collect c = { m, cap, true };
      dl_iterate_phdr(collect, &c);
      sort_ranges(c.s->r, c.s->n);
      s = m;
      atomic_store_explicit(&segments, s, memory_order_release);
    }
  }
  pthread_mutex_unlock(&segments_lock);
  return s;
}

static const struct range *
in_segments(const struct segments *s, uintptr_t a)
{
  if (s == NULL)
    return NULL;
  size_t lo = 0, hi = s->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (a < s->r[mid].lo)
      hi = mid;
    else if (a >= s->r[mid].hi)
      lo = mid + 1;
    else
      return &s->r[mid];
  }
  return NULL;
}

static CMG__TLS struct range stack_of_thread, last_segment;

/* Most return addresses lie in the object of the one before. */
static bool
executable(uintptr_t a)
{
  if (a >= last_segment.lo && a < last_segment.hi)
    return true;
  const struct range *r =
      in_segments(atomic_load_explicit(&segments, memory_order_acquire), a);
  if (r == NULL)
    r = in_segments(refresh(), a);
  if (r != NULL)
    last_segment = *r;
  return r != NULL;
}

/* The calling thread's stack, once per thread; empty if unknown. */
static __attribute__((cold, noinline)) struct range
find_stack(void)
{
  pthread_attr_t attr;
  void *base;
  size_t size;
  struct range r = { UINTPTR_MAX, UINTPTR_MAX }; /* unknown: no frame */
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    if (pthread_attr_getstack(&attr, &base, &size) == 0)
      r = (struct range){ (uintptr_t)base, (uintptr_t)base + size };
    pthread_attr_destroy(&attr);
  }
  stack_of_thread = r;
  return r;
}

uintptr_t
cmg__stack_top(void)
{
  struct range stack = stack_of_thread;
  if (stack.lo == 0)
    stack = find_stack();
  return stack.hi == UINTPTR_MAX ? 0 : stack.hi;
}

/* fp mode: frame pointers wherever they lead, within bounds.  Returns the
 * number of frames.  Where the program has no frame pointers, rbp can lead
 * to words of the stack nobody wrote: they are only compared, and valgrind's
 * complaint about them is suppressed by this function's name, so it stays a
 * function of its own (tests/valgrind.supp). */
static __attribute__((noinline)) int
trusting(uintptr_t *ips, int max, uintptr_t ra, uintptr_t rbp, uintptr_t sp)
{
  struct range stack = stack_of_thread;
  if (stack.lo == 0)
    stack = find_stack();
  int k = 0;
  for (;;) {
    ips[k++] = ra;
    if (k >= max || rbp < sp || rbp < stack.lo || rbp > stack.hi - 16 ||
        rbp % 8 != 0)
      break;
    const uintptr_t *frame = (const uintptr_t *)rbp;
    sp = rbp + 16;
    ra = frame[1];
    rbp = frame[0];
    if (ra < LOWEST_RA || !executable(ra))
      break;
  }
  return k;
}

/* ---- the walk --------------------------------------------------------- */

/* One step outward from the frame (*ra, *sp, *rbp) by its verdict w, the
 * words it read noted in *e; returns the verdict's type (END and OTHER
 * take no step). */
static inline __attribute__((always_inline)) uint64_t
step(uint64_t w, uintptr_t *ra, uintptr_t *sp, uintptr_t *rbp,
     struct cmg__memo_frame *e)
{
  uint64_t type = w >> TYPE_SHIFT & 3;
  if (type == FP && cmg__likely(w >> K_SHIFT == 0)) {
    /* Apart from the other layouts, so that the next frame's address
     * waits on rbp alone, not on finding the verdict. */
    const uintptr_t *frame = (const uintptr_t *)*rbp;
    e->a1 = *rbp + 8;
    e->a2 = *rbp;
    *sp = *rbp + 16;
    *ra = e->v1 = frame[1];
    *rbp = e->v2 = frame[0];
  } else if (type == FP) {
    uintptr_t cfa = *rbp + 8 * (w >> K_SHIFT & ((1u << K_BITS) - 1));
    e->a1 = cfa - 8;
    e->a2 = cfa - 8 * (w >> C_SHIFT);
    *ra = e->v1 = *(const uintptr_t *)e->a1;
    *rbp = e->v2 = *(const uintptr_t *)e->a2;
    *sp = cfa;
  } else if (type == RSP) {
    uintptr_t cfa = *sp + 8 * (w >> K_SHIFT & ((1u << K_BITS) - 1));
    uint64_t cq = w >> C_SHIFT;
    e->a1 = e->a2 = cfa - 8;
    *ra = e->v1 = e->v2 = *(const uintptr_t *)e->a1;
    if (cq != 0) {
      e->a2 = cfa - 8 * cq;
      *rbp = e->v2 = *(const uintptr_t *)e->a2;
    }
    *sp = cfa;
  }
  return type;
}

/* auto mode, from the caller's frame (ra, rbp, sp): each step by its
 * return address's verdict, recorded in the thread's memo; at a frame the
 * memo holds, the rest from the memo when its words still hold
 * (stackmemo.c).  True when complete; false when a frame needs libunwind,
 * the first *n frames being right all the same. */
static bool
proven(uintptr_t *ips, int max, uintptr_t ra, uintptr_t rbp, uintptr_t sp,
       int *n)
{
  struct cmg__memo *m = max <= CMG__MEMO_MAX ? cmg__memo_enter() : NULL;
  struct cmg__memo_frame spare, *e = &spare;
  struct cmg__memo_taken taken = { 0 };
  int j = m != NULL ? (int)m->n - 1 : -1, k = 0, got = 0;
  uint64_t type = FP;
  for (;;) {
    ips[k++] = ra;
    if (k >= max)
      break;
    while (j >= 0 && m->sp[j] < sp)
      j--;
    if (j >= 0 && m->sp[j] == sp && cmg__memo_ra(m, (unsigned)j) == ra &&
        m->rbp[j] == rbp) {
      unsigned at;
      if ((got = cmg__memo_recall(m, (unsigned)j, ips, k, max, &at)) > 0)
        break;
      if (at < (unsigned)j) {
        k = cmg__memo_resume(m, (unsigned)j, at, ips, k);
        taken = (struct cmg__memo_taken){ (unsigned)j, at, (unsigned)k };
        ra = cmg__memo_ra(m, at);
        sp = m->sp[at];
        rbp = m->rbp[at];
      }
      j = -1;
    }
    if (m != NULL)
      e = &m->walk[k - 1];
    *e = (struct cmg__memo_frame){ .ra = ra, .sp = sp, .rbp = rbp };
    type = step(verdict(ra, sp), &ra, &sp, &rbp, e);
    /* Where libunwind's fast trace stops without the frame, or its
     * stepping records a null one, or beyond what a verdict word holds:
     * let libunwind say. */
    if (type == END || type == OTHER || ra < LOWEST_RA || ra > RA_MASK)
      break;
  }
  if (type == END && m != NULL)
    cmg__memo_keep(m, (unsigned)k, &taken);
  cmg__memo_leave(m);
  *n = got > 0 ? got : k;
  return got > 0 || type == END || k >= max;
}

/* The walks, from this function's own frame: it keeps its frame pointer
 * whatever the build's flags, and its caller's frame is frame 0. */
__attribute__((noinline, optimize("no-omit-frame-pointer"))) bool CMG__HOT
cmg__unwind_fp(uintptr_t *ips, int max, int *n)
{
  const uintptr_t *self = __builtin_frame_address(0);
  uintptr_t ra = (uintptr_t)__builtin_return_address(0);
  uintptr_t rbp = self[0], sp = (uintptr_t)(self + 2);
  if (atomic_load_explicit(&cmg__unwind_mode, memory_order_relaxed) ==
      CMG__STACK_MODE_FP) {
    *n = trusting(ips, max, ra, rbp, sp);
    return true;
  }
  return proven(ips, max, ra, rbp, sp, n);
}

/* A lock held by another thread of the parent at fork is held forever in
 * the child; the verdicts stay true there (the same code is mapped). */
void
cmg__unwind_after_fork(void)
{
  pthread_mutex_init(&scratch_lock, NULL);
  pthread_mutex_init(&segments_lock, NULL);
  cmg__memo_after_fork();
}
