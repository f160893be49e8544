/*
 * Where the tool's output goes, and how it says what went wrong: standard
 * output, or a file that a command creates only once every report it
 * needs was read, so that a bad report leaves no empty trace, picture or
 * page behind.  A file is written under a name of its own (PATH.tmp.PID)
 * and renamed into place once all of it was written, so that a disk that
 * fills, a size limit or a failure half-way leaves the file the user
 * had, or none, never half a page; a device, a pipe or a link is written
 * through, as named.  A problem is one line on stderr,
 * after whatever stdout holds so far, so that the two stay in order on a
 * terminal; nothing below this file prints one (the loader and the model
 * write theirs into a buffer, which the commands say here).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader/show/output.h"
#include "reader/tool.h"

void
cmg__output_say(const char *fmt, ...)
{
  va_list ap;

  fflush(stdout);
  fputs(CMG__TOOL_NAME ": ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

/* The name the output is written under until it is whole; empty while
 * it is written in place.  The tool writes one file a run. */
static char pending[4096];

/* The file under its own name, with the mode of the file it replaces;
 * NULL when that name cannot be made, and the output is written in place
 * (whose error is the one the user can act on). */
static FILE *
create_pending(const char *output)
{
  struct stat st;

  if (lstat(output, &st) == 0 && !S_ISREG(st.st_mode))
    return NULL;
  int n =
      snprintf(pending, sizeof(pending), "%s.tmp.%ld", output, (long)getpid());
  if (n < 0 || (size_t)n >= sizeof(pending))
    return NULL;
  int fd = open(pending, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    return NULL;
  bool had = stat(output, &st) == 0;
  FILE *f = had && fchmod(fd, st.st_mode & 07777) != 0 ? NULL : fdopen(fd, "w");
  if (f == NULL) {
    close(fd);
    unlink(pending);
  }
  return f;
}

FILE *
cmg__output_create(const char *output)
{
  if (output == NULL || strcmp(output, "-") == 0)
    return stdout;
  FILE *f = create_pending(output);
  if (f != NULL)
    return f;
  pending[0] = '\0';
  if ((f = fopen(output, "w")) == NULL)
    cmg__output_say("%s: cannot create: %s", output, strerror(errno));
  return f;
}

int
cmg__output_close(FILE *f, const char *output, int rc)
{
  if (f == stdout)
    return rc == 0 ? 0 : CMG__TOOL_EXIT_ERROR;
  bool bad = (ferror(f) | fclose(f)) != 0;
  int err = errno;
  if (pending[0] != '\0') {
    if (rc == 0 && !bad && rename(pending, output) != 0) {
      bad = true;
      err = errno;
    }
    if (rc != 0 || bad)
      unlink(pending);
    pending[0] = '\0';
  }
  if (bad && rc == 0)
    cmg__output_say("%s: cannot write: %s", output, strerror(err));
  return rc == 0 && !bad ? 0 : CMG__TOOL_EXIT_ERROR;
}
