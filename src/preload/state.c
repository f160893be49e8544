/*
 * The process's state (state.h): defined here, set by start-up.
 */
#include "config.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "preload/state.h"
#include "runtime/ledger/thread_names.h"

struct cmg__config cmg__cfg;
struct cmg__pools cmg__pools_seen;
CMG__TLS struct cmg__thread cmg__self;
pid_t cmg__state_pid;

/* getpid(2) itself: glibc no longer caches it, and a raw clone child would
 * read its parent's pid from any cache. */
bool
cmg__state_is_mine(void)
{
  return (pid_t)syscall(SYS_getpid) == cmg__state_pid;
}

/* A thread's first allocation: its tid, and its name as it is now. */
static uint32_t CMG__COLD
first_tid(void)
{
  uint32_t tid = (uint32_t)syscall(SYS_gettid);
  cmg__threads_note(tid);
  return tid;
}

/* The tid doubles as the thread's "named" flag, so naming costs the
 * allocation path no test of its own. */
uint32_t CMG__HOT
cmg__tid(void)
{
  if (cmg__unlikely(cmg__self.tid == 0))
    cmg__self.tid = first_tid();
  return cmg__self.tid;
}
