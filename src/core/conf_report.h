/*
 * The report pattern and the dump signals of the options (conf_report.c).
 */
#ifndef CMG_CORE_CONF_REPORT_H
#define CMG_CORE_CONF_REPORT_H

#include <stdbool.h>
#include <stddef.h>

/* The pid of the process a report pattern without %p names, set by the
 * launcher for the program it starts: any other process (a forked child, a
 * program that child runs) adds its own pid to the name, so that no report
 * replaces another's. */
#define CMG__REPORT_PID_VAR "CUMEMGUARD_REPORT_PID"

/* Checks the escapes of a report pattern of len bytes: -EINVAL for a '%'
 * followed by anything but p, h, t or %, or for a trailing lone '%'. */
int cmg__config_check_pattern(const char *s, size_t len);

/* Expands a report pattern: %p pid, %h host name, %t unix time in seconds,
 * %% a percent sign.  Returns 0, -EINVAL for another escape, -ENAMETOOLONG
 * when the result does not fit in len bytes. */
int cmg__config_expand(const char *pattern, long pid, const char *host,
                       long long time, char *out, size_t len);

/* Whether a report pattern (checked) has a %p escape. */
bool cmg__config_names_pid(const char *pattern);

/* Adds ".PID" to an expanded report name, before its ".json" if it ends so:
 * out/fixed.json becomes out/fixed.4242.json.  0, or -ENAMETOOLONG with the
 * name unchanged. */
int cmg__config_add_pid(char *name, size_t len, long pid);

/* The name of a signal number as dump_signal takes it ("USR1"), or NULL. */
const char *cmg__signal_name(int sig);

/* The signal that dump_signal's value (len bytes: "USR1", "SIGUSR1", any
 * case) names into *sig; -EINVAL for a signal it cannot take. */
int cmg__config_dump_signal(const char *value, size_t len, int *sig);

#endif /* CMG_CORE_CONF_REPORT_H */
