/*
 * The program's sigaction and signal, answered from the program's own
 * view of the deadly signals' actions (death.c).
 */
#include "config.h"

#include <signal.h>

#include "core/base.h"
#include "preload/death.h"

CMG__EXPORT int
sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
  return cmg__death_sigaction(sig, act, old);
}

CMG__EXPORT __sighandler_t
signal(int sig, __sighandler_t handler)
{
  return cmg__death_signal(sig, handler);
}
