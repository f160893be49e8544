/*
 * When reports are written: once at exit, on dump_signal and soft-limit
 * crossings from a thread of their own, and on request (dump.c).
 */
#ifndef CMG_PRELOAD_DUMP_H
#define CMG_PRELOAD_DUMP_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/conf.h"
#include "runtime/report/report.h"

/* Once per process: the exit report, and the dump thread with its signal
 * when the options want one.  cfg stays the process's options. */
void cmg__dump_setup(const struct cmg__config *cfg);

/* The dump thread, where the options or a deadly signal's report need it
 * and it does not run in this process yet (a forked child's first use). */
void cmg__dump_start_thread(void);

/* Asks the dump thread for a snapshot report. */
void cmg__dump_request(enum cmg__reason reason);

/* Whether a deadly signal arriving on thread tid can have its report
 * written: device memory was used, and the dump thread runs in this
 * process on another thread.  Async-signal-safe, as are the two below. */
bool cmg__dump_can_report_death(pid_t tid);

/* Asks the dump thread for the report of a process sig is killing. */
void cmg__dump_request_death(int sig);

/* Whether that report is written (or could not be). */
bool cmg__dump_death_written(void);

/* Before a fork (start.c's fork handler): waits, briefly, while the dump
 * thread is starting. */
void cmg__dump_prefork(void);

/* In a forked child (start.c's fork handler): a lock the parent's dump
 * thread held is made anew, and no request of the parent's is left. */
void cmg__dump_after_fork(void);

/* Writes a report now, to path or to the report option's; 0 or -errno
 * (-ECHILD in a child no fork handler ran for: its ledger is its
 * parent's). */
int cmg__dump_now(const char *path, enum cmg__reason reason);

#endif /* CMG_PRELOAD_DUMP_H */
