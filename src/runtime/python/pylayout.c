/*
 * Where a running CPython keeps what the walk reads (pyframes.c): its
 * runtime state, its threads' frame chains, its code and str objects.
 * Only the calling thread's own frame chain is ever read, and only the
 * versions whose layouts are known here.
 *
 * Layouts: 3.13 publishes its offsets in _Py_DebugOffsets at the start of
 * _PyRuntime (cookie "xdebugpy"), which are read at start-up; what it does
 * not publish, and all of 3.11 and 3.12, comes from the tables below, taken
 * from each version's own headers (Include/internal/pycore_frame.h,
 * pycore_runtime.h, cpython/code.h, cpython/unicodeobject.h: 3.11.2 and
 * 3.11.7 agree) and used only when Py_Version names that minor version, a
 * final release, and not a free-threaded build.  The rows of 3.11 and
 * 3.12 are in pylayout.h, where the walk takes them as constants.
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/linker/dynlink.h"
#include "runtime/python/pylayout.h"

#define NONE CMG__PY_NONE
#define L cmg__py_layout

static const struct cmg__py_layout layouts[] = {
  CMG__PY_LAYOUT_311,
  CMG__PY_LAYOUT_312,
  /* What 3.13's debug offsets give is overwritten from them. */
  { .minor = 13,
    .tss_key = 2160,
    .rt_running = NONE,
    .rt_last_holder = NONE,
    .ts_cframe = NONE,
    .current_frame = 72,
    .fr_code = 0,
    .fr_previous = 8,
    .fr_instr = 56,
    .fr_owner = 70,
    .fr_is_entry = NONE,
    .co_filename = 112,
    .co_qualname = 128,
    .co_linetable = 136,
    .co_firstlineno = 68,
    .co_version = 92,
    .co_code = 200,
    .co_firsttraceable = 184,
    .objects = { .ascii_size = 40,
                 .compact_size = 56,
                 .compact_utf8 = 48,
                 .compact_utf8_length = 40 } },
};

/* Word indexes of the fields read from 3.13's _Py_DebugOffsets, whose
 * members are all uint64_t: the cookie (0), version (1), free_threaded (2),
 * then per-struct groups each starting with its size. */
enum {
  DBG_VERSION = 1,
  DBG_FREE_THREADED = 2,
  DBG_TS_CURRENT_FRAME = 23,
  DBG_FR_PREVIOUS = 29,
  DBG_FR_EXECUTABLE = 30,
  DBG_FR_INSTR_PTR = 31,
  DBG_FR_OWNER = 33,
  DBG_CO_FILENAME = 35,
  DBG_CO_QUALNAME = 37,
  DBG_CO_LINETABLE = 38,
  DBG_CO_FIRSTLINENO = 39,
  DBG_CO_CODE_ADAPTIVE = 43,
  DBG_UNICODE_ASCII_SIZE = 70,
};

_Atomic bool cmg__py_on;
struct cmg__py_layout cmg__py_layout;
static struct cmg__py_status status;

/* ---- start-up --------------------------------------------------------- */

static void
set_why(const char *fmt, const char *arg)
{
  snprintf(status.why, sizeof(status.why), fmt, arg);
}

/* "3.N" from a path such as /usr/bin/python3.10 or libpython3.10.so, for
 * versions without Py_Version. */
static void
version_from_path(const char *path)
{
  const char *p = strstr(path, "python3.");
  unsigned minor;
  if (p != NULL && sscanf(p + 7, ".%u", &minor) == 1)
    snprintf(status.version, sizeof(status.version), "3.%u", minor);
  else
    strcpy(status.version, "unknown");
}

static void
version_without_py_version(void *any)
{
  Dl_info info;
  char exe[512];
  if (dladdr(any, &info) != 0 && info.dli_fname != NULL &&
      strstr(info.dli_fname, "python3.") != NULL) {
    version_from_path(info.dli_fname);
    return;
  }
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  exe[n > 0 ? n : 0] = '\0';
  version_from_path(exe);
}

/* 3.13: the published offsets replace the table's, after their cookie and
 * version are checked. */
static bool
read_debug_offsets(unsigned long hex)
{
  const uint64_t *d = (const uint64_t *)L.runtime;
  if (memcmp(d, "xdebugpy", 8) != 0 || (d[DBG_VERSION] >> 16) != hex >> 16) {
    set_why("Python %s: no debug offsets at the start of _PyRuntime",
            status.version);
    return false;
  }
  if (d[DBG_FREE_THREADED] != 0) {
    set_why("Python %s is a free-threaded build, whose frames are not read",
            status.version);
    return false;
  }
  L.current_frame = d[DBG_TS_CURRENT_FRAME];
  L.fr_previous = d[DBG_FR_PREVIOUS];
  L.fr_code = d[DBG_FR_EXECUTABLE];
  L.fr_instr = d[DBG_FR_INSTR_PTR];
  L.fr_owner = d[DBG_FR_OWNER];
  L.co_filename = d[DBG_CO_FILENAME];
  L.co_qualname = d[DBG_CO_QUALNAME];
  L.co_linetable = d[DBG_CO_LINETABLE];
  L.co_firstlineno = d[DBG_CO_FIRSTLINENO];
  L.co_code = d[DBG_CO_CODE_ADAPTIVE];
  /* Not published, but the code object ends with int _co_firsttraceable,
   * void *co_extra, then the code, in 3.11 to 3.13. */
  L.co_firsttraceable = L.co_code - 16;
  L.objects.ascii_size = d[DBG_UNICODE_ASCII_SIZE];
  return true;
}

static bool
pick_layout(unsigned long hex)
{
  unsigned minor = hex >> 16 & 0xff;
  uintptr_t runtime = L.runtime;
  for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
    if (layouts[i].minor == minor && hex >> 24 == 3)
      L = layouts[i];
  L.runtime = runtime;
  if (L.minor == 0) {
    set_why("Python %s: Python frames need CPython 3.11, 3.12 or 3.13",
            status.version);
    return false;
  }
  if ((hex & 0xf0) != 0xf0) {
    set_why("Python %s is a pre-release, whose layout is not known",
            status.version);
    return false;
  }
  return minor != 13 || read_debug_offsets(hex);
}

static void
find_eval_loop(void)
{
  void *eval = cmg__dynlink_dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
  Dl_info info;
  const ElfW(Sym) *sym = NULL;
  if (eval != NULL &&
      dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) != 0 && sym != NULL &&
      sym->st_size > 0) {
    L.eval_lo = (uintptr_t)eval;
    L.eval_hi = L.eval_lo + sym->st_size;
  }
}

static bool
find_types(void)
{
  L.code_type = (uintptr_t)cmg__dynlink_dlsym(RTLD_DEFAULT, "PyCode_Type");
  L.objects.unicode_type =
      (uintptr_t)cmg__dynlink_dlsym(RTLD_DEFAULT, "PyUnicode_Type");
  L.objects.bytes_type =
      (uintptr_t)cmg__dynlink_dlsym(RTLD_DEFAULT, "PyBytes_Type");
  if (L.code_type && L.objects.unicode_type && L.objects.bytes_type)
    return true;
  set_why("Python %s: its type objects are not exported", status.version);
  return false;
}

void
cmg__py_configure(bool python_frames, bool stacks)
{
  void *init = cmg__dynlink_dlsym(RTLD_DEFAULT, "Py_Initialize");
  L.runtime = (uintptr_t)cmg__dynlink_dlsym(RTLD_DEFAULT, "_PyRuntime");
  if (init == NULL || L.runtime == 0)
    return;
  status.found = true;
  const unsigned long *py_version =
      cmg__dynlink_dlsym(RTLD_DEFAULT, "Py_Version");
  if (py_version == NULL) {
    version_without_py_version(init);
    set_why("Python %s: Python frames need CPython 3.11, 3.12 or 3.13",
            status.version);
    return;
  }
  unsigned long hex = *py_version;
  snprintf(status.version, sizeof(status.version), "%lu.%lu.%lu",
           hex >> 24 & 0xff, hex >> 16 & 0xff, hex >> 8 & 0xff);
  if (!pick_layout(hex) || !find_types())
    return;
  if (!python_frames || !stacks) {
    set_why(stacks ? "Python %s: Python frames are off (python_frames=0)"
                   : "Python %s: Python frames are off (stack_depth=0)",
            status.version);
    return;
  }
  find_eval_loop();
  status.frames = true;
  atomic_store_explicit(&cmg__py_on, true, memory_order_relaxed);
}

void
cmg__py_get_status(struct cmg__py_status *out)
{
  *out = status;
}
