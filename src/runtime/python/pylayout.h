/*
 * Where a running CPython keeps what the walk reads: the offsets of its
 * version, found once at start-up (pylayout.c), and whether Python frames
 * are captured.
 */
#ifndef CMG_RUNTIME_PYTHON_PYLAYOUT_H
#define CMG_RUNTIME_PYTHON_PYLAYOUT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/python/pyline.h"

/* An offset the version does not have. */
#define CMG__PY_NONE ((size_t)-1)
#define CMG__PY_OWNED_BY_GENERATOR 1 /* _PyFrameOwner, 3.11 to 3.13 */
#define CMG__PY_OWNED_BY_CSTACK 3    /* 3.12 and 3.13 */

struct cmg__py_layout {
  unsigned minor;
  size_t tss_key;        /* _PyRuntimeState: the gilstate Py_tss_t */
  size_t rt_running;     /* 3.11: gilstate.tstate_current; NONE after */
  size_t rt_last_holder; /* 3.11: ceval.gil.last_holder; NONE after */
  size_t ts_cframe;      /* PyThreadState.cframe; NONE from 3.13 */
  size_t current_frame;  /* in the _PyCFrame, or (3.13) the state */
  size_t fr_code, fr_previous, fr_instr, fr_owner;
  size_t fr_is_entry; /* 3.11 only; NONE after */
  size_t co_filename, co_qualname, co_linetable, co_firstlineno;
  size_t co_version; /* NONE in 3.11 */
  size_t co_code;    /* co_code_adaptive */
  size_t co_firsttraceable;
  struct cmg__py_objects objects;
  uintptr_t runtime;          /* &_PyRuntime */
  uintptr_t code_type;        /* &PyCode_Type */
  uintptr_t eval_lo, eval_hi; /* _PyEval_EvalFrameDefault's code */
};

/* The layouts of 3.11 and 3.12, from each version's own headers
 * (pylayout.c).  Fixed for their versions, so the walk (pyframes.c) takes
 * them as constants: read from cmg__py_layout, each field cost a load per
 * frame of every capture. */
#define CMG__PY_LAYOUT_311                                                     \
  {                                                                            \
    .minor = 11, .tss_key = 592, .rt_running = 576, .rt_last_holder = 368,     \
    .ts_cframe = 56, .current_frame = 8, .fr_code = 32, .fr_previous = 48,     \
    .fr_instr = 56, .fr_owner = 69, .fr_is_entry = 68, .co_filename = 112,     \
    .co_qualname = 128, .co_linetable = 136, .co_firstlineno = 72,             \
    .co_version = CMG__PY_NONE, .co_code = 184, .co_firsttraceable = 168,      \
    .objects = {                                                               \
      .ascii_size = 48,                                                        \
      .compact_size = 72,                                                      \
      .compact_utf8 = 56,                                                      \
      .compact_utf8_length = 48                                                \
    }                                                                          \
  }

#define CMG__PY_LAYOUT_312                                                     \
  {                                                                            \
    .minor = 12, .tss_key = 1544, .rt_running = CMG__PY_NONE,                  \
    .rt_last_holder = CMG__PY_NONE, .ts_cframe = 56, .current_frame = 0,       \
    .fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70,            \
    .fr_is_entry = CMG__PY_NONE, .co_filename = 112, .co_qualname = 128,       \
    .co_linetable = 136, .co_firstlineno = 68, .co_version = 92,               \
    .co_code = 192, .co_firsttraceable = 176, .objects = {                     \
      .ascii_size = 40,                                                        \
      .compact_size = 56,                                                      \
      .compact_utf8 = 48,                                                      \
      .compact_utf8_length = 40                                                \
    }                                                                          \
  }

/* The running CPython's, once cmg__py_configure has found one. */
extern struct cmg__py_layout cmg__py_layout;

/* Looks for a CPython in the process and, when python_frames is on, stacks
 * are captured and its version is supported, turns Python frames on.
 * Once, before captures; dlsym, so never from a signal handler. */
void cmg__py_configure(bool python_frames, bool stacks);

/* Whether captures add Python frames. */
extern _Atomic bool cmg__py_on;

/* What the report says of Python: whether one was found, its version
 * ("3.11.2"), whether its frames are captured, and if not, why. */
struct cmg__py_status {
  bool found;
  bool frames;
  char version[16];
  char why[160];
};

void cmg__py_get_status(struct cmg__py_status *out);

#endif /* CMG_RUNTIME_PYTHON_PYLAYOUT_H */
