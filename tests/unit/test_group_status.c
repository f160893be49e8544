/*
 * Unit tests of group_status.c, the operator's view of a group: its cap,
 * members, their commands and bytes, as text and as JSON; an unknown group
 * and a bad name are errors; the group is gone with its last member.
 */
#include "config.h"

#include "group_harness.h"

static void
status_view(void)
{
  const char *name = name_of("status");
  uint64_t used, limit;
  char err[256], text[8192], path[128];
  int fd, rc;

  is_int(join("group=%s,group_limit=10M", name, err, sizeof(err)), 0,
         "status: join");
  cmg__group_reserve(0, 6 * MiB, PHYS, &used, &limit);
  snprintf(path, sizeof(path), "/tmp/test_group.%d.out", (int)getpid());
  fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  is_int(status_fd(name, false, fd, err, sizeof(err)), 0,
         "status of a group");
  memset(text, 0, sizeof(text));
  lseek(fd, 0, SEEK_SET);
  if (read(fd, text, sizeof(text) - 1) < 0)
    text[0] = '\0';
  ok(strstr(text, "cap 10.0 MiB per device, 1 member") != NULL,
     "text: the cap and the members");
  /* Our own command, as the kernel names it (valgrind's, under valgrind). */
  char comm[32] = "";
  FILE *f = fopen("/proc/self/comm", "r");
  if (f != NULL) {
    if (fgets(comm, sizeof(comm), f) != NULL)
      comm[strcspn(comm, "\n")] = '\0';
    fclose(f);
  }
  ok(comm[0] != '\0' && strstr(text, comm) != NULL &&
         strstr(text, "6.0 MiB") != NULL,
     "text: the member's command and live bytes");
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
    printf("# %s\n", line);
  if (ftruncate(fd, 0) != 0)
    printf("# cannot truncate %s\n", path);
  lseek(fd, 0, SEEK_SET);
  is_int(status_fd(name, true, fd, err, sizeof(err)), 0, "--json");
  lseek(fd, 0, SEEK_SET);
  memset(text, 0, sizeof(text));
  if (read(fd, text, sizeof(text) - 1) < 0)
    text[0] = '\0';
  ok(strstr(text, "\"cap\":10485760") && strstr(text, "\"used\":6291456") &&
     strstr(text, "\"pid\":") && strstr(text, "\"alive\":true"),
     "json: cap, usage and the member");
  close(fd);
  unlink(path);
  rc = status_fd("no-such-group", false, 1, err, sizeof(err));
  ok(rc == -ENOENT && strstr(err, "no such group") != NULL,
     "an unknown group is an error");
  rc = status_fd("../etc", false, 1, err, sizeof(err));
  ok(rc == -EINVAL && strstr(err, "bad group name") != NULL,
     "a bad name is an error");
  cmg__group_leave();
  rc = status_fd(name, false, 1, err, sizeof(err));
  is_int(rc, -ENOENT, "the group is gone with its last member");
}

int
main(void)
{
  group_start();
  scenario(status_view, "status");
  group_cleanup();
  return done_testing();
}
