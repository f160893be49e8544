/*
 * cmg__preload_add called directly on every case of tests/preload-cases.txt,
 * the table the launcher's, the CDI writer's and the Slurm plugin's tests
 * also run, so that the rule and its three users are checked against one
 * list; then what a line of that table cannot hold: tabs and newlines in
 * the library's path, an empty one, a short err buffer.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/preload_env.h"
#include "../tap.h"

#define DIR "/opt/cmg"
#define ERROR_MARK "error: "

/* text with every @D@ made DIR; malloc'd. */
static char *
with_dir(const char *text)
{
  size_t n = 0;
  for (const char *p = text; (p = strstr(p, "@D@")) != NULL; p += 3)
    n++;
  char *out = malloc(strlen(text) + n * strlen(DIR) + 1), *o = out;
  if (out == NULL)
    abort();
  for (const char *p = text; *p != '\0';) {
    if (strncmp(p, "@D@", 3) == 0) {
      o = stpcpy(o, DIR);
      p += 3;
    } else {
      *o++ = *p++;
    }
  }
  *o = '\0';
  return out;
}

/* Checks one line OLD|LIB|WANT|WHAT of the table (made with_dir). */
static void
check_case(char *line)
{
  char *old = strsep(&line, "|"), *lib = strsep(&line, "|");
  char *want = strsep(&line, "|"), *what = line;
  char err[512] = "", *out = (char *)"untouched";

  if (what == NULL) {
    ok(0, "a line of OLD|LIB|WANT|WHAT: '%s'", old);
    return;
  }
  if (strcmp(old, "(unset)") == 0)
    old = NULL;
  int rc = cmg__preload_add(old, lib, &out, err, sizeof(err));
  if (strncmp(want, ERROR_MARK, strlen(ERROR_MARK)) == 0) {
    is_int(rc, -EINVAL, "%s: -EINVAL", what);
    ok(out == NULL, "%s: no value", what);
    is_str(err, want + strlen(ERROR_MARK), "%s: says why", what);
  } else {
    is_int(rc, 0, "%s: 0", what);
    is_str(out, want, "%s", what);
    free(out);
  }
}

static int
run_table(const char *path)
{
  FILE *f = fopen(path, "r");
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  int cases = 0;

  if (f == NULL) {
    printf("Bail out! cannot open %s: %s\n", path, strerror(errno));
    exit(1);
  }
  while ((len = getline(&line, &cap, f)) >= 0) {
    if (len > 0 && line[len - 1] == '\n')
      line[--len] = '\0';
    if (len == 0 || line[0] == '#')
      continue;
    char *c = with_dir(line);
    check_case(c);
    free(c);
    cases++;
  }
  free(line);
  fclose(f);
  return cases;
}

/* lib is refused with the table's line for it. */
static void
refused(const char *lib, const char *what)
{
  char err[512], want[512], *out;

  snprintf(want, sizeof(want),
           "cannot preload '%s': expected a path without "
           "spaces, tabs, newlines or ':' (the dynamic loader splits "
           "LD_PRELOAD at spaces and ':')",
           lib);
  is_int(cmg__preload_add("/x.so", lib, &out, err, sizeof(err)), -EINVAL,
         "%s is refused", what);
  is_str(err, want, "%s: the line says why", what);
}

static void
test_beyond_table(void)
{
  char err[16], *out = (char *)"untouched";

  refused(DIR "/a\tb/libcumemguard.so", "a tab");
  refused(DIR "/libcumemguard.so\n", "a newline");
  is_int(cmg__preload_add(NULL, "", &out, err, sizeof(err)), -EINVAL,
         "an empty library path is refused");
  ok(out == NULL, "with no value");
  is_int(cmg__preload_add(NULL, DIR "/a b.so", &out, err, sizeof(err)), -EINVAL,
         "a short err buffer");
  is_int(strlen(err), sizeof(err) - 1, "holds the start of the line");
}

int
main(void)
{
  const char *srcdir = getenv("srcdir");
  char path[4096];

  snprintf(path, sizeof(path), "%s/tests/preload-cases.txt",
           srcdir != NULL ? srcdir : ".");
  ok(run_table(path) >= 10, "%s has its cases", path);
  test_beyond_table();
  return done_testing();
}
