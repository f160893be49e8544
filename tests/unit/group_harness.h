/*
 * What the tests of the group modules share (test_group, test_group_join,
 * test_group_reclaim, test_group_status, test_segment): the group's
 * functions called directly, across real processes.  Each scenario runs in
 * a forked child (a process joins one group, once), which hands its TAP
 * count back to the parent through a pipe.  Segments are named after the
 * test's pid ("t<pid>-tag") and removed at the end (group_cleanup).
 */
#ifndef CMG_TEST_GROUP_HARNESS_H
#define CMG_TEST_GROUP_HARNESS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "core/conf.h"
#include "runtime/group/group.h"
#include "runtime/group/group_join.h"
#include "ops/group_status.h"
#include "../tap.h"

/* group.c, for the exit path and the launcher. */
void cmg__group_leave(void);

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define PHYS (16 * GiB)

static pid_t top;

/* The status view of name (NULL: all) written to fd, as the launcher
 * writes it: 0, or cmg__group_status's error. */
static inline int
status_fd(const char *name, bool json, int fd, char *err, size_t errlen)
{
  char *text = NULL;
  size_t len = 0;
  int rc = cmg__group_status(name, json ? CMG__STATUS_JSON : CMG__STATUS_TEXT,
                             &text, &len, err, errlen);

  if (rc == 0 && write(fd, text, len) != (ssize_t)len)
    rc = -EIO;
  free(text);
  return rc;
}
static char name_buf[64];

/* A group name unique to this run ("t<pid>-tag"), removed at the end. */
static inline const char *
name_of(const char *tag)
{
  snprintf(name_buf, sizeof(name_buf), "t%d-%s", (int)top, tag);
  return name_buf;
}

static inline void
path_of(const char *name, char *buf, size_t len)
{
  snprintf(buf, len, "/dev/shm/cumemguard.%u.%s", (unsigned)geteuid(), name);
}

static inline uint64_t
now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void
sleep_ms(unsigned ms)
{
  struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

static inline int
join(const char *fmt, const char *name, char *err, size_t errlen)
{
  struct cmg__config cfg;
  char opts[256], perr[256];
  snprintf(opts, sizeof(opts), fmt, name);
  if (cmg__config_parse(opts, &cfg, perr, sizeof(perr)) != 0) {
    printf("# bad options '%s': %s\n", opts, perr);
    return -EINVAL;
  }
  return cmg__group_join(&cfg, err, errlen);
}

static inline pid_t
spawn(void)
{
  fflush(stdout);
  fflush(stderr);
  return fork();
}

/* Runs fn in a child, which continues the TAP numbering. */
static inline void
scenario(void (*fn)(void), const char *what)
{
  int p[2], v[2] = { 0, 0 }, st = 0;
  ssize_t n;
  pid_t pid;

  if (pipe(p) != 0)
    abort();
  pid = spawn();
  if (pid == 0) {
    close(p[0]);
    fn();
    fflush(stdout);
    v[0] = tap_n;
    v[1] = tap_failed;
    if (write(p[1], v, sizeof(v)) != (ssize_t)sizeof(v))
      _exit(3);
    _exit(0);
  }
  close(p[1]);
  n = read(p[0], v, sizeof(v));
  close(p[0]);
  waitpid(pid, &st, 0);
  if (n == (ssize_t)sizeof(v)) {
    tap_n = v[0];
    tap_failed = v[1];
  }
  ok(n == (ssize_t)sizeof(v) && WIFEXITED(st) && WEXITSTATUS(st) == 0,
     "%s: ran to its end", what);
}

/* stderr into a file, to count the lines group.c writes. */
static int saved_err = -1;
static char err_file[64];

static inline void
capture_stderr(void)
{
  int fd;
  snprintf(err_file, sizeof(err_file), "/tmp/test_group.%d.err",
           (int)getpid());
  fd = open(err_file, O_RDWR | O_CREAT | O_TRUNC, 0600);
  fflush(stderr);
  saved_err = dup(2);
  dup2(fd, 2);
  close(fd);
}

/* Restores stderr; the captured text in buf, its line count returned. */
static inline int
captured(char *buf, size_t len)
{
  int fd = open(err_file, O_RDONLY), lines = 0;
  ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
  buf[n > 0 ? n : 0] = '\0';
  if (fd >= 0)
    close(fd);
  unlink(err_file);
  dup2(saved_err, 2);
  close(saved_err);
  for (char *p = buf; *p; p++)
    lines += *p == '\n';
  if (lines > 0)
    printf("# stderr: %s", buf);
  return lines;
}

/* Writes len bytes at off of the segment of name. */
static inline void
poke(const char *name, off_t off, const void *p, size_t len)
{
  char path[128];
  int fd;

  path_of(name, path, sizeof(path));
  fd = open(path, O_WRONLY);
  if (fd < 0 || pwrite(fd, p, len, off) != (ssize_t)len)
    printf("# cannot write %s\n", path);
  close(fd);
}

/* A member that holds bytes, says so on `ready`, and waits to be killed. */
static inline pid_t
holder(uint64_t bytes)
{
  int p[2];
  pid_t pid;
  char x = 0;

  if (pipe(p) != 0)
    abort();
  pid = spawn();
  if (pid == 0) {
    uint64_t used, limit;
    close(p[0]);
    cmg__group_after_fork();
    x = cmg__group_reserve(0, bytes, PHYS, &used, &limit) == 0 ? 'y' : 'n';
    if (write(p[1], &x, 1) != 1)
      _exit(2);
    for (;;)
      pause();
  }
  close(p[1]);
  if (read(p[0], &x, 1) != 1 || x != 'y')
    printf("# the holder could not reserve\n");
  close(p[0]);
  return pid;
}

/* Removes every segment this run made, whatever failed. */
static inline void
group_cleanup(void)
{
  char prefix[64], path[512];
  struct dirent *e;
  DIR *dir = opendir("/dev/shm");

  snprintf(prefix, sizeof(prefix), "cumemguard.%u.t%d-", (unsigned)geteuid(),
           (int)top);
  while (dir != NULL && (e = readdir(dir)) != NULL) {
    if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
      continue;
    snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
    unlink(path);
  }
  if (dir != NULL)
    closedir(dir);
}

/* The start of each test's main: the run's pid names its segments. */
static inline void
group_start(void)
{
  top = getpid();
  setvbuf(stdout, NULL, _IOLBF, 0);
}

#endif /* CMG_TEST_GROUP_HARNESS_H */
