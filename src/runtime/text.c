/*
 * One rule for text from the process, so that the report is always valid
 * UTF-8 and every reader (Python's json, jq, the schema's validators)
 * takes it: what is UTF-8 stays, and what is not reads as the bytes it
 * was.  The same text decoded by Python with
 * bytes.decode("utf-8", "backslashreplace") reads the same, except that a
 * NUL, which would end a C string and cut the name, is escaped too.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "runtime/text.h"

/* Bytes of the valid UTF-8 character at s, of n bytes left; 0 when none
 * starts there, or a NUL does. */
static size_t
char_length(const unsigned char *s, size_t n)
{
  unsigned char lo = 0x80, hi = 0xbf;
  size_t len;
  if (s[0] < 0x80)
    return s[0] != 0;
  if (s[0] >= 0xc2 && s[0] <= 0xdf)
    len = 2;
  else if (s[0] >= 0xe0 && s[0] <= 0xef)
    len = 3;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4)
    len = 4;
  else
    return 0;
  if (len > n)
    return 0;
  if (s[0] == 0xe0)
    lo = 0xa0;
  else if (s[0] == 0xed)
    hi = 0x9f;
  else if (s[0] == 0xf0)
    lo = 0x90;
  else if (s[0] == 0xf4)
    hi = 0x8f;
  if (s[1] < lo || s[1] > hi)
    return 0;
  for (size_t i = 2; i < len; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  return len;
}

size_t
cmg__text_escape(char *dst, size_t cap, const char *src, size_t n)
{
  static const char digits[] = "0123456789abcdef";
  const unsigned char *s = (const unsigned char *)src;
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    size_t len = char_length(s + i, n - i);
    if (len == 0) {
      if (o + 4 >= cap)
        break;
      dst[o++] = '\\';
      dst[o++] = 'x';
      dst[o++] = digits[s[i] >> 4];
      dst[o++] = digits[s[i] & 15];
      i++;
      continue;
    }
    if (o + len >= cap)
      break;
    memcpy(dst + o, s + i, len);
    o += len;
    i += len;
  }
  dst[o] = '\0';
  return o;
}

char *
cmg__text_dup(const char *s)
{
  size_t n = strlen(s), cap = CMG__TEXT_ROOM(n);
  char *t = malloc(cap);
  if (t != NULL)
    cmg__text_escape(t, cap, s, n);
  return t;
}

void
cmg__text_string(struct cmg__jsonw *w, const char *s)
{
  char small[CMG__TEXT_ROOM(255)];
  size_t n = strlen(s);
  char *t = n < 256 ? small : malloc(CMG__TEXT_ROOM(n));
  if (t == NULL) {
    cmg__jsonw_fail(w, -ENOMEM);
    return;
  }
  cmg__text_escape(t, CMG__TEXT_ROOM(n), s, n);
  cmg__jsonw_string(w, t);
  if (t != small)
    free(t);
}
