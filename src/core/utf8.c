/*
 * The second byte of a sequence carries the range checks: after E0 it
 * must be A0.. (no overlong three-byte form), after ED ..9F (no
 * surrogate), after F0 90.. (no overlong four-byte form), after F4 ..8F
 * (nothing past U+10FFFF); C0, C1 and F5..FF never lead.  So checking the
 * lead and the second byte's range is the whole rule.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "core/utf8.h"

size_t
cmg__utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
  unsigned char lo = 0x80, hi = 0xbf;
  size_t len;
  uint32_t c;

  if (s[0] < 0x80) {
    len = 1;
    c = s[0];
  } else if (s[0] >= 0xc2 && s[0] <= 0xdf) {
    len = 2;
    c = s[0] & 0x1f;
  } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
    len = 3;
    c = s[0] & 0x0f;
    lo = s[0] == 0xe0 ? 0xa0 : 0x80;
    hi = s[0] == 0xed ? 0x9f : 0xbf;
  } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
    len = 4;
    c = s[0] & 0x07;
    lo = s[0] == 0xf0 ? 0x90 : 0x80;
    hi = s[0] == 0xf4 ? 0x8f : 0xbf;
  } else {
    return 0;
  }
  if (len > n || (len > 1 && (s[1] < lo || s[1] > hi)))
    return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    c = c << 6 | (s[i] & 0x3f);
  }
  if (cp != NULL)
    *cp = c;
  return len;
}
