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
#include "core/utf8.h"
#include "runtime/report/report_text.h"

size_t
cmg__text_escape(char *dst, size_t cap, const char *src, size_t n)
{
  static const char digits[] = "0123456789abcdef";
  const unsigned char *s = (const unsigned char *)src;
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    /* A NUL would end a C string and cut the name: escaped too. */
    size_t len = s[i] != 0 ? cmg__utf8_char(s + i, n - i, NULL) : 0;
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
