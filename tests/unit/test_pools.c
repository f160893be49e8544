/*
 * Unit tests of pools.c, the frameworks' switches that turn their memory
 * pools off under no_pools=1.  What matters to users: a value they set is
 * never changed, every switch cumemguard sets is named in
 * CUMEMGUARD_POOLS_SET (so that a child, or the library after the
 * launcher, tells ours from theirs), the list names each once however
 * often it is applied and is matched by whole names only, a list that is
 * not ours and too long is replaced rather than cut, and the report's
 * record of each switch (set, by whom, its value cut to fit) matches the
 * environment.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/pools.h"
#include "../tap.h"

#define TORCH "PYTORCH_NO_CUDA_MEMORY_CACHING"
#define TF "TF_GPU_ALLOCATOR"
#define XLA_ALLOC "XLA_PYTHON_CLIENT_ALLOCATOR"
#define XLA_PRE "XLA_PYTHON_CLIENT_PREALLOCATE"
#define ALL TORCH "," TF "," XLA_ALLOC "," XLA_PRE
#define OTHER "CMG_TEST_POOLS_OTHER"

/* No switch and no list, as for a process started by a user who set
 * nothing. */
static void
clean(void)
{
  for (size_t i = 0; i < CMG__POOLS_N; i++)
    unsetenv(cmg__pools_switches[i].name);
  unsetenv(CMG__POOLS_SET_VAR);
  unsetenv(OTHER);
}

static const char *
set_list(void)
{
  const char *v = getenv(CMG__POOLS_SET_VAR);
  return v ? v : "(unset)";
}

static void
test_table(void)
{
  static const char *const names[] = { TORCH, TF, XLA_ALLOC, XLA_PRE };
  static const char *const values[] = { "1", "cuda_malloc", "platform",
                                        "false" };
  is_str(CMG__POOLS_SET_VAR, "CUMEMGUARD_POOLS_SET", "the list's variable");
  is_int(CMG__POOLS_N, 4, "four switches");
  for (size_t i = 0; i < CMG__POOLS_N; i++) {
    is_str(cmg__pools_switches[i].name, names[i], "switch %zu's name", i);
    is_str(cmg__pools_switches[i].value, values[i], "and its value");
  }
}

static void
test_setenv(void)
{
  clean();
  is_int(cmg__pools_setenv(TF, "cuda_malloc"), 0, "an unset switch: set");
  is_str(getenv(TF), "cuda_malloc", "to the value given");
  is_str(set_list(), TF, "and listed as ours");
  is_int(cmg__pools_setenv(TF, "other"), 0, "set again");
  is_str(getenv(TF), "cuda_malloc", "the first value stays");
  is_str(set_list(), TF, "listed once");
  is_int(cmg__pools_setenv(TORCH, "1"), 0, "a second switch");
  is_str(set_list(), TF "," TORCH, "added after a comma");

  clean();
  setenv(TF, "cuda_malloc_async", 1);
  is_int(cmg__pools_setenv(TF, "cuda_malloc"), 0, "a user's switch");
  is_str(getenv(TF), "cuda_malloc_async", "keeps the user's value");
  is_str(set_list(), "(unset)", "and is not listed");
  setenv(TORCH, "", 1);
  cmg__pools_setenv(TORCH, "1");
  is_str(getenv(TORCH), "", "an empty value is the user's too");
  is_str(set_list(), "(unset)", "and is not listed either");
}

static void
test_setenv_fails(void)
{
  clean();
  is_int(cmg__pools_setenv("BAD=NAME", "1"), -EINVAL,
         "a name setenv refuses: its errno");
  is_str(set_list(), "(unset)", "and nothing listed");
  is_int(cmg__pools_setenv("", "1"), -EINVAL, "an empty name: refused");
  is_str(set_list(), "(unset)", "nothing listed");
}

/* The list is matched by whole names, however it is written. */
static void
test_listed(void)
{
  clean();
  setenv(CMG__POOLS_SET_VAR, TF "X," XLA_ALLOC "_EXTRA,TF_GPU", 1);
  cmg__pools_setenv(TF, "cuda_malloc");
  is_str(set_list(), TF "X," XLA_ALLOC "_EXTRA,TF_GPU," TF,
         "a longer name or a prefix is another name");
  cmg__pools_setenv(XLA_ALLOC, "platform");
  is_str(set_list(), TF "X," XLA_ALLOC "_EXTRA,TF_GPU," TF "," XLA_ALLOC,
         "so each of the two is added");

  clean();
  setenv(CMG__POOLS_SET_VAR, ",," TORCH ",", 1);
  cmg__pools_setenv(TORCH, "1");
  is_str(set_list(), ",," TORCH ",", "empty items around a name: found");
  is_str(getenv(TORCH), "1", "though the switch itself was unset");
}

static void
fill(char *buf, char c, size_t n)
{
  memset(buf, c, n);
  buf[n] = '\0';
}

/* The list gets 256 bytes: one not ours of half that or more is dropped
 * whole, and a name that would not fit is left out rather than cut. */
static void
test_list_room(void)
{
  char old[300], name[300], want[600];

  clean();
  fill(old, 'Z', 127);
  setenv(CMG__POOLS_SET_VAR, old, 1);
  cmg__pools_setenv(TF, "cuda_malloc");
  snprintf(want, sizeof(want), "%s,%s", old, TF);
  is_str(set_list(), want, "a list of 127 bytes is kept");

  clean();
  fill(old, 'Z', 128);
  setenv(CMG__POOLS_SET_VAR, old, 1);
  cmg__pools_setenv(TF, "cuda_malloc");
  is_str(set_list(), TF, "one of 128 is dropped, not cut");
  is_str(getenv(TF), "cuda_malloc", "and the switch is set");

  clean();
  fill(old, 'Z', 127);
  fill(name, 'N', 127);
  setenv(CMG__POOLS_SET_VAR, old, 1);
  is_int(cmg__pools_setenv(name, "v"), 0, "127 bytes, a comma, 127 more");
  snprintf(want, sizeof(want), "%s,%s", old, name);
  is_str(set_list(), want, "fill the 256 bytes exactly");

  clean();
  fill(name + 127, 'N', 1);
  setenv(CMG__POOLS_SET_VAR, old, 1);
  is_int(cmg__pools_setenv(name, "v"), 0, "a name one byte longer");
  is_str(getenv(name), "v", "is set");
  is_str(set_list(), old, "but left out of the list");
  unsetenv(name);
  name[127] = '\0';
  unsetenv(name);
}

static void
test_apply(void)
{
  clean();
  is_int(cmg__pools_apply(), 0, "apply");
  for (size_t i = 0; i < CMG__POOLS_N; i++)
    is_str(getenv(cmg__pools_switches[i].name), cmg__pools_switches[i].value,
           "%s turns its pool off", cmg__pools_switches[i].name);
  is_str(set_list(), ALL, "all four listed, in the table's order");
  is_int(cmg__pools_apply(), 0, "apply again (the library after the launcher)");
  is_str(set_list(), ALL, "changes nothing");

  clean();
  setenv(TF, "cuda_malloc_async", 1);
  setenv(XLA_PRE, "true", 1);
  setenv(CMG__POOLS_SET_VAR, OTHER, 1);
  is_int(cmg__pools_apply(), 0, "apply beside a user's switches");
  is_str(getenv(TF), "cuda_malloc_async", "the user's allocator stays");
  is_str(getenv(XLA_PRE), "true", "the user's preallocation stays");
  is_str(getenv(TORCH), "1", "the others are set");
  is_str(set_list(), OTHER "," TORCH "," XLA_ALLOC,
         "and only they are added to what the list held");

  clean();
  /* A child whose program unset the switches its parent's list names. */
  setenv(CMG__POOLS_SET_VAR, ALL, 1);
  is_int(cmg__pools_apply(), 0, "apply with the list inherited");
  is_str(getenv(XLA_ALLOC), "platform", "sets the switches again");
  is_str(set_list(), ALL, "and names none twice");
}

static void
poison(struct cmg__pools *p)
{
  memset(p, 0xa5, sizeof(*p));
}

static void
test_read(void)
{
  struct cmg__pools p;

  clean();
  poison(&p);
  cmg__pools_read(&p);
  ok(p.is_read, "read");
  bool none = true;
  for (size_t i = 0; i < CMG__POOLS_N; i++)
    none &= !p.seen[i].is_set && !p.seen[i].by_us && p.seen[i].value[0] == 0;
  ok(none, "nothing set: each unset, not ours, empty");

  setenv(TF, "cuda_malloc_async", 1);
  cmg__pools_setenv(TORCH, "1");
  poison(&p);
  cmg__pools_read(&p);
  ok(p.seen[0].is_set && p.seen[0].by_us, "ours: set, by us");
  is_str(p.seen[0].value, "1", "its value");
  ok(p.seen[1].is_set && !p.seen[1].by_us, "the user's: set, not by us");
  is_str(p.seen[1].value, "cuda_malloc_async", "its value");
  ok(!p.seen[2].is_set && !p.seen[3].is_set, "the others unset");

  /* A child of the launcher: the values came through exec, the list too. */
  clean();
  setenv(XLA_ALLOC, "platform", 1);
  setenv(XLA_PRE, "false", 1);
  setenv(CMG__POOLS_SET_VAR, XLA_PRE, 1);
  cmg__pools_read(&p);
  ok(!p.seen[2].by_us, "a value the list does not name is the user's");
  ok(p.seen[3].by_us, "one it names is ours");

  setenv(CMG__POOLS_SET_VAR, XLA_PRE "_NOT," TF, 1);
  cmg__pools_read(&p);
  ok(!p.seen[3].by_us, "a longer name in the list is not its");
  ok(!p.seen[1].by_us && !p.seen[1].is_set,
     "a listed switch that is unset is neither");
}

static void
test_read_cut(void)
{
  struct cmg__pools p;
  char v[200], want[CMG__POOLS_VALUE_MAX];

  clean();
  fill(v, 'v', CMG__POOLS_VALUE_MAX - 1);
  setenv(TF, v, 1);
  fill(v, 'w', 150);
  setenv(XLA_ALLOC, v, 1);
  setenv(XLA_PRE, "", 1);
  cmg__pools_read(&p);
  fill(want, 'v', CMG__POOLS_VALUE_MAX - 1);
  is_str(p.seen[1].value, want, "a value of %d bytes is kept whole",
         CMG__POOLS_VALUE_MAX - 1);
  fill(want, 'w', CMG__POOLS_VALUE_MAX - 1);
  is_str(p.seen[2].value, want, "a longer one is cut to %d",
         CMG__POOLS_VALUE_MAX - 1);
  ok(p.seen[3].is_set, "an empty value is set");
  is_str(p.seen[3].value, "", "and empty");
  clean();
}

int
main(void)
{
  test_table();
  test_setenv();
  test_setenv_fails();
  test_listed();
  test_list_room();
  test_apply();
  test_read();
  test_read_cut();
  return done_testing();
}
