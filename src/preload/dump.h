/*
 * When reports are written: once at exit, on dump_signal and soft-limit
 * crossings from a thread of their own, and on request (dump.c).
 */
#ifndef CMG_PRELOAD_DUMP_H
#define CMG_PRELOAD_DUMP_H

#include "core/conf.h"
#include "core/report.h"

/* Once per process: the exit report, and the dump thread with its signal
 * when the options want one.  cfg stays the process's options. */
void cmg__dump_setup(const struct cmg__config *cfg);

/* The dump thread again, in a forked child. */
void cmg__dump_start_thread(void);

/* Asks the dump thread for a snapshot report. */
void cmg__dump_request(enum cmg__reason reason);

/* Writes a report now, to path or to the report option's; 0 or -errno. */
int cmg__dump_now(const char *path, enum cmg__reason reason);

#endif /* CMG_PRELOAD_DUMP_H */
