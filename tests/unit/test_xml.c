/*
 * XML escaping for the SVG of flame and plot: report text goes into both
 * element text and quoted attributes, so all five reserved characters must
 * come out as entities, anything else byte for byte (UTF-8 included), and
 * the byte limit that shortens long names must count the input, stop on
 * the terminator and never cut an entity in half.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/show/xml.h"
#include "../tap.h"

static char out[512];

/* What cmg__xml_put writes for s and max_bytes. */
static const char *
put(const char *s, size_t max_bytes)
{
  FILE *f;

  memset(out, 0, sizeof(out)); /* fmemopen leaves it as is when nothing is
                                * written */
  if ((f = fmemopen(out, sizeof(out) - 1, "w")) == NULL)
    abort();
  cmg__xml_put(f, s, max_bytes);
  fclose(f);
  return out;
}

static void
test_entities(void)
{
  is_str(put("&", SIZE_MAX), "&amp;", "& is &amp;");
  is_str(put("<", SIZE_MAX), "&lt;", "< is &lt;");
  is_str(put(">", SIZE_MAX), "&gt;", "> is &gt;");
  is_str(put("\"", SIZE_MAX), "&quot;", "a double quote is &quot;");
  is_str(put("'", SIZE_MAX), "&apos;", "a single quote is &apos;");
  is_str(put("std::vector<int>::operator[]'s \"x\" & y", SIZE_MAX),
         "std::vector&lt;int&gt;::operator[]&apos;s &quot;x&quot; &amp; y",
         "a C++ name with all five, each escaped in place");
  is_str(put("&amp;", SIZE_MAX), "&amp;amp;",
         "an entity in the report is text, escaped again");
  is_str(put("<<>>", SIZE_MAX), "&lt;&lt;&gt;&gt;",
         "repeated characters each escaped");
}

static void
test_plain(void)
{
  is_str(put("", SIZE_MAX), "", "an empty string writes nothing");
  is_str(put("train_step+0x7e (trainer+0x1f00)", SIZE_MAX),
         "train_step+0x7e (trainer+0x1f00)", "plain text is unchanged");
  is_str(put("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5", SIZE_MAX),
         "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5",
         "UTF-8 passes through byte for byte");
  is_str(put("a;b#c%d/e\\f=g", SIZE_MAX), "a;b#c%d/e\\f=g",
         "other punctuation is not escaped");
}

static void
test_limit(void)
{
  is_str(put("abcdef", 3), "abc", "max_bytes keeps that many bytes");
  is_str(put("abcdef", 0), "", "max_bytes 0 writes nothing");
  is_str(put("abc", 100), "abc", "a limit past the end stops at the NUL");
  is_str(put("abc", 3), "abc", "a limit of exactly the length keeps all");
  is_str(put("a&b", 2), "a&amp;",
         "the limit counts input bytes: an escaped byte costs one");
  is_str(put("a&b", 1), "a", "a limit before a reserved character drops it");
  is_str(put("<>&\"'", 4), "&lt;&gt;&amp;&quot;",
         "entities are whole up to the limit");
  is_str(put("x\0<y", SIZE_MAX), "x", "nothing after the terminator");
}

/* Into a real file, as the SVG writers use it: appended to what is there. */
static void
test_stream(void)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);

  fputs("<text>", f);
  cmg__xml_put(f, "a<b", SIZE_MAX);
  cmg__xml_put(f, "&c", SIZE_MAX);
  fputs("</text>", f);
  fclose(f);
  is_str(buf, "<text>a&lt;b&amp;c</text>",
         "writes where the stream is, after and before other output");
  is_u64(len, strlen("<text>a&lt;b&amp;c</text>"), "and nothing else");
  free(buf);
}

int
main(void)
{
  test_entities();
  test_plain();
  test_limit();
  test_stream();
  return done_testing();
}
