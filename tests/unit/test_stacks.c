/*
 * Stacks called directly: interning (identity, dense ids, growth, two
 * threads racing on the same stacks), per-device accounts and their reset,
 * capture of the test's own frames (depth, truncation, the same site twice)
 * and symbolization of the test program, libc and an unmapped address.
 *
 * The program is linked with -rdynamic and the functions it symbolizes are
 * given default visibility, so that dladdr can name them.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "core/base.h"
#include "core/conf.h"
#include "runtime/stacks/stacks.h"
#include "runtime/stacks/stack_words.h"
#include "runtime/stacks/symbols.h"
#include "../tap.h"

#define GROWTH 100000
#define RACED 10000
#define RECURSION 20

static void
test_intern(void)
{
  uintptr_t a[] = { 0x401000, 0x402000, 0x403000 };
  uintptr_t b[] = { 0x401000, 0x402000, 0x403008 };
  is_int(cmg__stacks_count(), 0, "no stacks yet");
  is_int(cmg__stacks_intern(a, 3, false), 1, "first id is 1");
  is_int(cmg__stacks_intern(a, 3, false), 1, "same frames, same id");
  is_int(cmg__stacks_intern(a, 3, true), 2, "truncated is another stack");
  is_int(cmg__stacks_intern(b, 3, false), 3, "other frames, next id");
  is_int(cmg__stacks_intern(a, 2, false), 4, "a prefix is another stack");
  is_int(cmg__stacks_intern(b, 3, false), 3, "known again");
  is_int(cmg__stacks_intern(a, 0, false), CMG__STACK_NONE, "empty refused");
  is_int(cmg__stacks_count(), 4, "four stacks");

  struct cmg__stack_view v;
  is_int(cmg__stacks_get(2, &v), 0, "get");
  is_int(v.id, 2, "id");
  is_int(v.depth, 3, "depth");
  ok(v.truncated, "truncated kept");
  ok(memcmp(v.ips, a, sizeof(a)) == 0, "frames kept");
  is_int(cmg__stacks_get(0, &v), -ENOENT, "id 0 unknown");
  is_int(cmg__stacks_get(5, &v), -ENOENT, "id past the count unknown");

  static uintptr_t deep[CMG__STACK_DEPTH_MAX + 4];
  for (int i = 0; i < CMG__STACK_DEPTH_MAX + 4; i++)
    deep[i] = 0x500000 + (uintptr_t)i;
  uint32_t id = cmg__stacks_intern(deep, CMG__STACK_DEPTH_MAX + 4, false);
  is_int(cmg__stacks_get(id, &v), 0, "over-deep stack kept");
  /* stack_depth native frames, and room for a native and a Python cut. */
  is_int(v.depth, CMG__STACK_DEPTH_MAX + 2, "cut to the maximum");
  ok(v.truncated, "and marked truncated");
}

static void
test_accounts(void)
{
  struct cmg__stack_view v;
  cmg__stacks_account(1, 0, 1000, 1);
  cmg__stacks_account(1, 0, 500, 1);
  cmg__stacks_account(1, 3, 77, 1);
  cmg__stacks_account(1, 0, -1000, -1);
  cmg__stacks_account(1, CMG__STACK_DEVICES, 5, 1);
  cmg__stacks_account(1, -1, 5, 1);
  cmg__stacks_account(0, 0, 5, 1);
  cmg__stacks_account(100000000, 0, 5, 1);
  cmg__stacks_account(3, 7, 9, 2);
  is_int(cmg__stacks_get(1, &v), 0, "get");
  is_u64(v.live_bytes[0], 500, "device 0 bytes after a removal");
  is_u64(v.live_count[0], 1, "device 0 count after a removal");
  is_u64(v.live_bytes[3], 77, "device 3 bytes");
  is_u64(v.live_count[3], 1, "device 3 count");
  uint64_t others = 0;
  for (int d = 0; d < CMG__STACK_DEVICES; d++)
    if (d != 0 && d != 3)
      others += v.live_bytes[d] + v.live_count[d];
  is_u64(others, 0, "other devices untouched");
  is_int(cmg__stacks_get(3, &v), 0, "get another");
  is_u64(v.live_bytes[7], 9, "last device kept");
  is_u64(v.live_count[7], 2, "last device count kept");

  cmg__stacks_reset_accounts();
  is_int(cmg__stacks_get(1, &v), 0, "still interned after reset");
  is_u64(v.live_bytes[0] + v.live_count[0] + v.live_bytes[3], 0, "zeroed");
  is_int(cmg__stacks_get(3, &v), 0, "get another");
  is_u64(v.live_bytes[7] + v.live_count[7], 0, "zeroed too");
  uintptr_t a[] = { 0x401000, 0x402000, 0x403000 };
  is_int(cmg__stacks_intern(a, 3, false), 1, "same id after reset");
}

static void
frames_of(uintptr_t i, uintptr_t tag, uintptr_t *ips, unsigned *depth)
{
  *depth = 1 + (unsigned)(i % 6);
  for (unsigned k = 0; k < *depth; k++)
    ips[k] = tag + i * 64 + k;
}

static void
test_growth(void)
{
  uint32_t base = cmg__stacks_count();
  uintptr_t ips[8];
  unsigned depth;
  int dense = 1, again = 1, kept = 1;
  for (uintptr_t i = 0; i < GROWTH; i++) {
    frames_of(i, 0x10000000, ips, &depth);
    dense &= cmg__stacks_intern(ips, depth, false) == base + i + 1;
  }
  ok(dense, "%d new stacks get dense ids", GROWTH);
  is_int(cmg__stacks_count(), base + GROWTH, "count");
  for (uintptr_t i = 0; i < GROWTH; i++) {
    frames_of(i, 0x10000000, ips, &depth);
    again &= cmg__stacks_intern(ips, depth, false) == base + i + 1;
    struct cmg__stack_view v;
    kept &= cmg__stacks_get(base + (uint32_t)i + 1, &v) == 0 &&
            v.depth == depth && !v.truncated &&
            memcmp(v.ips, ips, depth * sizeof(*ips)) == 0;
  }
  ok(again, "the same ids after growth");
  ok(kept, "every record retrievable");
}

struct racer {
  pthread_barrier_t *start;
  uint32_t ids[RACED];
};

static void *
race(void *arg)
{
  struct racer *r = arg;
  uintptr_t ips[8];
  unsigned depth;
  pthread_barrier_wait(r->start);
  for (uintptr_t i = 0; i < RACED; i++) {
    frames_of(i, 0x20000000, ips, &depth);
    r->ids[i] = cmg__stacks_intern(ips, depth, i & 1);
  }
  return NULL;
}

static void
test_threads(void)
{
  static struct racer r[2];
  static bool seen[RACED];
  pthread_barrier_t start;
  pthread_t t[2];
  uint32_t base = cmg__stacks_count();
  pthread_barrier_init(&start, NULL, 2);
  for (int k = 0; k < 2; k++) {
    r[k].start = &start;
    pthread_create(&t[k], NULL, race, &r[k]);
  }
  for (int k = 0; k < 2; k++)
    pthread_join(t[k], NULL);
  pthread_barrier_destroy(&start);
  ok(memcmp(r[0].ids, r[1].ids, sizeof(r[0].ids)) == 0,
     "two threads get the same ids");
  is_int(cmg__stacks_count(), base + RACED, "no duplicates");
  int distinct = 1;
  for (int i = 0; i < RACED; i++) {
    uint32_t k = r[0].ids[i] - base - 1;
    distinct &= k < RACED && !seen[k];
    if (k < RACED)
      seen[k] = true;
  }
  ok(distinct, "each stack its own id");
}

CMG__EXPORT __attribute__((noinline)) uint32_t
test_recurse(int n)
{
  if (n <= 1)
    return cmg__stacks_capture();
  uint32_t id = test_recurse(n - 1);
  /* Work after the call keeps it from becoming a tail call. */
  __asm__ volatile("" : "+r"(id));
  return id;
}

CMG__EXPORT __attribute__((noinline)) uint32_t
shallow_capture(void)
{
  uint32_t id = cmg__stacks_capture();
  __asm__ volatile("" : "+r"(id));
  return id;
}

static bool
is_hex(const char *s, size_t len)
{
  return strlen(s) == len && strspn(s, "0123456789abcdef") == len;
}

static void
test_capture(void)
{
  struct cmg__stack_view v;
  struct cmg__symbol s;

  cmg__stacks_configure(0);
  is_int(shallow_capture(), CMG__STACK_NONE, "depth 0: no capture");

  cmg__stacks_configure(CMG__STACK_DEPTH_MAX);
  struct cmg__stack_view whole;
  is_int(cmg__stacks_get(test_recurse(RECURSION), &whole), 0, "a whole stack");
  ok(!whole.truncated && whole.depth > RECURSION + 2,
     "the whole recursion and what called it (%u frames)", whole.depth);

  cmg__stacks_configure(8);
  uint32_t id = test_recurse(RECURSION);
  ok(id != CMG__STACK_NONE, "captured a deep stack");
  is_int(cmg__stacks_get(id, &v), 0, "get");
  is_int(v.depth, 9, "depth 8: eight frames and a cut");
  ok(v.truncated, "marked truncated");
  int in_recursion = 1;
  for (unsigned i = 0; i < 6; i++)
    in_recursion &= cmg__symbolize(v.ips[i], &s) == 0 &&
                    strcmp(s.function, "test_recurse") == 0 &&
                    v.ips[i] == whole.ips[i];
  ok(in_recursion, "the six innermost: the recursion, none of capture's");
  ok(cmg__is_cut(v.ips[6]) && !cmg__cut_is_python(v.ips[6]),
     "then a cut of native frames");
  is_int(cmg__cut_frames(v.ips[6]), whole.depth - 8,
         "that counts the frames left out");
  ok(v.ips[7] == whole.ips[whole.depth - 2] &&
         v.ips[8] == whole.ips[whole.depth - 1],
     "then the two outermost frames");
  is_int(test_recurse(RECURSION), id, "same stack, same id");

  cmg__stacks_configure(64);
  /* A trip count the compiler cannot see keeps the loop from being
   * unrolled into two call sites. */
  uint32_t ids[2];
  volatile int two = 2;
  for (int i = 0; i < two; i++)
    ids[i] = shallow_capture();
  ok(ids[0] != CMG__STACK_NONE, "captured a shallow stack");
  is_int(ids[1], ids[0], "the same call site twice, the same id");
  is_int(cmg__stacks_get(ids[0], &v), 0, "get");
  ok(!v.truncated, "not truncated");
  ok(v.depth >= 3, "caller, test_capture and main at least (%u)", v.depth);
  uintptr_t fn = (uintptr_t)&shallow_capture;
  ok(v.ips[0] > fn && v.ips[0] < fn + 4096,
     "innermost frame is the caller of capture");

  /* The innermost frame, as a report would see it. */
  char exe[PATH_MAX];
  ok(realpath("/proc/self/exe", exe) != NULL, "realpath of the program");
  is_int(cmg__symbolize(v.ips[0], &s), 0, "symbolize the test program");
  is_str(s.function, "shallow_capture", "function name");
  is_u64(s.function_offset, v.ips[0] - fn, "function offset");
  ok(s.function_offset > 0, "offset past the entry");
  is_str(s.module, exe, "module is the program's real path");
  is_u64(s.offset, v.ips[0] - s.module_base, "module offset");
  ok(is_hex(s.build_id, 40), "40 hex digits of build-id (%s)", s.build_id);

  int in_libc = 0;
  for (unsigned i = 0; i < v.depth && !in_libc; i++)
    in_libc = cmg__symbolize(v.ips[i], &s) == 0 &&
              strstr(s.module, "libc.so") != NULL;
  ok(in_libc, "a frame in libc (%s)", s.module);
  ok(s.build_id[0] != '\0' && is_hex(s.build_id, strlen(s.build_id)),
     "libc has a build-id (%s)", s.build_id);

  is_int(cmg__symbolize(0x10, &s), -ENOENT, "unmapped address");
  is_int(cmg__symbolize(0, &s), -ENOENT, "null address");
  char *anon = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (anon != MAP_FAILED) {
    is_int(cmg__symbolize((uintptr_t)anon + 16, &s), -ENOENT,
           "anonymous memory holds no object");
    munmap(anon, 4096);
  }
}

int
main(void)
{
  test_intern();
  test_accounts();
  test_growth();
  test_threads();
  test_capture();
  return done_testing();
}
