/*
 * A buffered writer of JSON text, written as it is made.  Built as a cJSON
 * tree, a report's million live allocations took a gigabyte and most of
 * its time, only to be printed once and thrown away; the report, the CDI
 * spec, `cumemguard status --json` and every JSON document of
 * cumemguard-report go through this, in the bytes cJSON prints, so that
 * readers and tests can compare their text.  Integers, addresses and
 * seconds are formatted by hand: printf was most of what was left of a
 * large report's time.
 *
 * The first failure stops all later writes, and cmg__jsonw_close returns
 * its error, so that callers check once, at the end.
 */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/jsonw.h"

/* Large enough that a 100 MB report takes few system calls. */
#define BUF_SIZE (256u * 1024)

/* The longest value formatted in place: "%1.17g" of a double, or "0x" and
 * 16 digits in quotes. */
#define VALUE_MAX 32

int
cmg__jsonw_open(struct cmg__jsonw *w, int fd, bool pretty)
{
  *w = (struct cmg__jsonw){ .fd = fd, .pretty = pretty, .cap = BUF_SIZE };
  w->buf = malloc(BUF_SIZE);
  return w->buf != NULL ? 0 : -ENOMEM;
}

void
cmg__jsonw_fail(struct cmg__jsonw *w, int err)
{
  if (w->err == 0)
    w->err = err;
}

static int
write_all(int fd, const char *p, size_t len)
{
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? -errno : -EIO;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

static void
flush(struct cmg__jsonw *w)
{
  if (w->fd < 0)
    return;
  if (w->err == 0 && w->len > 0)
    w->err = write_all(w->fd, w->buf, w->len);
  w->len = 0;
  if (w->on_flush != NULL)
    w->on_flush();
}

/* Room for n more bytes in memory; false (and the writer failed) when
 * there is none.  Every BUF_SIZE bytes count as a flush for on_flush, so
 * that a long write into memory shows progress too. */
static bool
grow(struct cmg__jsonw *w, size_t n)
{
  if (w->len >= w->mark) {
    w->mark = w->len + BUF_SIZE;
    if (w->on_flush != NULL)
      w->on_flush();
  }
  size_t cap = w->cap;
  while (cap - w->len <= n)
    cap *= 2;
  char *p = cap != w->cap ? realloc(w->buf, cap) : w->buf;
  if (p == NULL) {
    cmg__jsonw_fail(w, -ENOMEM);
    return false;
  }
  w->buf = p;
  w->cap = cap;
  return true;
}

void
cmg__jsonw_put(struct cmg__jsonw *w, const char *s, size_t n)
{
  if (w->err != 0 || (w->fd < 0 && !grow(w, n)))
    return;
  if (w->cap - w->len < n)
    flush(w);
  if (n >= w->cap) {
    if (w->err == 0)
      w->err = write_all(w->fd, s, n);
    return;
  }
  memcpy(w->buf + w->len, s, n);
  w->len += n;
}

/* Where the next n bytes (far fewer than BUF_SIZE) go; a scratch area
 * after a failure, so that callers need not check. */
static char *
room(struct cmg__jsonw *w, size_t n)
{
  if (w->fd < 0 ? !grow(w, n) : w->cap - w->len < n)
    flush(w);
  if (w->err != 0)
    w->len = 0;
  return w->buf + w->len;
}

/* ---- structure --------------------------------------------------------- */

static void
tabs(struct cmg__jsonw *w, unsigned n)
{
  char *p = room(w, n);
  memset(p, '\t', n);
  w->len += n;
}

/* The separator before a value in an array. */
static void
element(struct cmg__jsonw *w)
{
  uint64_t bit = 1ull << w->depth;
  if (w->depth == 0 || !(w->arrays & bit))
    return;
  if (w->filled & bit) {
    if (w->pretty)
      cmg__jsonw_lit(w, ", ");
    else
      cmg__jsonw_lit(w, ",");
  }
  w->filled |= bit;
}

static void
open_container(struct cmg__jsonw *w, bool array)
{
  element(w);
  if (w->depth == CMG__JSONW_DEPTH) {
    cmg__jsonw_fail(w, -E2BIG);
    return;
  }
  w->depth++;
  uint64_t bit = 1ull << w->depth;
  w->filled &= ~bit;
  w->arrays = array ? w->arrays | bit : w->arrays & ~bit;
  if (array)
    cmg__jsonw_lit(w, "[");
  else if (w->pretty)
    cmg__jsonw_lit(w, "{\n");
  else
    cmg__jsonw_lit(w, "{");
}

void
cmg__jsonw_object(struct cmg__jsonw *w)
{
  open_container(w, false);
}

void
cmg__jsonw_array(struct cmg__jsonw *w)
{
  open_container(w, true);
}

void
cmg__jsonw_object_end(struct cmg__jsonw *w)
{
  if (w->depth == 0)
    return;
  if (w->pretty) {
    if (w->filled & 1ull << w->depth)
      cmg__jsonw_lit(w, "\n");
    tabs(w, w->depth - 1);
  }
  cmg__jsonw_lit(w, "}");
  w->depth--;
}

void
cmg__jsonw_array_end(struct cmg__jsonw *w)
{
  if (w->depth == 0)
    return;
  cmg__jsonw_lit(w, "]");
  w->depth--;
}

struct cmg__jsonw *
cmg__jsonw_key(struct cmg__jsonw *w, const char *key)
{
  uint64_t bit = 1ull << w->depth;
  bool first = !(w->filled & bit);
  size_t n = strlen(key), indent = w->pretty ? w->depth : 0;
  w->filled |= bit;
  /* One reservation for all of it: the report writes millions. */
  char *p = room(w, 2 + indent + n + 4), *start = p;
  if (!first) {
    *p++ = ',';
    if (w->pretty)
      *p++ = '\n';
  }
  memset(p, '\t', indent);
  p += indent;
  *p++ = '"';
  memcpy(p, key, n);
  p += n;
  memcpy(p, "\":\t", 3);
  p += w->pretty ? 3 : 2;
  w->len += (size_t)(p - start);
  return w;
}

/* ---- values ------------------------------------------------------------ */

/* Whether byte c is written as an escape. */
static bool
is_escaped(unsigned char c)
{
  return c < 0x20 || c == '"' || c == '\\';
}

static void
escape(struct cmg__jsonw *w, unsigned char c)
{
  static const char short_form[] = "\b\f\n\r\t";
  static const char letter[] = "bfnrt";
  const char *s = c != 0 ? strchr(short_form, c) : NULL;
  char *p = room(w, 7);
  p[0] = '\\';
  if (c == '"' || c == '\\') {
    p[1] = (char)c;
    w->len += 2;
  } else if (s != NULL) {
    p[1] = letter[s - short_form];
    w->len += 2;
  } else {
    snprintf(p + 1, 6, "u%04x", c);
    w->len += 6;
  }
}

void
cmg__jsonw_string(struct cmg__jsonw *w, const char *s)
{
  const unsigned char *u = (const unsigned char *)(s ? s : "");
  element(w);
  cmg__jsonw_lit(w, "\"");
  while (*u != '\0') {
    size_t n = 0;
    while (u[n] != '\0' && !is_escaped(u[n]))
      n++;
    cmg__jsonw_put(w, (const char *)u, n);
    u += n;
    if (*u != '\0')
      escape(w, *u++);
  }
  cmg__jsonw_lit(w, "\"");
}

void
cmg__jsonw_raw(struct cmg__jsonw *w, const char *json)
{
  element(w);
  cmg__jsonw_put(w, json, strlen(json));
}

void
cmg__jsonw_null(struct cmg__jsonw *w)
{
  cmg__jsonw_raw(w, "null");
}

void
cmg__jsonw_string_or_null(struct cmg__jsonw *w, const char *s)
{
  if (s != NULL)
    cmg__jsonw_string(w, s);
  else
    cmg__jsonw_null(w);
}

void
cmg__jsonw_bool(struct cmg__jsonw *w, bool b)
{
  cmg__jsonw_raw(w, b ? "true" : "false");
}

/* ---- members ----------------------------------------------------------- */

void
cmg__jsonw_member_number(struct cmg__jsonw *w, const char *key, double d)
{
  cmg__jsonw_number(cmg__jsonw_key(w, key), d);
}

void
cmg__jsonw_member_uint(struct cmg__jsonw *w, const char *key, uint64_t v)
{
  cmg__jsonw_uint(cmg__jsonw_key(w, key), v);
}

void
cmg__jsonw_member_uint_or_null(struct cmg__jsonw *w, const char *key, bool has,
                               uint64_t v)
{
  if (has)
    cmg__jsonw_uint(cmg__jsonw_key(w, key), v);
  else
    cmg__jsonw_null(cmg__jsonw_key(w, key));
}

void
cmg__jsonw_member_string(struct cmg__jsonw *w, const char *key, const char *s)
{
  cmg__jsonw_string(cmg__jsonw_key(w, key), s);
}

void
cmg__jsonw_member_string_or_null(struct cmg__jsonw *w, const char *key,
                                 const char *s)
{
  cmg__jsonw_string_or_null(cmg__jsonw_key(w, key), s);
}

void
cmg__jsonw_member_bool(struct cmg__jsonw *w, const char *key, bool b)
{
  cmg__jsonw_bool(cmg__jsonw_key(w, key), b);
}

char *
cmg__jsonw_format_u64(char *p, uint64_t v)
{
  char digits[20], *d = digits + sizeof(digits);
  do
    *--d = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  size_t n = (size_t)(digits + sizeof(digits) - d);
  memcpy(p, d, n);
  return p + n;
}

/* cJSON's test of whether "%1.15g" read back well enough. */
static bool
is_close(double a, double b)
{
  double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
  return fabs(a - b) <= m * DBL_EPSILON;
}

/* The locale's decimal point in p made '.', as cJSON makes it. */
static void
point(char *p)
{
  char c = localeconv()->decimal_point[0];
  char *dot = c != '.' ? strchr(p, c) : NULL;
  if (dot != NULL)
    *dot = '.';
}

/* d as cJSON prints a number. */
static size_t
format_number(char *p, double d)
{
  double back;
  int n;
  if (isnan(d) || isinf(d))
    return (size_t)snprintf(p, VALUE_MAX, "null");
  n = snprintf(p, VALUE_MAX, "%1.15g", d);
  if (sscanf(p, "%lg", &back) != 1 || !is_close(back, d))
    n = snprintf(p, VALUE_MAX, "%1.17g", d);
  point(p);
  return (size_t)n;
}

void
cmg__jsonw_number(struct cmg__jsonw *w, double d)
{
  element(w);
  char *p = room(w, VALUE_MAX);
  w->len += format_number(p, d);
}

void
cmg__jsonw_u64(struct cmg__jsonw *w, uint64_t v)
{
  element(w);
  char *p = room(w, VALUE_MAX);
  w->len = (size_t)(cmg__jsonw_format_u64(p, v) - w->buf);
}

void
cmg__jsonw_uint(struct cmg__jsonw *w, uint64_t v)
{
  /* Below 10^15 "%1.15g" prints every digit of an integer. */
  if (v >= 1000000000000000ull)
    cmg__jsonw_number(w, (double)v);
  else
    cmg__jsonw_u64(w, v);
}

void
cmg__jsonw_hex(struct cmg__jsonw *w, uint64_t v)
{
  static const char xdigits[] = "0123456789abcdef";
  char digits[16], *d = digits + sizeof(digits);
  do
    *--d = xdigits[v & 15];
  while ((v >>= 4) != 0);
  size_t n = (size_t)(digits + sizeof(digits) - d);
  element(w);
  char *p = room(w, VALUE_MAX);
  memcpy(p, "\"0x", 3);
  memcpy(p + 3, d, n);
  p[3 + n] = '"';
  w->len += 4 + n;
}

void
cmg__jsonw_seconds(struct cmg__jsonw *w, uint64_t ns)
{
  uint64_t us = ns / 1000, frac = us % 1000000;
  element(w);
  char *p = cmg__jsonw_format_u64(room(w, VALUE_MAX + 8), us / 1000000);
  *p++ = '.';
  for (int i = 5; i >= 0; i--, frac /= 10)
    p[i] = (char)('0' + frac % 10);
  w->len = (size_t)(p + 6 - w->buf);
}

/* ---- the end ----------------------------------------------------------- */

int
cmg__jsonw_close(struct cmg__jsonw *w)
{
  flush(w);
  free(w->buf);
  w->buf = NULL;
  return w->err;
}

char *
cmg__jsonw_take(struct cmg__jsonw *w)
{
  char *text = w->buf;
  if (w->err == 0 && grow(w, 1)) {
    text = w->buf;
    text[w->len] = '\0';
    w->buf = NULL;
    return text;
  }
  cmg__jsonw_close(w);
  return NULL;
}

const char *
cmg__jsonw_text(struct cmg__jsonw *w)
{
  if (w->err != 0 || !grow(w, 1))
    return NULL;
  w->buf[w->len] = '\0';
  return w->buf;
}

void
cmg__jsonw_empty(struct cmg__jsonw *w)
{
  w->len = 0;
  w->mark = 0;
  w->depth = 0;
  w->arrays = 0;
  w->filled = 0;
}

int
cmg__jsonw_to_fd(struct cmg__jsonw *w, int fd)
{
  w->fd = fd;
  flush(w);
  /* What grew for the whole document is too much for a buffer. */
  char *p = w->cap > BUF_SIZE ? realloc(w->buf, BUF_SIZE) : NULL;
  if (p != NULL) {
    w->buf = p;
    w->cap = BUF_SIZE;
  }
  return w->err;
}
