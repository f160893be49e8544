/*
 * Where the reader's commands write.  A file must appear only whole: it is
 * written as FILE.tmp.PID and renamed into place when the command is done,
 * so a failure before or during the write leaves the file the user had
 * (with its mode), or none, and no temporary beside it.  What is not a
 * regular file (a device, a pipe, a symbolic link) is written through as
 * named, so /dev/stdout, a FIFO a viewer reads and a link into another
 * folder keep working.  Every problem is one line on stderr, after what
 * stdout holds so far, and the exit status says it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reader/show/output.h"
#include "reader/tool.h"
#include "../tap.h"

static char dir[256];
static char err_path[300];
static int saved_err = -1;

static const char *
in_dir(const char *name)
{
  static char path[2][320];
  static int k;

  k ^= 1;
  snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
  return path[k];
}

static const char *
pending_of(const char *path)
{
  static char p[400];

  snprintf(p, sizeof(p), "%s.tmp.%ld", path, (long)getpid());
  return p;
}

/* The file's text, "" when it has none, or "(none)" when it cannot be
 * read. */
static const char *
text_of(const char *path)
{
  static char buf[256];
  int fd = open(path, O_RDONLY | O_NONBLOCK);
  ssize_t n;

  if (fd < 0)
    return "(none)";
  n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  buf[n > 0 ? n : 0] = '\0';
  return buf;
}

static void
put_file(const char *path, const char *text, mode_t mode)
{
  FILE *f = fopen(path, "w");

  if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0 ||
      chmod(path, mode) != 0)
    abort();
}

static bool
exists(const char *path)
{
  struct stat st;

  return lstat(path, &st) == 0;
}

static mode_t
mode_of(const char *path)
{
  struct stat st;

  return stat(path, &st) == 0 ? st.st_mode & 07777 : 0;
}

/* stderr into a file until caught() gives what it got. */
static void
catch_stderr(void)
{
  int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

  fflush(stderr);
  saved_err = dup(STDERR_FILENO);
  if (fd < 0 || saved_err < 0 || dup2(fd, STDERR_FILENO) < 0)
    abort();
  close(fd);
}

static const char *
caught(void)
{
  fflush(stderr);
  dup2(saved_err, STDERR_FILENO);
  close(saved_err);
  return text_of(err_path);
}

/* The text a failure says of path: "cumemguard-report: PATH: WHAT: ERR\n". */
static const char *
said(const char *path, const char *what, int err)
{
  static char line[512];

  snprintf(line, sizeof(line), CMG__TOOL_NAME ": %s: %s: %s\n", path, what,
           strerror(err));
  return line;
}

static void
test_stdout(void)
{
  ok(cmg__output_create(NULL) == stdout, "no output: stdout");
  ok(cmg__output_create("-") == stdout, "\"-\": stdout");
  is_int(cmg__output_close(stdout, NULL, 0), 0, "closing stdout: 0");
  is_int(cmg__output_close(stdout, "-", 1), CMG__TOOL_EXIT_ERROR,
         "closing stdout after a failure: the error status");
  ok(fcntl(STDOUT_FILENO, F_GETFD) != -1 && fflush(stdout) == 0,
     "and stdout stays open");
}

static void
test_new_file(void)
{
  const char *out = in_dir("new.txt");
  FILE *f;

  umask(022);
  catch_stderr();
  f = cmg__output_create(out);
  ok(f != NULL && f != stdout, "a file is created");
  fputs("whole\n", f);
  fflush(f);
  ok(!exists(out), "not under its name while it is written");
  is_str(text_of(pending_of(out)), "whole\n", "but as FILE.tmp.PID");
  is_int(cmg__output_close(f, out, 0), 0, "closed: 0");
  is_str(caught(), "", "nothing said");
  is_str(text_of(out), "whole\n", "then renamed into place");
  ok(!exists(pending_of(out)), "leaving no temporary");
  is_int(mode_of(out), 0644, "a new file takes the umask's mode");
}

static void
test_replace(void)
{
  const char *out = in_dir("old.txt");
  FILE *f;

  put_file(out, "old\n", 0640);
  f = cmg__output_create(out);
  fputs("new\n", f);
  fflush(f);
  is_str(text_of(out), "old\n", "the old file stays while the new is written");
  is_int(mode_of(pending_of(out)), 0640, "the temporary has the old mode");
  is_int(cmg__output_close(f, out, 0), 0, "closed: 0");
  is_str(text_of(out), "new\n", "the new file replaces it");
  is_int(mode_of(out), 0640, "with the mode the old one had");
  ok(!exists(pending_of(out)), "leaving no temporary");

  put_file(out, "read-only\n", 0444);
  f = cmg__output_create(out);
  fputs("replaced\n", f);
  is_int(cmg__output_close(f, out, 0), 0, "a read-only file is replaced too");
  is_str(text_of(out), "replaced\n", "with the new text");
  is_int(mode_of(out), 0444, "and stays read-only");
}

/* The command failed after creating the output: the status says so, the
 * command has said why, and the user's file is as it was. */
static void
test_failed_command(void)
{
  const char *out = in_dir("kept.txt"), *none = in_dir("never.txt");
  FILE *f;

  put_file(out, "kept\n", 0600);
  catch_stderr();
  f = cmg__output_create(out);
  fputs("half a pa", f);
  is_int(cmg__output_close(f, out, 1), CMG__TOOL_EXIT_ERROR,
         "a failed command: the error status");
  is_str(caught(), "", "close says nothing more");
  is_str(text_of(out), "kept\n", "the user's file is untouched");
  ok(!exists(pending_of(out)), "the half-written temporary is removed");

  f = cmg__output_create(none);
  fputs("half", f);
  is_int(cmg__output_close(f, none, 1), CMG__TOOL_EXIT_ERROR,
         "failed before any file existed: the error status");
  ok(!exists(none) && !exists(pending_of(none)), "and no file is left");
}

/* The rename itself fails (here: the temporary was removed under us). */
static void
test_rename_fails(void)
{
  const char *out = in_dir("rename.txt");
  FILE *f;

  put_file(out, "before\n", 0644);
  catch_stderr();
  f = cmg__output_create(out);
  fputs("after\n", f);
  unlink(pending_of(out));
  is_int(cmg__output_close(f, out, 0), CMG__TOOL_EXIT_ERROR,
         "a failed rename: the error status");
  is_str(caught(), said(out, "cannot write", ENOENT), "one line says why");
  is_str(text_of(out), "before\n", "and the old file stays");
}

/* A device is written through: /dev/full takes nothing, and the error
 * comes at the close, where the buffer is flushed. */
static void
test_device(void)
{
  FILE *f;

  catch_stderr();
  f = cmg__output_create("/dev/full");
  ok(f != NULL, "a device is opened");
  ok(!exists(pending_of("/dev/full")), "without a temporary");
  fputs("nowhere\n", f);
  is_int(cmg__output_close(f, "/dev/full", 0), CMG__TOOL_EXIT_ERROR,
         "a full device: the error status");
  is_str(caught(), said("/dev/full", "cannot write", ENOSPC),
         "one line says why");
}

static void
test_symlink(void)
{
  const char *target = in_dir("target.txt"), *lnk = in_dir("link.txt");
  struct stat st;
  FILE *f;

  put_file(target, "target\n", 0644);
  if (symlink("target.txt", lnk) != 0)
    abort();
  f = cmg__output_create(lnk);
  fputs("through\n", f);
  fflush(f);
  ok(!exists(pending_of(lnk)), "a link is written without a temporary");
  is_str(text_of(target), "through\n", "straight into its target");
  is_int(cmg__output_close(f, lnk, 0), 0, "closed: 0");
  ok(lstat(lnk, &st) == 0 && S_ISLNK(st.st_mode), "the link stays a link");
  is_str(text_of(target), "through\n", "its target holds the output");
}

static void
test_fifo(void)
{
  const char *fifo = in_dir("fifo");
  struct stat st;
  char buf[64] = "";
  FILE *f;
  int rd;

  if (mkfifo(fifo, 0600) != 0 || (rd = open(fifo, O_RDONLY | O_NONBLOCK)) < 0)
    abort();
  f = cmg__output_create(fifo);
  ok(f != NULL, "a FIFO with a reader is opened");
  ok(!exists(pending_of(fifo)), "without a temporary");
  fputs("piped\n", f);
  is_int(cmg__output_close(f, fifo, 0), 0, "closed: 0");
  ok(read(rd, buf, sizeof(buf) - 1) == 6, "the reader gets the output");
  is_str(buf, "piped\n", "as written");
  ok(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO stays a FIFO");
  close(rd);
}

static void
test_cannot_create(void)
{
  const char *sub = in_dir("sub"), *missing = in_dir("no/such/file");

  if (mkdir(sub, 0700) != 0)
    abort();
  catch_stderr();
  ok(cmg__output_create(sub) == NULL, "a folder: NULL");
  is_str(caught(), said(sub, "cannot create", EISDIR), "one line says why");
  catch_stderr();
  ok(cmg__output_create(missing) == NULL, "a missing folder: NULL");
  is_str(caught(), said(missing, "cannot create", ENOENT), "one line says why");
  ok(!exists(pending_of(sub)), "no temporary is left");
}

/* When FILE.tmp.PID is taken, the file is written in place rather than
 * not at all, and what had that name is left alone. */
static void
test_pending_taken(void)
{
  const char *out = in_dir("taken.txt");
  FILE *f;

  put_file(pending_of(out), "someone's\n", 0644);
  f = cmg__output_create(out);
  ok(f != NULL, "the temporary's name is taken: still created");
  ok(exists(out), "in place, at once");
  fputs("in place\n", f);
  is_int(cmg__output_close(f, out, 0), 0, "closed: 0");
  is_str(text_of(out), "in place\n", "the output is there");
  is_str(text_of(pending_of(out)), "someone's\n",
         "and the file under the temporary's name is untouched");
  unlink(pending_of(out));

  /* The next file goes through a temporary again. */
  out = in_dir("after.txt");
  f = cmg__output_create(out);
  fputs("x", f);
  fflush(f);
  ok(!exists(out) && exists(pending_of(out)),
     "the next output is written under a temporary again");
  cmg__output_close(f, out, 0);
}

/* The error line follows what stdout holds, on one terminal. */
static void
test_say(void)
{
  const char *both = in_dir("both.txt");
  pid_t pid;
  int st = -1;

  fflush(stdout);
  if ((pid = fork()) == 0) {
    int fd = open(both, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    printf("partial output, ");
    cmg__output_say("%s: %d %s", "data/x.json", 42, "problems");
    printf("then more");
    fflush(stdout);
    _exit(0);
  }
  waitpid(pid, &st, 0);
  is_int(st, 0, "the child ran");
  is_str(text_of(both),
         "partial output, " CMG__TOOL_NAME
         ": data/x.json: 42 problems\nthen more",
         "stdout first, then the tool's name and the line, one newline");
}

static void
cleanup(void)
{
  const char *names[] = { "new.txt",   "old.txt",    "kept.txt", "rename.txt",
                          "link.txt",  "target.txt", "fifo",     "sub",
                          "taken.txt", "after.txt",  "both.txt", "stderr" };

  for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
    remove(in_dir(names[i]));
  rmdir(dir);
}

int
main(void)
{
  const char *tmp = getenv("TMPDIR");

  snprintf(dir, sizeof(dir), "%s/cmg-output-XXXXXX",
           tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
  if (mkdtemp(dir) == NULL)
    abort();
  snprintf(err_path, sizeof(err_path), "%s/stderr", dir);
  test_stdout();
  test_new_file();
  test_replace();
  test_failed_command();
  test_rename_fails();
  test_device();
  test_symlink();
  test_fifo();
  test_cannot_create();
  test_pending_taken();
  test_say();
  cleanup();
  return done_testing();
}
