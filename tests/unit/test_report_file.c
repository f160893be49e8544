/*
 * Where a report goes while it is written: a locked temporary beside the
 * path, renamed over it only when the report is complete, and removed when
 * it is not, so the path holds the old report or the new one and never a
 * part.  A path that is not a regular file (a FIFO, /dev/null) is written
 * itself, since a rename would replace it.  The first report of a process
 * sweeps the leftovers of writers that died, and only those: a live
 * writer's file, a locked one, our own, and names of another form stay.
 * The dying process's handler: abandon removes the file being written and
 * nothing else, and the writer's close then fails; the progress counter
 * counts every step, from any thread.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/conf.h"
#include "runtime/report/report_file.h"
#include "../tap.h"

static char dir[64], path[128];

static bool
exists(const char *p)
{
  struct stat st;
  return lstat(p, &st) == 0;
}

/* The first line of file p, "" when there is none. */
static const char *
content(const char *p)
{
  static char buf[64];
  buf[0] = '\0';
  FILE *f = fopen(p, "r");
  if (f == NULL)
    return buf;
  if (fgets(buf, sizeof(buf), f) == NULL)
    buf[0] = '\0';
  fclose(f);
  return buf;
}

static void
put(const char *p, const char *text)
{
  FILE *f = fopen(p, "w");
  fputs(text, f);
  fclose(f);
}

static int
entries(void)
{
  int n = 0;
  DIR *d = opendir(dir);
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static void
in_dir(char *buf, size_t n, const char *name)
{
  snprintf(buf, n, "%s/%s", dir, name);
}

/* A pid no process has: a child's, once it is reaped. */
static pid_t
dead_pid(void)
{
  pid_t pid = fork();
  if (pid == 0)
    _exit(0);
  waitpid(pid, NULL, 0);
  return pid;
}

/* The sweep runs at a process's first open only: this test comes first. */
static void
test_sweep(void)
{
  char dead[8][160], mine[160], own[160];
  pid_t gone = dead_pid();
  const char *forms[] = { "r.json.tmp.%d.0", "other.json.tmp.%d.3",
                          "r.json.tmp.%d.1", "r.json.tmp.%d.x",
                          "r.json.tmp.%d",   "d.tmp.%d.0",
                          "l.tmp.%d.0",      "r.json.tmp.%d.5" };
  for (int i = 0; i < 8; i++) {
    char name[64];
    snprintf(name, sizeof(name), forms[i], (int)gone);
    in_dir(dead[i], sizeof(dead[i]), name);
  }
  for (int i = 0; i < 5; i++)
    put(dead[i], "left\n");
  mkdir(dead[5], 0700);
  symlink(dead[0], dead[6]);
  int held = open(dead[2], O_RDONLY);
  flock(held, LOCK_EX); /* as a writer in another PID namespace holds it */
  snprintf(own, sizeof(own), "%s/r.json.tmp.%d.9", dir, (int)getpid());
  put(own, "mine\n");
  snprintf(mine, sizeof(mine), "%s/r.json.tmp.1.0", dir);
  put(mine, "pid 1\n");

  struct cmg__report_file f;
  is_int(cmg__report_file_open(&f, path), 0, "sweep: the first open");
  ok(!exists(dead[0]) && !exists(dead[1]),
     "sweep: the leftovers of a dead writer are removed");
  ok(exists(dead[2]), "sweep: a locked one stays");
  ok(exists(dead[3]) && exists(dead[4]), "sweep: other names stay");
  ok(exists(dead[5]), "sweep: a directory stays");
  ok(exists(dead[6]), "sweep: a symbolic link stays");
  ok(exists(own), "sweep: the process's own stays");
  ok(exists(mine), "sweep: a live process's stays");
  cmg__report_file_close(&f, -EIO);

  put(dead[7], "left\n");
  is_int(cmg__report_file_open(&f, path), 0, "sweep: a second open");
  ok(exists(dead[7]), "sweep: once a process");
  cmg__report_file_close(&f, -EIO);

  close(held);
  for (int i = 0; i < 8; i++)
    i == 5 ? rmdir(dead[i]) : unlink(dead[i]);
  unlink(own);
  unlink(mine);
  is_int(entries(), 0, "sweep: no file of the report's left");
}

static void
test_commit(void)
{
  struct cmg__report_file f;
  char prefix[160];
  struct stat st;
  snprintf(prefix, sizeof(prefix), "%s.tmp.%d.", path, (int)getpid());
  is_int(cmg__report_file_open(&f, path), 0, "open");
  ok(f.path == path, "the final path kept");
  ok(strncmp(f.tmp, prefix, strlen(prefix)) == 0,
     "a temporary PATH.tmp.PID.N (%s)", f.tmp);
  ok(stat(f.tmp, &st) == 0 && S_ISREG(st.st_mode), "created beside the path");
  ok(!exists(path), "the path not yet");
  ok(fcntl(f.fd, F_GETFD) & FD_CLOEXEC, "closed on exec");
  int other = open(f.tmp, O_RDONLY);
  is_int(flock(other, LOCK_EX | LOCK_NB), -1, "locked while written");
  is_int(errno, EWOULDBLOCK, "by its writer");
  close(other);
  char tmp[sizeof(f.tmp)];
  memcpy(tmp, f.tmp, sizeof(tmp));
  is_int(write(f.fd, "new\n", 4), 4, "written");
  is_int(cmg__report_file_close(&f, 0), 0, "closed");
  is_str(content(path), "new\n", "the report at its path");
  ok(!exists(tmp), "the temporary gone");
  is_int(entries(), 1, "nothing else beside it");

  is_int(cmg__report_file_open(&f, path), 0, "open over a report");
  is_str(content(path), "new\n", "the old report stays while written");
  write(f.fd, "newer\n", 6);
  is_int(cmg__report_file_close(&f, 0), 0, "closed");
  is_str(content(path), "newer\n", "the new report replaces it");
}

static void
test_failed(void)
{
  struct cmg__report_file f, g;
  char tmp[sizeof(f.tmp)];
  put(path, "old\n");
  cmg__report_file_open(&f, path);
  memcpy(tmp, f.tmp, sizeof(tmp));
  write(f.fd, "part", 4);
  is_int(cmg__report_file_close(&f, -EIO), -EIO, "a failed report: its error");
  is_str(content(path), "old\n", "a failed report: the old one stays");
  ok(!exists(tmp), "a failed report: the temporary removed");
  is_int(entries(), 1, "a failed report: nothing left beside the path");

  cmg__report_file_open(&f, path);
  cmg__report_file_open(&g, path);
  ok(strcmp(f.tmp, g.tmp) != 0, "two at once: two temporary names");
  cmg__report_file_close(&g, -EIO);
  cmg__report_file_close(&f, -EIO);

  cmg__report_file_open(&f, path);
  unlink(f.tmp);
  is_int(cmg__report_file_close(&f, 0), -ENOENT,
         "a rename that fails: its error");
  is_str(content(path), "old\n", "a rename that fails: the old one stays");
}

static void
test_abandon(void)
{
  struct cmg__report_file f;
  char tmp[sizeof(f.tmp)];
  cmg__report_file_open(&f, path);
  memcpy(tmp, f.tmp, sizeof(tmp));
  cmg__report_abandon();
  ok(!exists(tmp), "abandon: the temporary removed");
  is_int(cmg__report_file_close(&f, 0), -ECANCELED,
         "abandon: the writer's close fails");
  is_str(content(path), "old\n", "abandon: the old report stays");
  put(tmp, "x\n");
  cmg__report_abandon();
  ok(exists(tmp), "abandon: a second time, nothing");
  unlink(tmp);

  cmg__report_file_open(&f, path);
  memcpy(tmp, f.tmp, sizeof(tmp));
  write(f.fd, "done\n", 5);
  cmg__report_file_close(&f, 0);
  put(tmp, "x\n");
  cmg__report_abandon();
  ok(exists(tmp), "abandon: after the rename, nothing");
  is_str(content(path), "done\n", "abandon: after the rename, the report");
  unlink(tmp);
}

/* A FIFO, /dev/null: written themselves, never renamed over. */
static void
test_special(void)
{
  struct cmg__report_file f;
  struct stat st;
  char fifo[160], buf[16] = "";
  in_dir(fifo, sizeof(fifo), "fifo");
  mkfifo(fifo, 0600);
  int rd = open(fifo, O_RDWR | O_NONBLOCK);
  is_int(cmg__report_file_open(&f, fifo), 0, "fifo: open");
  is_str(f.tmp, "", "fifo: no temporary");
  write(f.fd, "json", 4);
  is_int(cmg__report_file_close(&f, 0), 0, "fifo: closed");
  is_int(read(rd, buf, sizeof(buf) - 1), 4, "fifo: the report went in");
  ok(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "fifo: still a FIFO");
  cmg__report_file_open(&f, fifo);
  is_int(cmg__report_file_close(&f, -EIO), -EIO, "fifo: a failure's error");
  ok(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "fifo: not removed");
  close(rd);
  unlink(fifo);

  is_int(cmg__report_file_open(&f, "/dev/null"), 0, "/dev/null: open");
  is_str(f.tmp, "", "/dev/null: no temporary");
  is_int(cmg__report_file_close(&f, 0), 0, "/dev/null: closed");
  ok(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode),
     "/dev/null: still a device");
  is_int(cmg__report_file_open(&f, dir), -EISDIR, "a directory: EISDIR");
}

static void
test_refused(void)
{
  struct cmg__report_file f;
  char missing[160];
  in_dir(missing, sizeof(missing), "missing/r.json");
  is_int(cmg__report_file_open(&f, missing), -ENOENT, "no directory: ENOENT");
  ok(!exists(missing), "no directory: nothing made");
  /* A failed open publishes nothing: should its name appear, a dying
   * process's handler leaves it. */
  char tmp[sizeof(f.tmp)], sub[160];
  memcpy(tmp, f.tmp, sizeof(tmp));
  in_dir(sub, sizeof(sub), "missing");
  mkdir(sub, 0700);
  put(tmp, "x\n");
  cmg__report_abandon();
  ok(exists(tmp), "no directory: abandon removes nothing after");
  unlink(tmp);
  rmdir(sub);

  static char longer[PATH_MAX + CMG__REPORT_MAX + 64];
  memset(longer, 'a', sizeof(longer) - 8);
  longer[sizeof(longer) - 8] = '\0';
  is_int(cmg__report_file_open(&f, longer), -ENAMETOOLONG,
         "a name too long: ENAMETOOLONG");
  is_str(f.tmp, "", "a name too long: no temporary");
}

#define THREADS 4
#define STEPS 10000

static void *
steps(void *arg)
{
  for (int i = 0; i < STEPS; i++)
    cmg__report_step();
  return NULL;
}

static void
test_progress(void)
{
  uint64_t before = cmg__report_progress();
  cmg__report_step();
  cmg__report_step();
  is_u64(cmg__report_progress() - before, 2, "progress: each step counted");
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++)
    pthread_create(&th[i], NULL, steps, NULL);
  for (int i = 0; i < THREADS; i++)
    pthread_join(th[i], NULL);
  is_u64(cmg__report_progress() - before, 2 + THREADS * STEPS,
         "progress: from every thread");
}

int
main(void)
{
  snprintf(dir, sizeof(dir), "/tmp/cmg-report-file-XXXXXX");
  if (mkdtemp(dir) == NULL)
    return 99;
  snprintf(path, sizeof(path), "%s/r.json", dir);
  test_sweep();
  test_commit();
  test_failed();
  test_abandon();
  test_special();
  test_refused();
  test_progress();
  unlink(path);
  rmdir(dir);
  return done_testing();
}
