/*
 * The native unwinder of stack capture: a frame-pointer walk, and
 * libunwind where the walk cannot be trusted.
 *
 * A frame-pointer step from a frame whose return address is R reads the
 * caller's return address at rbp + 8 and its rbp at rbp, and takes rbp + 16
 * as the caller's stack pointer.  That is exactly libunwind's step when the
 * unwind rule at R says: CFA = rbp + 16, rbp saved at CFA - 16 (the return
 * address is at CFA - 8 on x86-64).  Checking bounds cannot tell that: a
 * function built without frame pointers leaves its caller's rbp in place,
 * and the walk then silently skips a frame.  So in auto mode every R is
 * proven before the walk steps through it, and the verdict is kept.
 *
 * The proof asks libunwind itself.  The rule depends only on R, not on the
 * values in the registers, so libunwind is made to step once from a
 * made-up frame at R: rsp the frame's real stack pointer (so that a rule
 * relative to rsp reads the frame's real, live memory), rbp and every other
 * register pointing into a buffer of ours whose words all hold addresses
 * inside it.  Only a rule "CFA = rbp + 16, rbp at CFA - 16" yields exactly
 * rbp + 16 as the caller's stack pointer and the buffer's words at rbp and
 * rbp + 8 as its rbp and return address; a rule relative to rsp lands
 * outside the buffer, one relative to another register or an expression
 * (GCC's realigned frames) lands elsewhere in it.  Two such trials, with
 * rbp and the other registers placed differently, rule out a coincidence.
 * R must also have DWARF unwind information (libunwind guesses with frame
 * pointers where there is none, and checks what it reads when it does) and
 * not be a signal frame.
 *
 * Verdicts live in a fixed table of atomic words, each a return address
 * and one bit for "not a frame-pointer frame", filled with a compare-and-
 * swap and never cleared: reads take no lock.  Like libunwind's own caches,
 * it assumes that code at an address stays the same while the process runs
 * (a library unloaded and another mapped at its place is not noticed).
 *
 * At the first frame that is not proven, auto mode hands over: capture
 * calls unw_backtrace, whose frames begin with the ones proven.  A table
 * that is full proves nothing more, and capture then gets libunwind's walk.
 *
 * fp mode trusts frame pointers everywhere: each frame pointer must lie in
 * the thread's stack, above the last, 8-aligned, and each return address in
 * an executable segment of a loaded object, else the walk ends there.
 */
#include "config.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "core/base.h"
#include "core/unwind.h"

#define SLOTS_LOG 14
#define SLOTS (1u << SLOTS_LOG)
#define PROBES 16
#define OTHER_BIT (1ull << 63)
/* Below this libunwind's fast trace takes a return address for the end. */
#define LOWEST_RA 0x4000
#define AREA 32

_Atomic int cmg__unwind_mode = CMG__STACK_MODE_AUTO;

static _Atomic uint64_t verdicts[SLOTS];
static _Atomic unsigned n_fp, n_other;

void
cmg__unwind_configure(enum cmg__stack_mode mode)
{
  atomic_store_explicit(&cmg__unwind_mode, (int)mode, memory_order_relaxed);
}

void
cmg__unwind_counts(unsigned *fp, unsigned *other)
{
  *fp = atomic_load_explicit(&n_fp, memory_order_relaxed);
  *other = atomic_load_explicit(&n_other, memory_order_relaxed);
}

/* ---- proof ------------------------------------------------------------ */

/* One made-up frame at ra: rbp at area[at], the other registers at
 * area[others]; true if libunwind's step from it is a frame-pointer
 * step. */
static bool
trial(uintptr_t ra, uintptr_t sp, int at, int others)
{
  uintptr_t area[AREA];
  for (int i = 0; i < AREA; i++)
    area[i] = (uintptr_t)&area[(i * 7 + 3) % AREA];
  area[at + 1] = ra + 1 + (uintptr_t)at;

  unw_context_t uc;
  if (unw_getcontext(&uc) != 0)
    return false;
  greg_t *g = uc.uc_mcontext.gregs;
  static const int regs[] = { REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI,
                              REG_RDI, REG_R8, REG_R9, REG_R10, REG_R11,
                              REG_R12, REG_R13, REG_R14, REG_R15 };
  for (size_t i = 0; i < sizeof(regs) / sizeof(*regs); i++)
    g[regs[i]] = (greg_t)&area[others];
  g[REG_RIP] = (greg_t)ra;
  g[REG_RSP] = (greg_t)sp;
  g[REG_RBP] = (greg_t)&area[at];

  /* unw_init_local looks R - 1 up, as for every caller's frame. */
  unw_cursor_t c;
  unw_proc_info_t pi;
  unw_word_t ip, cfa, rbp;
  if (unw_init_local(&c, &uc) < 0 || unw_is_signal_frame(&c) != 0 ||
      unw_get_proc_info(&c, &pi) != 0 || unw_step(&c) <= 0 ||
      unw_get_reg(&c, UNW_REG_IP, &ip) < 0 ||
      unw_get_reg(&c, UNW_REG_SP, &cfa) < 0 ||
      unw_get_reg(&c, UNW_X86_64_RBP, &rbp) < 0)
    return false;
  return cfa == (uintptr_t)&area[at + 2] && ip == area[at + 1] &&
         rbp == area[at];
}

static bool
prove(uintptr_t ra, uintptr_t sp)
{
  return trial(ra, sp, 10, AREA - 2) && trial(ra, sp, 20, 4);
}

static inline size_t
home(uintptr_t ra)
{
  return (size_t)((ra * 0x9e3779b97f4a7c15ull) >> (64 - SLOTS_LOG));
}

/* Proves ra, records the verdict, returns it.  Two threads may both prove
 * the same address; they reach the same verdict. */
static __attribute__((cold, noinline)) bool
learn(uintptr_t ra, uintptr_t sp)
{
  bool fp = prove(ra, sp);
  uint64_t word = ra | (fp ? 0 : OTHER_BIT);
  size_t i = home(ra);
  for (int p = 0; p < PROBES; p++, i = (i + 1) & (SLOTS - 1)) {
    uint64_t seen = 0;
    if (atomic_compare_exchange_strong_explicit(&verdicts[i], &seen, word,
                                                memory_order_relaxed,
                                                memory_order_relaxed)) {
      atomic_fetch_add_explicit(fp ? &n_fp : &n_other, 1,
                                memory_order_relaxed);
      break;
    }
    if ((seen & ~OTHER_BIT) == ra)
      break;
  }
  return fp;
}

/* True if the step from the frame returning to ra may use its frame
 * pointer; sp is that frame's stack pointer.  Lock-free on a known ra. */
static inline bool
proven(uintptr_t ra, uintptr_t sp)
{
  size_t i = home(ra);
  for (int p = 0; p < PROBES; p++, i = (i + 1) & (SLOTS - 1)) {
    uint64_t w = atomic_load_explicit(&verdicts[i], memory_order_relaxed);
    if (w == ra)
      return true;
    if (w == (ra | OTHER_BIT))
      return false;
    if (w == 0)
      return learn(ra, sp);
  }
  return false;
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
  return s == NULL || info->dlpi_adds != s->adds ||
                 info->dlpi_subs != s->subs
             ? 1
             : 2;
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
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) {
      struct collect c = { m, cap, true };
      dl_iterate_phdr(collect, &c);
      s = m;
      atomic_store_explicit(&segments, s, memory_order_release);
    }
  }
  pthread_mutex_unlock(&segments_lock);
  return s;
}

static bool
in_segments(const struct segments *s, uintptr_t a)
{
  for (size_t i = 0; s != NULL && i < s->n; i++)
    if (a >= s->r[i].lo && a < s->r[i].hi)
      return true;
  return false;
}

static bool
executable(uintptr_t a)
{
  if (in_segments(atomic_load_explicit(&segments, memory_order_acquire), a))
    return true;
  return in_segments(refresh(), a);
}

static CMG__TLS struct range stack_of_thread;

/* The calling thread's stack, once per thread; empty if unknown. */
static __attribute__((cold, noinline)) struct range
find_stack(void)
{
  pthread_attr_t attr;
  void *base;
  size_t size;
  struct range r = { 1, 1 };
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    if (pthread_attr_getstack(&attr, &base, &size) == 0)
      r = (struct range){ (uintptr_t)base, (uintptr_t)base + size };
    pthread_attr_destroy(&attr);
  }
  stack_of_thread = r;
  return r;
}

/* ---- the walk --------------------------------------------------------- */

/* The frame-pointer walk, from this function's own frame: it keeps its
 * frame pointer whatever the build's flags, and its caller's frame is
 * frame 0. */
__attribute__((noinline, optimize("no-omit-frame-pointer"))) bool CMG__HOT
cmg__unwind_fp(uintptr_t *ips, int max, int *n)
{
  const uintptr_t *self = __builtin_frame_address(0);
  uintptr_t ra = (uintptr_t)__builtin_return_address(0);
  uintptr_t rbp = self[0], sp = (uintptr_t)(self + 2);
  bool trust = atomic_load_explicit(&cmg__unwind_mode,
                                    memory_order_relaxed) == CMG__STACK_MODE_FP;
  struct range stack = stack_of_thread;
  if (trust && stack.lo == 0)
    stack = find_stack();
  int k = 0;
  for (;;) {
    ips[k++] = ra;
    if (k >= max)
      break;
    if (trust) {
      if (rbp < sp || rbp < stack.lo || rbp > stack.hi - 16 || rbp % 8 != 0)
        break;
    } else if (!proven(ra, sp)) {
      *n = k;
      return false;
    }
    const uintptr_t *frame = (const uintptr_t *)rbp;
    sp = rbp + 16;
    ra = frame[1];
    rbp = frame[0];
    if (ra < LOWEST_RA) {
      if (!trust) {
        *n = k;
        return false;
      }
      break;
    }
    if (trust && !executable(ra))
      break;
  }
  *n = k;
  return true;
}
