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
  unsigned left;  /* frames still to add below this one */
  unsigned which; /* cmgb_at_tree: the choices still to make */
  cmgb_fn fn;
  void *arg;
};

typedef int (*level_fn)(struct hop *);
static const level_fn levels[CMGB_MAX_DEPTH];

/* A level calls the next one through the table, so the macro stays the same
 * for every level; the constant keeps the bodies different. */
#define LEVEL(i)                                                               \
  __attribute__((noipa)) static int level_##i(struct hop *h)                   \
  {                                                                            \
    int r = i;                                                                 \
    if (h->left == 0)                                                          \
      h->fn(h->arg);                                                           \
    else {                                                                     \
      h->left--;                                                               \
      r += levels[((i) + 1) % CMGB_MAX_DEPTH](h);                              \
    }                                                                          \
    __asm__ volatile("" : "+r"(r) : : "memory");                               \
    return r;                                                                  \
  }

/* clang-format off */
#define LEVELS(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) \
  X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) \
  X(26) X(27) X(28) X(29) X(30) X(31) X(32) X(33) X(34) X(35) X(36) X(37) \
  X(38) X(39) X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47) X(48) X(49) \
  X(50) X(51) X(52) X(53) X(54) X(55) X(56) X(57) X(58) X(59) X(60) X(61) \
  X(62) X(63) X(64) X(65) X(66) X(67) X(68) X(69) X(70) X(71) X(72) X(73) \
  X(74) X(75) X(76) X(77) X(78) X(79) X(80) X(81) X(82) X(83) X(84) X(85) \
  X(86) X(87) X(88) X(89) X(90) X(91) X(92) X(93) X(94) X(95) X(96) X(97) \
  X(98) X(99) X(100) X(101) X(102) X(103) X(104) X(105) X(106) X(107) \
  X(108) X(109) X(110) X(111) X(112) X(113) X(114) X(115) X(116) X(117) \
  X(118) X(119) X(120) X(121) X(122) X(123) X(124) X(125) X(126) X(127) \
  X(128) X(129) X(130) X(131) X(132) X(133) X(134) X(135) X(136) X(137) \
  X(138) X(139) X(140) X(141) X(142) X(143) X(144) X(145) X(146) X(147) \
  X(148) X(149) X(150) X(151) X(152) X(153) X(154) X(155) X(156) X(157) \
  X(158) X(159) X(160) X(161) X(162) X(163) X(164) X(165) X(166) X(167) \
  X(168) X(169) X(170) X(171) X(172) X(173) X(174) X(175) X(176) X(177) \
  X(178) X(179) X(180) X(181) X(182) X(183) X(184) X(185) X(186) X(187) \
  X(188) X(189) X(190) X(191) X(192) X(193) X(194) X(195) X(196) X(197) \
  X(198) X(199) X(200) X(201) X(202) X(203) X(204) X(205) X(206) X(207) \
  X(208) X(209) X(210) X(211) X(212) X(213) X(214) X(215) X(216) X(217) \
  X(218) X(219) X(220) X(221) X(222) X(223) X(224) X(225) X(226) X(227) \
  X(228) X(229) X(230) X(231) X(232) X(233) X(234) X(235) X(236) X(237) \
  X(238) X(239) X(240) X(241) X(242) X(243) X(244) X(245) X(246) X(247) \
  X(248) X(249) X(250) X(251) X(252) X(253) X(254) X(255)
/* clang-format on */

LEVELS(LEVEL)

#define NAME(i) level_##i,
static const level_fn levels[CMGB_MAX_DEPTH] = { LEVELS(NAME) };

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
  struct hop h = {
    .left = CMGB_TREE_LEVELS, .which = which, .fn = fn, .arg = arg
  };
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
