/*
 * Unit tests of utf8.c, the one rule by which the library escapes what it
 * writes and the reader cleans what it reads: a report must never carry a
 * byte sequence a JSON parser refuses, nor lose a name a user wrote in
 * their own script.  Each boundary of RFC 3629 is tried from both sides
 * (the last overlong and the first shortest form, the last code point
 * before the surrogates and the first after, U+10FFFF and U+110000), cut
 * sequences at every length, bytes that cannot lead or continue, and then
 * every lead and second byte against a decoder written from the RFC's
 * table, and every code point encoded and read back.
 */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/utf8.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct utf8_case {
  const char *what;
  unsigned char s[4];
  size_t n;    /* bytes left */
  size_t len;  /* 0: not a character */
  uint32_t cp; /* when len > 0 */
};

static const struct utf8_case cases[] = {
  { "NUL is U+0000", { 0x00 }, 1, 1, 0x0000 },
  { "U+007F", { 0x7f }, 1, 1, 0x007f },
  { "ASCII with more bytes left", { 'a', 0xc3, 0xa9 }, 3, 1, 'a' },
  { "U+0080, the first two-byte", { 0xc2, 0x80 }, 2, 2, 0x0080 },
  { "U+00E9", { 0xc3, 0xa9 }, 2, 2, 0x00e9 },
  { "U+07FF, the last two-byte", { 0xdf, 0xbf }, 2, 2, 0x07ff },
  { "C0 80, an overlong NUL", { 0xc0, 0x80 }, 2, 0, 0 },
  { "C1 BF, an overlong U+007F", { 0xc1, 0xbf }, 2, 0, 0 },
  { "U+0800, the first three-byte", { 0xe0, 0xa0, 0x80 }, 3, 3, 0x0800 },
  { "E0 9F BF, an overlong U+07FF", { 0xe0, 0x9f, 0xbf }, 3, 0, 0 },
  { "E0 80 80, an overlong NUL", { 0xe0, 0x80, 0x80 }, 3, 0, 0 },
  { "U+1000 after E1", { 0xe1, 0x80, 0x80 }, 3, 3, 0x1000 },
  { "U+20AC", { 0xe2, 0x82, 0xac }, 3, 3, 0x20ac },
  { "U+D7FF, before the surrogates", { 0xed, 0x9f, 0xbf }, 3, 3, 0xd7ff },
  { "U+D800, the first surrogate", { 0xed, 0xa0, 0x80 }, 3, 0, 0 },
  { "U+DFFF, the last surrogate", { 0xed, 0xbf, 0xbf }, 3, 0, 0 },
  { "U+E000, after the surrogates", { 0xee, 0x80, 0x80 }, 3, 3, 0xe000 },
  { "U+FFFF, the last three-byte", { 0xef, 0xbf, 0xbf }, 3, 3, 0xffff },
  { "U+10000, the first four-byte", { 0xf0, 0x90, 0x80, 0x80 }, 4, 4, 0x10000 },
  { "F0 8F BF BF, an overlong U+FFFF", { 0xf0, 0x8f, 0xbf, 0xbf }, 4, 0, 0 },
  { "U+1F600", { 0xf0, 0x9f, 0x98, 0x80 }, 4, 4, 0x1f600 },
  { "U+40000 after F1", { 0xf1, 0x80, 0x80, 0x80 }, 4, 4, 0x40000 },
  { "U+10FFFF, the last code point",
    { 0xf4, 0x8f, 0xbf, 0xbf },
    4,
    4,
    0x10ffff },
  { "U+110000, past the last", { 0xf4, 0x90, 0x80, 0x80 }, 4, 0, 0 },
  { "F5 never leads", { 0xf5, 0x80, 0x80, 0x80 }, 4, 0, 0 },
  { "F8 never leads (five bytes)", { 0xf8, 0x88, 0x80, 0x80 }, 4, 0, 0 },
  { "FF never leads", { 0xff, 0xbf, 0xbf, 0xbf }, 4, 0, 0 },
  { "a stray 80", { 0x80, 0x80 }, 2, 0, 0 },
  { "a stray BF", { 0xbf }, 1, 0, 0 },
  { "a two-byte lead cut", { 0xc3 }, 1, 0, 0 },
  { "a three-byte cut after one", { 0xe2 }, 1, 0, 0 },
  { "a three-byte cut after two", { 0xe2, 0x82 }, 2, 0, 0 },
  { "a four-byte cut after three", { 0xf0, 0x9f, 0x98 }, 3, 0, 0 },
  { "bytes past n do not count", { 0xc3, 0xa9 }, 1, 0, 0 },
  { "bytes past n do not count (4)", { 0xf0, 0x9f, 0x98, 0x80 }, 3, 0, 0 },
  { "ASCII where the second should be", { 0xc3, 0x28 }, 2, 0, 0 },
  { "a lead where the second should be", { 0xc3, 0xc3 }, 2, 0, 0 },
  { "ASCII where the third should be", { 0xe2, 0x82, 0x28 }, 3, 0, 0 },
  { "C0 where the third should be", { 0xe2, 0x82, 0xc0 }, 3, 0, 0 },
  { "ASCII where the fourth should be", { 0xf0, 0x9f, 0x98, 0x28 }, 4, 0, 0 },
  { "a NUL where the fourth should be", { 0xf0, 0x9f, 0x98, 0x00 }, 4, 0, 0 },
};

static void
test_cases(void)
{
  for (size_t i = 0; i < N(cases); i++) {
    const struct utf8_case *c = &cases[i];
    uint32_t cp = 0xdeadbeef;
    size_t len = cmg__utf8_char(c->s, c->n, &cp);
    if (c->len == 0) {
      is_u64(len, 0, "%s: not a character", c->what);
      continue;
    }
    ok(len == c->len && cp == c->cp, "%s: %zu bytes, U+%04X", c->what, c->len,
       (unsigned)c->cp);
    if (len != c->len || cp != c->cp)
      printf("#   got %zu bytes, U+%04X\n", len, (unsigned)cp);
  }
}

/* Every byte below 0x80 is itself, every other cannot stand alone. */
static void
test_single_bytes(void)
{
  int wrong = 0, alone = 0;
  for (unsigned b = 0; b < 256; b++) {
    unsigned char s[1] = { (unsigned char)b };
    uint32_t cp = 0xdeadbeef;
    size_t len = cmg__utf8_char(s, 1, &cp);
    if (b < 0x80)
      wrong += len != 1 || cp != b;
    else
      alone += len != 0;
  }
  is_int(wrong, 0, "each of the 128 ASCII bytes is its own code point");
  is_int(alone, 0, "no byte from 80 up is a character on its own");
}

static void
test_null_cp(void)
{
  const unsigned char euro[] = { 0xe2, 0x82, 0xac };
  is_u64(cmg__utf8_char(euro, 3, NULL), 3, "a NULL cp only measures");
  is_u64(cmg__utf8_char(euro + 1, 2, NULL), 0,
         "and still refuses what is not a character");
}

/* A string read the way the escaper reads it: one character at a time,
 * each refusal one byte. */
static void
test_walk(void)
{
  const unsigned char s[] = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
                            "\xed\xa0\x80z\xc3";
  size_t n = sizeof(s) - 1, chars = 0, bad = 0;
  uint32_t sum = 0, cp;
  for (size_t at = 0; at < n;) {
    size_t len = cmg__utf8_char(s + at, n - at, &cp);
    if (len == 0) {
      bad++;
      at++;
      continue;
    }
    chars++;
    sum += cp;
    at += len;
  }
  is_u64(chars, 5, "a mixed string: five characters");
  is_u64(bad, 4, "a surrogate's three bytes and a cut lead refused");
  is_u64(sum, 'a' + 0xe9 + 0x20ac + 0x1f600 + 'z', "their code points");
}

/* The RFC's table, written as ranges of code points rather than of
 * bytes: decode by the lead's bit pattern, then refuse what is shorter
 * than its length needs, a surrogate, or past U+10FFFF. */
static size_t
rfc_char(const unsigned char *s, size_t n, uint32_t *cp)
{
  static const uint32_t least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
  size_t len;
  uint32_t c;

  if ((s[0] & 0x80) == 0)
    len = 1, c = s[0];
  else if ((s[0] & 0xe0) == 0xc0)
    len = 2, c = s[0] & 0x1f;
  else if ((s[0] & 0xf0) == 0xe0)
    len = 3, c = s[0] & 0x0f;
  else if ((s[0] & 0xf8) == 0xf0)
    len = 4, c = s[0] & 0x07;
  else
    return 0;
  if (len > n)
    return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    c = c << 6 | (s[i] & 0x3f);
  }
  if (c < least[len] || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
    return 0;
  *cp = c;
  return len;
}

/* Every lead and second byte, with third and fourth bytes on either side
 * of the continuation range, at every length left: the range checks the
 * module makes on the second byte alone must agree with the RFC's. */
static void
test_against_rfc(void)
{
  static const unsigned char tails[] = { 0x7f, 0x80, 0xbf, 0xc0 };
  unsigned long tried = 0, differ = 0, valid = 0;

  for (unsigned a = 0; a < 256; a++)
    for (unsigned b = 0; b < 256; b++)
      for (size_t t = 0; t < N(tails) * N(tails); t++)
        for (size_t n = 1; n <= 4; n++) {
          unsigned char s[4] = { (unsigned char)a, (unsigned char)b,
                                 tails[t / N(tails)], tails[t % N(tails)] };
          uint32_t want = 0, got = 0;
          size_t w = rfc_char(s, n, &want), g = cmg__utf8_char(s, n, &got);
          tried++;
          valid += w > 0;
          if (w != g || (w > 0 && want != got)) {
            if (differ++ < 5)
              printf("# %02x %02x %02x %02x, n %zu: %zu bytes U+%04X, "
                     "want %zu bytes U+%04X\n",
                     s[0], s[1], s[2], s[3], n, g, (unsigned)got, w,
                     (unsigned)want);
          }
        }
  is_u64(differ, 0, "%lu sequences agree with the RFC's table", tried);
  ok(valid > 100000, "of which %lu are characters", valid);
}

static size_t
encode(uint32_t c, unsigned char *s)
{
  if (c < 0x80) {
    s[0] = (unsigned char)c;
    return 1;
  }
  if (c < 0x800) {
    s[0] = (unsigned char)(0xc0 | c >> 6);
    s[1] = (unsigned char)(0x80 | (c & 0x3f));
    return 2;
  }
  if (c < 0x10000) {
    s[0] = (unsigned char)(0xe0 | c >> 12);
    s[1] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
    s[2] = (unsigned char)(0x80 | (c & 0x3f));
    return 3;
  }
  s[0] = (unsigned char)(0xf0 | c >> 18);
  s[1] = (unsigned char)(0x80 | (c >> 12 & 0x3f));
  s[2] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
  s[3] = (unsigned char)(0x80 | (c & 0x3f));
  return 4;
}

/* Every code point in its shortest form reads back, exactly, and is
 * refused one byte short; the surrogates are refused however whole. */
static void
test_every_code_point(void)
{
  unsigned long back = 0, cut = 0, surrogates = 0;

  for (uint32_t c = 0; c <= 0x10ffff; c++) {
    unsigned char s[4];
    uint32_t cp = 0;
    size_t len = encode(c, s);
    bool is_surrogate = c >= 0xd800 && c <= 0xdfff;
    size_t got = cmg__utf8_char(s, len, &cp);
    if (is_surrogate) {
      surrogates += got == 0;
      continue;
    }
    back += got == len && cp == c;
    cut += len == 1 || cmg__utf8_char(s, len - 1, NULL) == 0;
  }
  is_u64(back, 0x110000 - 0x800, "every scalar value reads back");
  is_u64(cut, 0x110000 - 0x800, "and none is read with its last byte cut");
  is_u64(surrogates, 0x800, "all 2048 surrogates are refused");
}

int
main(void)
{
  test_cases();
  test_single_bytes();
  test_null_cp();
  test_walk();
  test_against_rfc();
  test_every_code_point();
  return done_testing();
}
