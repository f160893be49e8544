/*
 * The JSON writer (core/jsonw.c): every formatter against printf, at the
 * edges of its range; a document of every kind of value, nested, written
 * and built as a cJSON tree, byte for byte as cJSON prints it, laid out and
 * not (the report, the CDI spec and the status view were printed by cJSON
 * and are read by tools that may compare their text); text larger than the
 * buffer and text that crosses its end, byte for byte; the same in memory;
 * one writer into memory read back and emptied value after value, as the
 * reader's html page numbers its frames; a document begun in memory and
 * ended on a file; and a failed write (a full disk, a descriptor not open for writing)
 * coming back from close as the errno the report's caller prints.
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/jsonw.h"
#include "../tap.h"

#define BIG (1u << 20)

static char path[4096];

/* What a writer on a fresh file wrote, NUL-terminated (static storage). */
static const char *
contents(void)
{
  static char buf[4 * BIG];
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
  if (f != NULL)
    fclose(f);
  buf[n] = '\0';
  return buf;
}

static int
start(struct cmg__jsonw *w)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  return fd < 0 ? fd : cmg__jsonw_open(w, fd, true);
}

static int
finish(struct cmg__jsonw *w)
{
  int fd = w->fd, err = cmg__jsonw_close(w);
  close(fd);
  return err;
}

static void
test_numbers(void)
{
  static const uint64_t v[] = { 0,
                                1,
                                9,
                                10,
                                99,
                                100,
                                4294967295u,
                                4294967296u,
                                999999999999999ull,
                                1000000000000000ull,
                                UINT64_MAX - 1,
                                UINT64_MAX };
  char want[4096], *p = want;
  struct cmg__jsonw w;
  ok(start(&w) == 0, "a writer on a file");
  for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++) {
    cmg__jsonw_u64(&w, v[i]);
    cmg__jsonw_lit(&w, " ");
    cmg__jsonw_hex(&w, v[i]);
    cmg__jsonw_lit(&w, " ");
    cmg__jsonw_seconds(&w, v[i]);
    cmg__jsonw_lit(&w, "\n");
    p += sprintf(p, "%" PRIu64 " \"0x%" PRIx64 "\" %" PRIu64 ".%06" PRIu64 "\n",
                 v[i], v[i], v[i] / 1000 / 1000000, v[i] / 1000 % 1000000);
  }
  is_int(finish(&w), 0, "closed without error");
  is_str(contents(), want, "decimal, hex and seconds, as printf writes them");

  char buf[24];
  *cmg__jsonw_format_u64(buf, UINT64_MAX) = '\0';
  is_str(buf, "18446744073709551615", "all twenty digits");
}

static const double numbers[] = { 0,
                                  -0.0,
                                  1,
                                  -1,
                                  2147483647.0,
                                  2147483648.0,
                                  -2147483648.0,
                                  -2147483649.0,
                                  0.5,
                                  0.1,
                                  1e-7,
                                  1.5e300,
                                  123456.789,
                                  1e15,
                                  1e16,
                                  123456789012345678.0,
                                  1.0 / 3,
                                  DBL_MAX,
                                  DBL_MIN,
                                  NAN,
                                  INFINITY };
static const uint64_t uints[] = { 0,
                                  42,
                                  999999999999999ull,
                                  1000000000000000ull,
                                  1234567890123456789ull,
                                  UINT64_MAX };
static const char *const strings[] = {
  "",           "plain",        "quote \" and \\ backslash",
  "\b\f\n\r\t", "\x01\x1f\x7f", "caf\xc3\xa9 \xff bytes",
  "/slash/",    "\\u0041"
};

/* The document, written. */
static void
write_doc(struct cmg__jsonw *w)
{
  cmg__jsonw_object(w);
  cmg__jsonw_array(cmg__jsonw_key(w, "numbers"));
  for (size_t i = 0; i < sizeof(numbers) / sizeof(*numbers); i++)
    cmg__jsonw_number(w, numbers[i]);
  for (size_t i = 0; i < sizeof(uints) / sizeof(*uints); i++)
    cmg__jsonw_uint(w, uints[i]);
  cmg__jsonw_array_end(w);
  cmg__jsonw_array(cmg__jsonw_key(w, "strings"));
  for (size_t i = 0; i < sizeof(strings) / sizeof(*strings); i++)
    cmg__jsonw_string(w, strings[i]);
  cmg__jsonw_array_end(w);
  cmg__jsonw_object(cmg__jsonw_key(w, "empty_object"));
  cmg__jsonw_object_end(w);
  cmg__jsonw_array(cmg__jsonw_key(w, "empty_array"));
  cmg__jsonw_array_end(w);
  cmg__jsonw_array(cmg__jsonw_key(w, "objects"));
  for (int i = 0; i < 3; i++) {
    cmg__jsonw_object(w);
    cmg__jsonw_bool(cmg__jsonw_key(w, "on"), i & 1);
    cmg__jsonw_null(cmg__jsonw_key(w, "none"));
    cmg__jsonw_object(cmg__jsonw_key(w, "inner"));
    cmg__jsonw_array(cmg__jsonw_key(w, "list"));
    cmg__jsonw_array(w);
    cmg__jsonw_array_end(w);
    cmg__jsonw_object(w);
    cmg__jsonw_object_end(w);
    cmg__jsonw_array_end(w);
    cmg__jsonw_object_end(w);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
  cmg__jsonw_object(cmg__jsonw_key(w, "members"));
  cmg__jsonw_member_number(w, "number", 0.1);
  cmg__jsonw_member_uint(w, "uint", 1234567890123456789ull);
  cmg__jsonw_member_uint_or_null(w, "had", true, 42);
  cmg__jsonw_member_uint_or_null(w, "not_had", false, 42);
  cmg__jsonw_member_string(w, "string", "quote \"");
  cmg__jsonw_member_string(w, "no_string", NULL);
  cmg__jsonw_member_string_or_null(w, "string_or_null", "x");
  cmg__jsonw_member_string_or_null(w, "null_string", NULL);
  cmg__jsonw_member_bool(w, "bool", true);
  cmg__jsonw_object_end(w);
  cmg__jsonw_object_end(w);
}

/* The same document, as a cJSON tree. */
static cJSON *
tree_doc(void)
{
  cJSON *root = cJSON_CreateObject();
  cJSON *a = cJSON_AddArrayToObject(root, "numbers");
  for (size_t i = 0; i < sizeof(numbers) / sizeof(*numbers); i++)
    cJSON_AddItemToArray(a, cJSON_CreateNumber(numbers[i]));
  for (size_t i = 0; i < sizeof(uints) / sizeof(*uints); i++)
    cJSON_AddItemToArray(a, cJSON_CreateNumber((double)uints[i]));
  a = cJSON_AddArrayToObject(root, "strings");
  for (size_t i = 0; i < sizeof(strings) / sizeof(*strings); i++)
    cJSON_AddItemToArray(a, cJSON_CreateString(strings[i]));
  cJSON_AddObjectToObject(root, "empty_object");
  cJSON_AddArrayToObject(root, "empty_array");
  a = cJSON_AddArrayToObject(root, "objects");
  for (int i = 0; i < 3; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "on", i & 1);
    cJSON_AddNullToObject(o, "none");
    cJSON *list =
        cJSON_AddArrayToObject(cJSON_AddObjectToObject(o, "inner"), "list");
    cJSON_AddItemToArray(list, cJSON_CreateArray());
    cJSON_AddItemToArray(list, cJSON_CreateObject());
    cJSON_AddItemToArray(a, o);
  }
  cJSON *m = cJSON_AddObjectToObject(root, "members");
  cJSON_AddNumberToObject(m, "number", 0.1);
  cJSON_AddNumberToObject(m, "uint", (double)1234567890123456789ull);
  cJSON_AddNumberToObject(m, "had", 42);
  cJSON_AddNullToObject(m, "not_had");
  cJSON_AddStringToObject(m, "string", "quote \"");
  cJSON_AddStringToObject(m, "no_string", "");
  cJSON_AddStringToObject(m, "string_or_null", "x");
  cJSON_AddNullToObject(m, "null_string");
  cJSON_AddBoolToObject(m, "bool", true);
  return root;
}

static void
test_as_cjson(void)
{
  cJSON *tree = tree_doc();
  for (int pretty = 0; pretty < 2; pretty++) {
    struct cmg__jsonw w;
    char *want = pretty ? cJSON_Print(tree) : cJSON_PrintUnformatted(tree);
    ok(cmg__jsonw_open(&w, -1, pretty) == 0, "a writer into memory");
    write_doc(&w);
    char *got = cmg__jsonw_take(&w);
    ok(got != NULL && want != NULL && strcmp(got, want) == 0,
       "as cJSON prints it, %s", pretty ? "laid out" : "unformatted");
    if (got != NULL && want != NULL && strcmp(got, want) != 0)
      printf("# got:\n%s\n# want:\n%s\n", got, want);
    free(got);
    cJSON_free(want);
  }
  cJSON_Delete(tree);
}

/* Text longer than the buffer in one piece, then small pieces whose sum
 * crosses the buffer's end many times. */
static void
test_sizes(void)
{
  char *big = malloc(BIG + 1), *want = malloc(3 * BIG);
  struct cmg__jsonw w;
  for (unsigned i = 0; i < BIG; i++)
    big[i] = (char)('a' + i % 26);
  big[BIG] = '\0';
  ok(start(&w) == 0, "a writer on a file");
  cmg__jsonw_lit(&w, "[");
  cmg__jsonw_put(&w, big, BIG);
  size_t n = 1 + BIG;
  memcpy(want, "[", 1);
  memcpy(want + 1, big, BIG);
  for (uint64_t i = 0; n < 2 * BIG + 1000; i++) {
    cmg__jsonw_lit(&w, ", ");
    cmg__jsonw_u64(&w, i * 7919);
    n += (size_t)sprintf(want + n, ", %" PRIu64, i * 7919);
  }
  cmg__jsonw_lit(&w, "]");
  memcpy(want + n, "]", 2);
  is_int(finish(&w), 0, "closed without error");
  ok(strcmp(contents(), want) == 0, "%zu bytes, every one in its place", n + 1);

  ok(cmg__jsonw_open(&w, -1, true) == 0, "a writer into memory");
  cmg__jsonw_put(&w, want, n + 1);
  char *text = cmg__jsonw_take(&w);
  ok(text != NULL && strcmp(text, want) == 0, "and the same in memory");
  free(text);
  free(big);
  free(want);
}

/* One writer into memory for many values, each read back and the writer
 * emptied: each alone, as a fresh writer writes it, whatever came before
 * (an array still open, a member written). */
static void
test_text(void)
{
  struct cmg__jsonw w;
  char big[2 * 1024];
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  ok(cmg__jsonw_open(&w, -1, false) == 0, "a writer into memory");
  is_str(cmg__jsonw_text(&w), "", "nothing written: empty text");
  cmg__jsonw_object(&w);
  cmg__jsonw_u64(cmg__jsonw_key(&w, "a"), 1);
  cmg__jsonw_object_end(&w);
  is_str(cmg__jsonw_text(&w), "{\"a\":1}", "the text so far");
  is_str(cmg__jsonw_text(&w), "{\"a\":1}", "and again: left in the writer");
  cmg__jsonw_empty(&w);
  is_str(cmg__jsonw_text(&w), "", "emptied");
  cmg__jsonw_array(&w);
  cmg__jsonw_u64(&w, 2);
  cmg__jsonw_empty(&w);
  cmg__jsonw_object(&w);
  cmg__jsonw_null(cmg__jsonw_key(&w, "b"));
  cmg__jsonw_object_end(&w);
  is_str(cmg__jsonw_text(&w), "{\"b\":null}",
         "emptied inside an array: the next value as a first one");
  for (int i = 0; i < 300; i++) {
    cmg__jsonw_empty(&w);
    cmg__jsonw_array(&w);
    for (int k = 0; k <= i; k++)
      cmg__jsonw_string(&w, big);
    cmg__jsonw_array_end(&w);
  }
  const char *t = cmg__jsonw_text(&w);
  ok(t != NULL && strlen(t) == 2 + 300 * (sizeof(big) + 1) + 299 &&
         t[0] == '[' && t[1] == '"' && strcmp(t + strlen(t) - 2, "\"]") == 0,
     "a value past the buffer's size after many smaller ones");
  cmg__jsonw_fail(&w, -ENOMEM);
  ok(cmg__jsonw_text(&w) == NULL, "NULL after a failure");
  cmg__jsonw_empty(&w);
  ok(cmg__jsonw_text(&w) == NULL, "and the failure stays once emptied");
  is_int(cmg__jsonw_close(&w), -ENOMEM, "close returns it");
}

/* A document begun in memory and ended on a file: on the file whole, as
 * written into memory, laid out; then the same with more in memory than a
 * buffer holds. */
static void
test_to_fd(void)
{
  struct cmg__jsonw m, ref;
  for (int big = 0; big < 2; big++) {
    int n = big ? 40000 : 3;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ok(fd >= 0 && cmg__jsonw_open(&m, -1, true) == 0 &&
           cmg__jsonw_open(&ref, -1, true) == 0,
       "two writers into memory");
    for (int k = 0; k < 2; k++) {
      struct cmg__jsonw *x = k == 0 ? &ref : &m;
      cmg__jsonw_object(x);
      cmg__jsonw_array(cmg__jsonw_key(x, "items"));
      for (int i = 0; i < n; i++)
        cmg__jsonw_string(x, "an item of the document");
    }
    is_int(cmg__jsonw_to_fd(&m, fd), 0, "%d items in memory onto a file", n);
    for (int k = 0; k < 2; k++) {
      struct cmg__jsonw *x = k == 0 ? &ref : &m;
      cmg__jsonw_u64(x, 7);
      cmg__jsonw_array_end(x);
      cmg__jsonw_number(cmg__jsonw_key(x, "n"), n);
      cmg__jsonw_object_end(x);
    }
    char *want = cmg__jsonw_take(&ref);
    is_int(cmg__jsonw_close(&m), 0, "closed without error");
    close(fd);
    ok(want != NULL && strcmp(contents(), want) == 0,
       "the file holds the whole document, %zu bytes", want ? strlen(want) : 0);
    free(want);
  }

  int fd = open(path, O_RDONLY);
  ok(fd >= 0 && cmg__jsonw_open(&m, -1, true) == 0, "a writer into memory");
  cmg__jsonw_lit(&m, "[]");
  is_int(cmg__jsonw_to_fd(&m, fd), -EBADF,
         "onto a descriptor not open for writing: EBADF");
  is_int(cmg__jsonw_close(&m), -EBADF, "and from close");
  close(fd);
}

static void
test_errors(void)
{
  struct cmg__jsonw w;
  int fd = open("/dev/full", O_WRONLY);
  if (fd >= 0 && cmg__jsonw_open(&w, fd, true) == 0) {
    for (int i = 0; i < 100000; i++)
      cmg__jsonw_lit(&w, "{\"bytes\": 1}, ");
    is_int(finish(&w), -ENOSPC, "a full disk: ENOSPC, at close");
  } else {
    ok(1, "# SKIP no /dev/full");
  }

  fd = open(path, O_RDONLY);
  ok(fd >= 0 && cmg__jsonw_open(&w, fd, true) == 0,
     "a writer on a read-only fd");
  cmg__jsonw_lit(&w, "[]");
  is_int(finish(&w), -EBADF, "a descriptor not open for writing: EBADF");

  ok(start(&w) == 0, "a writer on a file");
  cmg__jsonw_fail(&w, -ENOMEM);
  cmg__jsonw_fail(&w, -EIO);
  cmg__jsonw_lit(&w, "[]");
  is_int(finish(&w), -ENOMEM, "the first failure is the one returned");
  is_str(contents(), "", "and nothing is written after it");
}

int
main(void)
{
  const char *t = getenv("TMPDIR");
  snprintf(path, sizeof(path), "%s/cmgjsonw.XXXXXX", t && *t ? t : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) {
    perror("mkstemp");
    return 99;
  }
  close(fd);
  test_numbers();
  test_as_cjson();
  test_sizes();
  test_text();
  test_to_fd();
  test_errors();
  unlink(path);
  return done_testing();
}
