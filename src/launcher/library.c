/*
 * Where the library is: $CUMEMGUARD_LIBRARY (tests, unusual installs),
 * the libdir configure was given, or ../lib beside the running program (an
 * installation moved after it was configured).  The path is made absolute,
 * because the launcher's program may chdir and a CDI spec's hostPath must
 * be absolute.  A missing library is an error, never a silent fallback:
 * running a program without the cap that was asked for is the one wrong
 * answer.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "launcher/library.h"

#ifndef CMG_LIBDIR
#error "CMG_LIBDIR must name the install libdir (local.mk defines it)"
#endif

/* 0 if path is a regular file, else a negative errno. */
static int
check_file(const char *path)
{
  struct stat st;

  if (stat(path, &st) != 0)
    return -errno;
  return S_ISREG(st.st_mode) ? 0 : -EINVAL;
}

/*
 * path made absolute against the working directory, so that the program
 * still finds the library after a chdir.  Returns a malloc'd string or NULL.
 */
static char *
absolute(const char *path)
{
  char cwd[PATH_MAX];

  if (path[0] == '/')
    return strdup(path);
  if (getcwd(cwd, sizeof(cwd)) == NULL)
    return NULL;
  char *out = malloc(strlen(cwd) + strlen(path) + 2);
  if (out != NULL)
    sprintf(out, "%s/%s", cwd, path);
  return out;
}

/*
 * <dir of this executable>/../lib/libcumemguard.so, for an installation that
 * was moved after it was configured.  Returns a malloc'd string or NULL.
 */
static char *
library_beside_exe(void)
{
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

  if (n <= 0)
    return NULL;
  exe[n] = '\0';
  /* readlink gives a resolved path, so cutting two names is "/..". */
  char *slash = strrchr(exe, '/');
  if (slash == NULL)
    return NULL;
  *slash = '\0';
  slash = strrchr(exe, '/');
  if (slash == NULL)
    return NULL;
  *slash = '\0';
  char *out = malloc(strlen(exe) + sizeof("/lib/" CMG__LIBRARY_NAME));
  if (out != NULL)
    sprintf(out, "%s/lib/" CMG__LIBRARY_NAME, exe);
  return out;
}

char *
cmg__find_library(void)
{
  const char *env = getenv(CMG__LIBRARY_VAR);
  char *path;

  if (env != NULL && env[0] != '\0') {
    int rc = check_file(env);
    if (rc != 0) {
      cmg__log(CMG__LIBRARY_VAR "='%s': %s", env,
               rc == -EINVAL ? "not a regular file" : strerror(-rc));
      return NULL;
    }
    path = absolute(env);
    if (path == NULL)
      cmg__log("cannot resolve '%s': %s", env, strerror(errno));
    return path;
  }

  if (check_file(CMG_LIBDIR "/" CMG__LIBRARY_NAME) == 0)
    return strdup(CMG_LIBDIR "/" CMG__LIBRARY_NAME);
  path = library_beside_exe();
  if (path != NULL && check_file(path) == 0)
    return path;
  free(path);

  cmg__log("cannot find " CMG__LIBRARY_NAME " in " CMG_LIBDIR " nor in ../lib "
           "beside this program; set " CMG__LIBRARY_VAR " to its path");
  return NULL;
}
