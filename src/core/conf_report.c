/*
 * What the options say about reports: the report path pattern, checked
 * when the options are parsed and expanded when a report is written, and
 * the signals dump_signal may name.  Expanding a pattern is pure: the
 * caller supplies the pid, host and time, which keeps it testable and lets
 * the library expand it from a signal-dump thread without locks.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/conf_report.h"
#include "core/signals.h"
#include "core/size.h"

/* True if c may follow '%' in a report pattern. */
static bool
is_escape(char c)
{
  return c == 'p' || c == 'h' || c == 't' || c == '%';
}

int
cmg__config_check_pattern(const char *s, size_t len)
{
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '%' && (++i == len || !is_escape(s[i])))
      return -EINVAL;
  }
  return 0;
}

/*
 * The signals dump_signal may take: those whose default action a program
 * rarely relies on and that neither the CUDA runtime nor a debugger claims.
 * SIGSEGV, SIGBUS and SIGILL belong to crash handlers, SIGPROF and SIGALRM
 * to profilers and timers, SIGINT, SIGTERM and SIGQUIT to the people and
 * schedulers that stop jobs, SIGCHLD to the process's own children, and
 * SIGTRAP and SIGSTOP to debuggers.  Real-time signals are left out: glibc,
 * language runtimes and MPI libraries take them without saying so.
 */
static const int dump_signals[] = { SIGUSR1,  SIGUSR2, SIGHUP,
                                    SIGWINCH, SIGURG,  SIGPWR };

#define N_DUMP_SIGNALS (sizeof(dump_signals) / sizeof(dump_signals[0]))

int
cmg__config_dump_signal(const char *value, size_t len, int *sig)
{
  if (len > 3 && cmg__equals_nocase(value, 3, "SIG")) {
    value += 3;
    len -= 3;
  }
  for (size_t i = 0; i < N_DUMP_SIGNALS; i++) {
    if (cmg__equals_nocase(value, len, cmg__signal_abbrev(dump_signals[i]))) {
      *sig = dump_signals[i];
      return 0;
    }
  }
  return -EINVAL;
}

/*
 * Appends n bytes of s to out at *used, replacing '/' by '_' when
 * flatten is set; false (with nothing partial promised) when they do not
 * fit together with the terminating NUL.
 */
static bool
append(char *out, size_t len, size_t *used, const char *s, size_t n,
       bool flatten)
{
  if (n >= len - *used)
    return false;
  for (size_t i = 0; i < n; i++)
    out[*used + i] = flatten && s[i] == '/' ? '_' : s[i];
  *used += n;
  return true;
}

/*
 * Expands a report pattern; see conf.h for the contract.  The whole
 * pattern is checked before anything is written, so a bad escape is
 * -EINVAL even in a pattern that would also be too long.  A host name with
 * '/' in it (possible for a UTS name set by a container runtime) has them
 * replaced by '_': the host must not decide which directory the report
 * lands in.  A NULL host expands to nothing.  On error out holds "".
 */
int
cmg__config_expand(const char *pattern, long pid, const char *host,
                   long long time, char *out, size_t len)
{
  char num[24];
  size_t used = 0;
  bool fits = true;

  if (pattern == NULL ||
      cmg__config_check_pattern(pattern, strlen(pattern)) != 0) {
    if (out != NULL && len > 0)
      out[0] = '\0';
    return -EINVAL;
  }
  if (out == NULL || len == 0)
    return -ENAMETOOLONG;
  if (host == NULL)
    host = "";

  for (const char *p = pattern; *p != '\0' && fits; p++) {
    if (*p != '%') {
      fits = append(out, len, &used, p, 1, false);
      continue;
    }
    switch (*++p) {
    case 'p':
      snprintf(num, sizeof(num), "%ld", pid);
      fits = append(out, len, &used, num, strlen(num), false);
      break;
    case 'h':
      fits = append(out, len, &used, host, strlen(host), true);
      break;
    case 't':
      snprintf(num, sizeof(num), "%lld", time);
      fits = append(out, len, &used, num, strlen(num), false);
      break;
    default:
      fits = append(out, len, &used, "%", 1, false);
      break;
    }
  }
  if (!fits) {
    out[0] = '\0';
    return -ENAMETOOLONG;
  }
  out[used] = '\0';
  return 0;
}

bool
cmg__config_names_pid(const char *pattern)
{
  for (const char *p = pattern; p != NULL && *p != '\0'; p++)
    if (*p == '%' && *++p == 'p')
      return true;
    else if (*p == '\0')
      break;
  return false;
}

int
cmg__config_add_pid(char *name, size_t len, long pid)
{
  static const char ext[] = ".json";
  size_t n = strlen(name), e = sizeof(ext) - 1;
  size_t at = n > e && strcmp(name + n - e, ext) == 0 ? n - e : n;
  char num[24];
  int k = snprintf(num, sizeof(num), ".%ld", pid);

  if (k < 0 || n + (size_t)k >= len)
    return -ENAMETOOLONG;
  memmove(name + at + k, name + at, n - at + 1);
  memcpy(name + at, num, (size_t)k);
  return 0;
}

const char *
cmg__signal_name(int sig)
{
  for (size_t i = 0; i < N_DUMP_SIGNALS; i++) {
    if (dump_signals[i] == sig)
      return cmg__signal_abbrev(sig);
  }
  return NULL;
}
