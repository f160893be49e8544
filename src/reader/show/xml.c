/*
 * XML escaping for the SVG writers.  Report text is already valid UTF-8
 * with no control characters (the reader cleans it as it reads), so the
 * five reserved characters are all that need care.
 */
#include "config.h"

#include <stdio.h>

#include "reader/show/xml.h"

void
cmg__xml_put(FILE *f, const char *s, size_t max_bytes)
{
  for (size_t i = 0; s[i] != '\0' && i < max_bytes; i++) {
    switch (s[i]) {
    case '&':
      fputs("&amp;", f);
      break;
    case '<':
      fputs("&lt;", f);
      break;
    case '>':
      fputs("&gt;", f);
      break;
    case '"':
      fputs("&quot;", f);
      break;
    case '\'':
      fputs("&apos;", f);
      break;
    default:
      fputc(s[i], f);
      break;
    }
  }
}
