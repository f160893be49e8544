/*
 * Real frames for the unwinder to walk.  A stack-capturing interposer costs
 * in proportion to the frames it walks, so the timed calls are made from
 * CMGB_CALL_DEPTH frames of distinct functions (each its own code and
 * unwind entry, as in a real program), not from the top of main.
 *
 * Every function here is noipa (never inlined, cloned or merged with an
 * identical body) and ends with an empty asm that uses the result of its
 * call, so no call becomes a tail call: each one is a frame of its own.
 */
#include "config.h"

#include <cuda.h>

#include "cmgbench.h"

struct hop {
  unsigned left;   /* frames still to add below this one */
  unsigned which;  /* cmgb_at_tree: the choices still to make */
  cmgb_fn fn;
  void *arg;
};

typedef int (*level_fn)(struct hop *);
static const level_fn levels[CMGB_MAX_DEPTH];

/* A level calls the next one through the table, so the macro stays the same
 * for every level; the constant keeps the bodies different. */
#define LEVEL(i)                                                             \
  __attribute__((noipa)) static int level_##i(struct hop *h)                 \
  {                                                                          \
    int r = i;                                                               \
    if (h->left == 0)                                                        \
      h->fn(h->arg);                                                         \
    else {                                                                   \
      h->left--;                                                             \
      r += levels[((i) + 1) % CMGB_MAX_DEPTH](h);                            \
    }                                                                        \
    __asm__ volatile("" : "+r"(r) : : "memory");                             \
    return r;                                                                \
  }

LEVEL(0) LEVEL(1) LEVEL(2) LEVEL(3) LEVEL(4) LEVEL(5) LEVEL(6) LEVEL(7)
LEVEL(8) LEVEL(9) LEVEL(10) LEVEL(11) LEVEL(12) LEVEL(13) LEVEL(14) LEVEL(15)
LEVEL(16) LEVEL(17) LEVEL(18) LEVEL(19) LEVEL(20) LEVEL(21) LEVEL(22)
LEVEL(23) LEVEL(24) LEVEL(25) LEVEL(26) LEVEL(27) LEVEL(28) LEVEL(29)
LEVEL(30) LEVEL(31) LEVEL(32) LEVEL(33) LEVEL(34) LEVEL(35) LEVEL(36)
LEVEL(37) LEVEL(38) LEVEL(39) LEVEL(40) LEVEL(41) LEVEL(42) LEVEL(43)
LEVEL(44) LEVEL(45) LEVEL(46) LEVEL(47)

static const level_fn levels[CMGB_MAX_DEPTH] = {
  level_0, level_1, level_2, level_3, level_4, level_5, level_6, level_7,
  level_8, level_9, level_10, level_11, level_12, level_13, level_14,
  level_15, level_16, level_17, level_18, level_19, level_20, level_21,
  level_22, level_23, level_24, level_25, level_26, level_27, level_28,
  level_29, level_30, level_31, level_32, level_33, level_34, level_35,
  level_36, level_37, level_38, level_39, level_40, level_41, level_42,
  level_43, level_44, level_45, level_46, level_47,
};

void
cmgb_at_depth(unsigned depth, cmgb_fn fn, void *arg)
{
  if (depth == 0) {
    fn(arg);
    return;
  }
  if (depth > CMGB_MAX_DEPTH)
    depth = CMGB_MAX_DEPTH;
  struct hop h = { .left = depth - 1, .fn = fn, .arg = arg };
  int r = levels[0](&h);
  __asm__ volatile("" : : "r"(r) : "memory");
}

/* Two functions, one call site each: a frame's return address says which
 * of the two it is, so the sequence of choices is the stack. */
__attribute__((noipa)) static int tree_a(struct hop *h);
__attribute__((noipa)) static int tree_b(struct hop *h);

static int
step(struct hop *h)
{
  level_fn next = (h->which & 1) ? tree_b : tree_a;
  h->which >>= 1;
  h->left--;
  return next(h);
}

__attribute__((noipa)) static int
tree_a(struct hop *h)
{
  int r = 1;
  if (h->left == 0)
    h->fn(h->arg);
  else
    r += step(h);
  __asm__ volatile("" : "+r"(r) : : "memory");
  return r;
}

__attribute__((noipa)) static int
tree_b(struct hop *h)
{
  int r = 2;
  if (h->left == 0)
    h->fn(h->arg);
  else
    r += step(h);
  __asm__ volatile("" : "+r"(r) : : "memory");
  return r;
}

void
cmgb_at_tree(unsigned which, cmgb_fn fn, void *arg)
{
  struct hop h = { .left = CMGB_TREE_LEVELS, .which = which, .fn = fn,
                   .arg = arg };
  int r = tree_a(&h);
  __asm__ volatile("" : : "r"(r) : "memory");
}

/* The floor.  Called through pointers, like the driver's functions. */
__attribute__((noipa)) int
cmgb_empty_alloc(unsigned long long *dptr, size_t bytes)
{
  *dptr = 0x7f0000000000ull;
  return 0;
}

__attribute__((noipa)) int
cmgb_empty_free(unsigned long long dptr)
{
  return 0;
}
