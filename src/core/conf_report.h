/*
 * The report pattern and the dump signals of the options (conf_report.c).
 */
#ifndef CMG_CORE_CONF_REPORT_H
#define CMG_CORE_CONF_REPORT_H

#include <stddef.h>

/* Checks the escapes of a report pattern of len bytes: -EINVAL for a '%'
 * followed by anything but p, h, t or %, or for a trailing lone '%'. */
int cmg__config_check_pattern(const char *s, size_t len);

/* Expands a report pattern: %p pid, %h host name, %t unix time in seconds,
 * %% a percent sign.  Returns 0, -EINVAL for another escape, -ENAMETOOLONG
 * when the result does not fit in len bytes. */
int cmg__config_expand(const char *pattern, long pid, const char *host,
                       long long time, char *out, size_t len);

/* The name of a signal number as dump_signal takes it ("USR1"), or NULL. */
const char *cmg__signal_name(int sig);

/* The signal that dump_signal's value (len bytes: "USR1", "SIGUSR1", any
 * case) names into *sig; -EINVAL for a signal it cannot take. */
int cmg__config_dump_signal(const char *value, size_t len, int *sig);

#endif /* CMG_CORE_CONF_REPORT_H */
