/*
 * What the tests of the Python modules share (test_pyframes, test_pyread,
 * test_pylayout): a real CPython's shared libpython loaded into the test
 * as into a program that embeds it, found as the library finds it at
 * start-up, and a script run in it; and scenarios in forked children, for
 * what a process can do once (load one libpython, find its layout), each
 * child continuing the TAP numbering and handing its count back.
 *
 * Debian's libpython 3.11 is what the distribution's python3 runs; the
 * shared builds of pyenv ($PYENV_ROOT, else ~/.pyenv) give the other
 * versions where they are installed, and their cases are skipped where
 * they are not.
 */
#ifndef CMG_TEST_PY_HARNESS_H
#define CMG_TEST_PY_HARNESS_H

#include <dlfcn.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../tap.h"

#define PY_DEBIAN "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"

/* A libpython, and the prefix its standard library is under (NULL for
 * the distribution's, which knows its own). */
struct py_lib {
  char path[512];
  char home[512];
};

/* pyenv's shared build of 3.minor, the newest installed; false without
 * one. */
static inline bool
py_pyenv(unsigned minor, struct py_lib *out)
{
  char pattern[600];
  const char *root = getenv("PYENV_ROOT"), *home = getenv("HOME");
  glob_t g;
  if (root != NULL)
    snprintf(pattern, sizeof(pattern), "%s/versions", root);
  else
    snprintf(pattern, sizeof(pattern), "%s/.pyenv/versions", home ? home : "");
  size_t n = strlen(pattern);
  snprintf(pattern + n, sizeof(pattern) - n, "/3.%u.*/lib/libpython3.%u.so.1.0",
           minor, minor);
  if (glob(pattern, 0, NULL, &g) != 0)
    return false;
  snprintf(out->path, sizeof(out->path), "%s", g.gl_pathv[g.gl_pathc - 1]);
  globfree(&g);
  snprintf(out->home, sizeof(out->home), "%s", out->path);
  *strrchr(out->home, '/') = '\0'; /* .../lib */
  *strrchr(out->home, '/') = '\0';
  return true;
}

static inline bool
py_debian(struct py_lib *out)
{
  snprintf(out->path, sizeof(out->path), "%s", PY_DEBIAN);
  out->home[0] = '\0';
  return access(PY_DEBIAN, R_OK) == 0;
}

/* Loads it for every later lookup to find, as a program linked to it. */
static inline bool
py_load(const struct py_lib *lib)
{
  return dlopen(lib->path, RTLD_NOW | RTLD_GLOBAL) != NULL;
}

/* Starts the loaded interpreter without site (nothing installed is
 * imported) and runs the script; false when it could not. */
static inline bool
py_run(const struct py_lib *lib, const char *script)
{
  void (*init)(int) = dlsym(RTLD_DEFAULT, "Py_InitializeEx");
  int (*run)(const char *) = dlsym(RTLD_DEFAULT, "PyRun_SimpleString");
  int *no_site = dlsym(RTLD_DEFAULT, "Py_NoSiteFlag");
  if (init == NULL || run == NULL)
    return false;
  if (no_site != NULL)
    *no_site = 1;
  if (lib->home[0] != '\0')
    setenv("PYTHONHOME", lib->home, 1);
  /* For memcheck: malloc, not Python's allocator, whose reads of its own
   * pools it cannot follow; and modules compiled from source, not read
   * from their cache, whose header 3.11.2 turns into an int through a
   * digit memcheck takes for uninitialised.  The prefix cannot exist. */
  setenv("PYTHONMALLOC", "malloc", 1);
  setenv("PYTHONPYCACHEPREFIX", "/dev/null/cache", 1);
  setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
  init(0);
  return run(script) == 0;
}

/* Runs fn(arg) in a child, which continues the TAP numbering; then one
 * point more, that it ran to its end. */
static inline void
py_child(void (*fn)(const void *), const void *arg, const char *what)
{
  int p[2], v[2] = { 0, 0 }, st = 0;
  if (pipe(p) != 0)
    abort();
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    fn(arg);
    fflush(stdout);
    v[0] = tap_n;
    v[1] = tap_failed;
    _exit(write(p[1], v, sizeof(v)) == (ssize_t)sizeof(v) ? 0 : 3);
  }
  close(p[1]);
  ssize_t n = read(p[0], v, sizeof(v));
  close(p[0]);
  waitpid(pid, &st, 0);
  if (n == (ssize_t)sizeof(v)) {
    tap_n = v[0];
    tap_failed = v[1];
  }
  ok(n == (ssize_t)sizeof(v) && WIFEXITED(st) && WEXITSTATUS(st) == 0,
     "%s: ran to its end", what);
}

#endif /* CMG_TEST_PY_HARNESS_H */
