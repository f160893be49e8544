/*
 * The files written for other programs: the extension check that stands
 * for how CDI runtimes and node_exporter pick their files (a hidden
 * ".json" is no spec), a write that survives short writes and signals
 * and returns the errno of one that fails, and the atomic replacement: a
 * hidden temporary beside the file (watched through inotify, so that its
 * name is seen, not guessed), mode 0644 whatever the umask, a reader of
 * the old file left with the old text, and on failure one line naming the
 * path and no temporary left behind.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ops/files.h"
#include "../tap.h"

static char dir[64];

static void
test_has_ext(void)
{
  struct {
    const char *path, *ext;
    bool want;
  } cases[] = {
    { "cumemguard.json", ".json", true },
    { "/etc/cdi/cumemguard.json", ".json", true },
    { "x.json", ".json", true },
    { "/var/lib/node_exporter/cumemguard.prom", ".prom", true },
    { ".json", ".json", false },
    { "x/.json", ".json", false },
    { "/etc/cdi/.json", ".json", false },
    { "json", ".json", false },
    { "", ".json", false },
    { "spec.json.tmp", ".json", false },
    { "spec.JSON", ".json", false },
    { "spec.yaml", ".json", false },
    { "metrics.prom", ".json", false },
  };
  int right = 0;

  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    bool got = cmg__file_has_ext(cases[i].path, cases[i].ext);
    right += got == cases[i].want;
    if (got != cases[i].want)
      printf("# '%s' with '%s': %d\n", cases[i].path, cases[i].ext, got);
  }
  is_int(right, sizeof(cases) / sizeof(cases[0]),
         "has_ext: a name ending in ext after one character or more");
}

/* ---- cmg__write_all ----------------------------------------------------- */

#define BIG (4u << 20)

static volatile sig_atomic_t caught;

static void
on_signal(int sig)
{
  (void)sig;
  caught++;
}

struct drain {
  int fd;
  size_t got;
  bool same;
  const unsigned char *want;
};

/* Reads the pipe in small pieces, so that the writer blocks on it, and
 * only after 3 ms: the writer's first write is cut short once the pipe is
 * full, and the next ones fail with EINTR, nothing written. */
static void *
drain(void *arg)
{
  struct drain *d = arg;
  unsigned char buf[3000];
  struct timespec late = { 0, 3000000 };
  ssize_t n;

  nanosleep(&late, NULL);
  d->same = true;
  while ((n = read(d->fd, buf, sizeof(buf))) > 0) {
    if (memcmp(buf, d->want + d->got, (size_t)n) != 0)
      d->same = false;
    d->got += (size_t)n;
  }
  return NULL;
}

static pthread_t writer;
static _Atomic bool written;

/* Signals the writer every 100 us while it writes, 200 times at most. */
static void *
interrupt(void *arg)
{
  struct timespec gap = { 0, 100000 };

  (void)arg;
  for (int i = 0; i < 200 && !written; i++) {
    pthread_kill(writer, SIGUSR1);
    nanosleep(&gap, NULL);
  }
  return NULL;
}

static void
test_write_all_pipe(void)
{
  unsigned char *text = malloc(BIG);
  struct sigaction sa = { .sa_handler = on_signal }, old;
  struct drain d = { .want = text };
  pthread_t t, k;
  int p[2];

  for (size_t i = 0; i < BIG; i++)
    text[i] = (unsigned char)(i * 7 + i / 251);
  if (pipe(p) != 0)
    abort();
  d.fd = p[0];
  /* No SA_RESTART: a signal cuts the blocked write short, or fails it
   * with EINTR before a byte is written. */
  sigaction(SIGUSR1, &sa, &old);
  writer = pthread_self();
  pthread_create(&t, NULL, drain, &d);
  pthread_create(&k, NULL, interrupt, NULL);
  int rc = cmg__write_all(p[1], (const char *)text, BIG);
  written = true;
  pthread_join(k, NULL);
  close(p[1]);
  pthread_join(t, NULL);
  close(p[0]);
  sigaction(SIGUSR1, &old, NULL);
  is_int(rc, 0, "write_all: 4 MiB through a pipe, signalled while it writes");
  ok(caught > 0, "write_all: the signals came (%d)", (int)caught);
  is_u64(d.got, BIG, "write_all: every byte arrives");
  ok(d.same, "write_all: in order, none twice");
  free(text);
}

static void
test_write_all_errors(void)
{
  int p[2], fd;

  is_int(cmg__write_all(-1, "x", 0), 0, "write_all: nothing to write is 0");
  is_int(cmg__write_all(-1, "x", 1), -EBADF, "write_all: a bad fd is -EBADF");
  fd = open("/dev/null", O_RDONLY);
  is_int(cmg__write_all(fd, "x", 1), -EBADF,
         "write_all: an fd open for reading is -EBADF");
  close(fd);
  fd = open("/dev/full", O_WRONLY);
  if (fd >= 0)
    is_int(cmg__write_all(fd, "x", 1), -ENOSPC,
           "write_all: a full device is -ENOSPC");
  else
    ok(1, "# SKIP no /dev/full");
  close(fd);
  if (pipe(p) != 0)
    abort();
  close(p[0]);
  signal(SIGPIPE, SIG_IGN);
  is_int(cmg__write_all(p[1], "abc", 3), -EPIPE,
         "write_all: a pipe without reader is -EPIPE");
  signal(SIGPIPE, SIG_DFL);
  close(p[1]);
}

/* ---- cmg__write_atomic -------------------------------------------------- */

/* stderr into a file between capture_start and capture_end, which gives
 * what was written (and shows it as TAP comments). */
static int saved_fd = -1;
static FILE *capture;

static void
capture_start(void)
{
  capture = tmpfile();
  fflush(stderr);
  saved_fd = dup(STDERR_FILENO);
  dup2(fileno(capture), STDERR_FILENO);
}

static void
capture_end(char *out, size_t len)
{
  dup2(saved_fd, STDERR_FILENO);
  close(saved_fd);
  ssize_t n = pread(fileno(capture), out, len - 1, 0);
  out[n > 0 ? n : 0] = '\0';
  fclose(capture);
  for (char *l = out, *e; *l; l = *e ? e + 1 : e) {
    e = l + strcspn(l, "\n");
    printf("# stderr: %.*s\n", (int)(e - l), l);
  }
}

static int
lines_of(const char *s)
{
  int n = 0;
  for (; *s; s++)
    n += *s == '\n';
  return n;
}

/* The names in dir, comma-separated, sorted by readdir's whim: the tests
 * keep at most one. */
static void
listing(char *out, size_t len)
{
  DIR *d = opendir(dir);
  struct dirent *e;

  out[0] = '\0';
  while (d != NULL && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? "," : "",
             e->d_name);
  }
  if (d != NULL)
    closedir(d);
}

static void
read_file(const char *path, char *out, size_t len)
{
  int fd = open(path, O_RDONLY);
  ssize_t n = fd >= 0 ? read(fd, out, len - 1) : -1;
  out[n > 0 ? n : 0] = '\0';
  if (fd >= 0)
    close(fd);
}

static void
test_atomic_new(void)
{
  char path[128], text[256], names[256];
  struct stat st;
  int in = inotify_init1(IN_NONBLOCK);
  mode_t mask = umask(077);

  snprintf(path, sizeof(path), "%s/spec.json", dir);
  inotify_add_watch(in, dir, IN_CREATE | IN_MOVED_TO);
  is_int(cmg__write_atomic(path, "{\"a\": 1}\n", 9), 0, "atomic: a new file");
  umask(mask);
  read_file(path, text, sizeof(text));
  is_str(text, "{\"a\": 1}\n", "atomic: holds the text");
  ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644,
     "atomic: mode 0644 under umask 077 (%o)", st.st_mode & 07777);

  /* What the directory saw: a hidden file made, then renamed in place. */
  char ev[4096] __attribute__((aligned(8)));
  char created[64] = "", moved[64] = "";
  ssize_t n = read(in, ev, sizeof(ev));
  for (char *p = ev; n > 0 && p < ev + n;) {
    struct inotify_event *e = (struct inotify_event *)p;
    if ((e->mask & IN_CREATE) && !created[0])
      snprintf(created, sizeof(created), "%s", e->name);
    if (e->mask & IN_MOVED_TO)
      snprintf(moved, sizeof(moved), "%s", e->name);
    p += sizeof(*e) + e->len;
  }
  close(in);
  ok(strncmp(created, ".spec.json.", 11) == 0 && strlen(created) == 17,
     "atomic: the temporary is .spec.json.XXXXXX beside it (%s)", created);
  is_str(moved, "spec.json", "atomic: renamed onto the file's name");
  listing(names, sizeof(names));
  is_str(names, "spec.json", "atomic: no temporary left");
}

static void
test_atomic_replace(void)
{
  char path[128], text[256], names[256];
  struct stat st;

  snprintf(path, sizeof(path), "%s/spec.json", dir);
  chmod(path, 0600);
  int old = open(path, O_RDONLY);
  is_int(cmg__write_atomic(path, "second", 6), 0, "atomic: a replacement");
  read_file(path, text, sizeof(text));
  is_str(text, "second", "atomic: the new text, none of the old");
  ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644,
     "atomic: mode 0644 again, not the old file's 0600");
  ssize_t n = pread(old, text, sizeof(text) - 1, 0);
  text[n > 0 ? n : 0] = '\0';
  is_str(text, "{\"a\": 1}\n",
         "atomic: a reader of the old file still reads it whole");
  close(old);
  is_int(cmg__write_atomic(path, "", 0), 0, "atomic: empty text");
  ok(stat(path, &st) == 0 && st.st_size == 0, "atomic: an empty file");
  listing(names, sizeof(names));
  is_str(names, "spec.json", "atomic: still one file");
  unlink(path);
}

static void
test_atomic_relative(void)
{
  char here[512], text[64], names[256];

  if (getcwd(here, sizeof(here)) == NULL || chdir(dir) != 0) {
    ok(0, "atomic: cannot change directory");
    return;
  }
  int rc = cmg__write_atomic("rel.prom", "m 1\n", 4);
  read_file("rel.prom", text, sizeof(text));
  if (chdir(here) != 0)
    printf("# cannot go back to %s\n", here);
  is_int(rc, 0, "atomic: a name without a folder");
  is_str(text, "m 1\n", "atomic: written in the current folder");
  listing(names, sizeof(names));
  is_str(names, "rel.prom", "atomic: its temporary beside it, gone");
  snprintf(names, sizeof(names), "%s/rel.prom", dir);
  unlink(names);
}

static void
test_atomic_fails(void)
{
  char path[128], out[1024], names[256];
  int rc;

  snprintf(path, sizeof(path), "%s/none/spec.json", dir);
  capture_start();
  rc = cmg__write_atomic(path, "x", 1);
  capture_end(out, sizeof(out));
  is_int(rc, -ENOENT, "atomic: a missing folder is -ENOENT");
  ok(lines_of(out) == 1 && strstr(out, path) != NULL &&
         strncmp(out, "cumemguard: cannot create a temporary file", 42) == 0,
     "atomic: one line naming the path");

  /* The rename fails once the text is written: a folder in the way. */
  snprintf(path, sizeof(path), "%s/in-the-way.json", dir);
  mkdir(path, 0755);
  capture_start();
  rc = cmg__write_atomic(path, "x", 1);
  capture_end(out, sizeof(out));
  is_int(rc, -EISDIR, "atomic: a folder at the path is -EISDIR");
  ok(lines_of(out) == 1 && strstr(out, "cannot write") != NULL &&
         strstr(out, path) != NULL,
     "atomic: one line naming the path");
  listing(names, sizeof(names));
  is_str(names, "in-the-way.json",
         "atomic: the temporary is removed, the folder left");
  struct stat st;
  ok(stat(path, &st) == 0 && S_ISDIR(st.st_mode),
     "atomic: the folder is still a folder");
  rmdir(path);
}

int
main(void)
{
  snprintf(dir, sizeof(dir), "/tmp/test_files.XXXXXX");
  if (mkdtemp(dir) == NULL) {
    printf("# cannot make a folder in /tmp\n");
    return 1;
  }
  test_has_ext();
  test_write_all_pipe();
  test_write_all_errors();
  test_atomic_new();
  test_atomic_replace();
  test_atomic_relative();
  test_atomic_fails();
  ok(rmdir(dir) == 0, "nothing left behind");
  return done_testing();
}
