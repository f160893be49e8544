/*
 * Unit tests of config.c and log.c: sizes, option strings and their error
 * lines, limit lookup, size formatting, and the log line itself.  No
 * preload and no CUDA; the functions are called directly.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "../tap.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define TiB (1ull << 40)

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- cmg__size_parse ---------------------------------------------------- */

struct size_case {
  const char *in;
  bool allow_percent;
  int rc;
  enum cmg__limit_kind kind; /* when rc == 0 */
  uint64_t value;            /* bytes, or ppm for a percentage */
};

#define B(s, v) { s, false, 0, CMG__LIMIT_BYTES, v }
#define P(s, v) { s, true, 0, CMG__LIMIT_PERCENT, v }
#define BAD(s) { s, true, -EINVAL, CMG__LIMIT_NONE, 0 }
#define BADNP(s) { s, false, -EINVAL, CMG__LIMIT_NONE, 0 }
#define BIG(s) { s, true, -ERANGE, CMG__LIMIT_NONE, 0 }

static const struct size_case size_cases[] = {
  /* plain bytes */
  B("0", 0),
  B("1", 1),
  B("1073741824", GiB),
  B("007", 7),
  B("512B", 512),
  B("512b", 512),
  /* binary units, with and without "iB", any case */
  B("1K", KiB),
  B("1k", KiB),
  B("1KiB", KiB),
  B("1kib", KiB),
  B("1KIB", KiB),
  B("1kIb", KiB),
  B("3M", 3 * MiB),
  B("3m", 3 * MiB),
  B("3MiB", 3 * MiB),
  B("3mib", 3 * MiB),
  B("4G", 4 * GiB),
  B("4g", 4 * GiB),
  B("4GiB", 4 * GiB),
  B("4gib", 4 * GiB),
  B("2T", 2 * TiB),
  B("2t", 2 * TiB),
  B("2TiB", 2 * TiB),
  B("2TIB", 2 * TiB),
  /* decimal units */
  B("1KB", 1000),
  B("1kb", 1000),
  B("1Kb", 1000),
  B("3MB", 3000000),
  B("3mb", 3000000),
  B("4GB", 4000000000ull),
  B("4gb", 4000000000ull),
  B("2TB", 2000000000000ull),
  B("2tb", 2000000000000ull),
  /* fractions, exact, rounded down to a byte */
  B("1.5GiB", 1610612736),
  B("1.5gib", 1610612736),
  B("0.5G", 536870912),
  B("1.5GB", 1500000000),
  B("1.25KiB", 1280),
  B("0.1KiB", 102),
  B("0.001KB", 1),
  B("0.0009KB", 0),
  B("1.5", 1),
  B("2.999", 2),
  B("1.0", 1),
  B("0.75TiB", 824633720832ull),
  /* 2^-40 has 40 decimals: one byte exactly, or a hair less than one */
  B("0.0000000000009094947017729282379150390625TiB", 1),
  B("0.0000000000009094947017729282379150390624TiB", 0),
  B("1.00000000000000000000000000000000000001K", KiB),
  B("1.99999999999999999999999999999999999999K", 2047),
  /* the 64-bit boundary */
  B("18446744073709551615", UINT64_MAX),
  B("18446744073709551615B", UINT64_MAX),
  B("017179869183GiB", UINT64_MAX - GiB + 1),
  B("16777215.999999999999TiB", UINT64_MAX - 1),
  BIG("18446744073709551616"),
  BIG("99999999999999999999"),
  BIG("17179869184GiB"),
  BIG("16777216TiB"),
  BIG("18446744073709551.616KB"),
  BIG("18446744073709551615.5K"),
  /* percentages, in ppm, only where allowed, within (0, 100] */
  P("50%", 500000),
  P("100%", 1000000),
  P("12.5%", 125000),
  P("1%", 10000),
  P("0.0001%", 1),
  P("099.9999%", 999999),
  BIG("0%"),
  BIG("0.0%"),
  BIG("0.00001%"),
  BIG("101%"),
  BIG("100.0001%"),
  BIG("99999999999999999999%"),
  BADNP("50%"),
  BADNP("100%"),
  /* not sizes */
  BAD(""),
  BAD("G"),
  BAD("GiB"),
  BAD("B"),
  BAD("%"),
  BAD("-1G"),
  BAD("+1G"),
  BAD("-0"),
  BAD(" 1G"),
  BAD("1G "),
  BAD("1 G"),
  BAD("50 %"),
  BAD("0x10"),
  BAD("1e9"),
  BAD("1.G"),
  BAD(".5G"),
  BAD("1."),
  BAD("."),
  BAD("1..5G"),
  BAD("1.5.0G"),
  BAD("1,5G"),
  BAD("16EiB"),
  BAD("1E"),
  BAD("1PiB"),
  BAD("1P"),
  BAD("4XB"),
  BAD("1GiBB"),
  BAD("1iB"),
  BAD("1Gi"),
  BAD("1bytes"),
  BAD("50%%"),
  BAD("50%B"),
  BAD("50G%"),
  BAD("99999999999999999999XB"),
};

static void
test_size_parse(void)
{
  size_t i;

  for (i = 0; i < N(size_cases); i++) {
    const struct size_case *c = &size_cases[i];
    struct cmg__limit l = { CMG__LIMIT_NONE, 12345, 678 };
    int rc = cmg__size_parse(c->in, strlen(c->in), c->allow_percent, &l);

    if (c->rc != 0) {
      is_int(rc, c->rc, "size '%s'%s is refused", c->in,
             c->allow_percent ? "" : " (no %)");
      ok(l.kind == CMG__LIMIT_NONE && l.bytes == 12345 && l.ppm == 678,
         "size '%s': output untouched on error", c->in);
      continue;
    }
    is_int(rc, 0, "size '%s' parses", c->in);
    is_int(l.kind, c->kind, "size '%s': kind", c->in);
    if (c->kind == CMG__LIMIT_BYTES)
      is_u64(l.bytes, c->value, "size '%s': bytes", c->in);
    else
      is_u64(l.ppm, c->value, "size '%s': ppm", c->in);
  }
}

/* The length bounds the size: it may be a span of a longer string. */
static void
test_size_parse_span(void)
{
  const char *s = "4GiB,limit.1=2G";
  struct cmg__limit l;

  is_int(cmg__size_parse(s, 4, false, &l), 0, "span: parses 4 bytes");
  is_u64(l.bytes, 4 * GiB, "span: 4GiB");
  is_int(cmg__size_parse(s, 2, false, &l), 0, "span: parses 2 bytes");
  is_u64(l.bytes, 4 * GiB, "span: 4G");
  is_int(cmg__size_parse(s, 1, false, &l), 0, "span: parses 1 byte");
  is_u64(l.bytes, 4, "span: 4");
  is_int(cmg__size_parse(s, 5, false, &l), -EINVAL, "span: comma refused");
  is_int(cmg__size_parse(s, 0, false, &l), -EINVAL, "span: empty refused");
  is_int(cmg__size_parse(NULL, 0, true, &l), -EINVAL, "NULL refused");
}

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
    ok(only_set(&cfg, false, -1), "config '%s' zeroes *cfg",
       s ? s : "(null)");
    is_str(err, "", "config '%s' leaves no error", s ? s : "(null)");
  }
  is_int(cmg__config_parse("limit=1G", &cfg, NULL, 0), 0, "err may be NULL");
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

  is_int(cmg__config_parse("limit=4GiB,limit.1=2GiB", &cfg, err,
                           sizeof(err)), 0, "limit and limit.1");
  is_u64(cfg.limit.bytes, 4 * GiB, "limit and limit.1: global");
  is_u64(cfg.limit_dev[1].bytes, 2 * GiB, "limit and limit.1: device 1");
  ok(only_set(&cfg, true, 1), "limit and limit.1: nothing else");

  is_int(cmg__config_parse(",limit.63=1M,,limit.0=12.5%,", &cfg, err,
                           sizeof(err)), 0, "empty items are skipped");
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

#define IS(in, want) { in, want, true }
#define STARTS(in, want) { in, want, false }

static const struct error_case error_cases[] = {
  /* key without '=' */
  IS("limit", "bad option 'limit': expected key=value"),
  IS("limit=1G,x", "bad option 'x': expected key=value"),
  IS("=1G", "bad option '=1G': expected key=value"),
  IS("=", "bad option '=': expected key=value"),
  /* unknown keys; keys are case-sensitive */
  IS("limt=4GiB",
     "unknown option 'limt=4GiB': expected one of limit, limit.N"),
  STARTS("LIMIT=1G", "unknown option 'LIMIT=1G'"),
  STARTS("limitx=1G", "unknown option 'limitx=1G'"),
  STARTS(" limit=1G", "unknown option ' limit=1G'"),
  STARTS("limit=1G,report=x", "unknown option 'report=x'"),
  /* bad device indexes */
  IS("limit.99=1G", "bad device index in 'limit.99=1G': expected limit.N "
                    "with N from 0 to 63"),
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
  STARTS("limit.2=50%,limit=1G,limit.2=1G",
         "duplicate option 'limit.2=1G'"),
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
  char err[256];
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

  rc = cmg__config_parse("limit=18446744073709551616", &cfg, err,
                         sizeof(err));
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

/* ---- cmg__config_limit -------------------------------------------------- */

static void
test_config_limit(void)
{
  struct cmg__config cfg;
  char err[256];

  cmg__config_parse("", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 0, 80 * GiB), CMG__NO_LIMIT,
         "no limit: device 0");
  is_u64(cmg__config_limit(&cfg, 63, 80 * GiB), CMG__NO_LIMIT,
         "no limit: device 63");

  cmg__config_parse("limit=4GiB", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 0, 80 * GiB), 4 * GiB, "global: device 0");
  is_u64(cmg__config_limit(&cfg, 63, 80 * GiB), 4 * GiB, "global: device 63");
  is_u64(cmg__config_limit(&cfg, 64, 80 * GiB), 4 * GiB,
         "global: device 64, past the table");
  is_u64(cmg__config_limit(&cfg, -1, 80 * GiB), 4 * GiB, "global: device -1");
  is_u64(cmg__config_limit(&cfg, 0, GiB), 4 * GiB,
         "bytes do not depend on the device size");

  cmg__config_parse("limit=4GiB,limit.1=2GiB", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 1, 80 * GiB), 2 * GiB, "limit.1 wins");
  is_u64(cmg__config_limit(&cfg, 0, 80 * GiB), 4 * GiB, "others: limit");
  is_u64(cmg__config_limit(&cfg, 2, 80 * GiB), 4 * GiB, "device 2: limit");

  cmg__config_parse("limit.1=2GiB", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 1, 80 * GiB), 2 * GiB, "only limit.1");
  is_u64(cmg__config_limit(&cfg, 0, 80 * GiB), CMG__NO_LIMIT,
         "only limit.1: device 0 unlimited");
  is_u64(cmg__config_limit(&cfg, 100, 80 * GiB), CMG__NO_LIMIT,
         "only limit.1: device 100 unlimited");

  cmg__config_parse("limit=0,limit.3=1", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 0, 80 * GiB), 0, "limit=0 denies all");
  is_u64(cmg__config_limit(&cfg, 3, 80 * GiB), 1, "limit.3=1");

  cmg__config_parse("limit=50%", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 0, 80 * GiB), 40 * GiB, "50%% of 80 GiB");
  is_u64(cmg__config_limit(&cfg, 0, 3), 1, "50%% of 3 bytes rounds down");
  is_u64(cmg__config_limit(&cfg, 0, 0), 0, "50%% of nothing");
  is_u64(cmg__config_limit(&cfg, 0, UINT64_MAX), UINT64_MAX / 2,
         "50%% of 2^64-1: no overflow");

  cmg__config_parse("limit=100%", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 5, UINT64_MAX), UINT64_MAX,
         "100%% of 2^64-1");
  is_u64(cmg__config_limit(&cfg, 5, 80 * GiB), 80 * GiB, "100%% of 80 GiB");

  cmg__config_parse("limit=12.5%,limit.2=25%,limit.4=1G", &cfg, err,
                    sizeof(err));
  is_u64(cmg__config_limit(&cfg, 0, 1000), 125, "12.5%% of 1000");
  is_u64(cmg__config_limit(&cfg, 2, 16 * GiB), 4 * GiB, "limit.2=25%%");
  is_u64(cmg__config_limit(&cfg, 4, 16 * GiB), GiB, "limit.4=1G");

  cmg__config_parse("limit=33.3333%", &cfg, err, sizeof(err));
  is_u64(cmg__config_limit(&cfg, 0, 3000000), 999999,
         "33.3333%% of 3000000 bytes");
  is_u64(cmg__config_limit(&cfg, 0, 3), 0, "33.3333%% of 3 rounds down");
}

/* ---- cmg__format_size --------------------------------------------------- */

static void
test_format_size(void)
{
  static const struct {
    uint64_t bytes;
    const char *want;
  } cases[] = {
    { 0, "0 B" },
    { 1, "1 B" },
    { 512, "512 B" },
    { 1000, "1000 B" },
    { 1023, "1023 B" },
    { 1024, "1.0 KiB" },
    { 1075, "1.0 KiB" },
    { 1076, "1.1 KiB" },
    { 1536, "1.5 KiB" },
    { 1000000, "976.6 KiB" },
    { 1048575, "1.0 MiB" },
    { MiB, "1.0 MiB" },
    { 1610612736, "1.5 GiB" },
    { 4 * GiB, "4.0 GiB" },
    { 80 * GiB, "80.0 GiB" },
    { 4000000000ull, "3.7 GiB" },
    { TiB, "1.0 TiB" },
    { 1023 * TiB, "1023.0 TiB" },
    { 1ull << 50, "1.0 PiB" },
    { 1ull << 60, "1.0 EiB" },
    { UINT64_MAX, "16.0 EiB" },
  };
  char buf[32], small[4];
  size_t i;

  for (i = 0; i < N(cases); i++)
    is_str(cmg__format_size(cases[i].bytes, buf, sizeof(buf)),
           cases[i].want, "format %llu", (unsigned long long)cases[i].bytes);

  ok(cmg__format_size(1536, small, sizeof(small)) == small,
     "format returns buf");
  is_str(small, "1.5", "format cuts to the buffer");
}

/* ---- cmg__log ----------------------------------------------------------- */

/*
 * Runs one cmg__log call with stderr sent to a temporary file and returns
 * what it wrote in out (NUL-terminated), and errno after the call.
 */
#define CAPTURE_LOG(out, errno_after, ...)                                   \
  do {                                                                       \
    FILE *tmp_ = tmpfile();                                                  \
    int saved_ = dup(STDERR_FILENO);                                         \
    ssize_t n_;                                                              \
    fflush(stderr);                                                          \
    dup2(fileno(tmp_), STDERR_FILENO);                                       \
    errno = EILSEQ;                                                          \
    cmg__log(__VA_ARGS__);                                                   \
    (errno_after) = errno;                                                   \
    dup2(saved_, STDERR_FILENO);                                             \
    close(saved_);                                                           \
    n_ = pread(fileno(tmp_), (out), sizeof(out) - 1, 0);                     \
    (out)[n_ > 0 ? n_ : 0] = '\0';                                           \
    fclose(tmp_);                                                            \
  } while (0)

static void
test_log(void)
{
  char out[2048], arg[1000];
  int e, fd, saved;
  size_t len;

  CAPTURE_LOG(out, e, "limit %s on device %d", "4.0 GiB", 1);
  is_str(out, "cumemguard: limit 4.0 GiB on device 1\n", "log: one line");
  is_int(e, EILSEQ, "log: errno preserved");

  CAPTURE_LOG(out, e, "no newline doubled\n");
  is_str(out, "cumemguard: no newline doubled\n", "log: one newline");

  CAPTURE_LOG(out, e, "%s", "");
  is_str(out, "cumemguard: \n", "log: empty message");

  memset(arg, 'x', sizeof(arg) - 1);
  arg[sizeof(arg) - 1] = '\0';
  CAPTURE_LOG(out, e, "%s", arg);
  len = strlen(out);
  is_u64(len, 512, "log: a long line is cut to the buffer");
  ok(starts_with(out, "cumemguard: xxx"), "log: cut line keeps the prefix");
  ok(len > 0 && out[len - 1] == '\n' && out[len - 2] == 'x',
     "log: cut line still ends with a newline");
  is_int(e, EILSEQ, "log: errno preserved after cutting");

  /* A failing write must not leak its errno (EBADF) to the program. */
  fflush(stderr);
  saved = dup(STDERR_FILENO);
  fd = open("/dev/null", O_RDONLY);
  dup2(fd, STDERR_FILENO);
  errno = ERANGE;
  cmg__log("lost");
  e = errno;
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(fd);
  is_int(e, ERANGE, "log: errno preserved when the write fails");
}

int
main(void)
{
  test_size_parse();
  test_size_parse_span();
  test_config_empty();
  test_config_valid();
  test_config_errors();
  test_config_error_texts();
  test_config_limit();
  test_format_size();
  test_log();
  return done_testing();
}
