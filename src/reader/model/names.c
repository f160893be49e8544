/*
 * A path's last part, which is how frames, suppressions and the rules of
 * whose code a file is name a module or a file.  (A name's beginning, how
 * the CUDA libraries and the C start-up code are told by their modules and
 * functions, is cmg__has_prefix in core/base.h, shared with the library.)
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
