/*
 * The names of the standard signals (signals.c).
 */
#ifndef CMG_CORE_SIGNALS_H
#define CMG_CORE_SIGNALS_H

/* The name of signal sig without "SIG" ("TERM"), or NULL for one without
 * a name of its own (real-time signals, numbers out of range); what the
 * C library's sigabbrev_np says, which glibc has only from 2.32 on.
 * Async-signal-safe. */
const char *cmg__signal_abbrev(int sig);

#endif /* CMG_CORE_SIGNALS_H */
