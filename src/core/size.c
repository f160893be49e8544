/*
 * Sizes and durations as people write them: "4GiB", "512M", "1.5GB",
 * "1073741824", "50%" of a device, "30s", "500ms"; and a byte count as
 * people read it, "1.5 GiB".  The library, the
 * launcher and the report reader read and write them all here, so every program
 * agrees on every spelling.
 *
 * Sizes are parsed with integer arithmetic only: "1.5GiB" must be exactly
 * 1610612736 bytes on every machine, which binary floating point cannot
 * promise for every fraction.  Nothing is allocated: this runs in the first
 * hook of a program that may not have a working malloc yet.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/base.h"
#include "core/size.h"

/* A percentage is kept in millionths of the device: 1% is 10000 ppm. */
#define PPM_PER_PERCENT 10000u
#define PPM_MAX 1000000u

struct unit {
  const char *name; /* lower case; matched without regard to case */
  uint64_t mult;
};

/*
 * K and KiB are both 1024 and KB is 1000, as in IEC 80000-13 and as
 * nvidia-smi and most schedulers write GPU memory.  The empty unit and "B"
 * are plain bytes.
 */
static const struct unit units[] = {
  { "", 1 },
  { "b", 1 },
  { "k", 1ull << 10 },
  { "kib", 1ull << 10 },
  { "kb", 1000ull },
  { "m", 1ull << 20 },
  { "mib", 1ull << 20 },
  { "mb", 1000000ull },
  { "g", 1ull << 30 },
  { "gib", 1ull << 30 },
  { "gb", 1000000000ull },
  { "t", 1ull << 40 },
  { "tib", 1ull << 40 },
  { "tb", 1000000000000ull },
};

static bool
is_digit(char c)
{
  return c >= '0' && c <= '9';
}

/* ASCII only: the C library's tolower() follows the program's locale. */
static char
lower(char c)
{
  return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

bool
cmg__equals_nocase(const char *s, size_t len, const char *name)
{
  for (size_t i = 0; i < len; i++) {
    if (name[i] == '\0' || lower(s[i]) != lower(name[i]))
      return false;
  }
  return name[len] == '\0';
}

/* The multiplier of the unit s[0..len); 0 if it is not a unit. */
static uint64_t
unit_mult(const char *s, size_t len)
{
  for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
    if (cmg__equals_nocase(s, len, units[i].name))
      return units[i].mult;
  }
  return 0;
}

/*
 * floor(0.d1d2...dn * mult) for the n fractional digits at frac, exactly and
 * for any n.  Horner's scheme from the last digit, y = (d * mult + y) / 10,
 * may floor at every step because floor((a + y) / 10) equals
 * floor((a + floor(y)) / 10) for integer a.  y stays below mult, so
 * d * mult + y stays below 10 * mult, far from 2^64 for every unit.
 */
static uint64_t
fraction_of(const char *frac, size_t n, uint64_t mult)
{
  uint64_t y = 0;

  while (n-- > 0)
    y = ((uint64_t)(frac[n] - '0') * mult + y) / 10;
  return y;
}

/*
 * Parses one size, DIGITS[.DIGITS][UNIT] or DIGITS[.DIGITS]% (the latter
 * only when allow_percent); see size.h for the contract.  Syntax is
 * checked before arithmetic, so a malformed size is -EINVAL even when its
 * digits would also overflow.
 */
int
cmg__size_parse(const char *s, size_t len, bool allow_percent,
                struct cmg__limit *out)
{
  size_t i = 0, frac_at = 0, frac_len = 0;
  bool percent = false;
  uint64_t mult, value = 0;

  if (s == NULL || len == 0)
    return -EINVAL;

  while (i < len && is_digit(s[i]))
    i++;
  size_t int_len = i;
  if (int_len == 0)
    return -EINVAL;

  if (i < len && s[i] == '.') {
    frac_at = ++i;
    while (i < len && is_digit(s[i]))
      i++;
    frac_len = i - frac_at;
    if (frac_len == 0)
      return -EINVAL;
  }

  if (len - i == 1 && s[i] == '%') {
    if (!allow_percent)
      return -EINVAL;
    percent = true;
    mult = PPM_PER_PERCENT;
  } else {
    mult = unit_mult(s + i, len - i);
    if (mult == 0)
      return -EINVAL;
  }

  for (i = 0; i < int_len; i++) {
    if (__builtin_mul_overflow(value, 10, &value) ||
        __builtin_add_overflow(value, (uint64_t)(s[i] - '0'), &value))
      return -ERANGE;
  }
  if (__builtin_mul_overflow(value, mult, &value) ||
      __builtin_add_overflow(value, fraction_of(s + frac_at, frac_len, mult),
                             &value))
    return -ERANGE;

  if (percent) {
    /* 0% would deny everything by accident; limit=0 says so on purpose. */
    if (value == 0 || value > PPM_MAX)
      return -ERANGE;
    out->kind = CMG__LIMIT_PERCENT;
    out->bytes = 0;
    out->ppm = (uint32_t)value;
  } else {
    out->kind = CMG__LIMIT_BYTES;
    out->bytes = value;
    out->ppm = 0;
  }
  return 0;
}

/* A duration: digits, an optional fraction, and a unit ms, s, m or h
 * (seconds without one), from 1 ms to 24 h. */
int
cmg__duration_parse(const char *value, size_t len, uint64_t *ns_out)
{
  static const struct unit durations[] = {
    { "", 1000000000ull },   { "s", 1000000000ull },    { "ms", 1000000ull },
    { "m", 60000000000ull }, { "h", 3600000000000ull },
  };
  size_t i = 0;
  uint64_t whole = 0, frac = 0, scale = 1;
  while (i < len && is_digit(value[i]) && whole < 100000000)
    whole = whole * 10 + (uint64_t)(value[i++] - '0');
  if (i == 0)
    return -EINVAL;
  if (i < len && value[i] == '.') {
    for (i++; i < len && is_digit(value[i]); i++)
      if (scale < 1000000000ull) {
        frac = frac * 10 + (uint64_t)(value[i] - '0');
        scale *= 10;
      }
  }
  for (size_t u = 0; u < sizeof(durations) / sizeof(*durations); u++) {
    if (!cmg__equals_nocase(value + i, len - i, durations[u].name))
      continue;
    uint64_t ns =
        whole * durations[u].mult + frac * (durations[u].mult / scale);
    if (ns < 1000000ull || ns > 24 * 3600000000000ull)
      return -ERANGE;
    *ns_out = ns;
    return 0;
  }
  return -EINVAL;
}

uint64_t
cmg__limit_bytes(const struct cmg__limit *l, uint64_t physical)
{
  switch (l->kind) {
  case CMG__LIMIT_BYTES:
    return l->bytes;
  case CMG__LIMIT_PERCENT:
    /* physical * ppm needs up to 84 bits. */
    return (uint64_t)((unsigned __int128)physical * l->ppm / PPM_MAX);
  case CMG__LIMIT_NONE:
    break;
  }
  return CMG__NO_LIMIT;
}

/*
 * Formats bytes as "512 B" below 1 KiB and otherwise with one decimal in the
 * largest binary unit that keeps the number under 1024, rounded to nearest;
 * returns buf.
 */
const char *
cmg__format_size(uint64_t bytes, char *buf, size_t len)
{
  static const char *const units[] = {
    "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB",
  };
  const unsigned last = sizeof(units) / sizeof(units[0]) - 1;
  unsigned u = 0;
  uint64_t tenths;

  if (buf == NULL || len == 0)
    return buf;
  if (bytes < 1024) {
    snprintf(buf, len, "%" PRIu64 " B", bytes);
    return buf;
  }

  while (u < last && bytes >> (10 * (u + 1)) != 0)
    u++;

  /*
   * Tenths of the unit, rounded; 128 bits because bytes * 10 overflows near
   * the top of the range.  Rounding can reach 1024.0 of a unit (1048575
   * bytes is 1023.999 KiB), which reads better as 1.0 of the next one.
   */
  for (;;) {
    unsigned shift = 10 * u;
    unsigned __int128 num = (unsigned __int128)bytes * 10;

    tenths = (uint64_t)((num + ((unsigned __int128)1 << (shift - 1))) >> shift);
    if (tenths < 10240 || u == last)
      break;
    u++;
  }

  snprintf(buf, len, "%" PRIu64 ".%" PRIu64 " %s", tenths / 10, tenths % 10,
           units[u]);
  return buf;
}
