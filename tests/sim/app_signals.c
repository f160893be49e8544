/*
 * The script operations on signals, for the tests of the reports written
 * as a process dies: crash (a segfault or abort), handle (the program's
 * own handler), getsig (what sigaction says the action is) and sigdfl
 * (the default action put back through signal(), as CPython does before
 * it re-raises SIGINT).
 */
#include "app_int.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void
crash(const char *how)
{
  app_line("crash how=%s", how);
  fflush(NULL);
  if (strcmp(how, "abort") == 0)
    abort();
  if (strcmp(how, "segv") == 0)
    *(volatile int *)(uintptr_t)8 = 1;
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
  default:
    break;
  }
}
