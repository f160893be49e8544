/*
 * libunwind's pipe, guarded.
 *
 * libunwind checks memory it is unsure of by writing a byte of it into a
 * pipe of its own (x86_64/Ginit.c, write_validate), and when reading that
 * pipe fails it closes both numbers and makes a new pipe.  A program that
 * closes its descriptors and opens files where the pipe was would have
 * them read, written to and closed by libunwind.  The pipe is made by
 * pipe2 during one of our calls into libunwind, which the library's pipe2
 * tells us of (hooks/pipe.c), so its numbers and inodes are known.  Before
 * libunwind uses the pipe it asks mincore (or msync) whether the page is
 * mapped; the library's mincore and msync, inside one of our calls, first
 * check that both numbers are that pipe still, or closed (libunwind then
 * makes a new one).  Once another file is there, the check fails, which
 * libunwind takes for memory it cannot read, and libunwind is never called
 * again: stacks then end at the first frame the walk cannot prove, which
 * one line says once.  Checking there rather than before every call spares
 * two fstat per capture: libunwind checks a page once per thread.
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "core/base.h"
#include "core/log.h"
#include "runtime/stacks/unwind_pipe.h"

static CMG__TLS bool inside;
static _Atomic int pipe_fd[2] = { -1, -1 };
static _Atomic uint64_t pipe_ino[2], pipe_dev[2];
static _Atomic bool libunwind_off;

bool
cmg__unwind_is_inside(void)
{
  return inside;
}

void
cmg__unwind_note_pipe(const int fds[2])
{
  struct stat st[2];
  if (fstat(fds[0], &st[0]) != 0 || fstat(fds[1], &st[1]) != 0)
    return;
  for (int i = 0; i < 2; i++) {
    atomic_store(&pipe_fd[i], -1);
    atomic_store(&pipe_ino[i], (uint64_t)st[i].st_ino);
    atomic_store(&pipe_dev[i], (uint64_t)st[i].st_dev);
    atomic_store(&pipe_fd[i], fds[i]);
  }
}

/* Whether descriptor i of libunwind's pipe is the pipe still, or closed
 * and free (libunwind then makes its pipe anew, which is harmless), rather
 * than another file the program opened there. */
static bool
is_safe(int i)
{
  struct stat st;
  int fd = atomic_load(&pipe_fd[i]);
  if (fd < 0 || (fstat(fd, &st) != 0 && errno == EBADF))
    return true;
  return S_ISFIFO(st.st_mode) &&
         (uint64_t)st.st_ino == atomic_load(&pipe_ino[i]) &&
         (uint64_t)st.st_dev == atomic_load(&pipe_dev[i]);
}

bool
cmg__unwind_enter(void)
{
  if (atomic_load_explicit(&libunwind_off, memory_order_relaxed))
    return false;
  inside = true;
  return true;
}

bool
cmg__unwind_pipe_ok(void)
{
  if (is_safe(0) && is_safe(1))
    return true;
  if (!atomic_exchange(&libunwind_off, true))
    cmg__log("the program opened files where libunwind's pipe was; "
             "stacks end from here at the first frame only libunwind "
             "could step");
  return false;
}

void
cmg__unwind_leave(void)
{
  inside = false;
}
