/*
 * UTF-8, the reader's one home for it.  Every string a report gives the
 * tool is cleaned as the loader copies it (cmg__utf8_clean), so that no
 * output, whether a terminal, an SVG, JSON or folded stacks, carries a
 * control byte or a byte that is not UTF-8; what is printed later may
 * then count characters by their lead bytes alone, as the flame graph
 * does to fit a label in its box.
 *
 * The runtime has a validator of its own (src/runtime/text.c), which the
 * library uses to escape what it writes; the reader does not link the
 * runtime.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "reader/load/utf8.h"

/*
 * Control bytes and C1 controls become '?', and so does each byte that does
 * not start a valid UTF-8 sequence (overlong forms, surrogates, U+FFFE and
 * U+FFFF included, since XML refuses those).
 */
char *
cmg__utf8_clean(const char *s)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t len = strlen(s), i = 0, o = 0;
  char *out = malloc(len + 1);

  if (out == NULL)
    return NULL;
  while (i < len) {
    unsigned c = p[i], need = 0, lo = 0x80, hi = 0xbf;
    size_t k;

    if (c < 0x80) {
      out[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
      i++;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf) {
      need = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      lo = c == 0xe0 ? 0xa0 : 0x80;
      hi = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      lo = c == 0xf0 ? 0x90 : 0x80;
      hi = c == 0xf4 ? 0x8f : 0xbf;
    }
    unsigned cp = need == 1 ? c & 0x1f : need == 2 ? c & 0x0f : c & 0x07;
    for (k = 1; need != 0 && k <= need; k++) {
      unsigned b = i + k < len ? p[i + k] : 0;

      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xbf))
        break;
      cp = cp << 6 | (b & 0x3f);
    }
    if (need == 0 || k <= need || (cp >= 0x80 && cp <= 0x9f) || cp == 0xfffe ||
        cp == 0xffff) {
      out[o++] = '?';
      i++;
      continue;
    }
    memcpy(out + o, p + i, need + 1);
    o += need + 1;
    i += need + 1;
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
