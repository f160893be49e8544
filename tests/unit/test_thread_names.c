/*
 * Thread names: the name a thread had when noted is kept, a tid noted
 * again by a later thread takes the later name, names the kernel cut
 * inside a character are kept as bytes and escaped into UTF-8 as the
 * report writes them, threads noting at once are all kept, and a full
 * table turns later threads away without harm.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/report/report_text.h"
#include "runtime/ledger/thread_names.h"
#include "../tap.h"

#define THREADS 8

static void
set_name(const char *name)
{
  prctl(PR_SET_NAME, name, 0, 0, 0);
}

/* The name of tid in a fresh sorted copy, "(none)" when it has none. */
static const char *
name_of(uint32_t tid, char *buf)
{
  size_t n;
  struct cmg__thread_name *t = cmg__threads_sorted(&n);
  const char *name = cmg__threads_find(t, n, tid);
  snprintf(buf, CMG__THREAD_NAME, "%s", name ? name : "(none)");
  free(t);
  return buf;
}

static void
test_first_name_kept(void)
{
  char buf[CMG__THREAD_NAME];
  uint32_t self = (uint32_t)syscall(SYS_gettid);
  set_name("unit-first");
  cmg__threads_note(self);
  set_name("unit-later");
  is_str(name_of(self, buf), "unit-first", "the name when noted is kept");
  is_str(name_of(self + 1, buf), "(none)", "a tid never noted has none");
  set_name("unit-reused");
  cmg__threads_note(self);
  is_str(name_of(self, buf), "unit-reused", "a tid noted again: the later");
  cmg__threads_reset();
  is_str(name_of(self, buf), "(none)", "reset forgets every name");
}

/* The name of tid as the report writes it (report_text.h). */
static const char *
text_of(uint32_t tid, char *buf, size_t cap)
{
  char name[CMG__THREAD_NAME];
  name_of(tid, name);
  cmg__text_escape(buf, cap, name, strlen(name));
  return buf;
}

static void
test_cut_character(void)
{
  char buf[CMG__TEXT_ROOM(CMG__THREAD_NAME)];
  /* 14 bytes and a 2-byte character: the kernel keeps 15 bytes, the
   * character's first half among them. */
  set_name("abcdefghijklmn\xc3\xa9");
  cmg__threads_note(42);
  is_str(text_of(42, buf, sizeof(buf)), "abcdefghijklmn\\xc3",
         "a cut character is written as its byte, escaped");
  set_name("gr\xc3\xbc\xc3\x9f-\xe2\x82\xac");
  cmg__threads_note(43);
  is_str(text_of(43, buf, sizeof(buf)), "gr\xc3\xbc\xc3\x9f-\xe2\x82\xac",
         "whole characters are kept");
  set_name("a\xff\xc0\xed\xa0\x80z");
  cmg__threads_note(44);
  is_str(text_of(44, buf, sizeof(buf)), "a\\xff\\xc0\\xed\\xa0\\x80z",
         "bytes that are not UTF-8 are escaped one by one");
  cmg__threads_reset();
}

static void *
noter(void *arg)
{
  char name[CMG__THREAD_NAME];
  snprintf(name, sizeof(name), "unit-w%u", (unsigned)(uintptr_t)arg);
  set_name(name);
  cmg__threads_note(1000 + (uint32_t)(uintptr_t)arg);
  return NULL;
}

static void
test_concurrent(void)
{
  pthread_t t[THREADS];
  for (unsigned i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, noter, (void *)(uintptr_t)i);
  for (unsigned i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  size_t n;
  struct cmg__thread_name *names = cmg__threads_sorted(&n);
  is_u64(n, THREADS, "every thread noting at once is kept");
  int right = 0;
  for (unsigned i = 0; i < THREADS; i++) {
    char want[CMG__THREAD_NAME];
    snprintf(want, sizeof(want), "unit-w%u", i);
    const char *got = cmg__threads_find(names, n, 1000 + i);
    right += got != NULL && strcmp(got, want) == 0;
  }
  is_int(right, THREADS, "each under its own tid, by its own name");
  free(names);
  cmg__threads_reset();
}

static void
test_full(void)
{
  char buf[CMG__THREAD_NAME];
  set_name("unit-full");
  for (uint32_t tid = 1; tid <= CMG__THREADS_MAX + 10; tid++)
    cmg__threads_note(tid);
  size_t n;
  struct cmg__thread_name *names = cmg__threads_sorted(&n);
  is_u64(n, CMG__THREADS_MAX, "a full table keeps %d names", CMG__THREADS_MAX);
  free(names);
  is_str(name_of(CMG__THREADS_MAX, buf), "unit-full", "the last one it took");
  is_str(name_of(CMG__THREADS_MAX + 1, buf), "(none)",
         "the threads after it are unnamed");
  cmg__threads_reset();
  cmg__threads_note(7);
  is_str(name_of(7, buf), "unit-full", "after a reset the table takes more");
  cmg__threads_reset();
}

static void
test_distinct(void)
{
  uint32_t mixed[] = { 5, 3, 5, 1, 3, 5 }, same[] = { 4, 4, 4 }, one[] = { 9 };
  size_t n = cmg__threads_distinct(mixed, 6);
  is_u64(n, 3, "distinct: three of six");
  ok(mixed[0] == 1 && mixed[1] == 3 && mixed[2] == 5, "distinct: by tid");
  is_u64(cmg__threads_distinct(same, 3), 1, "distinct: one thread");
  is_u64(cmg__threads_distinct(one, 1), 1, "distinct: one allocation");
  is_u64(cmg__threads_distinct(one, 0), 0, "distinct: none");
}

int
main(void)
{
  test_first_name_kept();
  test_cut_character();
  test_concurrent();
  test_full();
  test_distinct();
  return done_testing();
}
