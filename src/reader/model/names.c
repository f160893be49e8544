/*
 * Names as the reader compares them: a path's last part, which is how
 * frames, suppressions and the rules of whose code a file is name a module
 * or a file, and a name's beginning, which is how the CUDA libraries and
 * the C start-up code are told by their modules and functions.  The
 * library has its own (src/runtime/elfsym.c), which the reader does not
 * link.
 */
#include "config.h"

#include <string.h>

#include "reader/model/names.h"

const char *
cmg__names_base(const char *path)
{
  const char *slash = strrchr(path, '/');

  return slash != NULL ? slash + 1 : path;
}

bool
cmg__names_has_prefix(const char *s, const char *prefix)
{
  return s != NULL && strncmp(s, prefix, strlen(prefix)) == 0;
}
