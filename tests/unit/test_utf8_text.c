/*
 * Unit tests of utf8_text.c, the reader's text cleaning and counting.
 * Every string a report gives the tool passes through cmg__utf8_clean()
 * before any output sees it, so it must turn each control byte (C0, DEL,
 * C1), U+FFFE and U+FFFF, and each byte that starts no valid character
 * (a stray continuation, a cut sequence, an overlong form, a surrogate,
 * past U+10FFFF) into '?' and keep every valid character whole.  The
 * flame graph then counts and cuts labels by lead bytes alone, which is
 * right only on text that is clean.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "reader/load/utf8_text.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void
test_clean(void)
{
  static const struct {
    const char *in, *want, *what;
  } cases[] = {
    { "", "", "the empty string stays empty" },
    { "cudaMalloc at train.py:12", "cudaMalloc at train.py:12",
      "printable ASCII is kept" },
    { " ~", " ~", "space and tilde, the ends of printable ASCII, are kept" },
    { "a\tb\nc\rd", "a?b?c?d", "tab, newline and carriage return become '?'" },
    { "\x01\x1b[31m\x1f", "??[31m?", "C0 controls, ESC among them" },
    { "x\x7fy", "x?y", "DEL" },
    { "a\xc2\x85z", "a??z", "a C1 control (U+0085): each of its bytes" },
    { "\xc2\x9f", "??", "U+009F, the last C1 control" },
    { "\xc2\xa0", "\xc2\xa0", "U+00A0, just past the C1 controls, is kept" },
    { "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
      "two-, three- and four-byte characters are kept whole" },
    { "\xef\xbf\xbe|\xef\xbf\xbf", "???|???",
      "U+FFFE and U+FFFF, which XML refuses" },
    { "\xef\xbf\xbd", "\xef\xbf\xbd", "U+FFFD is kept" },
    { "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf", "U+10FFFF, the last, is kept" },
    { "a\x80z", "a?z", "a stray continuation byte" },
    { "ok\xe2\x82", "ok??", "a sequence cut by the end of the string" },
    { "\xe2\x82z", "??z", "a sequence cut by an ASCII byte" },
    { "\xc0\xaf", "??", "an overlong '/'" },
    { "\xe0\x80\xaf", "???", "an overlong three-byte form" },
    { "\xed\xa0\x80", "???", "a UTF-16 surrogate" },
    { "\xf4\x90\x80\x80", "????", "a code point past U+10FFFF" },
    { "\xfe\xff", "??", "bytes that never start a character" },
  };

  for (size_t i = 0; i < N(cases); i++) {
    char *got = cmg__utf8_clean(cases[i].in);

    is_str(got, cases[i].want, "clean: %s", cases[i].what);
    free(got);
  }

  /* Each bad byte is one '?', so a name keeps its length and its place in
   * a column. */
  static const char mixed[] = "\xff\x01\xc3\xa9\x80\xe2\x82\xac\x7f";
  char *got = cmg__utf8_clean(mixed);
  is_u64(strlen(got), strlen(mixed), "clean: as many bytes out as in");
  free(got);

  char in[] = "keep";
  got = cmg__utf8_clean(in);
  ok(got != in && strcmp(in, "keep") == 0,
     "clean: a copy, the original untouched");
  free(got);
}

static void
test_count(void)
{
  is_u64(cmg__utf8_count(""), 0, "count: none in the empty string");
  is_u64(cmg__utf8_count("abc"), 3, "count: one per ASCII byte");
  is_u64(cmg__utf8_count("caf\xc3\xa9"), 4, "count: a two-byte character");
  is_u64(cmg__utf8_count("\xe2\x82\xac\xf0\x9f\x98\x80"), 2,
         "count: a three- and a four-byte character");
}

static void
test_prefix(void)
{
  static const char s[] = "h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";

  is_u64(cmg__utf8_prefix(s, 0), 0, "prefix: no characters, no bytes");
  is_u64(cmg__utf8_prefix(s, 1), 1, "prefix: one ASCII character");
  is_u64(cmg__utf8_prefix(s, 2), 3, "prefix: a two-byte character whole");
  is_u64(cmg__utf8_prefix(s, 3), 6, "prefix: a three-byte character whole");
  is_u64(cmg__utf8_prefix(s, 4), 10, "prefix: a four-byte character whole");
  is_u64(cmg__utf8_prefix(s, 5), 11, "prefix: every character");
  is_u64(cmg__utf8_prefix(s, 6), 11, "prefix: more than there are is all");
  is_u64(cmg__utf8_prefix("", 3), 0, "prefix: of the empty string");
  is_u64(cmg__utf8_prefix("\xf0\x9f\x98\x80", 0), 0,
         "prefix: none of a four-byte character");
}

int
main(void)
{
  test_clean();
  test_count();
  test_prefix();
  return done_testing();
}
