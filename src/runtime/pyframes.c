/*
 * Python frames in native stacks, without the GIL and without calling the
 * Python C API.  An allocation hook runs inside the frameworks' allocator
 * locks, often with the GIL released (ctypes and extensions release it
 * around CUDA calls): taking the GIL there can deadlock (PyTorch documents
 * GIL -> allocator lock in one thread, allocator lock -> GIL in another),
 * and in 3.11 any C-API call that allocates may run the garbage collector.
 * So the interpreter's memory is read instead.
 *
 * Only the calling thread's own frame chain is read.  It cannot change
 * while this thread is inside a C call, and each of its frames holds a
 * reference to its code object, so everything read is alive.  The thread's
 * state comes from the runtime's TSS key (the one PyGILState uses, set for
 * every thread that ever ran Python and kept while the GIL is released),
 * read from _PyRuntime at the version's offset and looked up with
 * pthread_getspecific; in 3.11, where the TSS keeps the main interpreter's
 * state, a sub-interpreter's state that this thread runs is taken instead
 * (running_state).  Even so every read is checked: pointers must be
 * aligned user-space addresses, code objects must have &PyCode_Type as
 * their type, offsets must fall inside the code, the walk is bounded and
 * stops at a frame that points to itself.  A wrong Python stack is
 * acceptable; a fault is not.
 *
 * Layouts: 3.13 publishes its offsets in _Py_DebugOffsets at the start of
 * _PyRuntime (cookie "xdebugpy"), which are read at start-up; what it does
 * not publish, and all of 3.11 and 3.12, comes from the tables below, taken
 * from each version's own headers (Include/internal/pycore_frame.h,
 * pycore_runtime.h, cpython/code.h, cpython/unicodeobject.h: 3.11.2 and
 * 3.11.7 agree) and used only when Py_Version names that minor version, a
 * final release, and not a free-threaded build.
 *
 * Splice: since 3.11 one C frame of _PyEval_EvalFrameDefault runs several
 * Python frames.  In 3.11 the last of them has is_entry set; from 3.12 the
 * eval loop pushes a shim frame owned by the C stack below them.  Each
 * native return address inside _PyEval_EvalFrameDefault (its range from the
 * dynamic symbol table) takes the next such group.  Python frames left
 * over (an eval function not recognised, or a native stack cut at
 * stack_depth) are appended, never dropped.
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtime/pyframes.h"
#include "runtime/pyline.h"
#include "runtime/unwind.h"

/* Python frames kept per capture, at most.  Of a deeper chain the
 * innermost PY_MAX - PY_OUTER and the outermost PY_OUTER are kept (the
 * program's entry and its loop are the user's), with a cut between. */
#define PY_MAX 128
#define PY_OUTER 32
#define PY_INNER (PY_MAX - PY_OUTER)
/* Frame objects followed per capture, at most: a chain corrupted under our
 * feet (no GIL is held) may loop. */
#define PY_STEPS 4096
#define NONE ((size_t)-1)
#define OWNED_BY_GENERATOR 1 /* _PyFrameOwner, 3.11 to 3.13 */
#define OWNED_BY_CSTACK 3    /* 3.12 and 3.13 */

struct layout {
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
};

static const struct layout layouts[] = {
  { .minor = 11,
    .tss_key = 592,
    .rt_running = 576,
    .rt_last_holder = 368,
    .ts_cframe = 56,
    .current_frame = 8,
    .fr_code = 32,
    .fr_previous = 48,
    .fr_instr = 56,
    .fr_owner = 69,
    .fr_is_entry = 68,
    .co_filename = 112,
    .co_qualname = 128,
    .co_linetable = 136,
    .co_firstlineno = 72,
    .co_version = NONE,
    .co_code = 184,
    .co_firsttraceable = 168,
    .objects = { .ascii_size = 48,
                 .compact_size = 72,
                 .compact_utf8 = 56,
                 .compact_utf8_length = 48 } },
  { .minor = 12,
    .tss_key = 1544,
    .rt_running = NONE,
    .rt_last_holder = NONE,
    .ts_cframe = 56,
    .current_frame = 0,
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
    .co_code = 192,
    .co_firsttraceable = 176,
    .objects = { .ascii_size = 40,
                 .compact_size = 56,
                 .compact_utf8 = 48,
                 .compact_utf8_length = 40 } },
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
static struct layout L;
static uintptr_t runtime, code_type;
static uintptr_t eval_lo, eval_hi;
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
  const uint64_t *d = (const uint64_t *)runtime;
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
  for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
    if (layouts[i].minor == minor && hex >> 24 == 3)
      L = layouts[i];
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
  void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
  Dl_info info;
  const ElfW(Sym) *sym = NULL;
  if (eval != NULL &&
      dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) != 0 && sym != NULL &&
      sym->st_size > 0) {
    eval_lo = (uintptr_t)eval;
    eval_hi = eval_lo + sym->st_size;
  }
}

static bool
find_types(void)
{
  code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
  L.objects.unicode_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_Type");
  L.objects.bytes_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyBytes_Type");
  if (code_type && L.objects.unicode_type && L.objects.bytes_type)
    return true;
  set_why("Python %s: its type objects are not exported", status.version);
  return false;
}

void
cmg__py_configure(bool python_frames, bool stacks)
{
  void *init = dlsym(RTLD_DEFAULT, "Py_Initialize");
  runtime = (uintptr_t)dlsym(RTLD_DEFAULT, "_PyRuntime");
  if (init == NULL || runtime == 0)
    return;
  status.found = true;
  const unsigned long *py_version = dlsym(RTLD_DEFAULT, "Py_Version");
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

/* ---- the walk --------------------------------------------------------- */

static inline bool
is_pointer(uintptr_t p)
{
  return p >= 4096 && p < ((uintptr_t)1 << 47) && (p & 7) == 0;
}

static inline uintptr_t
word_at(uintptr_t p, size_t off)
{
  return *(const uintptr_t *)(p + off);
}

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
  uintptr_t s = __atomic_load_n((const uintptr_t *)(runtime + L.rt_running),
                                __ATOMIC_RELAXED);
  if (s == 0)
    s = __atomic_load_n((const uintptr_t *)(runtime + L.rt_last_holder),
                        __ATOMIC_RELAXED);
  uintptr_t cframe, sp = (uintptr_t)__builtin_frame_address(0);
  if (s == ts || !is_pointer(s) ||
      !read_checked(s + L.ts_cframe, &cframe, sizeof(cframe)) ||
      !is_pointer(cframe) || cframe <= sp ||
      cframe + L.current_frame + sizeof(uintptr_t) > cmg__stack_top())
    return ts;
  return s;
}

/* The calling thread's innermost frame, or 0. */
static uintptr_t
current_frame(void)
{
  const int *tss = (const int *)(runtime + L.tss_key);
  if (tss[0] != 1)
    return 0;
  uintptr_t ts = (uintptr_t)pthread_getspecific((pthread_key_t)tss[1]);
  if (L.rt_running != NONE)
    ts = running_state(ts);
  if (!is_pointer(ts))
    return 0;
  if (L.ts_cframe != NONE) {
    ts = word_at(ts, L.ts_cframe);
    if (!is_pointer(ts))
      return 0;
  }
  uintptr_t f = word_at(ts, L.current_frame);
  return is_pointer(f) ? f : 0;
}

/* The site of a frame's code at its current instruction; 0 for a frame
 * that is not a code object's, or one CPython's own walkers (tracebacks,
 * sys._getframe, PyFrame_GetBack) pass over as incomplete: not a
 * generator's, and its instruction before the code's _co_firsttraceable
 * (_PyFrame_IsIncomplete, the same test in 3.11 to 3.13, 3.13 adding the
 * C stack's shims, which is_shim takes).  That is a frame not yet started,
 * or 3.13's __init__ shim (_Py_InitCleanup), which a specialized class call
 * pushes between the caller and __init__.  CMG__PY_NO_ROOM for one whose
 * site the table has no room to name. */
static uint32_t
site_of(uintptr_t f)
{
  uintptr_t code = word_at(f, L.fr_code);
  if (!is_pointer(code) || word_at(code, 8) != code_type)
    return 0;
  intptr_t units = *(const intptr_t *)(code + 16); /* ob_size */
  intptr_t at = (intptr_t)word_at(f, L.fr_instr) - (intptr_t)(code + L.co_code);
  int first = *(const int *)(code + L.co_firsttraceable);
  if (*(const unsigned char *)(f + L.fr_owner) != OWNED_BY_GENERATOR &&
      at < (intptr_t)first * 2)
    return 0;
  intptr_t lasti = at / 2;
  if (lasti < 0 || lasti >= units)
    return 0;
  struct cmg__py_where w = {
    .code = code,
    .qualname = word_at(code, L.co_qualname),
    .filename = word_at(code, L.co_filename),
    .linetable = word_at(code, L.co_linetable),
    .lasti = (uint32_t)lasti,
    .firstlineno = *(const int *)(code + L.co_firstlineno),
    .units = units,
  };
  if (!is_pointer(w.linetable) || !is_pointer(w.filename) ||
      !is_pointer(w.qualname))
    return 0;
  w.table_len = *(const int64_t *)(w.linetable + 16);
  /* 3.12 and later number every code object (co_version); 3.11 does not,
   * so its names tell a freed code object from one made at its address:
   * the qualified name's bytes where Python has no hash of it, the file
   * name's hash or length alone (reading both names' bytes on every frame
   * of every capture almost doubled what Python frames cost). */
  if (L.co_version != NONE) {
    w.tag[0] = *(const uint32_t *)(code + L.co_version);
  } else {
    w.tag[0] = cmg__py_str_hash(&L.objects, w.qualname, true);
    w.tag[1] = cmg__py_str_hash(&L.objects, w.filename, false);
  }
  return cmg__py_site(&L.objects, &w);
}

/* A frame the C stack owns: 3.12's and 3.13's shim at each eval entry. */
static inline bool
is_shim(uintptr_t f)
{
  return L.fr_is_entry == NONE &&
         *(const unsigned char *)(f + L.fr_owner) == OWNED_BY_CSTACK;
}

/* The thread's frame objects, innermost first, into fs (room for PY_MAX):
 * all of them when they fit, else the innermost PY_INNER and then the
 * outermost PY_OUTER in order.  *left is the code frames passed over
 * between the two, CMG__CUT_UNKNOWN when the chain did not end within
 * PY_STEPS (the outermost are then not known and not kept). */
static unsigned
chain(uintptr_t *fs, uint32_t *left)
{
  uintptr_t f = current_frame();
  unsigned n = 0;
  *left = 0;
  for (; f != 0 && n < PY_STEPS; n++) {
    if (n < PY_MAX) {
      fs[n] = f;
    } else {
      uintptr_t *slot = &fs[PY_INNER + (n - PY_INNER) % PY_OUTER];
      *left += !is_shim(*slot);
      *slot = f;
    }
    uintptr_t prev = word_at(f, L.fr_previous);
    f = prev != f && is_pointer(prev) ? prev : 0;
  }
  if (f != 0) {
    *left = CMG__CUT_UNKNOWN;
    return PY_INNER;
  }
  if (n <= PY_MAX)
    return n;
  /* The ring's oldest entry is the outermost of the cut's neighbours. */
  uintptr_t ring[PY_OUTER];
  unsigned first = (n - PY_INNER) % PY_OUTER;
  for (unsigned i = 0; i < PY_OUTER; i++)
    ring[i] = fs[PY_INNER + (first + i) % PY_OUTER];
  memcpy(fs + PY_INNER, ring, sizeof(ring));
  return PY_MAX;
}

/* Appends a cut of `frames` Python frames to words, into the cut just
 * before it when its group goes on: one place, one count.  Returns n. */
static unsigned
add_cut(uintptr_t *words, bool *ends, unsigned n, uint32_t frames)
{
  uintptr_t last = n > 0 ? words[n - 1] : 0;
  if (n > 0 && !ends[n - 1] && cmg__is_cut(last) && cmg__cut_is_python(last)) {
    words[n - 1] =
        cmg__cut_word(true, (uint64_t)cmg__cut_frames(last) + frames);
    return n;
  }
  ends[n] = false;
  words[n] = cmg__cut_word(true, frames);
  return n + 1;
}

/* The thread's Python frames as tagged words, innermost first, with a cut
 * word where chain() left frames out or a site could not be named; ends[i]
 * is set on the last frame each eval-loop C frame runs.  words and ends
 * have room for PY_MAX + 1: each frame takes a word at most, and chain()'s
 * cut one more. */
static unsigned
walk(uintptr_t *words, bool *ends, bool *cut)
{
  uintptr_t fs[PY_MAX];
  uint32_t left;
  unsigned m = chain(fs, &left), n = 0;
  bool cut_here = left != 0;
  for (unsigned i = 0; i < m; i++) {
    if (i == PY_INNER && cut_here)
      n = add_cut(words, ends, n, left);
    uintptr_t f = fs[i];
    if (is_shim(f)) {
      if (n > 0)
        ends[n - 1] = true;
      continue;
    }
    uint32_t site = site_of(f);
    if (site == CMG__PY_NO_ROOM) {
      n = add_cut(words, ends, n, 1);
      *cut = true;
    } else if (site != 0) {
      ends[n] = false;
      words[n++] = CMG__PY_TAG | site;
    }
    /* A byte, not a bool: a torn frame may hold any value there. */
    if (L.fr_is_entry != NONE &&
        *(const unsigned char *)(f + L.fr_is_entry) != 0 && n > 0)
      ends[n - 1] = true;
  }
  if (cut_here && m == PY_INNER)
    n = add_cut(words, ends, n, left);
  if (n > 0)
    ends[n - 1] = true;
  *cut |= cut_here;
  return n;
}

/* The eval loop's code, [lo, hi): a return address there is the C frame
 * of one group of Python frames. */
struct eval_range {
  uintptr_t lo, hi;
};

static inline bool
is_eval(struct eval_range r, uintptr_t ip)
{
  return ip - 1 >= r.lo && ip - 1 < r.hi;
}

/* Python frames, consumed a group (the frames one eval-loop C frame runs)
 * at a time: group k is words[ends[k - 1] .. ends[k]). */
struct groups {
  const uintptr_t *words;
  unsigned ends[PY_MAX + 1];
  unsigned n, taken, next; /* groups; groups taken; the next word */
};

/* The next group, or as much of it as room allows, into out; the group
 * counts as taken only when whole. */
static inline unsigned
take_group(struct groups *g, uintptr_t *out, unsigned room)
{
  unsigned len = g->ends[g->taken] - g->next;
  if (len <= room)
    g->taken++;
  else
    len = room;
  memcpy(out, g->words + g->next, len * sizeof(*out));
  g->next += len;
  return len;
}

/* Eval frames outward of the native cut in ips, which the outermost
 * groups belong to. */
static unsigned
evals_past_cut(struct eval_range r, const uintptr_t *ips, unsigned n)
{
  unsigned i = 0, e = 0;
  while (i < n && !cmg__is_cut(ips[i]))
    i++;
  for (; i < n; i++)
    e += is_eval(r, ips[i]);
  return e;
}

unsigned
cmg__py_splice(const uintptr_t *ips, unsigned n, uintptr_t *out, unsigned max,
               bool *cut)
{
  uintptr_t py[PY_MAX + 1];
  bool ends[PY_MAX + 1];
  struct groups g = { .words = py };
  unsigned np = walk(py, ends, cut);
  for (unsigned k = 0; k < np; k++)
    if (ends[k])
      g.ends[g.n++] = k + 1;
  /* Locals, which the stores into out cannot be taken to change. */
  const struct eval_range r = { eval_lo, eval_hi };
  unsigned outer = evals_past_cut(r, ips, n), o = 0, i = 0;
  /* One word is kept back for the cut that ends a stack that did not fit. */
  max--;
  for (; i < n && o < max; i++) {
    uintptr_t ip = ips[i];
    if (cmg__is_cut(ip)) {
      out[o++] = ip;
      while (g.n - g.taken > outer && o < max)
        o += take_group(&g, out + o, max - o);
    } else if (g.taken < g.n && is_eval(r, ip)) {
      o += take_group(&g, out + o, max - o);
    } else {
      out[o++] = ip;
    }
  }
  while (g.next < np && o < max)
    out[o++] = py[g.next++];
  if (i < n || g.next < np) {
    out[o++] = cmg__cut_word(i == n, CMG__CUT_UNKNOWN);
    *cut = true;
  }
  return o;
}
