/*
 * Reading the calling thread's Python frames (pyread.c) from a real
 * CPython: each version in a child of its own loads its libpython, finds
 * its layout as the library does at start-up, and runs a script whose
 * functions call back into probe() through ctypes, with the GIL released
 * around the call as it is where the library reads frames.  Debian's 3.11
 * is always tried, pyenv's 3.11, 3.12 and 3.13 where they are installed
 * (py_harness.h); each version has its own way to the thread's frame and
 * its own code object, so each runs every case.
 *
 * Checked: the innermost frame is the calling function's, and its chain
 * the callers', each named with its function and exact line; a
 * generator's frame; __init__ called from a specialized class call, 3.13's
 * shim between it and its caller refused as incomplete; a Python
 * thread's own frame; no frame for a C thread (whose runtime state is
 * another thread's), before Python starts or once the script returned; on
 * 3.11 and 3.12, a thread running a sub-interpreter reads that
 * interpreter's frames, not the main one's (3.11 finds them through the
 * runtime's running state, since the TSS holds the main one's).
 * What a frame's site is named from: the code object, its first line and
 * instruction, and the tags that tell a code object from another made at
 * its address (3.11: its names' hashes as Python computed them; later:
 * its version).  On copies of a real frame and code object, every word
 * where_of refuses: a code word that is no pointer or no code object, an
 * instruction before the code's first traceable one in a frame not yet
 * started (a generator's is not refused), one past the code's end, and
 * names or table that are no pointers; and the edges it takes.
 */
#include "config.h"

#include <pthread.h>
#include <stdalign.h>

#include "runtime/python/pylayout.h"
#include "runtime/python/pyline.h"
#include "runtime/python/pyread.h"
#include "py_harness.h"

#define L cmg__py_layout
#define FRAME_BYTES 80
#define SITE_MAX 128

/* %1$lu is probe's address; each checked line ends with "# at NAME". */
static const char script_fmt[] =
    "import ctypes, sys, threading\n"
    "probe = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, "
    "ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(%1$lu)\n"
    "def leaf(what):\n"
    "    c = sys._getframe().f_code\n"
    "    return probe(what, id(c), hash(c.co_qualname), "
    "hash(c.co_filename))  # at leaf\n"
    "def mid(what):\n"
    "    return leaf(what)  # at mid\n"
    "def gen():\n"
    "    yield probe(b'gen', 0, 0, 0)  # at gen\n"
    "def in_thread():\n"
    "    probe(b'thread', 0, 0, 0)  # at thread\n"
    "mid(b'leaf')  # at run-leaf\n"
    "next(gen())  # at run-gen\n"
    "class C:\n"
    "    def __init__(self):\n"
    "        probe(b'init', 0, 0, 0)  # at init\n"
    "for _ in range(8):\n"
    "    C()  # at run-init\n"
    "t = threading.Thread(target=in_thread)\n"
    "t.start()\n"
    "t.join()\n"
    "if sys.version_info[:2] in ((3, 11), (3, 12)):\n"
    "    import _xxsubinterpreters as si\n"
    "    i = si.create(**({} if sys.version_info < (3, 12) else "
    "{'isolated': False}))\n"
    "    si.run_string(i, '''import ctypes\n"
    "probe = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, "
    "ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(%1$lu)\n"
    "def sub_leaf():\n"
    "    probe(b'sub', 0, 0, 0)\n"
    "sub_leaf()\n"
    "''')\n"
    "    si.destroy(i)\n";

static char script[4096];

/* What the probe saw: each call's frames rendered, and for leaf its
 * where and what Python said of its code. */
enum { S_LEAF, S_GEN, S_INIT, S_THREAD, S_SUB, S_CTHREAD, S_N };
static char seen[S_N][SITE_MAX];
static struct cmg__py_where leaf_w, mid_w;
static bool leaf_ok, mid_ok;
static uintptr_t leaf_code;
static int64_t leaf_hashes[2];

/* The line of script a marker ends, as Python numbers lines. */
static int
line_of(const char *marker)
{
  char m[40];
  snprintf(m, sizeof(m), "# at %s\n", marker);
  const char *at = strstr(script, m);
  int line = 1;
  for (const char *p = script; at != NULL && p < at; p++)
    line += *p == '\n';
  return at ? line : -1;
}

/* Frame f as "function:line", or "-" when where_of refuses it. */
static int
put_frame(char *b, size_t cap, uintptr_t f, struct cmg__py_where *w)
{
  struct cmg__py_site_view v;
  if (!cmg__py_where_of(f, w) ||
      !cmg__py_site_get(cmg__py_site(&L.objects, w), &v))
    return snprintf(b, cap, "-");
  return snprintf(b, cap, "%s:%d", v.function, v.line);
}

/* 3.12 and 3.13 push a frame of the C stack's where C calls into Python,
 * which the walk passes over before asking for a site. */
static bool
is_shim(uintptr_t f)
{
  return L.minor >= 12 &&
         *(const unsigned char *)(f + L.fr_owner) == CMG__PY_OWNED_BY_CSTACK;
}

/* The thread's innermost frames, at most n, or "none". */
static void
render(char *b, size_t cap, unsigned n)
{
  uintptr_t f = cmg__py_current_frame();
  size_t at = 0;
  struct cmg__py_where w;
  if (f == 0)
    snprintf(b, cap, "none");
  for (unsigned i = 0; i < n && cmg__py_is_pointer(f) && at < cap - 1;
       f = cmg__py_word_at(f, L.fr_previous)) {
    if (is_shim(f))
      continue;
    at += (size_t)snprintf(b + at, cap - at, "%s", i++ ? " " : "");
    at += (size_t)put_frame(b + at, cap - at, f, &w);
  }
}

/* ---- copies of a real frame and code object -------------------------- */

struct copy {
  alignas(16) unsigned char frame[FRAME_BYTES];
  unsigned char *code;
  int64_t units;
  int first;
};

static void
copy_of(struct copy *c, uintptr_t f)
{
  uintptr_t code = cmg__py_word_at(f, L.fr_code);
  c->units = *(const int64_t *)(code + 16);
  c->first = *(const int *)(code + L.co_firsttraceable);
  size_t size = L.co_code + 2 * (size_t)c->units;
  c->code = aligned_alloc(16, (size + 15) & ~(size_t)15);
  memcpy(c->code, (const void *)code, size);
  memcpy(c->frame, (const void *)f, FRAME_BYTES);
  *(uintptr_t *)(c->frame + L.fr_code) = (uintptr_t)c->code;
}

/* where_of on the copy, its instruction at unit `at`, owned by `owner`. */
static bool
where_at(struct copy *c, int64_t at, unsigned char owner,
         struct cmg__py_where *w)
{
  *(uintptr_t *)(c->frame + L.fr_instr) =
      (uintptr_t)c->code + L.co_code + (uintptr_t)(2 * at);
  c->frame[L.fr_owner] = owner;
  return cmg__py_where_of((uintptr_t)c->frame, w);
}

static bool
refused_with(struct copy *c, size_t off, uintptr_t word)
{
  struct cmg__py_where w;
  uintptr_t *p = (uintptr_t *)(c->code + off);
  uintptr_t was = *p;
  *p = word;
  bool taken = where_at(c, c->first, 0, &w);
  *p = was;
  return !taken;
}

static void
check_instructions(struct copy *c)
{
  struct cmg__py_where w;
  ok(where_at(c, c->first, 0, &w) && w.lasti == (uint32_t)c->first &&
         w.code == (uintptr_t)c->code,
     "copy: at its first traceable instruction, taken");
  ok(!where_at(c, c->first - 1, 0, &w),
     "copy: one before it, not started: refused");
  ok(where_at(c, c->first - 1, CMG__PY_OWNED_BY_GENERATOR, &w) &&
         w.lasti == (uint32_t)(c->first - 1),
     "copy: a generator's frame there: taken");
  ok(!where_at(c, -1, CMG__PY_OWNED_BY_GENERATOR, &w),
     "copy: a generator's before its code: refused");
  ok(where_at(c, c->units - 1, 0, &w) && w.lasti == c->units - 1,
     "copy: at its last code unit, taken");
  ok(!where_at(c, c->units, 0, &w), "copy: past its code: refused");
}

static void
check_words(struct copy *c, uintptr_t some_str)
{
  struct cmg__py_where w;
  unsigned char *fc = c->frame + L.fr_code;
  uintptr_t code = *(uintptr_t *)fc;
  *(uintptr_t *)fc = 0;
  bool null = where_at(c, c->first, 0, &w);
  *(uintptr_t *)fc = code + 4;
  bool odd = where_at(c, c->first, 0, &w);
  *(uintptr_t *)fc = some_str;
  bool str = where_at(c, c->first, 0, &w);
  *(uintptr_t *)fc = code;
  ok(!null && !odd, "copy: a code word that is no pointer: refused");
  ok(!str, "copy: one to an object that is no code object: refused");
  ok(refused_with(c, L.co_qualname, 0) && refused_with(c, L.co_filename, 8) &&
         refused_with(c, L.co_linetable, 0x10001),
     "copy: a name or table that is no pointer: refused");
  ok(!refused_with(c, L.co_qualname, some_str),
     "copy: its own name put back: taken");
}

/* ---- the probe ---------------------------------------------------------- */

static void *
c_thread(void *arg)
{
  render(seen[S_CTHREAD], SITE_MAX, 1);
  return NULL;
}

static void
probe_leaf(uintptr_t code, int64_t qualhash, int64_t filehash)
{
  struct copy c;
  uintptr_t f = cmg__py_current_frame();
  render(seen[S_LEAF], SITE_MAX, 3);
  leaf_code = code;
  leaf_hashes[0] = qualhash;
  leaf_hashes[1] = filehash;
  leaf_ok = cmg__py_is_pointer(f) && cmg__py_where_of(f, &leaf_w);
  uintptr_t prev = leaf_ok ? cmg__py_word_at(f, L.fr_previous) : 0;
  mid_ok = cmg__py_is_pointer(prev) && cmg__py_where_of(prev, &mid_w);
  if (!leaf_ok)
    return;
  copy_of(&c, f);
  check_words(&c, leaf_w.qualname);
  free(c.code);
  /* A thread that never ran Python, while this one is in Python with the
   * GIL released: the runtime's last holder of it is this thread. */
  pthread_t th;
  pthread_create(&th, NULL, c_thread, NULL);
  pthread_join(th, NULL);
}

/* A generator's code starts with instructions before its first traceable
 * one, which a frame not yet started stands before. */
static void
probe_gen(void)
{
  struct copy c;
  uintptr_t f = cmg__py_current_frame();
  render(seen[S_GEN], SITE_MAX, 2);
  if (!cmg__py_is_pointer(f))
    return;
  copy_of(&c, f);
  ok(c.frame[L.fr_owner] == CMG__PY_OWNED_BY_GENERATOR && c.first > 0,
     "a generator's frame, its code's first traceable instruction past 0");
  check_instructions(&c);
  free(c.code);
}

static int
probe(const char *what, uintptr_t code, int64_t qualhash, int64_t filehash)
{
  if (strcmp(what, "leaf") == 0)
    probe_leaf(code, qualhash, filehash);
  else if (strcmp(what, "gen") == 0)
    probe_gen();
  else if (strcmp(what, "init") == 0)
    render(seen[S_INIT], SITE_MAX, 3);
  else if (strcmp(what, "thread") == 0)
    render(seen[S_THREAD], SITE_MAX, 2);
  else if (strcmp(what, "sub") == 0)
    render(seen[S_SUB], SITE_MAX, 1);
  return 0;
}

/* ---- the checks, in each version's child ------------------------------ */

static void
check_where(void)
{
  char want[64];
  ok(leaf_ok, "leaf: its frame's site can be named");
  is_u64(leaf_w.code, leaf_code, "leaf: its code object, as id() says");
  is_int(leaf_w.firstlineno, line_of("leaf") - 2, "leaf: its first line");
  ok(leaf_w.units > 0 && leaf_w.lasti < leaf_w.units && leaf_w.table_len > 0,
     "leaf: its instruction within its code, a location table");
  if (L.minor == 11) {
    is_u64(leaf_w.tag[0], leaf_hashes[0] ^ 4ull << 40,
           "leaf: tagged with its name's hash and length");
    is_u64(leaf_w.tag[1], leaf_hashes[1] ^ 8ull << 40,
           "leaf: and its file name's");
  } else {
    ok(mid_ok && leaf_w.tag[0] != 0 && leaf_w.tag[0] != mid_w.tag[0],
       "leaf: tagged with its code's version, not its caller's");
    is_u64(leaf_w.tag[1], 0, "leaf: no second tag");
  }
  snprintf(want, sizeof(want), "leaf:%d mid:%d <module>:%d", line_of("leaf"),
           line_of("mid"), line_of("run-leaf"));
  is_str(seen[S_LEAF], want,
         "the innermost frame, then its callers, at their lines");
}

static void
check_threads(void)
{
  char want[64];
  snprintf(want, sizeof(want), "gen:%d <module>:%d", line_of("gen"),
           line_of("run-gen"));
  is_str(seen[S_GEN], want, "a generator's frame, then its caller");
  snprintf(want, sizeof(want), "C.__init__:%d %s<module>:%d", line_of("init"),
           L.minor == 13 ? "- " : "", line_of("run-init"));
  is_str(seen[S_INIT], want,
         "__init__ from a specialized call, then its caller: 3.13's shim "
         "between them refused");
  snprintf(want, sizeof(want), "in_thread:%d Thread.run:", line_of("thread"));
  ok(strncmp(seen[S_THREAD], want, strlen(want)) == 0,
     "a Python thread: its own frames (%s)", seen[S_THREAD]);
  is_str(seen[S_CTHREAD], "none", "a C thread: no frame");
  if (L.minor <= 12)
    is_str(seen[S_SUB], "sub_leaf:4",
           "a sub-interpreter: its frame, not the main interpreter's");
}

static void
run_version(const void *arg)
{
  const struct py_lib *lib = arg;
  if (!py_load(lib)) {
    ok(0, "%s: loaded", lib->path);
    return;
  }
  cmg__py_configure(true, true);
  struct cmg__py_status st;
  cmg__py_get_status(&st);
  printf("# Python %s, %s\n", st.version, lib->path);
  ok(st.frames, "Python %s: its frames are read", st.version);
  if (!st.frames)
    return;
  ok(cmg__py_current_frame() == 0, "before Python starts: no frame");
  snprintf(script, sizeof(script), script_fmt, (unsigned long)(uintptr_t)probe);
  ok(py_run(lib, script), "the script runs");
  ok(cmg__py_current_frame() == 0, "once the script returned: no frame");
  check_where();
  check_threads();
}

static void
version(unsigned minor, bool debian)
{
  struct py_lib lib;
  char what[64];
  snprintf(what, sizeof(what), "%s 3.%u", debian ? "Debian's" : "pyenv's",
           minor);
  if (debian ? !py_debian(&lib) : !py_pyenv(minor, &lib)) {
    printf("ok %d # SKIP %s: no shared libpython\n", ++tap_n, what);
    return;
  }
  py_child(run_version, &lib, what);
}

int
main(void)
{
  version(11, true);
  for (unsigned minor = 11; minor <= 13; minor++)
    version(minor, false);
  return done_testing();
}
