/*
 * Unit tests of conf.c: option strings parsed into a struct cmg__config,
 * the values each key takes, its defaults, and the one-line error message
 * of each refused string.  No preload and no CUDA; the parser is called
 * directly.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/conf.h"
#include "core/size.h"
#include "../tap.h"
#include "conf_parses.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define TiB (1ull << 40)

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- cmg__config_parse: accepted strings ------------------------------- */

static bool
is_unset(const struct cmg__limit *l)
{
  return l->kind == CMG__LIMIT_NONE && l->bytes == 0 && l->ppm == 0;
}

/* True if no limit is set other than the global one and limit.except. */
static bool
only_set(const struct cmg__config *cfg, bool global, int except)
{
  int d;

  if (global == is_unset(&cfg->limit))
    return false;
  for (d = 0; d < CMG__MAX_DEVICES; d++) {
    if (d != except && !is_unset(&cfg->limit_dev[d]))
      return false;
  }
  return true;
}

static void
test_config_empty(void)
{
  static const char *const empty[] = { "", ",", ",,,", NULL };
  struct cmg__config cfg;
  char err[256];
  size_t i;

  for (i = 0; i < N(empty); i++) {
    const char *s = empty[i];

    memset(&cfg, 0xa5, sizeof(cfg));
    strcpy(err, "stale");
    is_int(cmg__config_parse(s, &cfg, err, sizeof(err)), 0,
           "config '%s' is empty", s ? s : "(null)");
    ok(only_set(&cfg, false, -1), "config '%s' zeroes *cfg", s ? s : "(null)");
    is_str(cfg.report, CMG__REPORT_DEFAULT, "config '%s': default report",
           s ? s : "(null)");
    is_int(cfg.stack_depth, CMG__STACK_DEPTH_DEFAULT,
           "config '%s': default stack_depth", s ? s : "(null)");
    is_int(cfg.dump_signal, 0, "config '%s': no dump signal", s ? s : "(null)");
    is_int(cfg.leak_exitcode, 0, "config '%s': no leak exit code",
           s ? s : "(null)");
    is_str(err, "", "config '%s' leaves no error", s ? s : "(null)");
  }
  is_int(cmg__config_parse("limit=1G", &cfg, NULL, 0), 0, "err may be NULL");
  is_str(cfg.report, "cumemguard.%p.json", "the default report is documented");
  is_int(cfg.stack_depth, 32, "the default stack depth is documented");
}

static void
test_config_valid(void)
{
  struct cmg__config cfg;
  char err[256];

  is_int(cmg__config_parse("limit=4GiB", &cfg, err, sizeof(err)), 0,
         "limit=4GiB");
  is_int(cfg.limit.kind, CMG__LIMIT_BYTES, "limit=4GiB: bytes");
  is_u64(cfg.limit.bytes, 4 * GiB, "limit=4GiB: value");
  ok(only_set(&cfg, true, -1), "limit=4GiB sets nothing else");

  is_int(cmg__config_parse("limit=0", &cfg, err, sizeof(err)), 0,
         "limit=0 is valid");
  is_int(cfg.limit.kind, CMG__LIMIT_BYTES, "limit=0: a limit of bytes");
  is_u64(cfg.limit.bytes, 0, "limit=0: zero");

  is_int(cmg__config_parse("limit=50%", &cfg, err, sizeof(err)), 0,
         "limit=50%%");
  is_int(cfg.limit.kind, CMG__LIMIT_PERCENT, "limit=50%%: percent");
  is_u64(cfg.limit.ppm, 500000, "limit=50%%: ppm");

  is_int(cmg__config_parse("limit.1=2GiB", &cfg, err, sizeof(err)), 0,
         "limit.1=2GiB");
  is_u64(cfg.limit_dev[1].bytes, 2 * GiB, "limit.1=2GiB: value");
  ok(only_set(&cfg, false, 1), "limit.1 sets nothing else");

  is_int(cmg__config_parse("limit=4GiB,limit.1=2GiB", &cfg, err, sizeof(err)),
         0, "limit and limit.1");
  is_u64(cfg.limit.bytes, 4 * GiB, "limit and limit.1: global");
  is_u64(cfg.limit_dev[1].bytes, 2 * GiB, "limit and limit.1: device 1");
  ok(only_set(&cfg, true, 1), "limit and limit.1: nothing else");

  is_int(
      cmg__config_parse(",limit.63=1M,,limit.0=12.5%,", &cfg, err, sizeof(err)),
      0, "empty items are skipped");
  is_u64(cfg.limit_dev[63].bytes, MiB, "limit.63");
  is_int(cfg.limit_dev[0].kind, CMG__LIMIT_PERCENT, "limit.0 percent");
  is_u64(cfg.limit_dev[0].ppm, 125000, "limit.0 ppm");

  is_int(cmg__config_parse("limit.007=1G", &cfg, err, sizeof(err)), 0,
         "limit.007 is device 7");
  is_u64(cfg.limit_dev[7].bytes, GiB, "limit.007 value");

  is_int(cmg__config_parse("limit.5=0,limit=1T", &cfg, err, sizeof(err)), 0,
         "order does not matter");
  is_int(cfg.limit_dev[5].kind, CMG__LIMIT_BYTES, "limit.5=0 is set");
  is_u64(cfg.limit.bytes, TiB, "limit=1T after limit.5");
}

/* ---- cmg__config_parse: refused strings --------------------------------- */

static const char *const size_expected =
    "expected a size such as 4GiB, 512MiB, 1.5GB, 1073741824 or 50% of the "
    "device";
static const char *const size_range =
    "expected a size below 16 EiB, or a percentage above 0% and at most "
    "100%";

struct error_case {
  const char *in;
  const char *want;
  bool whole; /* want is all of the message, not just its start */
};

#define IS(in, want)                                                           \
  {                                                                            \
    in, want, true                                                             \
  }
#define STARTS(in, want)                                                       \
  {                                                                            \
    in, want, false                                                            \
  }

static const struct error_case error_cases[] = {
  /* key without '=' */
  IS("limit", "bad option 'limit': expected key=value"),
  IS("limit=1G,x", "bad option 'x': expected key=value"),
  IS("=1G", "bad option '=1G': expected key=value"),
  IS("=", "bad option '=': expected key=value"),
  /* unknown keys; keys are case-sensitive */
  IS("limt=4GiB",
     "unknown option 'limt=4GiB': expected one of limit, limit.N, report, "
     "stack_depth, stack_mode, dump_signal, leak_exitcode, on_exceed, "
     "wait_timeout, "
     "soft_limit, soft_limit.N, max_alloc, host_limit, group, "
     "group_limit, group_limit.N, no_pools, timeline, python_frames, "
     "signal_report, snapshot, count_context"),
  STARTS("LIMIT=1G", "unknown option 'LIMIT=1G'"),
  STARTS("limitx=1G", "unknown option 'limitx=1G'"),
  STARTS(" limit=1G", "unknown option ' limit=1G'"),
  STARTS("limit=1G,reprot=x", "unknown option 'reprot=x'"),
  STARTS("REPORT=x", "unknown option 'REPORT=x'"),
  STARTS("stack-depth=8", "unknown option 'stack-depth=8'"),
  STARTS("stack_depth.1=8", "unknown option 'stack_depth.1=8'"),
  STARTS("dump_signal", "bad option 'dump_signal': expected key=value"),
  /* bad device indexes */
  IS("limit.99=1G", "bad device index in 'limit.99=1G': expected limit.N "
                    "with N from 0 to 63, or limit.GPU-<uuid> (GPU-xxxxxxxx-"
                    "xxxx-xxxx-xxxx-xxxxxxxxxxxx, at most 16 GPUs)"),
  STARTS("limit.64=1G", "bad device index in 'limit.64=1G'"),
  STARTS("limit.x=1G", "bad device index in 'limit.x=1G'"),
  STARTS("limit.-1=1G", "bad device index in 'limit.-1=1G'"),
  STARTS("limit.+1=1G", "bad device index in 'limit.+1=1G'"),
  STARTS("limit.=1G", "bad device index in 'limit.=1G'"),
  STARTS("limit.1.2=1G", "bad device index in 'limit.1.2=1G'"),
  STARTS("limit.0x1=1G", "bad device index in 'limit.0x1=1G'"),
  STARTS("limit.99999999999999999999=1G", "bad device index in 'limit.9999"),
  STARTS("limit. 1=1G", "bad device index"),
  /* bad values */
  STARTS("limit=4XB", "bad value 'limit=4XB': "),
  STARTS("limit=", "bad value 'limit=': "),
  STARTS("limit=-1G", "bad value 'limit=-1G': "),
  STARTS("limit=1G ", "bad value 'limit=1G ': "),
  STARTS("limit.3=1.G", "bad value 'limit.3=1.G': "),
  STARTS("limit=1G=2G", "bad value 'limit=1G=2G': "),
  STARTS("limit=101%", "bad value 'limit=101%': "),
  STARTS("limit.1=0%", "bad value 'limit.1=0%': "),
  STARTS("limit=17179869184GiB", "bad value 'limit=17179869184GiB': "),
  /* duplicates */
  IS("limit=1G,limit=2G",
     "duplicate option 'limit=2G': expected each key at most once"),
  STARTS("limit=0,limit=0", "duplicate option 'limit=0'"),
  STARTS("limit.1=1G,limit.1=1G", "duplicate option 'limit.1=1G'"),
  STARTS("limit.1=1G,limit.01=2G", "duplicate option 'limit.01=2G'"),
  STARTS("limit.2=50%,limit=1G,limit.2=1G", "duplicate option 'limit.2=1G'"),
  /* a second item of a key is refused whatever its value */
  STARTS("limit=1G,limit=4XB", "duplicate option 'limit=4XB'"),
  IS("report=a.json,report=b.json",
     "duplicate option 'report=b.json': expected each key at most once"),
  STARTS("report=cumemguard.%p.json,report=cumemguard.%p.json",
         "duplicate option 'report=cumemguard.%p.json'"),
  STARTS("stack_depth=32,stack_depth=32", "duplicate option 'stack_depth=32'"),
  STARTS("stack_depth=0,limit=1G,stack_depth=8",
         "duplicate option 'stack_depth=8'"),
  STARTS("dump_signal=USR1,dump_signal=SIGUSR1",
         "duplicate option 'dump_signal=SIGUSR1'"),
  STARTS("leak_exitcode=1,leak_exitcode=2",
         "duplicate option 'leak_exitcode=2'"),
  /* report: the escapes, the length */
  IS("report=%x.json", "bad value 'report=%x.json': expected a file name "
                       "pattern; %p, %h, %t and %% are the only escapes"),
  IS("report=", "bad value 'report=': expected a file name pattern; %p, %h, "
                "%t and %% are the only escapes"),
  STARTS("report=50%", "bad value 'report=50%': expected a file name"),
  STARTS("report=%", "bad value 'report=%': expected a file name"),
  STARTS("report=%%%", "bad value 'report=%%%': expected a file name"),
  STARTS("report=%P.json", "bad value 'report=%P.json': expected a file"),
  STARTS("report=%d.json", "bad value 'report=%d.json': expected a file"),
  STARTS("report=%s", "bad value 'report=%s': expected a file"),
  STARTS("report=a%", "bad value 'report=a%': expected a file"),
  STARTS("report=%p%", "bad value 'report=%p%': expected a file"),
  STARTS("report=% p", "bad value 'report=% p': expected a file"),
  /* stack_depth */
  IS("stack_depth=300",
     "bad value 'stack_depth=300': expected a number of frames from 0 to "
     "256"),
  IS("stack_depth=x",
     "bad value 'stack_depth=x': expected a number of frames from 0 to 256"),
  STARTS("stack_depth=257", "bad value 'stack_depth=257': expected a number"),
  STARTS("stack_depth=", "bad value 'stack_depth=': expected a number"),
  STARTS("stack_depth=-1", "bad value 'stack_depth=-1': expected a number"),
  STARTS("stack_depth=+8", "bad value 'stack_depth=+8': expected a number"),
  STARTS("stack_depth=1.5", "bad value 'stack_depth=1.5': expected a number"),
  STARTS("stack_depth= 8", "bad value 'stack_depth= 8': expected a number"),
  STARTS("stack_depth=8 ", "bad value 'stack_depth=8 ': expected a number"),
  STARTS("stack_depth=0x10", "bad value 'stack_depth=0x10': expected a"),
  STARTS("stack_depth=32K", "bad value 'stack_depth=32K': expected a"),
  STARTS("stack_depth=99999999999999999999999",
         "bad value 'stack_depth=99999999999999999999999': expected a"),
  STARTS("stack_depth=4294967296", "bad value 'stack_depth=4294967296'"),
  /* dump_signal */
  IS("dump_signal=KILL", "bad value 'dump_signal=KILL': expected one of "
                         "USR1, USR2, HUP, WINCH, URG, PWR"),
  IS("dump_signal=SIGSEGV", "bad value 'dump_signal=SIGSEGV': expected one "
                            "of USR1, USR2, HUP, WINCH, URG, PWR"),
  STARTS("dump_signal=SIGKILL", "bad value 'dump_signal=SIGKILL': "),
  STARTS("dump_signal=STOP", "bad value 'dump_signal=STOP': "),
  STARTS("dump_signal=TERM", "bad value 'dump_signal=TERM': "),
  STARTS("dump_signal=INT", "bad value 'dump_signal=INT': "),
  STARTS("dump_signal=QUIT", "bad value 'dump_signal=QUIT': "),
  STARTS("dump_signal=CHLD", "bad value 'dump_signal=CHLD': "),
  STARTS("dump_signal=ALRM", "bad value 'dump_signal=ALRM': "),
  STARTS("dump_signal=PROF", "bad value 'dump_signal=PROF': "),
  STARTS("dump_signal=TRAP", "bad value 'dump_signal=TRAP': "),
  STARTS("dump_signal=RTMIN", "bad value 'dump_signal=RTMIN': "),
  STARTS("dump_signal=USR3", "bad value 'dump_signal=USR3': "),
  STARTS("dump_signal=USR", "bad value 'dump_signal=USR': "),
  STARTS("dump_signal=10", "bad value 'dump_signal=10': "),
  STARTS("dump_signal=", "bad value 'dump_signal=': "),
  STARTS("dump_signal=SIG", "bad value 'dump_signal=SIG': "),
  STARTS("dump_signal=SIGSIGUSR1", "bad value 'dump_signal=SIGSIGUSR1': "),
  STARTS("dump_signal=SIG_USR1", "bad value 'dump_signal=SIG_USR1': "),
  STARTS("dump_signal=USR1 ", "bad value 'dump_signal=USR1 ': "),
  STARTS("dump_signal= USR1", "bad value 'dump_signal= USR1': "),
  /* leak_exitcode */
  IS("leak_exitcode=0",
     "bad value 'leak_exitcode=0': expected an exit status from 1 to 255"),
  IS("leak_exitcode=256",
     "bad value 'leak_exitcode=256': expected an exit status from 1 to 255"),
  STARTS("leak_exitcode=", "bad value 'leak_exitcode=': expected an exit"),
  STARTS("leak_exitcode=-1", "bad value 'leak_exitcode=-1': expected an"),
  STARTS("leak_exitcode=yes", "bad value 'leak_exitcode=yes': expected an"),
  STARTS("leak_exitcode=00", "bad value 'leak_exitcode=00': expected an"),
  /* no_pools is a switch: 0 or 1, nothing else */
  IS("no_pools=2", "bad value 'no_pools=2': expected 0 or 1"),
  IS("no_pools=yes", "bad value 'no_pools=yes': expected 0 or 1"),
  IS("no_pools=", "bad value 'no_pools=': expected 0 or 1"),
  IS("no_pools=1,no_pools=0",
     "duplicate option 'no_pools=0': expected each key at most once"),
  IS("timeline=2", "bad value 'timeline=2': expected 0 or 1"),
  IS("timeline=off", "bad value 'timeline=off': expected 0 or 1"),
  /* python_frames likewise */
  IS("python_frames=2", "bad value 'python_frames=2': expected 0 or 1"),
  IS("python_frames=no", "bad value 'python_frames=no': expected 0 or 1"),
  IS("python_frames=", "bad value 'python_frames=': expected 0 or 1"),
};

static bool
starts_with(const char *s, const char *prefix)
{
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void
test_config_errors(void)
{
  struct cmg__config cfg;
  char err[512];
  size_t i;

  for (i = 0; i < N(error_cases); i++) {
    const struct error_case *c = &error_cases[i];
    int rc;

    err[0] = '\0';
    rc = cmg__config_parse(c->in, &cfg, err, sizeof(err));
    is_int(rc, -EINVAL, "config '%s' is refused", c->in);
    if (c->whole) {
      is_str(err, c->want, "config '%s': message", c->in);
    } else {
      ok(starts_with(err, c->want), "config '%s': message", c->in);
      if (!starts_with(err, c->want))
        printf("#   got:  \"%s\"\n#   want: \"%s...\"\n", err, c->want);
    }
    ok(strchr(err, '\n') == NULL, "config '%s': one line", c->in);
  }
}

static void
test_config_error_texts(void)
{
  struct cmg__config cfg;
  char err[256], want[256];
  char long_item[200];
  int rc;

  rc = cmg__config_parse("limit=4XB", &cfg, err, sizeof(err));
  snprintf(want, sizeof(want), "bad value 'limit=4XB': %s", size_expected);
  is_int(rc, -EINVAL, "4XB refused");
  is_str(err, want, "4XB: the message names the value and what fits");

  rc = cmg__config_parse("limit.2=1G,limit=101%", &cfg, err, sizeof(err));
  snprintf(want, sizeof(want), "bad value 'limit=101%%': %s", size_range);
  is_int(rc, -EINVAL, "101%% refused");
  is_str(err, want, "101%%: the message says what range fits");

  rc = cmg__config_parse("limit=18446744073709551616", &cfg, err, sizeof(err));
  snprintf(want, sizeof(want), "bad value 'limit=18446744073709551616': %s",
           size_range);
  is_str(err, want, "2^64: out of range");

  /* A long item is cut in the quote, so the expectation still shows. */
  memcpy(long_item, "limit=", 6);
  memset(long_item + 6, '9', 150);
  memcpy(long_item + 156, "XB", 3);
  rc = cmg__config_parse(long_item, &cfg, err, sizeof(err));
  is_int(rc, -EINVAL, "long item refused");
  ok(strstr(err, "99...': expected a size") != NULL,
     "long item: quote cut with ...");
  ok(strlen(err) < 200, "long item: message stays short");

  /* Control characters would break the one-line promise. */
  rc = cmg__config_parse("limit=1\nG", &cfg, err, sizeof(err));
  is_int(rc, -EINVAL, "newline refused");
  ok(starts_with(err, "bad value 'limit=1?G': "), "newline shown as ?");

  /* A short buffer gets a terminated prefix of the message. */
  rc = cmg__config_parse("limt=4GiB", &cfg, err, 12);
  is_int(rc, -EINVAL, "short buffer: still refused");
  is_str(err, "unknown opt", "short buffer: cut and terminated");
  rc = cmg__config_parse("limit.99=1", &cfg, err, 1);
  is_str(err, "", "one-byte buffer: empty");
  is_int(cmg__config_parse("bogus", &cfg, NULL, 0), -EINVAL,
         "err may be NULL on error");
}

static void
test_config_stack_depth(void)
{
  static const struct {
    const char *in;
    unsigned want;
  } cases[] = {
    { "stack_depth=0", 0 },      { "stack_depth=1", 1 },
    { "stack_depth=8", 8 },      { "stack_depth=32", 32 },
    { "stack_depth=255", 255 },  { "stack_depth=256", 256 },
    { "stack_depth=0256", 256 }, { "stack_depth=000", 0 },
  };
  struct cmg__config cfg;
  size_t i;

  for (i = 0; i < N(cases); i++) {
    ok(parses(cases[i].in, &cfg), "'%s' is accepted", cases[i].in);
    is_int(cfg.stack_depth, cases[i].want, "'%s': depth", cases[i].in);
    is_str(cfg.report, CMG__REPORT_DEFAULT, "'%s': report keeps its default",
           cases[i].in);
  }
}

static void
test_config_stack_mode(void)
{
  static const struct {
    const char *in;
    enum cmg__stack_mode want;
  } cases[] = {
    { "stack_mode=auto", CMG__STACK_MODE_AUTO },
    { "stack_mode=fp", CMG__STACK_MODE_FP },
    { "stack_mode=dwarf", CMG__STACK_MODE_DWARF },
    { "stack_mode=DWARF", CMG__STACK_MODE_DWARF },
    { "stack_mode=Fp,stack_depth=8", CMG__STACK_MODE_FP },
  };
  struct cmg__config cfg;
  char err[256];

  for (size_t i = 0; i < N(cases); i++) {
    ok(parses(cases[i].in, &cfg), "'%s' is accepted", cases[i].in);
    is_int(cfg.stack_mode, cases[i].want, "'%s': mode", cases[i].in);
  }
  ok(parses("limit=1G", &cfg), "no stack_mode");
  is_int(cfg.stack_mode, CMG__STACK_MODE_AUTO, "auto is the default");
  static const char *const bad[] = { "stack_mode=", "stack_mode=frame",
                                     "stack_mode=auto ", "stack_mode=fpx" };
  for (size_t i = 0; i < N(bad); i++) {
    char want[128];
    snprintf(want, sizeof(want),
             "bad value '%s': expected one of auto, fp, dwarf", bad[i]);
    is_int(cmg__config_parse(bad[i], &cfg, err, sizeof(err)), -EINVAL,
           "'%s' is refused", bad[i]);
    is_str(err, want, "'%s': the message", bad[i]);
  }
}

static void
test_config_leak_exitcode(void)
{
  static const struct {
    const char *in;
    int want;
  } cases[] = {
    { "leak_exitcode=1", 1 },
    { "leak_exitcode=23", 23 },
    { "leak_exitcode=255", 255 },
    { "leak_exitcode=001", 1 },
  };
  struct cmg__config cfg;
  size_t i;

  for (i = 0; i < N(cases); i++) {
    ok(parses(cases[i].in, &cfg), "'%s' is accepted", cases[i].in);
    is_int(cfg.leak_exitcode, cases[i].want, "'%s': exit code", cases[i].in);
  }
}

/* no_pools: off unless asked for; the timeline: on unless turned off. */
static void
test_config_no_pools(void)
{
  struct cmg__config cfg;

  ok(parses("", &cfg) && !cfg.no_pools, "no_pools is off by default");
  ok(parses("no_pools=1", &cfg) && cfg.no_pools, "no_pools=1 turns it on");
  ok(parses("no_pools=0", &cfg) && !cfg.no_pools, "no_pools=0 leaves it off");
  ok(parses("", &cfg) && cfg.timeline, "the timeline is on by default");
  ok(parses("timeline=0", &cfg) && !cfg.timeline, "timeline=0 turns it off");
  ok(parses("timeline=1", &cfg) && cfg.timeline, "timeline=1 keeps it on");
}

/* python_frames: on unless turned off. */
static void
test_config_python_frames(void)
{
  struct cmg__config cfg;

  ok(parses("", &cfg) && cfg.python_frames, "python_frames is on by default");
  ok(parses("python_frames=0", &cfg) && !cfg.python_frames,
     "python_frames=0 turns it off");
  ok(parses("python_frames=1", &cfg) && cfg.python_frames,
     "python_frames=1 leaves it on");
}

/* Every key at once, in either order, and each field where it belongs. */
static void
test_config_all(void)
{
  static const char *const all[] = {
    "limit=4GiB,limit.1=2GiB,report=r.%h.json,stack_depth=0,"
    "dump_signal=USR2,leak_exitcode=7",
    "leak_exitcode=7,dump_signal=SIGUSR2,stack_depth=0,report=r.%h.json,"
    "limit.1=2GiB,limit=4GiB",
  };
  struct cmg__config cfg;
  size_t i;

  for (i = 0; i < N(all); i++) {
    ok(parses(all[i], &cfg), "every key, order %zu", i);
    is_u64(cfg.limit.bytes, 4 * GiB, "every key %zu: limit", i);
    is_u64(cfg.limit_dev[1].bytes, 2 * GiB, "every key %zu: limit.1", i);
    ok(only_set(&cfg, true, 1), "every key %zu: no other limit", i);
    is_str(cfg.report, "r.%h.json", "every key %zu: report", i);
    is_int(cfg.stack_depth, 0, "every key %zu: stack_depth=0 stays 0", i);
    is_int(cfg.dump_signal, SIGUSR2, "every key %zu: dump_signal", i);
    is_int(cfg.leak_exitcode, 7, "every key %zu: leak_exitcode", i);
  }

  /* A parse fills the defaults again: nothing survives from the last one. */
  ok(parses("limit=1G", &cfg), "a second parse");
  is_str(cfg.report, CMG__REPORT_DEFAULT, "second parse: default report");
  is_int(cfg.stack_depth, CMG__STACK_DEPTH_DEFAULT,
         "second parse: default stack depth");
  is_int(cfg.dump_signal, 0, "second parse: no dump signal");
  is_int(cfg.leak_exitcode, 0, "second parse: no leak exit code");
}

/* The growth-policy keys: on_exceed, wait_timeout, soft_limit(.N),
 * max_alloc, host_limit. */
static void
test_config_growth(void)
{
  struct cmg__config cfg;
  char err[256];
  is_int(cmg__config_parse("", &cfg, err, sizeof(err)), 0, "defaults");
  is_int(cfg.on_exceed, CMG__ON_EXCEED_FAIL, "on_exceed defaults to fail");
  is_u64(cfg.wait_timeout_ns, 30000000000ull, "wait_timeout defaults to 30s");
  is_u64(cfg.max_alloc, CMG__NO_LIMIT, "no max_alloc by default");
  is_u64(cfg.host_limit, CMG__NO_LIMIT, "no host_limit by default");
  is_u64(cfg.snapshot_ns, 0, "no snapshots by default");
  ok(cfg.signal_report, "signal_report on by default");
  ok(cfg.count_context, "count_context on by default");
  is_int(
      cmg__config_parse("snapshot=10s,signal_report=0", &cfg, err, sizeof(err)),
      0, "snapshot=10s,signal_report=0");
  is_u64(cfg.snapshot_ns, 10000000000ull, "a snapshot every 10 s");
  ok(!cfg.signal_report, "signal_report=0");
  is_int(cmg__config_parse("snapshot=0", &cfg, err, sizeof(err)), 0,
         "snapshot=0");
  is_u64(cfg.snapshot_ns, 0, "snapshot=0: none");
  is_int(cmg__config_parse("count_context=0", &cfg, err, sizeof(err)), 0,
         "count_context=0");
  ok(!cfg.count_context, "count_context=0: allocations only");
  is_int(cmg__config_parse("on_exceed=WAIT,wait_timeout=1.5m,soft_limit=50%,"
                           "soft_limit.2=1G,max_alloc=2GiB,host_limit=8G",
                           &cfg, err, sizeof(err)),
         0, "every growth key");
  is_int(cfg.on_exceed, CMG__ON_EXCEED_WAIT, "on_exceed=WAIT");
  is_u64(cfg.wait_timeout_ns, 90000000000ull, "1.5m");
  is_u64(cmg__config_soft_limit(&cfg, 0, NULL, 1000), 500, "soft_limit 50%%");
  is_u64(cmg__config_soft_limit(&cfg, 2, NULL, 1000), 1 << 30, "soft_limit.2");
  is_u64(cfg.max_alloc, 2ull << 30, "max_alloc");
  is_u64(cfg.host_limit, 8ull << 30, "host_limit");
  static const struct {
    const char *text;
    uint64_t ns;
  } durations[] = { { "wait_timeout=250ms", 250000000ull },
                    { "wait_timeout=2", 2000000000ull },
                    { "wait_timeout=1h", 3600000000000ull },
                    { "wait_timeout=0.5s", 500000000ull } };
  for (size_t i = 0; i < sizeof(durations) / sizeof(*durations); i++) {
    is_int(cmg__config_parse(durations[i].text, &cfg, err, sizeof(err)), 0,
           "%s parses", durations[i].text);
    is_u64(cfg.wait_timeout_ns, durations[i].ns, "%s", durations[i].text);
  }
  static const struct {
    const char *text, *error;
  } bad[] = {
    { "on_exceed=explode", "bad value 'on_exceed=explode': expected one of "
                           "fail, warn, wait" },
    { "wait_timeout=5x", "bad value 'wait_timeout=5x': expected a duration "
                         "such as 30s, 500ms, 2m or 1h" },
    { "wait_timeout=0s", "bad value 'wait_timeout=0s': expected a duration "
                         "from 1ms to 24h" },
    { "wait_timeout=25h", "bad value 'wait_timeout=25h': expected a duration "
                          "from 1ms to 24h" },
    { "max_alloc=50%", "bad value 'max_alloc=50%': expected a size such as "
                       "4GiB, 512MiB, 1.5GB or 1073741824" },
    { "host_limit=-1", "bad value 'host_limit=-1': expected a size such as "
                       "4GiB, 512MiB, 1.5GB or 1073741824" },
    { "soft_limit=lots", "bad value 'soft_limit=lots': expected a size such "
                         "as 4GiB, 512MiB, 1.5GB, 1073741824 or 50% of the "
                         "device" },
    { "snapshot=often", "bad value 'snapshot=often': expected a duration "
                        "such as 30s, 10m or 1h, or 0 for none" },
    { "snapshot=500ms", "bad value 'snapshot=500ms': expected a duration "
                        "from 1s to 24h, or 0" },
    { "snapshot=2d", "bad value 'snapshot=2d': expected a duration such as "
                     "30s, 10m or 1h, or 0 for none" },
    { "signal_report=yes", "bad value 'signal_report=yes': expected 0 or 1" },
    { "count_context=2", "bad value 'count_context=2': expected 0 or 1" },
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
    is_int(cmg__config_parse(bad[i].text, &cfg, err, sizeof(err)), -EINVAL,
           "%s is refused", bad[i].text);
    is_str(err, bad[i].error, "%s: the message", bad[i].text);
  }
}

/* group=NAME, group_limit=SIZE, group_limit.N=SIZE. */
static void
test_config_group(void)
{
  struct cmg__config cfg;
  char err[256], long_name[80];

  is_int(cmg__config_parse("", &cfg, err, sizeof(err)), 0, "defaults");
  is_str(cfg.group, "", "no group by default");
  is_int(cfg.group_limit.kind, CMG__LIMIT_NONE, "no group_limit by default");
  is_int(cmg__config_parse("group=train-3_a.b,group_limit=4GiB,"
                           "group_limit.1=50%",
                           &cfg, err, sizeof(err)),
         0, "group, group_limit and group_limit.N");
  is_str(cfg.group, "train-3_a.b", "the name");
  ok(cfg.group_limit.kind == CMG__LIMIT_BYTES &&
         cfg.group_limit.bytes == 4 * GiB,
     "group_limit=4GiB");
  ok(cfg.group_limit_dev[1].kind == CMG__LIMIT_PERCENT &&
         cfg.group_limit_dev[1].ppm == 500000,
     "group_limit.1=50%%");
  is_int(cfg.group_limit_dev[0].kind, CMG__LIMIT_NONE,
         "other devices take group_limit");
  is_int(cfg.limit.kind, CMG__LIMIT_NONE, "limit stays unset");
  is_int(cmg__config_parse("group=solo", &cfg, err, sizeof(err)), 0,
         "a group without a cap (for the status view)");
  snprintf(long_name, sizeof(long_name), "group=%.*s", 63,
           "ggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg");
  is_int(cmg__config_parse(long_name, &cfg, err, sizeof(err)), 0,
         "63 characters");
  is_u64(strlen(cfg.group), 63, "kept whole");

  static const struct {
    const char *text, *error;
  } bad[] = {
    { "group=a/b", "bad value 'group=a/b': expected a group name of "
                   "letters, digits, '-', '_' and '.'" },
    { "group=a b", "bad value 'group=a b': expected a group name of "
                   "letters, digits, '-', '_' and '.'" },
    { "group=", "bad value 'group=': expected a group name of 1 to 63 "
                "characters" },
    { "group=gggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg",
      "bad value 'group=gggggggggggggggggggggggggggggggggggggggggggggggggggggg"
      "gggg...': expected a group name of 1 to 63 characters" },
    { "group=x,group_limit=lots", "bad value 'group_limit=lots': expected "
                                  "a size such as 4GiB, 512MiB, 1.5GB, "
                                  "1073741824 or 50% of the device" },
    { "group=x,group_limit.64=1G",
      "bad device index in 'group_limit.64=1G': expected group_limit.N with "
      "N from 0 to 63, or group_limit.GPU-<uuid> (GPU-xxxxxxxx-xxxx-xxxx-"
      "xxxx-xxxxxxxxxxxx, at most 16 GPUs)" },
    { "group_limit=4G", "group_limit without group: expected group=NAME "
                        "with it, naming the processes that share the cap" },
    { "group_limit.2=4G", "group_limit without group: expected group=NAME "
                          "with it, naming the processes that share the "
                          "cap" },
    { "group=a,group=b", "duplicate option 'group=b': expected each key at "
                         "most once" },
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
    is_int(cmg__config_parse(bad[i].text, &cfg, err, sizeof(err)), -EINVAL,
           "%s is refused", bad[i].text);
    is_str(err, bad[i].error, "%s: the message", bad[i].text);
  }
}

int
main(void)
{
  test_config_empty();
  test_config_valid();
  test_config_errors();
  test_config_error_texts();
  test_config_stack_depth();
  test_config_stack_mode();
  test_config_leak_exitcode();
  test_config_no_pools();
  test_config_python_frames();
  test_config_all();
  test_config_growth();
  test_config_group();
  return done_testing();
}
