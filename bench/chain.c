/*
 * libcmgbchain.so: the native part of the framework-shaped row
 * (framework.c).  A framework's allocation from Python passes through some
 * 40 to 60 frames of its own native code (dispatch, the allocator's
 * layers), built without frame pointers as wheels are, under the Python
 * frames.  This library is such a path: the Python driver calls
 * cmgb_chain_run through ctypes, which descends CHAIN_LEVELS distinct
 * functions and runs the timed loop at the bottom, calling the runtime's
 * cudaMalloc and cudaFree through the pointers Python passed in (the
 * interposer's, when it is preloaded: ctypes looks them up with dlsym).
 *
 * Even levels are built here, with frame pointers; odd levels in
 * chain_nofp.c, the same text without them.  So the walk meets both kinds
 * of step in turn, as it does where one library built with frame pointers
 * calls into another built without.  Every level is noipa and uses the
 * result of its call after it, so none is inlined, merged with another or
 * turned into a jump: each is a frame of its own.
 *
 * It links nothing but libc, and takes no lock: the loop is the program's.
 */
#include "config.h"

#include <execinfo.h>
#include <stddef.h>
#include <time.h>

#include "cmgbench.h"

#define CHAIN_LEVELS 50
#define BLOCKS 7

typedef int (*rt_alloc_fn)(void **, size_t);
typedef int (*rt_free_fn)(void *);

struct descent {
  rt_alloc_fn alloc;
  rt_free_fn release;
  long n;
  double ns;  /* the best block's ns per pair; negative when a call failed */
  int frames; /* frames on the stack at the bottom, by backtrace(3) */
};

typedef int (*chain_level)(struct descent *);

/* The table each level calls the next through, in chain.c; hidden, like
 * every level, so only the entry point is exported. */
extern const chain_level cmgb_chain_levels[CHAIN_LEVELS + 1];

/* clang-format off */
#define CHAIN_EVEN(X)                                                        \
  X(0) X(2) X(4) X(6) X(8) X(10) X(12) X(14) X(16) X(18) X(20) X(22) X(24)   \
  X(26) X(28) X(30) X(32) X(34) X(36) X(38) X(40) X(42) X(44) X(46) X(48)
#define CHAIN_ODD(X)                                                         \
  X(1) X(3) X(5) X(7) X(9) X(11) X(13) X(15) X(17) X(19) X(21) X(23) X(25)   \
  X(27) X(29) X(31) X(33) X(35) X(37) X(39) X(41) X(43) X(45) X(47) X(49)
/* clang-format on */

#define DECLARE(i) int cmgb_chain_level_##i(struct descent *d);
CHAIN_EVEN(DECLARE)
CHAIN_ODD(DECLARE)

/* The constant keeps the bodies different, so none is folded into
 * another. */
#define LEVEL(i)                                                               \
  __attribute__((noipa)) int cmgb_chain_level_##i(struct descent *d)           \
  {                                                                            \
    int r = (i) + cmgb_chain_levels[(i) + 1](d);                               \
    __asm__ volatile("" : "+r"(r) : : "memory");                               \
    return r;                                                                  \
  }

#ifdef CMGB_CHAIN_NOFP
CHAIN_ODD(LEVEL)
#else
CHAIN_EVEN(LEVEL)

static double
now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The bottom: the frames counted once, before the clock starts (the first
 * backtrace loads libgcc's unwinder), then the best of BLOCKS blocks.
 * scripts/bench-instructions counts within this function, by its name. */
__attribute__((noipa)) static int
bottom(struct descent *d)
{
  void *pcs[512];
  d->frames = backtrace(pcs, 512);
  d->ns = -1;
  for (int b = 0; b < BLOCKS; b++) {
    double t0 = now_ns();
    for (long i = 0; i < d->n; i++) {
      void *p = NULL;
      if (d->alloc(&p, 4096) != 0 || d->release(p) != 0) {
        d->ns = -1;
        return -1;
      }
    }
    double ns = (now_ns() - t0) / (double)d->n;
    if (d->ns < 0 || ns < d->ns)
      d->ns = ns;
  }
  return 0;
}

#define NAME(i) cmgb_chain_level_##i,
/* clang-format off */
const chain_level cmgb_chain_levels[CHAIN_LEVELS + 1] = {
  NAME(0) NAME(1) NAME(2) NAME(3) NAME(4) NAME(5) NAME(6) NAME(7) NAME(8)
  NAME(9) NAME(10) NAME(11) NAME(12) NAME(13) NAME(14) NAME(15) NAME(16)
  NAME(17) NAME(18) NAME(19) NAME(20) NAME(21) NAME(22) NAME(23) NAME(24)
  NAME(25) NAME(26) NAME(27) NAME(28) NAME(29) NAME(30) NAME(31) NAME(32)
  NAME(33) NAME(34) NAME(35) NAME(36) NAME(37) NAME(38) NAME(39) NAME(40)
  NAME(41) NAME(42) NAME(43) NAME(44) NAME(45) NAME(46) NAME(47) NAME(48)
  NAME(49) bottom,
};
/* clang-format on */

__attribute__((visibility("default"))) double
cmgb_chain_run(void *alloc, void *release, long n, int *frames)
{
  struct descent d = { (rt_alloc_fn)alloc, (rt_free_fn)release, n, -1, 0 };
  if (alloc == NULL || release == NULL || n < 1)
    return -1;
  int r = cmgb_chain_levels[0](&d);
  __asm__ volatile("" : : "r"(r) : "memory");
  if (frames != NULL)
    *frames = d.frames;
  return d.ns;
}
#endif
