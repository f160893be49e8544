/*
 * Messages to people: cmg__log() writes one "cumemguard: ..." line to
 * stderr, and cmg__format_size() spells a byte count with binary units.
 * Both run inside programs that did not ask for us, from any thread and
 * possibly from inside a CUDA call, so neither allocates, takes a lock or
 * goes through stdio: the line is formatted into a stack buffer and leaves
 * with a single write(2), which keeps lines from different threads whole
 * (pipes and terminals do not split writes of this size).  errno is saved
 * and restored, because a hook that logs must not change what the program
 * sees.  Nothing here calls CUDA.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"

#define LOG_PREFIX "cumemguard: "

/* Longer messages are cut; a log line is a sentence, not a dump. */
#define LOG_LINE_MAX 512

/*
 * Writes all of buf to fd, retrying after signals and short writes.  Errors
 * are dropped: there is nowhere left to report them.
 */
static void
write_all(int fd, const char *buf, size_t len)
{
  while (len > 0) {
    ssize_t n = write(fd, buf, len);

    if (n < 0) {
      if (errno == EINTR)
        continue;
      return;
    }
    buf += n;
    len -= (size_t)n;
  }
}

/* Writes one prefixed line to stderr with one write(2); errno is kept. */
void
cmg__log(const char *fmt, ...)
{
  int saved_errno = errno;
  char line[LOG_LINE_MAX];
  size_t prefix = sizeof(LOG_PREFIX) - 1;
  size_t room = sizeof(line) - prefix;
  va_list ap;

  memcpy(line, LOG_PREFIX, prefix);
  va_start(ap, fmt);
  /*
   * vsnprintf terminates what it writes, so at most room - 1 bytes of text
   * fit; the terminator's byte then holds the newline.
   */
  int n = vsnprintf(line + prefix, room, fmt, ap);
  va_end(ap);
  if (n < 0)
    n = 0;
  size_t len = prefix + ((size_t)n < room ? (size_t)n : room - 1);

  /* A caller's trailing newline would otherwise leave an empty line. */
  if (len > prefix && line[len - 1] == '\n')
    len--;
  line[len++] = '\n';

  write_all(STDERR_FILENO, line, len);
  errno = saved_errno;
}

/*
 * Formats bytes as "512 B" below 1 KiB and otherwise with one decimal in the
 * largest binary unit that keeps the number under 1024, rounded to nearest;
 * returns buf.
 */
const char *
cmg__format_size(uint64_t bytes, char *buf, size_t len)
{
  static const char *const units[] = {
    "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB",
  };
  const unsigned last = sizeof(units) / sizeof(units[0]) - 1;
  unsigned u = 0;
  uint64_t tenths;

  if (buf == NULL || len == 0)
    return buf;
  if (bytes < 1024) {
    snprintf(buf, len, "%" PRIu64 " B", bytes);
    return buf;
  }

  while (u < last && bytes >> (10 * (u + 1)) != 0)
    u++;

  /*
   * Tenths of the unit, rounded; 128 bits because bytes * 10 overflows near
   * the top of the range.  Rounding can reach 1024.0 of a unit (1048575
   * bytes is 1023.999 KiB), which reads better as 1.0 of the next one.
   */
  for (;;) {
    unsigned shift = 10 * u;
    unsigned __int128 num = (unsigned __int128)bytes * 10;

    tenths = (uint64_t)((num + ((unsigned __int128)1 << (shift - 1))) >> shift);
    if (tenths < 10240 || u == last)
      break;
    u++;
  }

  snprintf(buf, len, "%" PRIu64 ".%" PRIu64 " %s", tenths / 10, tenths % 10,
           units[u]);
  return buf;
}

void
cmg__assert_failed(const char *what, const char *file, int line)
{
  cmg__log("internal error: %s (%s:%d)", what, file, line);
  abort();
}
