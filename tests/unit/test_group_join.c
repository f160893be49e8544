/*
 * Unit tests of group_join.c: a forked child takes a slot of its own and
 * shares the cap; a member joining with other limits is told once and the
 * first member's stand; a group whose members all died takes the next
 * joiner's limits, without a word.
 */
#include "config.h"

#include "group_harness.h"

static void
forked(void)
{
  const char *name = name_of("fork");
  struct cmg__group_usage u;
  uint64_t used, limit;
  char err[256];
  int st;

  is_int(join("group=%s,group_limit=4M", name, err, sizeof(err)), 0,
         "fork: join");
  cmg__group_reserve(0, MiB, PHYS, &used, &limit);
  if (spawn() == 0) {
    int bad = 0;
    cmg__group_after_fork();
    bad += cmg__group_reserve(0, 2 * MiB, PHYS, &used, &limit) != 0;
    bad += cmg__group_usage(0, &u) != 0 || u.used != 3 * MiB ||
           u.mine != 2 * MiB;
    bad += cmg__group_members() != 2;
    bad += cmg__group_reserve(0, 2 * MiB, PHYS, &used, &limit) != -ENOMEM;
    cmg__group_leave();
    _exit(bad);
  }
  wait(&st);
  ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
     "a forked child takes its own slot and shares the cap");
  ok(cmg__group_usage(0, &u) == 0 && u.used == MiB && u.mine == MiB,
     "its exit leaves the parent's bytes alone");
  is_int(cmg__group_members(), 1, "and frees its slot");
  cmg__group_leave();
}

static void
mismatch(void)
{
  const char *name = name_of("mismatch");
  uint64_t used, limit;
  char err[256], text[1024];
  int st, lines;
  pid_t first;

  /* The first member, with 8 MiB, stays while a second joins with 4. */
  first = spawn();
  if (first == 0) {
    join("group=%s,group_limit=8M", name, err, sizeof(err));
    for (;;)
      pause();
  }
  sleep_ms(200);
  capture_stderr();
  is_int(join("group=%s,group_limit=4M", name, err, sizeof(err)), 0,
         "mismatch: a second member with another limit joins");
  if (spawn() == 0) {
    cmg__group_after_fork();
    cmg__group_reserve(0, 1, PHYS, &used, &limit);
    cmg__group_leave();
    _exit(0);
  }
  wait(&st);
  lines = captured(text, sizeof(text));
  is_int(lines, 1, "one line, not repeated by a forked child");
  ok(strstr(text, "group_limit here is 4.0 MiB, but the group's is 8.0 "
                  "MiB") != NULL, "naming both limits");
  is_int(cmg__group_reserve(0, 6 * MiB, PHYS, &used, &limit), 0,
         "the first member's 8 MiB stands");
  is_u64(limit, 8 * MiB, "as the cap");
  cmg__group_release(0, 6 * MiB);
  cmg__group_leave();
  kill(first, SIGKILL);
  waitpid(first, &st, 0);
}

/* The first member died: the next to join, finding nobody, sets the
 * group's limits anew, without a word. */
static void
adopt(void)
{
  const char *name = name_of("adopt");
  struct cmg__group_usage u;
  char err[256], text[1024];
  pid_t first;
  int st;

  first = spawn();
  if (first == 0) {
    join("group=%s,group_limit=8M", name, err, sizeof(err));
    for (;;)
      pause();
  }
  sleep_ms(200);
  kill(first, SIGKILL);
  waitpid(first, &st, 0);
  capture_stderr();
  is_int(join("group=%s,group_limit=2M", name, err, sizeof(err)), 0,
         "adopt: join a group whose only member was killed");
  is_int(captured(text, sizeof(text)), 0, "no mismatch is said");
  ok(cmg__group_usage(0, &u) == 0 && u.limit == 2 * MiB,
     "with no member left, the next one's limits are the group's");
  is_int(cmg__group_members(), 1, "the dead member was reclaimed at join");
  cmg__group_leave();
}

int
main(void)
{
  group_start();
  scenario(forked, "fork");
  scenario(mismatch, "mismatch");
  scenario(adopt, "adopt");
  group_cleanup();
  return done_testing();
}
