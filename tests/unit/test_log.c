/*
 * Unit tests of log.c: the log line, its prefix and newline, a line cut
 * to the buffer, and errno kept across it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "../tap.h"

static bool
starts_with(const char *s, const char *prefix)
{
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- cmg__log ----------------------------------------------------------- */

/*
 * Runs one cmg__log call with stderr sent to a temporary file and returns
 * what it wrote in out (NUL-terminated), and errno after the call.
 */
#define CAPTURE_LOG(out, errno_after, ...)                                     \
  do {                                                                         \
    FILE *tmp_ = tmpfile();                                                    \
    int saved_ = dup(STDERR_FILENO);                                           \
    ssize_t n_;                                                                \
    fflush(stderr);                                                            \
    dup2(fileno(tmp_), STDERR_FILENO);                                         \
    errno = EILSEQ;                                                            \
    cmg__log(__VA_ARGS__);                                                     \
    (errno_after) = errno;                                                     \
    dup2(saved_, STDERR_FILENO);                                               \
    close(saved_);                                                             \
    n_ = pread(fileno(tmp_), (out), sizeof(out) - 1, 0);                       \
    (out)[n_ > 0 ? n_ : 0] = '\0';                                             \
    fclose(tmp_);                                                              \
  } while (0)

static void
test_log(void)
{
  char out[2048], arg[1000];
  int e, fd, saved;
  size_t len;

  CAPTURE_LOG(out, e, "limit %s on device %d", "4.0 GiB", 1);
  is_str(out, "cumemguard: limit 4.0 GiB on device 1\n", "log: one line");
  is_int(e, EILSEQ, "log: errno preserved");

  CAPTURE_LOG(out, e, "no newline doubled\n");
  is_str(out, "cumemguard: no newline doubled\n", "log: one newline");

  CAPTURE_LOG(out, e, "%s", "");
  is_str(out, "cumemguard: \n", "log: empty message");

  memset(arg, 'x', sizeof(arg) - 1);
  arg[sizeof(arg) - 1] = '\0';
  CAPTURE_LOG(out, e, "%s", arg);
  len = strlen(out);
  is_u64(len, 512, "log: a long line is cut to the buffer");
  ok(starts_with(out, "cumemguard: xxx"), "log: cut line keeps the prefix");
  ok(len > 0 && out[len - 1] == '\n' && out[len - 2] == 'x',
     "log: cut line still ends with a newline");
  is_int(e, EILSEQ, "log: errno preserved after cutting");

  /* A failing write must not leak its errno (EBADF) to the program. */
  fflush(stderr);
  saved = dup(STDERR_FILENO);
  fd = open("/dev/null", O_RDONLY);
  dup2(fd, STDERR_FILENO);
  errno = ERANGE;
  cmg__log("lost");
  e = errno;
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(fd);
  is_int(e, ERANGE, "log: errno preserved when the write fails");
}

int
main(void)
{
  test_log();
  return done_testing();
}
