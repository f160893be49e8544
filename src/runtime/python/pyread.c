/*
 * Reading the calling thread's Python frames without the GIL and without
 * the Python C API (pyframes.c says why): its innermost frame, through the
 * runtime's TSS key, and what a frame's site is named from.  The offsets
 * come from pylayout.c.
 */
#include "config.h"

#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtime/python/pylayout.h"
#include "runtime/python/pyread.h"
#include "runtime/stacks/unwind.h"

#define NONE CMG__PY_NONE
#define L cmg__py_layout

/* Copies n bytes at p into out, true when they could be read: a system
 * call that fails where a load would fault. */
static bool
read_checked(uintptr_t p, void *out, size_t n)
{
  struct iovec here = { out, n }, there = { (void *)p, n };
  return process_vm_readv(getpid(), &here, 1, &there, 1, 0) == (ssize_t)n;
}

/* 3.11: the state the calling thread runs, when it is not ts, the TSS's.
 * The TSS holds the thread's main-interpreter state; one that runs a
 * sub-interpreter (PyThreadState_Swap) is the runtime's tstate_current
 * while it holds the GIL, and the GIL's last_holder once it released it
 * (drop_gil sets it, for sub-interpreters) until another thread takes the
 * GIL.  Either may be another thread's, and last_holder one since freed,
 * so the state is read with read_checked and taken only when its _PyCFrame
 * lies on this thread's stack above this call: then it belongs to a C frame
 * of the eval loop this thread is inside now, whose frames cannot change
 * while we run.  Else ts. */
static uintptr_t
running_state(uintptr_t ts)
{
  uintptr_t s = __atomic_load_n((const uintptr_t *)(L.runtime + L.rt_running),
                                __ATOMIC_RELAXED);
  if (s == 0)
    s = __atomic_load_n((const uintptr_t *)(L.runtime + L.rt_last_holder),
                        __ATOMIC_RELAXED);
  uintptr_t cframe, sp = (uintptr_t)__builtin_frame_address(0);
  if (s == ts || !cmg__py_is_pointer(s) ||
      !read_checked(s + L.ts_cframe, &cframe, sizeof(cframe)) ||
      !cmg__py_is_pointer(cframe) || cframe <= sp ||
      cframe + L.current_frame + sizeof(uintptr_t) > cmg__stack_top())
    return ts;
  return s;
}

uintptr_t
cmg__py_current_frame(void)
{
  const int *tss = (const int *)(L.runtime + L.tss_key);
  if (tss[0] != 1)
    return 0;
  uintptr_t ts = (uintptr_t)pthread_getspecific((pthread_key_t)tss[1]);
  if (L.rt_running != NONE)
    ts = running_state(ts);
  if (!cmg__py_is_pointer(ts))
    return 0;
  if (L.ts_cframe != NONE) {
    ts = cmg__py_word_at(ts, L.ts_cframe);
    if (!cmg__py_is_pointer(ts))
      return 0;
  }
  uintptr_t f = cmg__py_word_at(ts, L.current_frame);
  return cmg__py_is_pointer(f) ? f : 0;
}

bool
cmg__py_where_of(uintptr_t f, struct cmg__py_where *w)
{
  uintptr_t code = cmg__py_word_at(f, L.fr_code);
  if (!cmg__py_is_pointer(code) || cmg__py_word_at(code, 8) != L.code_type)
    return false;
  intptr_t units = *(const intptr_t *)(code + 16); /* ob_size */
  intptr_t at =
      (intptr_t)cmg__py_word_at(f, L.fr_instr) - (intptr_t)(code + L.co_code);
  int first = *(const int *)(code + L.co_firsttraceable);
  if (*(const unsigned char *)(f + L.fr_owner) != CMG__PY_OWNED_BY_GENERATOR &&
      at < (intptr_t)first * 2)
    return false;
  intptr_t lasti = at / 2;
  if (lasti < 0 || lasti >= units)
    return false;
  *w = (struct cmg__py_where){
    .code = code,
    .qualname = cmg__py_word_at(code, L.co_qualname),
    .filename = cmg__py_word_at(code, L.co_filename),
    .linetable = cmg__py_word_at(code, L.co_linetable),
    .lasti = (uint32_t)lasti,
    .firstlineno = *(const int *)(code + L.co_firstlineno),
    .units = units,
  };
  if (!cmg__py_is_pointer(w->linetable) || !cmg__py_is_pointer(w->filename) ||
      !cmg__py_is_pointer(w->qualname))
    return false;
  w->table_len = *(const int64_t *)(w->linetable + 16);
  /* 3.12 and later number every code object (co_version); 3.11 does not,
   * so its names tell a freed code object from one made at its address:
   * the qualified name's bytes where Python has no hash of it, the file
   * name's hash or length alone (reading both names' bytes on every frame
   * of every capture almost doubled what Python frames cost). */
  if (L.co_version != NONE) {
    w->tag[0] = *(const uint32_t *)(code + L.co_version);
  } else {
    w->tag[0] = cmg__py_str_hash(&L.objects, w->qualname, true);
    w->tag[1] = cmg__py_str_hash(&L.objects, w->filename, false);
  }
  return true;
}
