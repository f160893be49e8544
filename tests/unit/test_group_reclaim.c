/*
 * Unit tests of group_reclaim.c: the share of a SIGKILLed member is
 * taken back for the next allocation, within a second, and its slot
 * freed; until then the status view marks it dead.
 */
#include "config.h"

#include "group_harness.h"

static void
kill_reclaim(void)
{
  const char *name = name_of("kill");
  struct cmg__group_usage u;
  uint64_t used, limit, t0, took;
  char err[256], text[4096];
  pid_t pid;
  int rc, st, pipefd[2];

  is_int(join("group=%s,group_limit=10M", name, err, sizeof(err)), 0,
         "kill: join");
  pid = holder(6 * MiB);
  ok(cmg__group_usage(0, &u) == 0 && u.used == 6 * MiB, "the holder holds");
  is_int(cmg__group_reserve(0, 6 * MiB, PHYS, &used, &limit), -ENOMEM,
         "no room while it lives");
  kill(pid, SIGKILL);
  sleep_ms(50);
  /* Unreaped, it is a zombie: dead for the group all the same. */
  if (pipe(pipefd) != 0)
    abort();
  status_fd(name, true, pipefd[1], err, sizeof(err));
  close(pipefd[1]);
  memset(text, 0, sizeof(text));
  if (read(pipefd[0], text, sizeof(text) - 1) < 0)
    text[0] = '\0';
  close(pipefd[0]);
  ok(strstr(text, "\"alive\":false") != NULL && strstr(text, "\"dead\":1"),
     "status marks the killed member dead before it is reclaimed");
  t0 = now_ns();
  while ((rc = cmg__group_reserve(0, 6 * MiB, PHYS, &used, &limit)) != 0 &&
         now_ns() - t0 < 3000000000ull)
    sleep_ms(10);
  took = (now_ns() - t0) / 1000000;
  is_int(rc, 0, "its share is reclaimed for the next allocation");
  ok(took < 1100, "within a second (%" PRIu64 " ms)", took);
  waitpid(pid, &st, 0);
  ok(cmg__group_usage(0, &u) == 0 && u.used == 6 * MiB && u.mine == 6 * MiB,
     "only our bytes are counted");
  is_int(cmg__group_members(), 1, "its slot is free");
  cmg__group_leave();
}

int
main(void)
{
  group_start();
  scenario(kill_reclaim, "kill");
  group_cleanup();
  return done_testing();
}
