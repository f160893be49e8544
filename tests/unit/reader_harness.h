/*
 * What the tests of the reader's show/ modules share: the fixtures of
 * tests/reader/data read as the commands read them (run/run.c), into a
 * view over its own index, or a pair of views over one index as diff
 * reads them, and what a module prints caught in a string.  The tests run
 * from $srcdir/tests/reader (harness_enter), so that a report is named
 * "data/job-a.json" as in the golden files the tool's tests compare with.
 */
#ifndef CMG_TEST_READER_HARNESS_H
#define CMG_TEST_READER_HARNESS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/model/index.h"
#include "reader/model/supp.h"
#include "reader/model/view.h"
#include "reader/run/run.h"

struct harness {
  struct cmg__index ix;
  struct cmg__view v;   /* the report, or the base of a pair */
  struct cmg__view now; /* the new report of a pair */
  bool pair;
};

/* Into $srcdir/tests/reader ("." when srcdir is unset), once: 0 or -1. */
static inline int
harness_enter(void)
{
  static int entered;
  const char *srcdir = getenv("srcdir");
  char dir[4096];

  if (entered)
    return 0;
  snprintf(dir, sizeof(dir), "%s/tests/reader",
           srcdir != NULL && srcdir[0] != '\0' ? srcdir : ".");
  if (chdir(dir) != 0)
    return -1;
  entered = 1;
  return 0;
}

/* file (relative to tests/reader) read and finished into h->v, devices
 * matched by UUID as summary matches them, no suppressions: 0 or -1. */
static inline int
harness_load(struct harness *h, const char *file)
{
  struct cmg__supp none = { 0 };

  memset(h, 0, sizeof(*h));
  cmg__index_init(&h->ix);
  cmg__view_init(&h->v, &h->ix, true);
  if (harness_enter() != 0 || cmg__run_load(&h->v, file) != 0 ||
      cmg__run_finish(&h->v, &none) != 0)
    return -1;
  return 0;
}

/* Two reports read into h->v (BASE) and h->now (NEW) over one index,
 * devices matched by ordinal, as diff reads them: 0 or -1. */
static inline int
harness_pair(struct harness *h, const char *base, const char *now)
{
  struct cmg__supp none = { 0 };

  memset(h, 0, sizeof(*h));
  cmg__index_init(&h->ix);
  cmg__view_init(&h->v, &h->ix, false);
  cmg__view_init(&h->now, &h->ix, false);
  h->pair = true;
  if (harness_enter() != 0 || cmg__run_load(&h->v, base) != 0 ||
      cmg__run_load(&h->now, now) != 0 || cmg__run_finish(&h->v, &none) != 0 ||
      cmg__run_finish(&h->now, &none) != 0)
    return -1;
  return 0;
}

static inline void
harness_free(struct harness *h)
{
  cmg__view_free(&h->v);
  if (h->pair)
    cmg__view_free(&h->now);
  cmg__index_free(&h->ix);
}

/* A file of tests/reader ("golden/diff-job-a-b.txt"), malloc'd and
 * NUL-terminated; NULL when it cannot be read. */
static inline char *
harness_slurp(const char *file)
{
  char *text = NULL;
  size_t len = 0;
  FILE *in, *out;
  int c;

  if (harness_enter() != 0 || (in = fopen(file, "r")) == NULL)
    return NULL;
  out = open_memstream(&text, &len);
  while (out != NULL && (c = getc(in)) != EOF)
    putc(c, out);
  fclose(in);
  if (out == NULL || fclose(out) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* What a module prints, caught: harness_catch() opens the stream,
 * harness_caught() closes it and hands over the text (free it), never
 * NULL. */
struct harness_out {
  FILE *f;
  char *text;
  size_t len;
};

static inline FILE *
harness_catch(struct harness_out *o)
{
  o->text = NULL;
  o->len = 0;
  o->f = open_memstream(&o->text, &o->len);
  if (o->f == NULL)
    abort();
  return o->f;
}

static inline char *
harness_caught(struct harness_out *o)
{
  if (fclose(o->f) != 0 || o->text == NULL)
    abort();
  return o->text;
}

#endif /* CMG_TEST_READER_HARNESS_H */
