/*
 * The report's buffered writer (jsonw.c): every formatter against printf,
 * at the edges of its range; text larger than the buffer and text that
 * crosses its end, byte for byte; and a failed write (a full disk, a
 * descriptor not open for writing) coming back from close as the errno the
 * report's caller prints.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/jsonw.h"
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
  return fd < 0 ? fd : cmg__jsonw_open(w, fd);
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
  static const uint64_t v[] = { 0, 1, 9, 10, 99, 100, 4294967295u,
                                4294967296u, 999999999999999ull,
                                1000000000000000ull, UINT64_MAX - 1,
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
    p += sprintf(p, "%" PRIu64 " \"0x%" PRIx64 "\" %" PRIu64 ".%06" PRIu64
                 "\n", v[i], v[i], v[i] / 1000 / 1000000,
                 v[i] / 1000 % 1000000);
  }
  is_int(finish(&w), 0, "closed without error");
  is_str(contents(), want, "decimal, hex and seconds, as printf writes them");

  char buf[24];
  *cmg__jsonw_format_u64(buf, UINT64_MAX) = '\0';
  is_str(buf, "18446744073709551615", "all twenty digits");
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
  cmg__jsonw_text(&w, "]");
  memcpy(want + n, "]", 2);
  is_int(finish(&w), 0, "closed without error");
  ok(strcmp(contents(), want) == 0, "%zu bytes, every one in its place",
     n + 1);
  free(big);
  free(want);
}

static void
test_errors(void)
{
  struct cmg__jsonw w;
  int fd = open("/dev/full", O_WRONLY);
  if (fd >= 0 && cmg__jsonw_open(&w, fd) == 0) {
    for (int i = 0; i < 100000; i++)
      cmg__jsonw_lit(&w, "{\"bytes\": 1}, ");
    is_int(finish(&w), -ENOSPC, "a full disk: ENOSPC, at close");
  } else {
    ok(1, "# SKIP no /dev/full");
  }

  fd = open(path, O_RDONLY);
  ok(fd >= 0 && cmg__jsonw_open(&w, fd) == 0, "a writer on a read-only fd");
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
  test_sizes();
  test_errors();
  unlink(path);
  return done_testing();
}
