/*
 * Unit tests of segment.c and group_segment.c, through joining a group: a segment is
 * untrusted input, so one of bad magic, another layout, a slot in no known
 * state, a file of garbage, one others can read or another user made is
 * refused with one line naming it, and no allocation succeeds; a segment
 * its creator left half made (empty, or sized without its magic) is set up
 * by the next member.
 */
#include "config.h"

#include "group_harness.h"

/* Makes a segment of name with a member that stays; returns that member. */
static pid_t
make_group(const char *name)
{
  pid_t pid = spawn();
  char err[256];

  if (pid == 0) {
    join("group=%s,group_limit=8M", name, err, sizeof(err));
    for (;;)
      pause();
  }
  sleep_ms(150);
  return pid;
}

static void
expect_refused(const char *name, const char *want, const char *what)
{
  uint64_t used, limit;
  char err[512];
  int rc;

  rc = join("group=%s,group_limit=8M", name, err, sizeof(err));
  ok(rc < 0 && strstr(err, want) != NULL, "%s: refused", what);
  if (rc >= 0 || strstr(err, want) == NULL)
    printf("#   rc %d, '%s'\n", rc, err);
  ok(strchr(err, '\n') == NULL && strstr(err, "/dev/shm/cumemguard.") &&
     strstr(err, name), "%s: one line naming the segment", what);
  ok(cmg__group_reserve(0, 1, PHYS, &used, &limit) == -EPERM &&
     limit == 0, "%s: no allocation succeeds", what);
}

static void
bad_magic(void)
{
  const char *name = name_of("magic");
  uint64_t junk = 0x1122334455667788ull;
  pid_t pid = make_group(name);

  poke(name, 0, &junk, sizeof(junk));
  expect_refused(name, "is not a cumemguard group segment (bad magic)",
                 "garbage magic");
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

static void
bad_version(void)
{
  const char *name = name_of("version");
  uint32_t v = 99;
  pid_t pid = make_group(name);

  poke(name, 8, &v, sizeof(v));
  expect_refused(name, "incompatible cumemguard (layout 99",
                 "another layout version");
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

static void
bad_slot(void)
{
  const char *name = name_of("slot");
  char path[128];
  uint32_t slot_size = 0;
  uint64_t owner = (uint64_t)1234 << 32 | 7;
  struct stat st;
  pid_t pid = make_group(name);
  int fd;

  path_of(name, path, sizeof(path));
  fd = open(path, O_RDONLY);
  if (fd < 0 || pread(fd, &slot_size, 4, 16) != 4 || fstat(fd, &st) != 0)
    printf("# cannot read %s\n", path);
  close(fd);
  poke(name, st.st_size - 256 * (off_t)slot_size + 3 * (off_t)slot_size,
       &owner, sizeof(owner));
  expect_refused(name, "is corrupt (slot 3)", "a slot in no known state");
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

static void
garbage_file(void)
{
  const char *name = name_of("garbage");
  char path[128], junk[4096];
  int fd;

  for (size_t i = 0; i < sizeof(junk); i++)
    junk[i] = (char)(i * 131 + 7);
  path_of(name, path, sizeof(path));
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || write(fd, junk, sizeof(junk)) != (ssize_t)sizeof(junk))
    printf("# cannot write %s\n", path);
  close(fd);
  expect_refused(name, "is not a cumemguard group segment (4096 bytes",
                 "a file of garbage");
}

static void
foreign_mode(void)
{
  const char *name = name_of("mode");
  char path[128];
  int fd;

  path_of(name, path, sizeof(path));
  fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 || fchmod(fd, 0644) != 0)
    printf("# cannot make %s\n", path);
  close(fd);
  expect_refused(name, "has mode 0644, which lets other users reach it",
                 "a segment others can read");
}

static void
foreign_owner(void)
{
  const char *owner_name = name_of("owner");
  char path[128];
  int fd;

  if (geteuid() != 0) {
    printf("ok %d # SKIP not root: cannot give a segment away\n", ++tap_n);
    return;
  }
  path_of(owner_name, path, sizeof(path));
  fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 || fchown(fd, 65534, 65534) != 0)
    printf("# cannot make %s\n", path);
  close(fd);
  expect_refused(owner_name, "belongs to uid 65534, not to this user "
                 "(uid 0)", "a segment another user made");
}

/* A creator killed between shm_open and setting it up. */
static void
half_empty(void)
{
  const char *name = name_of("empty");
  uint64_t used, limit;
  char path[128], err[256];
  int fd;

  path_of(name, path, sizeof(path));
  fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
  close(fd);
  is_int(join("group=%s,group_limit=8M", name, err, sizeof(err)), 0,
         "an empty segment is set up by the next member");
  is_int(cmg__group_reserve(0, MiB, PHYS, &used, &limit), 0, "and works");
  cmg__group_leave();
}

/* Killed after sizing it, before the magic. */
static void
half_sized(void)
{
  const char *name;
  uint64_t used, limit;
  char path[128], err[256], probe[64];
  struct stat st;
  pid_t pid;
  int fd;

  /* The segment's size, from one made for the purpose. */
  snprintf(probe, sizeof(probe), "%s", name_of("probe"));
  pid = make_group(probe);
  path_of(probe, path, sizeof(path));
  stat(path, &st);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  unlink(path);

  name = name_of("sized");
  path_of(name, path, sizeof(path));
  fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 || ftruncate(fd, st.st_size) != 0)
    printf("# cannot make %s\n", path);
  close(fd);
  is_int(join("group=%s,group_limit=8M", name, err, sizeof(err)), 0,
         "a segment sized but without its magic is set up by the next "
         "member");
  is_int(cmg__group_reserve(0, MiB, PHYS, &used, &limit), 0, "and works");
  cmg__group_leave();
}

int
main(void)
{
  group_start();
  scenario(bad_magic, "bad magic");
  scenario(bad_version, "bad version");
  scenario(bad_slot, "bad slot");
  scenario(garbage_file, "garbage");
  scenario(foreign_mode, "foreign mode");
  scenario(foreign_owner, "foreign owner");
  scenario(half_empty, "half made, empty");
  scenario(half_sized, "half made, sized");
  group_cleanup();
  return done_testing();
}
