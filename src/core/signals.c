/*
 * The standard signals' names, by number, for the reports (a death's
 * process.end), the library's lines and the options that name a signal.
 * A table of our own rather than sigabbrev_np: the portable build loads
 * with C libraries older than it (docs/containers.md), and a signal
 * handler may read a table.
 */
#include "config.h"

#include <signal.h>
#include <stddef.h>

#include "core/signals.h"

static const struct {
  int sig;
  const char *name;
} names[] = {
  { SIGHUP, "HUP" },       { SIGINT, "INT" },       { SIGQUIT, "QUIT" },
  { SIGILL, "ILL" },       { SIGTRAP, "TRAP" },     { SIGABRT, "ABRT" },
  { SIGBUS, "BUS" },       { SIGFPE, "FPE" },       { SIGKILL, "KILL" },
  { SIGUSR1, "USR1" },     { SIGSEGV, "SEGV" },     { SIGUSR2, "USR2" },
  { SIGPIPE, "PIPE" },     { SIGALRM, "ALRM" },     { SIGTERM, "TERM" },
  { SIGSTKFLT, "STKFLT" }, { SIGCHLD, "CHLD" },     { SIGCONT, "CONT" },
  { SIGSTOP, "STOP" },     { SIGTSTP, "TSTP" },     { SIGTTIN, "TTIN" },
  { SIGTTOU, "TTOU" },     { SIGURG, "URG" },       { SIGXCPU, "XCPU" },
  { SIGXFSZ, "XFSZ" },     { SIGVTALRM, "VTALRM" }, { SIGPROF, "PROF" },
  { SIGWINCH, "WINCH" },   { SIGPOLL, "POLL" },     { SIGPWR, "PWR" },
  { SIGSYS, "SYS" },
};

const char *
cmg__signal_abbrev(int sig)
{
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (names[i].sig == sig)
      return names[i].name;
  return NULL;
}
