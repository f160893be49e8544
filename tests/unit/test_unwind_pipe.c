/*
 * The guard of libunwind's pipe, with real descriptors: a program that
 * closes its files and opens its own where the pipe was must never have
 * them read, written or closed by libunwind.  So the pipe is told apart
 * by what it is (its inode), not by its numbers: the same pipe under
 * another descriptor, or its numbers closed, is still safe, but a regular
 * file or another pipe at either number is not, and from then on libunwind
 * is not entered again, by any thread, with one line said however many
 * threads find it at once.  Being inside is the calling thread's alone.
 * The guard's state lasts the process's life, so the cases that leave it
 * unsafe come last.
 */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/stacks/unwind_pipe.h"
#include "../tap.h"

#define RACERS 8

static int saved_err = -1;
static char err_path[64];

/* stderr into a file, for the line the guard says. */
static void
capture(void)
{
  snprintf(err_path, sizeof(err_path), "/tmp/test_unwind_pipe.%d.err",
           (int)getpid());
  int fd = open(err_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  fflush(stderr);
  saved_err = dup(2);
  dup2(fd, 2);
  close(fd);
}

/* stderr back; what was said in buf, its lines counted. */
static int
captured(char *buf, size_t len)
{
  int fd = open(err_path, O_RDONLY), lines = 0;
  ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
  buf[n > 0 ? n : 0] = '\0';
  if (fd >= 0)
    close(fd);
  unlink(err_path);
  dup2(saved_err, 2);
  close(saved_err);
  for (char *p = buf; *p; p++)
    lines += *p == '\n';
  return lines;
}

/* A regular file at descriptor fd, as a program's own would be. */
static void
file_at(int fd)
{
  int f = open("/proc/self/exe", O_RDONLY);
  if (f != fd) {
    dup2(f, fd);
    close(f);
  }
}

static void *
is_inside_there(void *arg)
{
  (void)arg;
  return (void *)(uintptr_t)cmg__unwind_is_inside();
}

static bool
inside_in_another_thread(void)
{
  pthread_t th;
  void *r;
  pthread_create(&th, NULL, is_inside_there, NULL);
  pthread_join(th, &r);
  return r != NULL;
}

static void
test_inside(void)
{
  ok(!cmg__unwind_is_inside(), "not inside at first");
  ok(cmg__unwind_enter(), "entering is allowed");
  ok(cmg__unwind_is_inside(), "then inside");
  ok(!inside_in_another_thread(), "but not another thread");
  cmg__unwind_leave();
  ok(!cmg__unwind_is_inside(), "left");
}

/* Before libunwind has made a pipe, and when what it is said to have made
 * cannot be looked at: nothing is watched, whatever is at the numbers. */
static void
test_no_pipe(void)
{
  int fds[2] = { -1, -1 };
  ok(cmg__unwind_pipe_ok(), "no pipe made: safe");
  int f = open("/proc/self/exe", O_RDONLY);
  fds[0] = f;
  fds[1] = dup(f);
  close(fds[1]);
  cmg__unwind_note_pipe(fds);
  ok(cmg__unwind_pipe_ok(), "a pipe that cannot be looked at is not noted");
  close(f);
}

/* The pipe noted, then moved about as libunwind and the program may. */
static void
test_pipe_kept(int fds[2])
{
  int other[2];
  ok(pipe(fds) == 0, "a pipe");
  cmg__unwind_note_pipe(fds);
  ok(cmg__unwind_pipe_ok(), "the pipe noted is safe");
  /* The same pipe through another descriptor at the same number. */
  int copy = dup(fds[0]);
  dup2(copy, fds[0]);
  close(copy);
  ok(cmg__unwind_pipe_ok(), "the same pipe under a new descriptor is safe");
  close(fds[1]);
  ok(cmg__unwind_pipe_ok(), "its write end closed is safe");
  close(fds[0]);
  ok(cmg__unwind_pipe_ok(), "both closed is safe");
  /* libunwind makes its pipe anew, elsewhere; the old numbers are the
   * program's again. */
  ok(pipe(other) == 0 && pipe(fds) == 0, "a new pipe");
  cmg__unwind_note_pipe(fds);
  close(other[0]);
  close(other[1]);
  ok(cmg__unwind_pipe_ok(), "noted in place of the first");
  file_at(other[0]);
  ok(cmg__unwind_pipe_ok(), "the first's numbers are no longer watched");
  close(other[0]);
  ok(cmg__unwind_enter(), "nothing safe turned libunwind off");
  cmg__unwind_leave();
}

static atomic_int go;
static atomic_int said_unsafe;

static void *
race(void *arg)
{
  (void)arg;
  while (!atomic_load(&go))
    ;
  atomic_fetch_add(&said_unsafe, !cmg__unwind_pipe_ok());
  return NULL;
}

/* A regular file where the read end was, found by many threads at once. */
static void
test_file_there(const int fds[2])
{
  pthread_t th[RACERS];
  char text[1024];
  file_at(fds[0]);
  capture();
  for (int i = 0; i < RACERS; i++)
    pthread_create(&th[i], NULL, race, NULL);
  atomic_store(&go, 1);
  for (int i = 0; i < RACERS; i++)
    pthread_join(th[i], NULL);
  int lines = captured(text, sizeof(text));
  is_int(atomic_load(&said_unsafe), RACERS,
         "a file at the read end is unsafe, for every thread");
  is_int(lines, 1, "said once");
  ok(strstr(text, "cumemguard: the program opened files where libunwind's "
                  "pipe was") != NULL,
     "saying why");
  ok(!cmg__unwind_enter(), "libunwind is not entered again");
  ok(!cmg__unwind_is_inside(), "and a refused entry is not inside");
  ok(!inside_in_another_thread(), "nor is any other thread");
}

/* Unsafe again and again, by another pipe at either end, and safe again
 * once closed: still off, and nothing more said. */
static void
test_after(int fds[2])
{
  char text[256];
  int other[2];
  capture();
  close(fds[0]);
  ok(cmg__unwind_pipe_ok(), "the file closed, the pipe is safe again");
  ok(pipe(other) == 0, "another pipe");
  dup2(other[1], fds[1]);
  ok(!cmg__unwind_pipe_ok(), "another pipe at the write end is unsafe");
  close(fds[1]);
  dup2(other[0], fds[0]);
  ok(!cmg__unwind_pipe_ok(), "and at the read end");
  is_int(captured(text, sizeof(text)), 0, "not said again");
  close(fds[0]);
  ok(cmg__unwind_pipe_ok(), "both closed, it is safe");
  ok(!cmg__unwind_enter(), "but libunwind stays off for good");
  close(other[0]);
  close(other[1]);
}

int
main(void)
{
  int fds[2];
  test_inside();
  test_no_pipe();
  test_pipe_kept(fds);
  test_file_there(fds);
  test_after(fds);
  return done_testing();
}
