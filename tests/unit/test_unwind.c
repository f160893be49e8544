/*
 * The frame-pointer walk against libunwind (runtime/stacks/unwind.c): from call
 * chains of distinct functions, one of them built without a frame pointer
 * in the middle of frame-pointer ones, a frame kept at rbp + 32 as libffi
 * keeps its own, a signal handler (on the thread's
 * stack and on an alternate one), libc's qsort calling back, the memo of
 * a stack's outer part (the same chain again, one chain from two callers
 * that differ in a word outward, chains of three depths in turn), and four
 * threads at once.  In auto mode the walk must give exactly unw_backtrace's
 * frames, or a prefix of them and hand over (it must at a signal frame);
 * capture's whole unwind must give unw_backtrace's frames; and the walk
 * must finish alone where every frame has ordinary unwind information.  A
 * naive walk (fp mode) must get the chain with the frameless function
 * wrong where the build really drops its frame pointer, or this test could
 * not tell a skipped frame.
 *
 * Built four times (tests/unit/local.mk): -O2 with and without frame
 * pointers, -O0 with and without (UNWIND_O0, UNWIND_NOFP below).
 */
#include "config.h"

#ifdef UNWIND_O0
#pragma GCC optimize("O0")
#endif
#ifdef UNWIND_NOFP
#pragma GCC optimize("omit-frame-pointer")
#endif

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/conf.h"
#include "runtime/stacks/stackmemo.h"
#include "runtime/stacks/unwind.h"
#include "../tap.h"

#define MAXF 160
#define CHAIN 30
#define THREADS 4
#define ROUNDS 200

/* What one scenario saw, over all its checks (threads add atomically). */
struct tally {
  _Atomic unsigned checks, wrong, complete, handed_over, proven_frames;
  _Atomic unsigned full_wrong, naive_differs;
};

struct hop {
  unsigned left;
  int max;
  bool frameless;      /* pass through middle() on the way */
  bool naive;          /* also compare fp mode's walk */
  void (*leaf)(struct hop *);
  struct tally *t;
};

static bool
same(const uintptr_t *a, const uintptr_t *b, int n)
{
  return n <= 1 || memcmp(a + 1, b + 1, (size_t)(n - 1) * sizeof(*a)) == 0;
}

/* Each unwinder from this one frame: frame 0 is this function in all
 * three, at different call sites, so it is left out of the comparison. */
__attribute__((noinline)) static void
check(struct hop *h)
{
  uintptr_t ref[MAXF], got[MAXF], full[MAXF];
  int max = h->max, n = 0;
  int nref = unw_backtrace((void **)ref, max);
  bool complete = cmg__unwind_fp(got, max, &n);
  int nfull = cmg__unwind(full, max);
  struct tally *t = h->t;

  atomic_fetch_add(&t->checks, 1);
  atomic_fetch_add(&t->proven_frames, (unsigned)n);
  atomic_fetch_add(complete ? &t->complete : &t->handed_over, 1);
  if (n > nref || !same(got, ref, n) || (complete && n != nref))
    atomic_fetch_add(&t->wrong, 1);
  if (nfull != nref || !same(full, ref, nref))
    atomic_fetch_add(&t->full_wrong, 1);
  if (h->naive) {
    cmg__unwind_configure(CMG__STACK_MODE_FP);
    int nn = 0;
    cmg__unwind_fp(got, max, &nn);
    cmg__unwind_configure(CMG__STACK_MODE_AUTO);
    if (nn < 2 || nref < 2 || !same(got, ref, nn < nref ? nn : nref))
      atomic_fetch_add(&t->naive_differs, 1);
  }
}

typedef int (*level_fn)(struct hop *);
static const level_fn levels[CHAIN];
static int middle(struct hop *h);

static int
next(struct hop *h, int i)
{
  h->left--;
  if (h->frameless && h->left == CHAIN / 2)
    return middle(h);
  return levels[(i + 1) % CHAIN](h);
}

#define LEVEL(i)                                                             \
  __attribute__((noipa)) static int level_##i(struct hop *h)                 \
  {                                                                          \
    int r = i;                                                               \
    if (h->left == 0)                                                        \
      h->leaf(h);                                                            \
    else                                                                     \
      r += next(h, i);                                                       \
    __asm__ volatile("" : "+r"(r) : : "memory");                             \
    return r;                                                                \
  }

LEVEL(0) LEVEL(1) LEVEL(2) LEVEL(3) LEVEL(4) LEVEL(5) LEVEL(6) LEVEL(7)
LEVEL(8) LEVEL(9) LEVEL(10) LEVEL(11) LEVEL(12) LEVEL(13) LEVEL(14)
LEVEL(15) LEVEL(16) LEVEL(17) LEVEL(18) LEVEL(19) LEVEL(20) LEVEL(21)
LEVEL(22) LEVEL(23) LEVEL(24) LEVEL(25) LEVEL(26) LEVEL(27) LEVEL(28)
LEVEL(29)

static const level_fn levels[CHAIN] = {
  level_0, level_1, level_2, level_3, level_4, level_5, level_6, level_7,
  level_8, level_9, level_10, level_11, level_12, level_13, level_14,
  level_15, level_16, level_17, level_18, level_19, level_20, level_21,
  level_22, level_23, level_24, level_25, level_26, level_27, level_28,
  level_29,
};

/* A function without a frame pointer between frame-pointer ones: it leaves
 * its caller's rbp in place, so a naive walk skips its caller.  The work
 * after the call keeps it from being a tail call, and the array from being
 * a leaf that needs no stack. */
__attribute__((noipa, optimize("omit-frame-pointer"))) static int
middle(struct hop *h)
{
  volatile int pad[4] = { 1, 2, 3, 4 };
  int r = levels[3](h);
  return r + pad[(unsigned)r % 4];
}

static void
run(struct hop h, unsigned depth)
{
  h.left = depth;
  int r = levels[0](&h);
  __asm__ volatile("" : : "r"(r) : "memory");
}

/* ---- scenarios -------------------------------------------------------- */

static void
report(const char *what, struct tally *t, bool expect_fast)
{
  unsigned checks = atomic_load(&t->checks);
  ok(checks > 0, "%s: %u checks ran", what, checks);
  is_int(atomic_load(&t->wrong), 0, "%s: the walk never gave a wrong frame",
         what);
  is_int(atomic_load(&t->full_wrong), 0,
         "%s: capture's unwind is unw_backtrace's", what);
  printf("# %s: %u complete, %u handed over, %u frames proven\n", what,
         atomic_load(&t->complete), atomic_load(&t->handed_over),
         atomic_load(&t->proven_frames));
  if (expect_fast)
    ok(atomic_load(&t->complete) > 0, "%s: the fast walk finished alone",
       what);
}

static void
test_chains(void)
{
  static const int maxes[] = { 4, 8, 24, 64, MAXF };
  struct tally plain = { 0 }, mixed = { 0 };
  for (size_t i = 0; i < sizeof(maxes) / sizeof(*maxes); i++) {
    run((struct hop){ .max = maxes[i], .leaf = check, .t = &plain }, 25);
    run((struct hop){ .max = maxes[i], .leaf = check, .t = &mixed,
                      .frameless = true, .naive = true }, 25);
  }
  report("chain", &plain, true);
  report("chain with a frameless function", &mixed, true);
#ifdef UNWIND_EXPECT_SKIP
  ok(atomic_load(&mixed.naive_differs) > 0,
     "a naive walk gets the frameless chain wrong (%u of %u)",
     atomic_load(&mixed.naive_differs), atomic_load(&mixed.checks));
#endif
}

static struct tally in_handler;

static void
handler(int sig)
{
  run((struct hop){ .max = MAXF, .leaf = check, .t = &in_handler }, 6);
  run((struct hop){ .max = 12, .leaf = check, .t = &in_handler }, 6);
}

static void
raise_it(struct hop *h)
{
  raise(SIGUSR1);
}

static void
test_signals(void)
{
  struct sigaction sa = { .sa_handler = handler };
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  run((struct hop){ .leaf = raise_it }, 10);

  static char alt[1 << 16];
  stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
  sigaltstack(&ss, NULL);
  sa.sa_flags = SA_ONSTACK;
  sigaction(SIGUSR1, &sa, NULL);
  run((struct hop){ .leaf = raise_it }, 10);
  signal(SIGUSR1, SIG_DFL);
  report("signal handler", &in_handler, false);
  ok(atomic_load(&in_handler.handed_over) > 0,
     "signal handler: the walk hands the signal frame over to libunwind");
}

/* libffi's ffi_call_unix64 in small: a frame kept at rbp + 32 (CFA = rbp
 * + 32, rbp saved at CFA - 16), which every ctypes and cffi call passes
 * through.  Calls fn(h). */
__asm__(".text\n"
        ".p2align 4\n"
        ".type rbp32_call, @function\n"
        "rbp32_call:\n"
        ".cfi_startproc\n"
        "  pushq %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "  subq $16, %rsp\n"
        ".cfi_def_cfa_offset 32\n"
        "  movq %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "  movq %rdi, %rax\n"
        "  movq %rsi, %rdi\n"
        "  callq *%rax\n"
        "  leaq 16(%rbp), %rsp\n"
        ".cfi_def_cfa %rsp, 16\n"
        "  popq %rbp\n"
        ".cfi_def_cfa_offset 8\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size rbp32_call, .-rbp32_call\n");
void rbp32_call(void (*fn)(struct hop *), struct hop *h);

static struct tally through_ffi;

static void
below_ffi(struct hop *h)
{
  h->left = 4;
  h->leaf = check;
  int r = levels[0](h);
  __asm__ volatile("" : : "r"(r) : "memory");
}

static void
call_ffi(struct hop *h)
{
  rbp32_call(below_ffi, h);
}

static void
test_ffi(void)
{
  static const int maxes[] = { 4, 8, MAXF };
  for (size_t i = 0; i < sizeof(maxes) / sizeof(*maxes); i++)
    run((struct hop){ .max = maxes[i], .leaf = call_ffi, .t = &through_ffi },
        6);
  report("a frame kept at rbp + 32, as libffi's", &through_ffi, true);
  is_int(atomic_load(&through_ffi.handed_over), 0,
         "a frame kept at rbp + 32: the walk steps it itself");
}

static struct tally in_qsort;

static int
compare(const void *a, const void *b)
{
  run((struct hop){ .max = MAXF, .leaf = check, .t = &in_qsort }, 3);
  return *(const int *)a - *(const int *)b;
}

static void
test_qsort(void)
{
  int v[] = { 3, 1, 2 };
  qsort(v, 3, sizeof(*v), compare);
  report("libc's qsort calling back", &in_qsort, false);
}

/* ---- the memo of the outer part ------------------------------------- */

static struct tally again, two_callers, three_depths;

/* Alike in all but their return addresses: a chain called from one, then
 * from the other, stands at the same stack pointers with the same frames
 * inside, and differs in one word outward, which the memo must notice. */
#define CALLER(name)                                                         \
  __attribute__((noipa)) static void name(struct hop *h, unsigned depth)     \
  {                                                                          \
    run(*h, depth);                                                          \
    __asm__ volatile("" : : : "memory");                                     \
  }
CALLER(caller_a)
CALLER(caller_b)

static void
test_memo(void)
{
  uint64_t before = cmg__memo_recalls();
  for (int i = 0; i < 20; i++)
    run((struct hop){ .max = MAXF, .leaf = check, .t = &again,
                      .frameless = i >= 10 },
        20);
  report("the same chain again", &again, true);
  ok(cmg__memo_recalls() > before, "walks recalled their outer part (%llu)",
     (unsigned long long)(cmg__memo_recalls() - before));
  /* a, b, b, a, a, ...: each change of caller recalls part of the memo and
   * walks on; the next call, from the same caller, recalls all of what
   * that made. */
  before = cmg__memo_recalls();
  for (int i = 0; i < 24; i++)
    ((i + 1) >> 1 & 1 ? caller_b : caller_a)(
        &(struct hop){ .max = MAXF, .leaf = check, .t = &two_callers }, 20);
  report("one chain from two callers in turn", &two_callers, true);
  ok(cmg__memo_recalls() > before,
     "and the same caller again recalled what the change had made");
  for (int i = 0; i < 30; i++)
    run((struct hop){ .max = i % 2 ? MAXF : 40, .leaf = check,
                      .t = &three_depths, .frameless = i % 4 == 1 },
        10 + (unsigned)i % 3 * 5);
  report("chains of three depths in turn", &three_depths, true);
}

static struct tally threaded;
static struct tally threaded;

static void *
thread_main(void *arg)
{
  uintptr_t seed = (uintptr_t)arg;
  for (int i = 0; i < ROUNDS; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    run((struct hop){ .max = 2 + (int)(seed >> 33) % (MAXF - 2),
                      .leaf = check, .t = &threaded,
                      .frameless = (seed >> 20) & 1 },
        (unsigned)(seed >> 40) % CHAIN);
  }
  return NULL;
}

static void
test_threads(void)
{
  pthread_t th[THREADS];
  for (uintptr_t i = 0; i < THREADS; i++)
    pthread_create(&th[i], NULL, thread_main, (void *)(i + 1));
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  report("threads", &threaded, true);
  unsigned v[4];
  cmg__unwind_counts(v);
  printf("# return addresses: %u frame-pointer steps, %u stack-pointer "
         "steps, %u ends, %u left to libunwind\n", v[1], v[2], v[3], v[0]);
  ok(v[0] + v[1] + v[2] + v[3] > 0, "verdicts were kept");
}

int
main(void)
{
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  cmg__unwind_configure(CMG__STACK_MODE_AUTO);
  test_chains();
  test_signals();
  test_qsort();
  test_ffi();
  test_memo();
  test_threads();
  return done_testing();
}
