/*
 * The script operations on signals, for the tests of the reports written
 * as a process dies: crash (a segfault, abort, or a bus error of the
 * program's own), handle (the program's
 * own handler), getsig (what sigaction says the action is), sigdfl
 * (the default action put back through signal(), as CPython does before
 * it re-raises SIGINT), toggle (a signal ignored and set back to its
 * default N times, as a program guarding a critical section might), and
 * closefds (every descriptor from 3 to 1023 closed and eight files opened
 * in their place, as daemons and process managers do) and fdcheck (how
 * many of those are still open as those files), pid (the process's
 * own, for tests that find its report or signal it), and await (waiting
 * for a file, so that a test can put another process's steps between two
 * of this one's), and clone (a child made without fork(), by glibc's
 * clone, a raw clone system call or vfork, that calls exit(0) at once: no
 * fork handler runs in it, and its exit runs the parent's exit handlers).
 */
/* clone(2)'s wrapper is a GNU extension. */
#define _GNU_SOURCE
#include "app_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *
action_name(void (*handler)(int))
{
  if (handler == SIG_DFL)
    return "default";
  return handler == SIG_IGN ? "ignore" : "handler";
}

/* Async-signal-safe: write and _exit only. */
static void
on_handled(int sig)
{
  char line[] = "handled\n";
  (void)sig;
  if (write(STDOUT_FILENO, line, sizeof(line) - 1) < 0)
    _exit(4);
  _exit(3);
}

/* A read past the end of a file that was mapped whole and then cut to
 * nothing: the kernel's SIGBUS, as a program of its own meets it. */
static void
bus_fault(void)
{
  char path[] = "/tmp/cmgsim-bus.XXXXXX";
  int fd = mkstemp(path);
  long page = sysconf(_SC_PAGESIZE);
  if (fd < 0 || ftruncate(fd, page) != 0)
    return;
  unlink(path);
  volatile char *p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED || ftruncate(fd, 0) != 0)
    return;
  (void)p[0];
}

static void
crash(const char *how)
{
  app_line("crash how=%s", how);
  fflush(NULL);
  if (strcmp(how, "abort") == 0)
    abort();
  if (strcmp(how, "segv") == 0)
    *(volatile int *)(uintptr_t)8 = 1;
  if (strcmp(how, "bus") == 0)
    bus_fault();
  app_line("crash unknown how=%s", how);
  exit(64);
}

static void
handle(const struct op *op)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_handled;
  sigemptyset(&sa.sa_mask);
  app_line("handle sig=%s rc=%d", op->word,
           sigaction((int)op->arg[0], &sa, NULL));
}

static void
getsig(const struct op *op)
{
  struct sigaction old;
  int rc = sigaction((int)op->arg[0], NULL, &old);
  app_line("getsig sig=%s rc=%d action=%s", op->word, rc,
           action_name(old.sa_handler));
}

static void
sigdfl(const struct op *op)
{
  void (*old)(int) = signal((int)op->arg[0], SIG_DFL);
  app_line("sigdfl sig=%s old=%s", op->word,
           old == SIG_ERR ? "error" : action_name(old));
}

static void
toggle(const struct op *op)
{
  int sig = (int)op->arg[0], bad = 0;
  for (uint64_t i = 0; i < op->arg[1]; i++)
    bad += signal(sig, SIG_IGN) == SIG_ERR || signal(sig, SIG_DFL) == SIG_ERR;
  app_line("toggle sig=%s n=%llu errors=%d", op->word,
           (unsigned long long)op->arg[1], bad);
}

static struct {
  int fd;
  char path[4096];
} opened_files[8];

/* The files are DIR/fd.0 to DIR/fd.7, each holding its own name, left
 * open: a test compares them byte for byte after the process is gone. */
static void
closefds(const struct op *op)
{
  int opened = 0, lowest = -1;
  for (int fd = 3; fd < 1024; fd++)
    close(fd);
  for (int i = 0; i < 8; i++) {
    char *path = opened_files[i].path;
    snprintf(path, sizeof(opened_files[i].path), "%s/fd.%d", op->word, i);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    opened_files[i].fd = fd;
    if (fd < 0 || write(fd, path, strlen(path)) != (ssize_t)strlen(path))
      continue;
    opened++;
    if (lowest < 0)
      lowest = fd;
  }
  app_line("closefds opened=%d lowest=%d", opened, lowest);
}

static void
fdcheck(void)
{
  int still = 0;
  for (int i = 0; i < 8; i++) {
    char link[64], target[4096];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", opened_files[i].fd);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n > 0) {
      target[n] = '\0';
      still += strcmp(target, opened_files[i].path) == 0;
    }
  }
  app_line("fdcheck open=%d", still);
}

/* await PATH: until PATH exists, looking every 10 ms for up to a minute
 * (a loaded machine); rc 110 (ETIMEDOUT) when it never came. */
static void
await_file(const char *path)
{
  struct timespec tick = { 0, 10 * 1000 * 1000 };
  int waited = 0;
  while (access(path, F_OK) != 0 && waited < 6000) {
    nanosleep(&tick, NULL);
    waited++;
  }
  app_line("await rc=%d", access(path, F_OK) == 0 ? 0 : 110);
}

static int
exit_at_once(void *arg)
{
  (void)arg;
  exit(0);
}

/* clone HOW: libc, raw or vfork; rc 22 for another word. */
static void
do_clone(const struct op *op)
{
  static char stack[256 * 1024] __attribute__((aligned(16)));
  pid_t pid = -1;
  int status = 0;

  fflush(NULL);
  if (strcmp(op->word, "libc") == 0) {
    pid = clone(exit_at_once, stack + sizeof(stack), SIGCHLD, NULL);
  } else if (strcmp(op->word, "raw") == 0) {
    pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (pid == 0)
      exit(0);
  } else if (strcmp(op->word, "vfork") == 0) {
    pid = vfork();
    if (pid == 0)
      exit(0);
  } else {
    app_line("clone how=%s rc=22", op->word);
    return;
  }
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (pid < 0)
    app_line("clone how=%s rc=%d", op->word, errno);
  else
    app_line("clone how=%s rc=0 status=%d", op->word,
             WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

void
app_run_signals(const struct op *op)
{
  switch (op->spec->kind) {
  case OP_CRASH:
    crash(op->word);
    break;
  case OP_HANDLE:
    handle(op);
    break;
  case OP_GETSIG:
    getsig(op);
    break;
  case OP_SIGDFL:
    sigdfl(op);
    break;
  case OP_TOGGLE:
    toggle(op);
    break;
  case OP_CLOSEFDS:
    closefds(op);
    break;
  case OP_FDCHECK:
    fdcheck();
    break;
  case OP_PID:
    app_line("pid pid=%d ppid=%d", (int)getpid(), (int)getppid());
    break;
  case OP_AWAIT:
    await_file(op->word);
    break;
  case OP_CLONE:
    do_clone(op);
    break;
  default:
    break;
  }
}
