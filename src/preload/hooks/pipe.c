/*
 * libunwind's pipe, which it checks memory with (runtime/stacks/
 * unwind_pipe.c): the program's pipe2, mincore and msync, which libunwind
 * calls too.  A pipe
 * made inside one of the library's calls into libunwind is noted; there,
 * before libunwind writes into its pipe, mincore and msync fail as for an
 * unmapped page when the program has put other files where the pipe was.
 * Everyone else's calls are the C library's.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "core/base.h"
#include "runtime/stacks/unwind_pipe.h"
#include "runtime/linker/dynlink.h"
#include "preload/real.h"

typedef int (*pipe2_fn)(int[2], int);
typedef int (*mincore_fn)(void *, size_t, unsigned char *);
typedef int (*msync_fn)(void *, size_t, int);

static _Atomic(void *) real_pipe2, real_mincore, real_msync;

/* The C library's function, or NULL with errno ENOSYS. */
static void *
real(_Atomic(void *) *fn, const char *name)
{
  void *f = atomic_load_explicit(fn, memory_order_acquire);
  if (f == NULL) {
    f = cmg__dynlink_dlsym(RTLD_NEXT, name);
    atomic_store_explicit(fn, f, memory_order_release);
  }
  if (f == NULL)
    errno = ENOSYS;
  return f;
}

/* Whether the call may go on: outside libunwind, or with its pipe safe. */
static bool
pipe_ok(void)
{
  if (!cmg__unwind_is_inside() || cmg__unwind_pipe_ok())
    return true;
  errno = ENOMEM;
  return false;
}

CMG__EXPORT int
pipe2(int fds[2], int flags)
{
  pipe2_fn f = (pipe2_fn)real(&real_pipe2, "pipe2");
  int rc = f != NULL ? f(fds, flags) : -1;
  if (rc == 0 && cmg__unwind_is_inside())
    cmg__unwind_note_pipe(fds);
  return rc;
}

CMG__EXPORT int
mincore(void *addr, size_t len, unsigned char *vec)
{
  mincore_fn f = (mincore_fn)real(&real_mincore, "mincore");
  return f != NULL && pipe_ok() ? f(addr, len, vec) : -1;
}

CMG__EXPORT int
msync(void *addr, size_t len, int flags)
{
  msync_fn f = (msync_fn)real(&real_msync, "msync");
  return f != NULL && pipe_ok() ? f(addr, len, flags) : -1;
}
