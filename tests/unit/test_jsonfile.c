/*
 * Unit tests of jsonfile.c, a report file read whole and parsed.  What
 * matters is the one line a bad file gets, since it is all the user
 * learns: a missing file, a folder, an empty or blank file, a NUL byte, a
 * file past CMG__TOOL_FILE_MAX (refused by its size, unread: a sparse file
 * makes one for free), JSON nested past cJSON's limit, a file cut short
 * (called truncated, as a full disk leaves it) and other bad JSON by the
 * line and column of the file, which the rewrite of \u0000 escapes must
 * not shift.  A NUL escape reads as the library writes a NUL, never ends
 * the string.  Standard input is read from a pipe past its first buffer,
 * and trees larger than one arena chunk, or with a value larger than a
 * whole one (which gets a block of its own), parse whole.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "reader/load/fields.h"
#include "reader/load/jsonfile.h"
#include "reader/tool.h"
#include "../tap.h"
#include "report_harness.h"

static char err[CMG__TOOL_ERR_MAX];
static struct cmg__fields_reader rd = { err, sizeof(err) };

/* Loads len bytes of text as a file: the return, the line in err. */
static int
load_text(const char *text, size_t len)
{
  const char *path = report_write_file("t.json", text, len);
  cJSON *root = (cJSON *)1;
  int rc;

  err[0] = '\0';
  rc = cmg__jsonfile_load(path, &root, &rd);
  if (rc != 0 && root != NULL)
    printf("# a refused file left a tree\n");
  cmg__jsonfile_drop(root);
  return rc;
}

#define LOAD(s) load_text((s), sizeof(s) - 1)

static void
test_refused(void)
{
  static const struct {
    const char *text, *want, *what;
  } cases[] = {
    { "", "empty file, not a cumemguard report", "an empty file" },
    { " \n\t\r\n", "empty file, not a cumemguard report", "a blank file" },
    { "cumemguard: report written\n", "not valid JSON (line 1, column 1)",
      "text that is not JSON" },
    { "{\"a\": 1}}\n", "not valid JSON (line 1, column 9)",
      "a report followed by more" },
    { "{\"a\": 1,\n \"b\": tru}", "not valid JSON (line 2, column 7)",
      "bad JSON on a later line" },
    { "{\"format\": \"cumemguard-report\", \"a\": [1,\n 2,\n\n",
      "truncated JSON: the file ends at line 2 before the report does",
      "a report cut short, by the line of its last byte" },
    { "{\"format\": \"cumem",
      "truncated JSON: the file ends at line 1 before the report does",
      "a report cut inside a string" },
    { "[1, 2", "not valid JSON (line 1, column 6)",
      "an array cut short is not called a report cut short" },
    /* The rewrite of each \u0000 takes a byte out of what cJSON sees; the
     * column is still the file's. */
    { "{\"a\": \"\\u0000\", \"b\": x}", "not valid JSON (line 1, column 22)",
      "after a NUL escape, the column of the file" },
    { "[\"\\u0000\\u0000\", x]", "not valid JSON (line 1, column 18)",
      "after two NUL escapes" },
    { "{\"a\": \"\\u0000\",\n \"b\": x}", "not valid JSON (line 2, column 7)",
      "an escape on an earlier line moves no column" },
  };

  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    is_int(load_text(cases[i].text, strlen(cases[i].text)), -EINVAL,
           "refused: %s", cases[i].what);
    is_str(err, cases[i].want, "... with its line");
  }

  is_int(LOAD("{\"format\":\0 1}"), -EINVAL, "refused: a NUL byte");
  is_str(err, "not a text file (it holds a NUL byte)", "... with its line");
}

static void
test_nesting(void)
{
  enum { LIMIT = CJSON_NESTING_LIMIT };
  char *text = malloc(2 * LIMIT + 64);
  size_t n = 0;

  for (int i = 0; i < LIMIT; i++)
    text[n++] = '[';
  for (int i = 0; i < LIMIT; i++)
    text[n++] = ']';
  is_int(load_text(text, n), 0, "nesting: %d levels parse", LIMIT);

  n = (size_t)sprintf(text, "{\"a\":\n ");
  for (int i = 0; i < LIMIT; i++)
    text[n++] = '[';
  is_int(load_text(text, n), -EINVAL, "nesting: one more is refused");
  is_str(err,
         "arrays and objects nested deeper than the 1000 levels this tool "
         "reads (line 2, column 1001)",
         "nesting: said so, where it happens, not called truncated");
  free(text);
}

static void
test_too_large(void)
{
  const char *path = report_write_file("big.json", "{", 1);
  int fd = open(path, O_WRONLY);
  cJSON *root = (cJSON *)1;

  if (fd < 0 || ftruncate(fd, (off_t)CMG__TOOL_FILE_MAX + 1) != 0)
    printf("# cannot make %s sparse\n", path);
  if (fd >= 0)
    close(fd);
  is_int(cmg__jsonfile_load(path, &root, &rd), -EINVAL,
         "a file past CMG__TOOL_FILE_MAX is refused");
  is_str(err,
         "1.0 GiB (1073741825 bytes), more than the 1.0 GiB (1073741824 "
         "bytes) this tool reads of a report",
         "by its size, both sizes said");
  ok(root == NULL, "and gives no tree");
  /* Leave no gigabyte behind in a folder that is not sparse. */
  report_write_file("big.json", "", 0);
}

static void
test_open_errors(void)
{
  char path[512];
  cJSON *root = (cJSON *)1;

  snprintf(path, sizeof(path), "%s/none.json", report_dir);
  is_int(cmg__jsonfile_load(path, &root, &rd), -EINVAL, "a missing file");
  is_str(err, "cannot open: No such file or directory", "... with its line");
  ok(root == NULL, "... no tree");
  is_int(cmg__jsonfile_load(report_dir, &root, &rd), -EINVAL, "a folder");
  is_str(err, "cannot read: Is a directory", "... with its line");
  ok(root == NULL, "... no tree");
}

/* A tree is read back by key; a string value, or NULL. */
static const char *
str_of(const cJSON *root, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);

  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void
test_parsed(void)
{
  static const char text[] =
      "{\"a\": \"x\\u0000y\", \"b\": \"\\\\u0000\", \"c\": \"\\\\\\u0000\",\n"
      " \"d\": \"\\u00e9\\u0001\", \"n\": [1, 2.5, null, true]}\n";
  const char *path = report_write_file("good.json", text, sizeof(text) - 1);
  cJSON *root = NULL;

  err[0] = '\0';
  is_int(cmg__jsonfile_load(path, &root, &rd), 0, "a good file parses");
  is_str(err, "", "without a line");
  ok(cJSON_IsObject(root), "into the object it holds");
  is_str(str_of(root, "a"), "x\\x00y",
         "\\u0000 reads as the library writes a NUL, not as the end");
  is_str(str_of(root, "b"), "\\u0000",
         "an escaped backslash before u0000 is no NUL escape");
  is_str(str_of(root, "c"), "\\\\x00",
         "a backslash and then a NUL escape: both kept");
  is_str(str_of(root, "d"), "\xc3\xa9\x01",
         "other escapes are cJSON's (cleaning is the getters')");
  is_int(cJSON_GetArraySize(cJSON_GetObjectItem(root, "n")), 4,
         "every value of the file");
  cmg__jsonfile_drop(root);
}

/* A file of COUNT numbers in an array, with one string of BIG bytes in
 * its middle: more nodes than one arena chunk (16 MiB) holds, and a value
 * larger than one. */
static void
test_large_tree(void)
{
  enum { COUNT = 300000, BIG = 20 << 20 };
  char *text = malloc((size_t)COUNT * 2 + BIG + 64);
  size_t n = 0;
  cJSON *root = NULL;

  text[n++] = '[';
  for (int i = 0; i < COUNT; i++) {
    if (i == COUNT / 2) {
      text[n++] = '"';
      memset(text + n, 'x', BIG);
      n += BIG;
      text[n++] = '"';
      text[n++] = ',';
    }
    text[n++] = i == COUNT - 1 ? '7' : '0';
    text[n++] = ',';
  }
  text[n - 1] = ']';
  const char *path = report_write_file("large.json", text, n);
  free(text);
  is_int(cmg__jsonfile_load(path, &root, &rd), 0, "a large tree parses");
  is_int(cJSON_GetArraySize(root), COUNT + 1, "every element of it");
  const cJSON *s = cJSON_GetArrayItem(root, COUNT / 2);
  ok(cJSON_IsString(s) && strlen(s->valuestring) == BIG &&
         s->valuestring[BIG - 1] == 'x',
     "the large string whole");
  const cJSON *last = cJSON_GetArrayItem(root, COUNT);
  ok(cJSON_IsNumber(last) && last->valuedouble == 7, "the nodes after it too");
  cmg__jsonfile_drop(root);
  report_write_file("large.json", "", 0);
}

/* Standard input from a pipe a child writes `len` bytes of text into. */
static int
load_stdin(const char *text, size_t len, cJSON **root)
{
  int p[2], saved = dup(STDIN_FILENO), rc;
  pid_t pid;

  /* The child must not print the TAP it inherits (valgrind's exit
   * flushes stdio, even after _exit). */
  fflush(stdout);
  if (pipe(p) != 0 || (pid = fork()) < 0)
    return -99;
  if (pid == 0) {
    close(p[0]);
    for (size_t off = 0; off < len;) {
      ssize_t w = write(p[1], text + off, len - off);
      if (w <= 0)
        _exit(1);
      off += (size_t)w;
    }
    _exit(0);
  }
  close(p[1]);
  dup2(p[0], STDIN_FILENO);
  close(p[0]);
  rc = cmg__jsonfile_load("-", root, &rd);
  dup2(saved, STDIN_FILENO);
  close(saved);
  waitpid(pid, NULL, 0);
  return rc;
}

static void
test_stdin(void)
{
  enum { LEN = 200000 };
  char *text = malloc(LEN + 16);
  cJSON *root = NULL;

  memcpy(text, "{\"a\": \"", 7);
  memset(text + 7, 'y', LEN);
  memcpy(text + 7 + LEN, "\"}", 2);
  is_int(load_stdin(text, LEN + 9, &root), 0,
         "\"-\": standard input, a pipe, parses");
  const char *a = str_of(root, "a");
  ok(a != NULL && strlen(a) == LEN, "all of it, past the first buffer");
  cmg__jsonfile_drop(root);
  free(text);

  is_int(load_stdin("", 0, &root), -EINVAL, "\"-\": empty standard input");
  is_str(err, "empty file, not a cumemguard report", "... with its line");
}

int
main(void)
{
  if (!report_dir_make("cmgjsonfile"))
    return 99;
  test_refused();
  test_nesting();
  test_too_large();
  test_open_errors();
  test_parsed();
  test_large_tree();
  test_stdin();
  report_dir_remove();
  return done_testing();
}
