/*
 * Where a report goes while it is written.  The temporary file
 * (PATH.tmp.PID.N) is created in the final path's directory, so that the
 * rename that puts it in place is atomic, and holds an exclusive flock(2)
 * from its creation to its rename: the kernel drops the lock of a process
 * that dies however it dies, so a temporary file nobody holds a lock on is
 * a leftover.  The first report of a process removes the leftovers in its
 * directory: files of that form, owned by the user, whose writer's pid is
 * gone from this PID namespace and that no process holds locked (a writer
 * in another namespace sharing the directory still holds its lock).  A
 * writer killed outright (SIGKILL) leaves its temporary file to the next.
 *
 * A process that dies of a signal waits for its report in the signal's
 * handler (preload/death.c), which may give up: it then removes the
 * temporary file itself, with what it can read here without a lock (the
 * name is published before the file exists, and withdrawn before the file
 * is renamed or removed), and the writer's later rename fails harmlessly.
 * The handler also reads the progress counter, which the writer moves at
 * each step, to tell a slow report from a stuck one.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/report/report_file.h"

static _Atomic uint64_t progress;
/* The temporary file being written, for the handler of a dying process. */
static char published[PATH_MAX + CMG__REPORT_MAX + 64];
static _Atomic bool is_published;
static _Atomic bool swept;

void
cmg__report_step(void)
{
  atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
}

uint64_t
cmg__report_progress(void)
{
  return atomic_load_explicit(&progress, memory_order_relaxed);
}

void
cmg__report_abandon(void)
{
  if (atomic_exchange(&is_published, false))
    unlink(published);
}

/* Whether `name` is a temporary report file (anything, then
 * ".tmp.PID.N"), with *pid set. */
static bool
is_temporary(const char *name, pid_t *pid)
{
  const char *t = strstr(name, ".tmp."), *next;
  while (t != NULL && (next = strstr(t + 1, ".tmp.")) != NULL)
    t = next;
  if (t == NULL)
    return false;
  char *end;
  long p = strtol(t + 5, &end, 10);
  if (end == t + 5 || *end != '.' || p <= 0 || p > INT32_MAX)
    return false;
  const char *n = end + 1;
  strtoul(n, &end, 10);
  if (end == n || *end != '\0')
    return false;
  *pid = (pid_t)p;
  return true;
}

/* Removes dir/name if it is a leftover of a writer that died. */
static void
sweep_one(int dir, const char *name)
{
  pid_t pid;
  struct stat st;
  if (!is_temporary(name, &pid) || pid == getpid() ||
      (kill(pid, 0) == 0 || errno != ESRCH))
    return;
  int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
      flock(fd, LOCK_EX | LOCK_NB) == 0)
    unlinkat(dir, name, 0);
  close(fd);
}

/* The leftovers in the directory of `path`, once per process. */
static void
sweep(const char *path)
{
  char dir_path[PATH_MAX];
  if (atomic_exchange(&swept, true))
    return;
  const char *slash = strrchr(path, '/');
  if (slash == NULL)
    snprintf(dir_path, sizeof(dir_path), ".");
  else if (snprintf(dir_path, sizeof(dir_path), "%.*s",
                    (int)(slash - path) + (slash == path),
                    path) >= (int)sizeof(dir_path))
    return;
  DIR *d = opendir(dir_path);
  if (d == NULL)
    return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    sweep_one(dirfd(d), e->d_name);
  closedir(d);
}

int
cmg__report_file_open(struct cmg__report_file *f, const char *path)
{
  static _Atomic unsigned serial;
  struct stat st;
  f->path = path;
  f->tmp[0] = '\0';
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    f->fd = open(path, O_WRONLY | O_CLOEXEC);
    return f->fd < 0 ? -errno : 0;
  }
  sweep(path);
  /* A name cut short would be another file: a parent directory's name, or
   * another process's temporary file. */
  int n = snprintf(f->tmp, sizeof(f->tmp), "%s.tmp.%ld.%u", path,
                   (long)getpid(), atomic_fetch_add(&serial, 1));
  if (n < 0 || (size_t)n >= sizeof(f->tmp)) {
    f->tmp[0] = '\0';
    return -ENAMETOOLONG;
  }
  atomic_store(&is_published, false);
  memcpy(published, f->tmp, (size_t)n + 1);
  atomic_store(&is_published, true);
  f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (f->fd < 0 || flock(f->fd, LOCK_EX) < 0) {
    int err = -errno;
    atomic_store(&is_published, false);
    if (f->fd >= 0) {
      close(f->fd);
      unlink(f->tmp);
    }
    return err;
  }
  return 0;
}

int
cmg__report_file_close(struct cmg__report_file *f, int err)
{
  bool temporary = f->tmp[0] != '\0';
  if (err == 0 && temporary && fsync(f->fd) < 0)
    err = -errno;
  /* Withdrawn first: from here the handler must not remove the file, which
   * may become the report. */
  if (temporary && !atomic_exchange(&is_published, false) && err == 0)
    err = -ECANCELED; /* a dying process's handler removed it */
  if (err == 0 && temporary && rename(f->tmp, f->path) < 0)
    err = -errno;
  if (err < 0 && temporary)
    unlink(f->tmp);
  if (close(f->fd) < 0 && err == 0)
    err = -errno;
  return err;
}
