/*
 * Finding a CPython's layout at start-up (pylayout.c), in real libpythons:
 * each case a child of its own, since a process loads one libpython and
 * finds its layout once.  Python frames are read only where the layout is
 * known, so each way of telling the version is checked with what the
 * report then says: no Python loaded (nothing found, nothing said);
 * Debian's 3.11 and pyenv's 3.11, 3.12 and 3.13 where they are installed
 * (py_harness.h), each with its version from Py_Version, its table's row
 * (3.11.2 and 3.11.7 agree) or 3.13's published debug offsets, the
 * runtime, the type objects and the eval loop's code, and the TSS key
 * where the row says once the interpreter runs; python_frames=0 and
 * stack_depth=0, found but off, each saying why; a Py_Version of a
 * pre-release, of a minor version or a major version with no layout;
 * 3.10, which has no Py_Version, named from its library's file name, or
 * "unknown" where neither that nor the program's name says; 3.13's offsets
 * read from the runtime rather than the table, and refused when their
 * cookie or version is not the runtime's or the build is free-threaded.
 */
#include "config.h"

#include <sys/mman.h>
#include <unistd.h>

#include "runtime/python/pylayout.h"
#include "py_harness.h"

#define L cmg__py_layout
#define NEED "Python frames need CPython 3.11, 3.12 or 3.13"

static const struct cmg__py_layout row_311 = CMG__PY_LAYOUT_311,
                                   row_312 = CMG__PY_LAYOUT_312;
static struct py_lib debian, pyenv[14];
static bool have_debian, have[14];

/* What one case sets before the layout is looked for. */
struct setup {
  const struct py_lib *lib;
  bool python_frames, stacks;
  unsigned long version; /* Py_Version put in its place, when not 0 */
  int dbg_word;          /* a word of 3.13's debug offsets to change */
  uint64_t dbg_value;
};

static struct cmg__py_status st;

static void *
sym(const char *name)
{
  return dlsym(RTLD_DEFAULT, name);
}

static void
put_version(unsigned long hex)
{
  unsigned long *v = sym("Py_Version");
  long page = sysconf(_SC_PAGESIZE);
  void *start = (void *)((uintptr_t)v & ~(uintptr_t)(page - 1));
  if (mprotect(start, (size_t)page, PROT_READ | PROT_WRITE) == 0)
    *v = hex;
}

/* Loads, sets up and finds the layout; false when the library would not
 * load. */
static bool
configure(const struct setup *s)
{
  if (s->lib != NULL && !py_load(s->lib))
    return false;
  if (s->version != 0)
    put_version(s->version);
  if (s->dbg_word >= 0)
    ((uint64_t *)sym("_PyRuntime"))[s->dbg_word] = s->dbg_value;
  cmg__py_configure(s->python_frames, s->stacks);
  cmg__py_get_status(&st);
  return true;
}

static struct setup
on(const struct py_lib *lib)
{
  return (struct setup){ lib, true, true, 0, -1, 0 };
}

/* The first offset in which a and b differ, or "" when none does. */
static const char *
differ(const struct cmg__py_layout *a, const struct cmg__py_layout *b)
{
#define SAME(f)                                                                \
  if (a->f != b->f)                                                            \
    return #f;
  SAME(minor) SAME(tss_key) SAME(rt_running) SAME(rt_last_holder);
  SAME(ts_cframe) SAME(current_frame) SAME(fr_code) SAME(fr_previous);
  SAME(fr_instr) SAME(fr_owner) SAME(fr_is_entry) SAME(co_filename);
  SAME(co_qualname) SAME(co_linetable) SAME(co_firstlineno) SAME(co_version);
  SAME(co_code) SAME(co_firsttraceable) SAME(objects.ascii_size);
  SAME(objects.compact_size) SAME(objects.compact_utf8);
  SAME(objects.compact_utf8_length);
#undef SAME
  return "";
}

static void
version_text(char *b, size_t cap)
{
  unsigned long v = *(const unsigned long *)sym("Py_Version");
  snprintf(b, cap, "%lu.%lu.%lu", v >> 24, v >> 16 & 0xff, v >> 8 & 0xff);
}

/* ---- the cases ------------------------------------------------------- */

static void
case_none(const void *arg)
{
  configure(&(struct setup){ NULL, true, true, 0, -1, 0 });
  ok(!st.found && !st.frames, "no Python: none found, no frames");
  ok(st.version[0] == '\0' && st.why[0] == '\0', "no Python: nothing said");
  ok(!atomic_load(&cmg__py_on) && L.minor == 0 && L.runtime == 0,
     "no Python: captures add nothing, no layout");
}

/* The objects the walk compares against, and the eval loop's code. */
static void
check_found(const char *v)
{
  char want[40];
  version_text(want, sizeof(want));
  ok(st.found && st.frames, "%s: found, its frames read", v);
  is_str(st.version, want, "%s: the version Py_Version gives", v);
  is_str(st.why, "", "%s: nothing to say why not", v);
  ok(atomic_load(&cmg__py_on), "%s: captures add Python frames", v);
  ok(L.runtime == (uintptr_t)sym("_PyRuntime"), "%s: its runtime", v);
  ok(L.code_type == (uintptr_t)sym("PyCode_Type") &&
         L.objects.unicode_type == (uintptr_t)sym("PyUnicode_Type") &&
         L.objects.bytes_type == (uintptr_t)sym("PyBytes_Type"),
     "%s: its code, str and bytes types", v);
  ok(L.eval_lo == (uintptr_t)sym("_PyEval_EvalFrameDefault") &&
         L.eval_hi > L.eval_lo + 4096,
     "%s: the eval loop's code, from its start", v);
}

/* Once the interpreter runs, the TSS key it made is where the row says. */
static void
check_running(const struct py_lib *lib, const char *v)
{
  ok(py_run(lib, "pass"), "%s: the interpreter runs", v);
  is_int(*(const int *)(L.runtime + L.tss_key), 1,
         "%s: its TSS key made, at the layout's offset", v);
}

static void
case_table(const void *arg)
{
  const struct setup *s = arg;
  configure(s);
  const char *v = st.version;
  check_found(v);
  is_str(differ(&L, L.minor == 12 ? &row_312 : &row_311), "",
         "%s: its table's row", v);
  check_running(s->lib, v);
}

static void
case_off(const void *arg)
{
  const struct setup *s = arg;
  const char *off = s->stacks ? "python_frames=0" : "stack_depth=0";
  char want[160];
  configure(s);
  snprintf(want, sizeof(want), "Python %s: Python frames are off (%s)",
           st.version, off);
  ok(st.found && !st.frames && !atomic_load(&cmg__py_on),
     "%s: found, frames off", off);
  is_str(st.why, want, "%s: said so", off);
  ok(L.minor == 11 && L.eval_lo == 0,
     "%s: the layout known, the eval loop not looked for", off);
}

/* Found, no frames, and why. */
static void
case_refused(const void *arg)
{
  const struct setup *s = arg;
  char want[200], version[40];
  configure(s);
  snprintf(version, sizeof(version), "%lu.%lu.%lu", s->version >> 24,
           s->version >> 16 & 0xff, s->version >> 8 & 0xff);
  if ((s->version & 0xf0) != 0xf0)
    snprintf(want, sizeof(want),
             "Python %s is a pre-release, whose layout is not known", version);
  else
    snprintf(want, sizeof(want), "Python %s: " NEED, version);
  ok(st.found && !st.frames && !atomic_load(&cmg__py_on),
     "Py_Version %#lx: found, no frames", s->version);
  is_str(st.why, want, "Py_Version %#lx: why", s->version);
}

static void
case_310(const void *arg)
{
  const struct setup *s = arg;
  const char *want = strstr(s->lib->path, "python3.10") ? "3.10" : "unknown";
  char why[160];
  configure(s);
  snprintf(why, sizeof(why), "Python %s: " NEED, want);
  ok(st.found && !st.frames, "3.10 as %s: found, no frames", want);
  is_str(st.version, want, "3.10 as %s: its version", want);
  is_str(st.why, why, "3.10 as %s: why", want);
}

/* 3.13: the offsets published at the start of _PyRuntime. */
static void
case_313(const void *arg)
{
  const struct setup *s = arg;
  configure(s);
  const uint64_t *d = sym("_PyRuntime");
  check_found("3.13");
  ok(L.minor == 13 && L.tss_key == 2160 && L.co_version == 92 &&
         L.ts_cframe == CMG__PY_NONE && L.rt_running == CMG__PY_NONE,
     "3.13: what the offsets do not publish, from the table");
  ok(L.current_frame == d[23] && L.fr_previous == d[29] && L.fr_code == d[30] &&
         L.fr_instr == d[31] && L.fr_owner == d[33],
     "3.13: the frame's offsets from the published ones");
  ok(L.co_filename == d[35] && L.co_qualname == d[37] &&
         L.co_linetable == d[38] && L.co_firstlineno == d[39] &&
         L.co_code == d[43] && L.objects.ascii_size == d[70],
     "3.13: the code object's and str's too");
  ok(L.current_frame == 72 && L.fr_owner == 70 && L.co_code == 200 &&
         L.objects.ascii_size == 40,
     "3.13: and they are 3.13.0's");
  is_int(L.co_firsttraceable, L.co_code - 16,
         "3.13: _co_firsttraceable two words before the code");
  check_running(s->lib, "3.13");
}

static void
case_313_moved(const void *arg)
{
  configure(arg);
  ok(st.frames && L.co_code == 4200 && L.co_firsttraceable == 4184,
     "3.13: a code offset moved, read from the runtime, not the table");
}

static void
case_313_refused(const void *arg)
{
  const struct setup *s = arg;
  char want[160];
  configure(s);
  if (s->dbg_word == 2)
    snprintf(want, sizeof(want),
             "Python %s is a free-threaded build, whose frames are not read",
             st.version);
  else
    snprintf(want, sizeof(want),
             "Python %s: no debug offsets at the start of _PyRuntime",
             st.version);
  ok(st.found && !st.frames && !atomic_load(&cmg__py_on),
     "3.13, word %d changed: found, no frames", s->dbg_word);
  is_str(st.why, want, "3.13, word %d changed: why", s->dbg_word);
}

/* ---- running them ---------------------------------------------------- */

static void
skip(const char *what)
{
  printf("ok %d # SKIP %s: no shared libpython\n", ++tap_n, what);
}

static void
debian_cases(void)
{
  static const unsigned long refused[] = { 0x030b02a1, 0x030e00f0, 0x040b00f0 };
  if (!have_debian) {
    skip("Debian's 3.11");
    return;
  }
  struct setup s = on(&debian);
  py_child(case_table, &s, "Debian's 3.11");
  s.python_frames = false;
  py_child(case_off, &s, "python_frames=0");
  s.python_frames = true;
  s.stacks = false;
  py_child(case_off, &s, "stack_depth=0");
  for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
    s = on(&debian);
    s.version = refused[i];
    py_child(case_refused, &s, "a Py_Version with no layout");
  }
}

/* 3.10 through a link whose name says no version. */
static void
case_310_unnamed(void)
{
  char dir[] = "/tmp/cmg-pylayout-XXXXXX", link[64];
  struct setup s = on(NULL);
  struct py_lib lib = pyenv[10];
  if (mkdtemp(dir) == NULL)
    return;
  snprintf(link, sizeof(link), "%s/libpy.so", dir);
  if (symlink(pyenv[10].path, link) == 0) {
    snprintf(lib.path, sizeof(lib.path), "%s", link);
    s.lib = &lib;
    py_child(case_310, &s, "3.10 by no name");
  }
  unlink(link);
  rmdir(dir);
}

static void
pyenv_cases(void)
{
  struct setup s;
  if (have[10]) {
    s = on(&pyenv[10]);
    py_child(case_310, &s, "pyenv's 3.10");
    case_310_unnamed();
  } else {
    skip("pyenv's 3.10");
  }
  for (unsigned minor = 11; minor <= 12; minor++) {
    s = on(&pyenv[minor]);
    if (have[minor])
      py_child(case_table, &s, minor == 11 ? "pyenv's 3.11" : "pyenv's 3.12");
    else
      skip(minor == 11 ? "pyenv's 3.11" : "pyenv's 3.12");
  }
  if (!have[13]) {
    skip("pyenv's 3.13");
    return;
  }
  s = on(&pyenv[13]);
  py_child(case_313, &s, "pyenv's 3.13");
  s.dbg_word = 43;
  s.dbg_value = 4200;
  py_child(case_313_moved, &s, "3.13, an offset moved");
  static const int words[] = { 0, 1, 2 };
  static const uint64_t values[] = { 0, 0x030c00f0, 1 };
  for (int i = 0; i < 3; i++) {
    s.dbg_word = words[i];
    s.dbg_value = values[i];
    py_child(case_313_refused, &s, "3.13, offsets refused");
  }
}

int
main(void)
{
  py_child(case_none, NULL, "no Python");
  have_debian = py_debian(&debian);
  for (unsigned minor = 10; minor <= 13; minor++)
    have[minor] = py_pyenv(minor, &pyenv[minor]);
  debian_cases();
  pyenv_cases();
  return done_testing();
}
