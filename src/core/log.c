/*
 * Messages to people: cmg__log() writes one "cumemguard: ..." line to
 * stderr.  It runs inside programs that did not ask for us, from any
 * thread and possibly from inside a CUDA call, so it neither allocates nor
 * takes a lock nor goes through stdio: the line is formatted into a stack buffer and leaves
 * with a single write(2), which keeps lines from different threads whole
 * (pipes and terminals do not split writes of this size).  errno is saved
 * and restored, because a hook that logs must not change what the program
 * sees.  Nothing here calls CUDA.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"

/* The program that speaks: the library and its launcher, unless another
 * program of the project names itself (cmg__log_program). */
static char prefix_text[64] = "cumemguard: ";

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
  size_t prefix = strlen(prefix_text);
  size_t room = sizeof(line) - prefix;
  va_list ap;

  memcpy(line, prefix_text, prefix);
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

void
cmg__log_program(const char *name)
{
  snprintf(prefix_text, sizeof(prefix_text), "%s: ", name);
}

void
cmg__assert_failed(const char *what, const char *file, int line)
{
  cmg__log("internal error: %s (%s:%d)", what, file, line);
  abort();
}
