/*
 * UTF-8, the reader's one home for it.  Every string a report gives the
 * tool is cleaned as the loader copies it (cmg__utf8_clean), so that no
 * output, whether a terminal, an SVG, JSON or folded stacks, carries a
 * control byte or a byte that is not UTF-8; what is printed later may
 * then count characters by their lead bytes alone, as the flame graph
 * does to fit a label in its box.
 *
 * What is valid UTF-8 is the core's rule (core/utf8.c), the one by which
 * the library escapes what it writes.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "reader/load/utf8_text.h"

/* Whether code point c of a valid character is printed as it is: not a
 * control (C0, DEL, C1) and not U+FFFE or U+FFFF, which XML refuses. */
static bool
printable(uint32_t c)
{
  return c >= 0x20 && c != 0x7f && !(c >= 0x80 && c <= 0x9f) && c != 0xfffe &&
         c != 0xffff;
}

/* Each byte that starts no valid character, or one not printed, becomes
 * '?'. */
char *
cmg__utf8_clean(const char *s)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t len = strlen(s), o = 0;
  char *out = malloc(len + 1);

  if (out == NULL)
    return NULL;
  for (size_t i = 0; i < len;) {
    uint32_t c = 0;
    size_t n = cmg__utf8_char(p + i, len - i, &c);

    if (n == 0 || !printable(c)) {
      out[o++] = '?';
      i++;
      continue;
    }
    memcpy(out + o, p + i, n);
    o += n;
    i += n;
  }
  out[o] = '\0';
  return out;
}

size_t
cmg__utf8_prefix(const char *s, size_t chars)
{
  size_t i = 0;

  while (s[i] != '\0') {
    if (((unsigned char)s[i] & 0xc0) != 0x80) {
      if (chars == 0)
        break;
      chars--;
    }
    i++;
  }
  return i;
}

size_t
cmg__utf8_count(const char *s)
{
  size_t n = 0;

  for (; *s != '\0'; s++)
    n += ((unsigned char)*s & 0xc0) != 0x80;
  return n;
}
