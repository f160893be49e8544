/*
 * The report's one rule for text from the process (report_text.c): valid UTF-8
 * kept, every other byte and every NUL written as \xHH, one byte at a
 * time, as Python's "backslashreplace" decodes it; the edges of each form
 * (overlong, surrogate, past U+10FFFF, cut short) and cuts that fall
 * inside a character or an escape; and the core's rule under it
 * (core/utf8.c), which the reader cleans text by too: each character's
 * length and code point.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "core/utf8.h"
#include "runtime/report/report_text.h"
#include "../tap.h"

/* s (n bytes) escaped into a static buffer of cap bytes. */
static const char *
esc(const char *s, size_t n, size_t cap)
{
  static char buf[256];
  cmg__text_escape(buf, cap, s, n);
  return buf;
}

#define E(lit) esc((lit), sizeof(lit) - 1, 256)

static void
test_valid(void)
{
  is_str(E("Model.build"), "Model.build", "ASCII is kept");
  is_str(E("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
         "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
         "2-, 3- and 4-byte characters are kept");
  is_str(E("\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf"),
         "\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf",
         "U+D7FF, U+E000 and U+10FFFF are kept");
  is_str(E("a\\xffb"), "a\\xffb", "a backslash is kept as it is");
}

static void
test_invalid(void)
{
  is_str(E("mod\xff.py"), "mod\\xff.py", "a byte that starts nothing");
  is_str(E("a\0b"), "a\\x00b", "a NUL");
  is_str(E("\xc0\x80\xc1\xbf"), "\\xc0\\x80\\xc1\\xbf", "2-byte overlongs");
  is_str(E("\xe0\x9f\xbf"), "\\xe0\\x9f\\xbf", "a 3-byte overlong");
  is_str(E("\xf0\x8f\xbf\xbf"), "\\xf0\\x8f\\xbf\\xbf", "a 4-byte overlong");
  is_str(E("bad\xed\xb3\xbf"), "bad\\xed\\xb3\\xbf", "a lone surrogate");
  is_str(E("\xf4\x90\x80\x80\xf5"), "\\xf4\\x90\\x80\\x80\\xf5",
         "past U+10FFFF");
  is_str(E("\xe2\x82z"), "\\xe2\\x82z", "a character cut short");
  is_str(E("\x80\xbf"), "\\x80\\xbf", "continuation bytes alone");
  is_str(E("x\xe2\x82"), "x\\xe2\\x82", "cut short at the end");
}

static void
test_cut(void)
{
  is_str(esc("abc", 3, 1), "", "room for the NUL only");
  is_str(esc("ab\xffz", 4, 6), "ab", "an escape that does not fit is left");
  is_str(esc("ab\xffz", 4, 7), "ab\\xff", "one that fits is written whole");
  is_str(esc("a\xe2\x82\xac", 4, 4), "a",
         "a character that does not fit is left whole");
  char *d = cmg__text_dup("\xff\xfe\xfd");
  is_str(d, "\\xff\\xfe\\xfd", "a copy has room for every escape");
  free(d);
}

static void
test_code_points(void)
{
  static const struct {
    const char *s;
    size_t n, len;
    uint32_t cp;
  } cases[] = {
    { "", 1, 1, 0 },
    { "\x7f", 1, 1, 0x7f },
    { "\xc2\x80", 2, 2, 0x80 },
    { "\xdf\xbf", 2, 2, 0x7ff },
    { "\xe0\xa0\x80", 3, 3, 0x800 },
    { "\xef\xbf\xbf", 3, 3, 0xffff },
    { "\xf0\x90\x80\x80", 4, 4, 0x10000 },
    { "\xf4\x8f\xbf\xbf", 4, 4, 0x10ffff },
    { "\xe2\x82\xac", 2, 0, 0 },
    { "\xc1\xbf", 2, 0, 0 },
    { "\xed\xa0\x80", 3, 0, 0 },
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    uint32_t cp = 0;
    size_t len =
        cmg__utf8_char((const unsigned char *)cases[i].s, cases[i].n, &cp);
    ok(len == cases[i].len && (len == 0 || cp == cases[i].cp),
       "case %zu: %zu bytes, U+%04X", i, len, (unsigned)cp);
  }
}

int
main(void)
{
  test_code_points();
  test_valid();
  test_invalid();
  test_cut();
  return done_testing();
}
