/*
 * Unit tests of signals.c: the name of each standard signal, as the C
 * library's sigabbrev_np gives it.
 */
#include "config.h"

#include <signal.h>
#include <string.h>

#include "core/signals.h"
#include "../tap.h"

static void
test_signal_abbrev(void)
{
  /* Every standard signal has its name, as glibc's sigabbrev_np gives it. */
  is_str(cmg__signal_abbrev(SIGTERM), "TERM", "SIGTERM is TERM");
  is_str(cmg__signal_abbrev(SIGSEGV), "SEGV", "SIGSEGV is SEGV");
  is_str(cmg__signal_abbrev(SIGSYS), "SYS", "SIGSYS is SYS");
  for (int sig = 1; sig < 32; sig++) {
    const char *abbrev = cmg__signal_abbrev(sig);
    ok(abbrev != NULL && strcmp(abbrev, sigabbrev_np(sig)) == 0,
       "signal %d is %s", sig, abbrev ? abbrev : "(none)");
  }
  ok(cmg__signal_abbrev(0) == NULL && cmg__signal_abbrev(SIGRTMIN) == NULL &&
         cmg__signal_abbrev(-1) == NULL,
     "no name for 0, a real-time signal or -1");
}

int
main(void)
{
  test_signal_abbrev();
  return done_testing();
}
