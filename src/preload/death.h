/*
 * A report as a signal's default action kills the process, and the
 * program's own view of those signals' actions (death.c).
 */
#ifndef CMG_PRELOAD_DEATH_H
#define CMG_PRELOAD_DEATH_H

#include <signal.h>

#include "core/conf.h"

/* Once, at start-up, before any of the program's sigaction calls can
 * need the real one; cfg stays the process's options. */
void cmg__death_setup(const struct cmg__config *cfg);

/* Once a group segment (or the registry's) is mapped: SIGBUS goes through
 * our handler from here on, whatever the program sets but SIG_IGN, so that
 * a segment truncated under the process fails its group closed instead of
 * killing it. */
void cmg__death_guard(void);

/* At the process's first use of device memory: from here on a deadly
 * signal whose action is the default writes a report first.  Again in a
 * forked child; never from a signal handler. */
void cmg__death_arm(void);

/* The program's sigaction and signal: what it set is what it sees. */
int cmg__death_sigaction(int sig, const struct sigaction *act,
                         struct sigaction *old);
__sighandler_t cmg__death_signal(int sig, __sighandler_t handler);

#endif /* CMG_PRELOAD_DEATH_H */
