/*
 * Where the library is: $CUMEMGUARD_LIBRARY (tests, unusual installs),
 * .libs beside the running program (a launcher run where it was built),
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

#include "core/base.h"
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

/* The directory of this executable, resolved, in a malloc'd string; NULL
 * when /proc cannot say. */
static char *
exe_dir(void)
{
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

  if (n <= 0)
    return NULL;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash == NULL)
    return NULL;
  *slash = '\0';
  return strdup(exe);
}

/* dir/rel/libcumemguard.so if it is a regular file: a malloc'd string, or
 * NULL. */
static char *
library_in(const char *dir, const char *rel)
{
  char *out = NULL;

  if (dir == NULL || asprintf(&out, "%s/%s/" CMG__LIBRARY_NAME, dir, rel) < 0)
    return NULL;
  if (check_file(out) == 0)
    return out;
  free(out);
  return NULL;
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

  /* A launcher run where it was built (libtool keeps the library in
   * .libs beside it) takes the library built with it, even when another
   * version is installed. */
  char *dir = exe_dir();
  path = library_in(dir, ".libs");
  if (path == NULL && check_file(CMG_LIBDIR "/" CMG__LIBRARY_NAME) == 0)
    path = strdup(CMG_LIBDIR "/" CMG__LIBRARY_NAME);
  /* readlink gives a resolved path, so cutting a name is "/..". */
  char *up = dir != NULL ? strrchr(dir, '/') : NULL;
  if (path == NULL && up != NULL) {
    *up = '\0';
    path = library_in(dir, "lib");
  }
  free(dir);
  if (path != NULL)
    return path;

  cmg__log("cannot find " CMG__LIBRARY_NAME " in " CMG_LIBDIR " nor in ../lib "
           "beside this program; set " CMG__LIBRARY_VAR " to its path");
  return NULL;
}
