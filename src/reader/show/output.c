/*
 * Where the tool's output goes, and how it says what went wrong: standard
 * output, or a file that a command creates only once every report it
 * needs was read, so that a bad report leaves no empty trace, picture or
 * page behind.  A problem is one line on stderr,
 * after whatever stdout holds so far, so that the two stay in order on a
 * terminal; nothing below this file prints one (the loader and the model
 * write theirs into a buffer, which the commands say here).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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

FILE *
cmg__output_create(const char *output)
{
  if (output == NULL || strcmp(output, "-") == 0)
    return stdout;
  FILE *f = fopen(output, "w");
  if (f == NULL)
    cmg__output_say("%s: cannot create: %s", output, strerror(errno));
  return f;
}

int
cmg__output_close(FILE *f, const char *output, int rc)
{
  if (f == stdout)
    return rc == 0 ? 0 : CMG__TOOL_EXIT_ERROR;
  bool bad = (ferror(f) | fclose(f)) != 0;
  if (bad && rc == 0)
    cmg__output_say("%s: cannot write: %s", output, strerror(errno));
  return rc == 0 && !bad ? 0 : CMG__TOOL_EXIT_ERROR;
}
