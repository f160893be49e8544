/*
 * The program's pipe2, which libunwind also calls to make the pipe it
 * checks memory with: a pipe made inside one of the library's calls into
 * libunwind is noted, so that the walk can tell when the program has
 * closed it (runtime/unwind.c).  Everyone else's pipe2 is the C library's.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>

#include "core/base.h"
#include "runtime/unwind.h"
#include "preload/real.h"

typedef int (*pipe2_fn)(int[2], int);

static _Atomic(pipe2_fn) real_fn;

CMG__EXPORT int
pipe2(int fds[2], int flags)
{
  pipe2_fn real = atomic_load_explicit(&real_fn, memory_order_acquire);
  if (real == NULL) {
    real = (pipe2_fn)cmg__real_dlsym(RTLD_NEXT, "pipe2");
    atomic_store_explicit(&real_fn, real, memory_order_release);
  }
  if (real == NULL) {
    errno = ENOSYS;
    return -1;
  }
  int rc = real(fds, flags);
  if (rc == 0 && cmg__unwind_is_inside())
    cmg__unwind_note_pipe(fds);
  return rc;
}
