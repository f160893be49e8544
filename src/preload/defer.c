/*
 * A deadly signal put off while the library holds a lock.  The report a
 * dying process writes (death.c) is made by the dump thread, which takes
 * the ledger's, the stack table's and the history's locks one at a time;
 * if the signal lands on a thread holding one of them, the report would
 * wait for a lock that is never released (a ledger shard's spinlock spun
 * until the wait ran out).  So the stretches of the library that take
 * those locks count themselves on the thread (defer.h), a handler that
 * finds the count above zero only notes the signal and returns, and the
 * last stretch to end sends the signal to its thread again: delivered as
 * the kill returns, with no lock of ours held.  A stretch never spans a
 * call into the driver or a wait for memory, so a signal is put off for
 * a few microseconds at most.
 *
 * A fault the kernel raises on an instruction of ours cannot be put off
 * (returning would fault again); death.c never asks.
 */
#include "config.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "preload/defer.h"

CMG__TLS struct cmg__defer cmg__defer;

void CMG__COLD
cmg__defer_raise(void)
{
  int sig = cmg__defer.signal;
  cmg__defer.signal = 0;
  syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
}

bool
cmg__defer_postpone(int sig)
{
  if (cmg__defer.depth == 0)
    return false;
  cmg__defer.signal = sig;
  return true;
}
