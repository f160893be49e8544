/*
 * A buffered writer of JSON text straight to a file descriptor, for the
 * report's bulk: its live allocations.  Built as a cJSON tree, a million of
 * them took a gigabyte and most of the report's time, only to be printed
 * once and thrown away.  The writer knows nothing of JSON's structure; the
 * caller writes the punctuation.  It formats only what the bulk is made of,
 * integers, addresses and seconds, by hand: printf was most of what was
 * left.  Strings that may need escaping go through cJSON (report.c).
 *
 * The first failed write stops all later ones, and cmg__jsonw_close returns
 * its error, so that callers check once, at the end.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/jsonw.h"
#include "runtime/report_file.h"

/* Large enough that a 100 MB report takes few system calls. */
#define BUF_SIZE (256u * 1024)

/* The longest value formatted here: "0x" and 16 digits in quotes. */
#define VALUE_MAX 24

int
cmg__jsonw_open(struct cmg__jsonw *w, int fd)
{
  *w = (struct cmg__jsonw){ .fd = fd };
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
  if (w->err == 0 && w->len > 0)
    w->err = write_all(w->fd, w->buf, w->len);
  w->len = 0;
  cmg__report_step();
}

void
cmg__jsonw_put(struct cmg__jsonw *w, const char *s, size_t n)
{
  if (BUF_SIZE - w->len < n)
    flush(w);
  if (n >= BUF_SIZE) {
    if (w->err == 0)
      w->err = write_all(w->fd, s, n);
    return;
  }
  memcpy(w->buf + w->len, s, n);
  w->len += n;
}

void
cmg__jsonw_text(struct cmg__jsonw *w, const char *s)
{
  cmg__jsonw_put(w, s, strlen(s));
}

/* Where the next `n` bytes (at most VALUE_MAX) go. */
static char *
room(struct cmg__jsonw *w, size_t n)
{
  if (BUF_SIZE - w->len < n)
    flush(w);
  return w->buf + w->len;
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

void
cmg__jsonw_u64(struct cmg__jsonw *w, uint64_t v)
{
  char *p = room(w, VALUE_MAX);
  w->len = (size_t)(cmg__jsonw_format_u64(p, v) - w->buf);
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
  char *p = cmg__jsonw_format_u64(room(w, VALUE_MAX + 7), us / 1000000);
  *p++ = '.';
  for (int i = 5; i >= 0; i--, frac /= 10)
    p[i] = (char)('0' + frac % 10);
  w->len = (size_t)(p + 6 - w->buf);
}

int
cmg__jsonw_close(struct cmg__jsonw *w)
{
  flush(w);
  free(w->buf);
  w->buf = NULL;
  return w->err;
}
