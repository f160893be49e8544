/*
 * Unit tests of size.c: sizes as people write them, parsed in every unit,
 * case and fraction, at the 64-bit boundary and as percentages, from a
 * span of a longer string; and sizes formatted for messages.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/size.h"
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

#define B(s, v)                                                                \
  {                                                                            \
    s, false, 0, CMG__LIMIT_BYTES, v                                           \
  }
#define P(s, v)                                                                \
  {                                                                            \
    s, true, 0, CMG__LIMIT_PERCENT, v                                          \
  }
#define BAD(s)                                                                 \
  {                                                                            \
    s, true, -EINVAL, CMG__LIMIT_NONE, 0                                       \
  }
#define BADNP(s)                                                               \
  {                                                                            \
    s, false, -EINVAL, CMG__LIMIT_NONE, 0                                      \
  }
#define BIG(s)                                                                 \
  {                                                                            \
    s, true, -ERANGE, CMG__LIMIT_NONE, 0                                       \
  }

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
    is_str(cmg__format_size(cases[i].bytes, buf, sizeof(buf)), cases[i].want,
           "format %llu", (unsigned long long)cases[i].bytes);

  ok(cmg__format_size(1536, small, sizeof(small)) == small,
     "format returns buf");
  is_str(small, "1.5", "format cuts to the buffer");
}

int
main(void)
{
  test_size_parse();
  test_size_parse_span();
  test_format_size();
  return done_testing();
}
