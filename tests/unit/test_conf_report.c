/*
 * Unit tests of conf_report.c: the report pattern as the options take it
 * (report=) and as it is expanded when a report is written (%p, %h, %t,
 * %%), and the signals dump_signal may name.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/conf.h"
#include "core/conf_report.h"
#include "../tap.h"
#include "conf_parses.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void
test_config_report(void)
{
  static const struct {
    const char *in;
    const char *want;
  } cases[] = {
    { "report=out.json", "out.json" },
    { "report=/tmp/cmg/r.%p.%h.%t.json", "/tmp/cmg/r.%p.%h.%t.json" },
    { "report=100%%.json", "100%%.json" },
    { "report=%%", "%%" },
    { "report=%p", "%p" },
    { "report=a=b", "a=b" },
    { "report=../r;x y", "../r;x y" },
    { ",report=x,", "x" },
    { "limit=1G,report=x.json", "x.json" },
  };
  struct cmg__config cfg;
  char item[CMG__REPORT_MAX + 16], err[256], want[256];
  size_t i;

  for (i = 0; i < N(cases); i++) {
    ok(parses(cases[i].in, &cfg), "'%s' is accepted", cases[i].in);
    is_str(cfg.report, cases[i].want, "'%s': the pattern is kept", cases[i].in);
    is_int(cfg.stack_depth, CMG__STACK_DEPTH_DEFAULT,
           "'%s': stack_depth keeps its default", cases[i].in);
  }

  /* The longest pattern that fits, and one byte more. */
  memcpy(item, "report=", 7);
  memset(item + 7, 'r', CMG__REPORT_MAX - 1);
  item[7 + CMG__REPORT_MAX - 1] = '\0';
  ok(parses(item, &cfg), "a report of %d bytes is accepted",
     CMG__REPORT_MAX - 1);
  is_int(strlen(cfg.report), CMG__REPORT_MAX - 1, "and kept whole");
  item[7 + CMG__REPORT_MAX - 1] = 'r';
  item[7 + CMG__REPORT_MAX] = '\0';
  is_int(cmg__config_parse(item, &cfg, err, sizeof(err)), -EINVAL,
         "a report of %d bytes is refused", CMG__REPORT_MAX);
  snprintf(want, sizeof(want),
           "bad value 'report=%.57s...': expected a "
           "file name pattern of at most 1023 bytes",
           item + 7);
  is_str(err, want, "a long report: the message gives the limit");
  /* A bad escape is named as such even in a pattern that is too long. */
  item[7 + CMG__REPORT_MAX - 1] = '%';
  is_int(cmg__config_parse(item, &cfg, err, sizeof(err)), -EINVAL,
         "a long report with a trailing %% is refused");
  ok(strstr(err, "are the only escapes") != NULL,
     "a long report with a bad escape: the escapes are named");
}

static void
test_config_dump_signal(void)
{
  static const struct {
    const char *in;
    int want;
  } cases[] = {
    { "dump_signal=USR1", SIGUSR1 },    { "dump_signal=usr1", SIGUSR1 },
    { "dump_signal=SIGUSR1", SIGUSR1 }, { "dump_signal=sigusr1", SIGUSR1 },
    { "dump_signal=SigUsr2", SIGUSR2 }, { "dump_signal=USR2", SIGUSR2 },
    { "dump_signal=HUP", SIGHUP },      { "dump_signal=SIGHUP", SIGHUP },
    { "dump_signal=WINCH", SIGWINCH },  { "dump_signal=sigwinch", SIGWINCH },
    { "dump_signal=URG", SIGURG },      { "dump_signal=SIGURG", SIGURG },
    { "dump_signal=PWR", SIGPWR },      { "dump_signal=SIGPWR", SIGPWR },
  };
  struct cmg__config cfg;
  size_t i;

  for (i = 0; i < N(cases); i++) {
    ok(parses(cases[i].in, &cfg), "'%s' is accepted", cases[i].in);
    is_int(cfg.dump_signal, cases[i].want, "'%s': signal number", cases[i].in);
  }
}

/* ---- cmg__config_expand ------------------------------------------------- */

static void
test_config_expand(void)
{
  static const struct {
    const char *pattern;
    long pid;
    const char *host;
    long long time;
    const char *want;
  } cases[] = {
    { "cumemguard.%p.json", 1234, "node7", 1700000000, "cumemguard.1234.json" },
    { "%h", 1, "node7", 0, "node7" },
    { "%t", 1, "node7", 1700000000, "1700000000" },
    { "%%", 1, "node7", 0, "%" },
    { "%p", 4194304, "h", 0, "4194304" },
    { "r-%h-%p-%t-%%.json", 42, "gpu01.example.org", 1712345678,
      "r-gpu01.example.org-42-1712345678-%.json" },
    { "%p%p%%%h%t", 7, "h", 9, "77%h9" },
    { "100%%-%%p", 7, "h", 9, "100%-%p" },
    { "plain.json", 7, "h", 9, "plain.json" },
    { "", 7, "h", 9, "" },
    { "/tmp/cmg/%h/%p.json", 7, "a/b", 9, "/tmp/cmg/a_b/7.json" },
    { "%h", 7, "/../etc/x/", 9, "_.._etc_x_" },
    { "r.%h.json", 7, NULL, 9, "r..json" },
    { "r.%h.json", 7, "", 9, "r..json" },
    { "%p.%t", -1, "h", -5, "-1.-5" },
    { "%t", 1, "h", 9223372036854775807ll, "9223372036854775807" },
    { "%p", 2147483647l, "h", 0, "2147483647" },
  };
  static const char *const bad[] = {
    "%x", "%", "a%", "%p%", "%P", "%H", "%d.json", "%s", "x%%%", "%%%y", "% p",
  };
  char out[CMG__REPORT_MAX], small[8], host[300];
  size_t i;

  for (i = 0; i < N(cases); i++) {
    strcpy(out, "stale");
    is_int(cmg__config_expand(cases[i].pattern, cases[i].pid, cases[i].host,
                              cases[i].time, out, sizeof(out)),
           0, "expand '%s'", cases[i].pattern);
    is_str(out, cases[i].want, "expand '%s': result", cases[i].pattern);
  }

  for (i = 0; i < N(bad); i++) {
    strcpy(out, "stale");
    is_int(cmg__config_expand(bad[i], 1, "h", 1, out, sizeof(out)), -EINVAL,
           "expand '%s' is refused", bad[i]);
    is_str(out, "", "expand '%s': out is empty", bad[i]);
  }
  is_int(cmg__config_expand(NULL, 1, "h", 1, out, sizeof(out)), -EINVAL,
         "expand NULL is refused");

  /* The terminating NUL must fit too. */
  is_int(cmg__config_expand("abcdefg", 1, "h", 1, small, sizeof(small)), 0,
         "7 bytes fit in 8");
  is_str(small, "abcdefg", "7 bytes in 8: whole");
  strcpy(small, "stale");
  is_int(cmg__config_expand("abcdefgh", 1, "h", 1, small, sizeof(small)),
         -ENAMETOOLONG, "8 bytes do not fit in 8");
  is_str(small, "", "too long: out is empty");
  is_int(cmg__config_expand("r.%p", 12345, "h", 1, small, sizeof(small)), 0,
         "r.12345 fits in 8");
  is_str(small, "r.12345", "r.%%p: whole");
  is_int(cmg__config_expand("r.%p", 123456, "h", 1, small, sizeof(small)),
         -ENAMETOOLONG, "r.123456 does not fit in 8");
  is_int(cmg__config_expand("%t", 1, "h", 12345678, small, sizeof(small)),
         -ENAMETOOLONG, "a long time does not fit");
  is_int(cmg__config_expand("%h", 1, "abcdefgh", 1, small, sizeof(small)),
         -ENAMETOOLONG, "a long host does not fit");
  is_int(cmg__config_expand("%%%%%%%%%%%%%%", 1, "h", 1, small, sizeof(small)),
         0, "seven %% fit in 8");
  is_str(small, "%%%%%%%", "seven %%: whole");
  is_int(
      cmg__config_expand("%%%%%%%%%%%%%%%%", 1, "h", 1, small, sizeof(small)),
      -ENAMETOOLONG, "eight %% do not fit in 8");
  is_int(cmg__config_expand("", 1, "h", 1, small, 1), 0,
         "an empty pattern fits in 1");
  is_int(cmg__config_expand("x", 1, "h", 1, small, 1), -ENAMETOOLONG,
         "x does not fit in 1");
  strcpy(small, "stale");
  is_int(cmg__config_expand("x", 1, "h", 1, small, 0), -ENAMETOOLONG,
         "nothing fits in 0");
  is_str(small, "stale", "len 0: out untouched");
  is_int(cmg__config_expand("x", 1, "h", 1, NULL, 0), -ENAMETOOLONG,
         "out may be NULL with len 0");
  /* A bad escape is -EINVAL even where the result would not fit. */
  is_int(cmg__config_expand("abcdefghijk%q", 1, "h", 1, small, sizeof(small)),
         -EINVAL, "a bad escape wins over the length");

  /* A long host in a report-sized buffer. */
  memset(host, 'h', sizeof(host) - 1);
  host[sizeof(host) - 1] = '\0';
  is_int(cmg__config_expand("%h.%h.%h", 1, host, 1, out, sizeof(out)), 0,
         "three hosts of 299 bytes fit in %d", CMG__REPORT_MAX);
  is_int(strlen(out), 3 * 299 + 2, "three hosts: length");
  is_int(cmg__config_expand("%h.%h.%h.%h", 1, host, 1, out, sizeof(out)),
         -ENAMETOOLONG, "four hosts of 299 bytes do not");

  /* The default pattern, as the library will use it. */
  is_int(
      cmg__config_expand(CMG__REPORT_DEFAULT, 31337, "h", 1, out, sizeof(out)),
      0, "the default pattern expands");
  is_str(out, "cumemguard.31337.json", "the default pattern: result");
}

/* ---- cmg__signal_name --------------------------------------------------- */

static void
test_signal_name(void)
{
  static const char *const names[] = { "USR1",  "USR2", "HUP",
                                       "WINCH", "URG",  "PWR" };
  static const int refused[] = { 0,       -1,      SIGKILL, SIGSTOP,
                                 SIGSEGV, SIGTERM, SIGINT,  SIGCHLD,
                                 SIGALRM, SIGPROF, 9999 };
  struct cmg__config cfg;
  char item[64];
  size_t i;

  is_str(cmg__signal_name(SIGUSR1), "USR1", "SIGUSR1 is USR1");
  is_str(cmg__signal_name(SIGUSR2), "USR2", "SIGUSR2 is USR2");
  is_str(cmg__signal_name(SIGPWR), "PWR", "SIGPWR is PWR");

  /* Every accepted name comes back from its number, without "SIG". */
  for (i = 0; i < N(names); i++) {
    snprintf(item, sizeof(item), "dump_signal=sig%s", names[i]);
    ok(parses(item, &cfg), "'%s' is accepted", item);
    is_str(cmg__signal_name(cfg.dump_signal), names[i],
           "the name of '%s' is %s", item, names[i]);
  }
  for (i = 0; i < N(refused); i++)
    ok(cmg__signal_name(refused[i]) == NULL, "signal %d has no name",
       refused[i]);
}

int
main(void)
{
  test_config_report();
  test_config_dump_signal();
  test_config_expand();
  test_signal_name();
  return done_testing();
}
