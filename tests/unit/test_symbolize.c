/*
 * Unit tests of symbolize.c, a report's native frames named from this
 * machine's files, on tests/reader/prog/symprog: a C++ program built with
 * -g and without -rdynamic, so that only .symtab and DWARF name its
 * functions.  A name that looks right and is wrong is worse than none, so
 * the cases are: the functions demangled, with and without parameters, at
 * their offsets, with file and line; a return address looked up one byte
 * back; a call inlined at an address becoming a frame of its own before
 * the function holding it, whose line is the call site's; every module
 * that cannot be read (no build-id, gone, a device, not ELF, another
 * build) keeping the report's names with a note why, those names still
 * demangled; a module opened once for all reports, until the end; and
 * --no-symbolize.  The addresses come from the program's own line table,
 * at the lines its "@" markers name.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/load/model.h"
#include "reader/model/symbolize.h"
#include "reader/tool.h"
#include "report_builder.h"
#include "symprog_files.h"
#include "../tap.h"

static const char *prog;
static Dwfl_Module *mod;
static char build_id[128];
static char dir[256];

/* The line of symprog.cc that carries "// @mark". */
static int
marker(const char *mark)
{
  const char *src = getenv("srcdir");
  char path[1024], line[512], want[64];
  int n = 0, found = 0;

  snprintf(path, sizeof(path), "%s/tests/reader/prog/symprog.cc",
           src != NULL && *src != '\0' ? src : ".");
  snprintf(want, sizeof(want), "// @%s\n", mark);
  FILE *f = fopen(path, "r");
  while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
    n++;
    size_t len = strlen(line), wl = strlen(want);
    if (found == 0 && len >= wl && strcmp(line + len - wl, want) == 0)
      found = n;
  }
  if (f != NULL)
    fclose(f);
  if (found == 0)
    printf("# no marker @%s in %s\n", mark, path);
  return found;
}

/* An address the line table gives to line `line`, and the offset of the
 * return address a frame there would have (one past it). */
static uint64_t
offset_at(int line)
{
  Dwfl_Line **srcs = NULL;
  size_t n = 0;
  uint64_t at = 0;

  if (dwfl_module_getsrc_file(mod, "symprog.cc", line, 0, &srcs, &n) != 0)
    n = 0;
  for (size_t i = 0; i < n && at == 0; i++) {
    Dwarf_Addr a;
    int l = 0;

    dwfl_lineinfo(srcs[i], &a, NULL, NULL, NULL, NULL);
    dwfl_lineinfo(dwfl_module_getsrc(mod, a), NULL, &l, NULL, NULL, NULL);
    if (l == line)
      at = a + 1;
  }
  free(srcs);
  if (at == 0)
    printf("# no address of symprog.cc:%d\n", line);
  return at;
}

/* Where the function holding the address before offset begins. */
static uint64_t
function_start(uint64_t offset)
{
  GElf_Off off = 0;
  GElf_Sym sym;

  dwfl_module_addrinfo(mod, offset - 1, &off, &sym, NULL, NULL, NULL);
  return offset - 1 - off;
}

static const char *
base(const char *path)
{
  const char *s = path != NULL ? strrchr(path, '/') : NULL;

  return s != NULL ? s + 1 : path != NULL ? path : "(none)";
}

/* Whether frame f is named fn (short name) at symprog.cc:line. */
static bool
named(const struct cmg__model_frame *f, const char *fn, uint64_t line)
{
  const char *shown = f->name != NULL ? f->name : f->function;
  bool same = shown != NULL && strcmp(shown, fn) == 0 &&
              strcmp(base(f->file), "symprog.cc") == 0 && f->line == line;

  if (!same)
    printf("#   got %s (%s:%llu)\n", shown ? shown : "(unnamed)", base(f->file),
           (unsigned long long)f->line);
  return same;
}

static void
test_names(void)
{
  int grab = marker("grab"), reserve = marker("reserve");
  int lambda = marker("lambda"), main_direct = marker("main-direct");
  int main_reserve = marker("main-reserve");
  struct cmg__model_report r;

  report_init(&r, "a.json", 1);
  uint32_t m = report_module(&r, prog, build_id);
  uint64_t at_grab = offset_at(grab), at_reserve = offset_at(reserve);
  uint64_t start_direct = function_start(offset_at(marker("direct")));
  uint32_t f_grab = report_frame(&r, m, at_grab, NULL);
  uint32_t f_reserve = report_frame(&r, m, at_reserve, NULL);
  uint32_t f_lambda = report_frame(&r, m, offset_at(lambda), NULL);
  uint32_t f_main = report_frame(&r, m, offset_at(main_direct), "kept?");
  uint32_t f_entry = report_frame(&r, m, start_direct + 1, NULL);
  uint32_t f_before = report_frame(&r, m, start_direct, NULL);
  uint32_t f_nooff = report_frame(&r, m, at_grab, "jit_code");
  r.frames[f_nooff].has_offset = false;
  uint32_t f_py = report_py_frame(&r, "_Z3foov", "/u/x.py", 3);
  uint32_t s_reserve = REPORT_STACK(&r, f_grab, f_reserve, f_main);
  uint32_t s_plain = REPORT_STACK(&r, f_grab, f_lambda, f_main);
  size_t n_frames = r.n_frames;

  is_int(cmg__symbolize_report(&r), 0, "a report of symprog is named");
  ok(r.modules[m].note == NULL, "its module was read: no note");
  const struct cmg__model_frame *f = &r.frames[f_grab];
  ok(named(f, "gpu::Pool<float>::grab", (uint64_t)grab),
     "a template's method in a namespace, from .symtab, its line from DWARF");
  is_str(f->function, "gpu::Pool<float>::grab(unsigned long)",
         "the full name has its parameters");
  ok(f->has_function_offset &&
         f->function_offset == at_grab - function_start(at_grab),
     "the offset into the function: the return address's (+0x%llx)",
     (unsigned long long)(at_grab - function_start(at_grab)));
  ok(!f->inlined, "not inlined");
  f = &r.frames[f_lambda];
  ok(f->name != NULL &&
         strcmp(f->name, "main::{lambda(unsigned long)#1}::operator()") == 0 &&
         strcmp(base(f->file), "symprog.cc") == 0,
     "a lambda, by its short name");
  ok(named(&r.frames[f_main], "main", (uint64_t)main_direct),
     "main at its line: the report's own name replaced");
  f = &r.frames[f_entry];
  ok(f->name != NULL && strcmp(f->name, "direct") == 0 &&
         f->function_offset == 1,
     "one byte into a function: that function, at +0x1");
  f = &r.frames[f_before];
  ok(f->function == NULL || strncmp(f->function, "direct", 6) != 0,
     "at its first byte: the call was before it, not in it");
  is_str(r.frames[f_nooff].function, "jit_code",
         "a frame without an offset keeps its name");
  is_str(r.frames[f_py].function, "_Z3foov",
         "a Python frame is never renamed nor demangled");

  /* The call to grab inlined from reserve into main. */
  const struct cmg__model_stack *s = &r.stacks[s_reserve];
  is_int(r.n_frames, n_frames + 1, "the inlined call is one frame more");
  is_int(s->n, 4, "and its stack grows by it");
  ok(s->n == 4 && s->frames[0] == f_grab && s->frames[1] == n_frames &&
         s->frames[2] == f_reserve && s->frames[3] == f_main,
     "inserted before the frame that holds it");
  f = &r.frames[n_frames];
  ok(named(f, "reserve", (uint64_t)reserve) && f->inlined,
     "the inlined function at the line of its call to grab, inlined");
  ok(f->module == m && f->offset == at_reserve && !f->has_function_offset,
     "at its holder's place, with no offset into a function of its own");
  f = &r.frames[f_reserve];
  ok(named(f, "main", (uint64_t)main_reserve) && !f->inlined &&
         f->has_function_offset,
     "its holder, main, at the line of the call to reserve");
  is_int(r.stacks[s_plain].n, 3, "a stack without inlined calls stays");
  cmg__read_report_free(&r);
}

/* Modules that cannot be read keep the report's names, demangled. */
static void
test_unread(void)
{
  static const char *const zeros = "0000000000000000000000000000000000000000";
  static const struct {
    const char *what, *path_of, *id, *note;
  } cases[] = {
    { "no build-id", "prog", NULL, "the report has no build-id to check" },
    { "gone", "missing", "id", "not found here" },
    { "a device", "/dev/null", "id", "not a regular file here" },
    { "not ELF", "text", "id", "not a readable ELF file here" },
    { "another build", "prog", zeros,
      "another build here: its build-id is not the report's" },
  };
  char missing[512], text[512];
  struct cmg__model_report r;

  snprintf(missing, sizeof(missing), "%s/gone", dir);
  snprintf(text, sizeof(text), "%s/text", dir);
  FILE *t = fopen(text, "w");
  if (t != NULL) {
    fputs("not an ELF file\n", t);
    fclose(t);
  }
  report_init(&r, "b.json", 2);
  for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
    const char *p = cases[i].path_of;
    const char *path = strcmp(p, "prog") == 0      ? prog
                       : strcmp(p, "missing") == 0 ? missing
                       : strcmp(p, "text") == 0    ? text
                                                   : p;
    uint32_t m = report_module(&r, path, cases[i].id);
    report_frame(&r, m, offset_at(marker("grab")), "_ZN3gpu4PoolIfE4grabEm");
  }
  uint32_t versioned = report_frame(&r, 1, 0x10, "memcpy@@GLIBC_2.14");
  uint32_t plain = report_frame(&r, 1, 0x20, "main");
  uint32_t given = report_frame(&r, 1, 0x30, "_Z3foov");
  r.frames[given].name = strdup("foo");
  uint32_t unnamed = report_frame(&r, 1, 0x40, NULL);
  REPORT_STACK(&r, 0, 1, 2, 3, 4);

  is_int(cmg__symbolize_report(&r), 0, "a report of modules not read here");
  for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
    const struct cmg__model_frame *f = &r.frames[i];

    is_str(r.modules[i].note, cases[i].note, "%s: said why", cases[i].what);
    ok(strcmp(f->function, "gpu::Pool<float>::grab(unsigned long)") == 0 &&
           f->name != NULL && strcmp(f->name, "gpu::Pool<float>::grab") == 0 &&
           f->file == NULL && f->line == 0,
       "%s: the report's name, demangled, no line", cases[i].what);
  }
  ok(strcmp(r.frames[versioned].function, "memcpy") == 0 &&
         r.frames[versioned].name == NULL,
     "a symbol's version is no part of its name");
  ok(strcmp(r.frames[plain].function, "main") == 0 &&
         r.frames[plain].name == NULL,
     "a name not mangled stays, with no short name");
  is_str(r.frames[given].function, "_Z3foov",
         "a frame with a short name already is left as it is");
  ok(r.frames[unnamed].function == NULL, "an unnamed frame stays unnamed");
  is_int(r.stacks[0].n, 5, "and no stack grows");
  cmg__read_report_free(&r);
  unlink(text);
}

/* A module is opened once for every report, until cmg__symbolize_end. */
static void
test_cache(void)
{
  char copy[512];
  struct cmg__model_report r;
  uint64_t at = offset_at(marker("grab"));
  bool read[3];

  snprintf(copy, sizeof(copy), "%s/copy", dir);
  symprog_copy(prog, copy);
  for (int i = 0; i < 3; i++) {
    report_init(&r, "c.json", 3);
    report_frame(&r, report_module(&r, copy, build_id), at, NULL);
    REPORT_STACK(&r, 0);
    cmg__symbolize_report(&r);
    read[i] = r.modules[0].note == NULL && r.frames[0].name != NULL &&
              strcmp(r.frames[0].name, "gpu::Pool<float>::grab") == 0;
    if (i == 2)
      is_str(r.modules[0].note, "not found here",
             "after the end, the file is looked for again, and is gone");
    cmg__read_report_free(&r);
    if (i == 0)
      unlink(copy);
    if (i == 1)
      cmg__symbolize_end();
  }
  ok(read[0], "a copy of the program is read");
  ok(read[1], "a second report of it is named after the file is gone");
  ok(!read[2], "and not once the cache has ended");
}

static void
test_off(void)
{
  struct cmg__model_report r;

  report_init(&r, "d.json", 4);
  uint32_t m = report_module(&r, prog, build_id);
  report_frame(&r, m, offset_at(marker("grab")), NULL);
  report_frame(&r, m, offset_at(marker("reserve")), "_Z3barv");
  REPORT_STACK(&r, 0, 1);
  cmg__symbolize_off();
  is_int(cmg__symbolize_report(&r), 0, "--no-symbolize");
  ok(r.frames[0].function == NULL && r.n_frames == 2 && r.stacks[0].n == 2,
     "leaves the frames unnamed and the stacks as they were");
  ok(strcmp(r.frames[1].function, "bar()") == 0 && r.frames[1].file == NULL &&
         r.modules[0].note == NULL,
     "but the report's own names demangled, with no note");
  cmg__read_report_free(&r);
}

int
main(void)
{
  const char *t = getenv("TMPDIR");
  Dwfl *dwfl = NULL;

  unsetenv("DEBUGINFOD_URLS");
  prog = symprog_path();
  mod = prog != NULL ? symprog_open(prog, NULL, &dwfl) : NULL;
  if (mod == NULL || !symprog_build_id(mod, build_id, sizeof(build_id))) {
    printf("1..0 # SKIP tests/reader/prog/symprog is not built\n");
    return 0;
  }
  snprintf(dir, sizeof(dir), "%s/cmgsym.XXXXXX", t && *t ? t : "/tmp");
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 99;
  }
  /* Debug files beside the modules only, as the build's tests look. */
  cmg__symbolize_debuginfo_path(":.debug");
  test_names();
  test_unread();
  test_cache();
  test_off();
  cmg__symbolize_end();
  dwfl_end(dwfl);
  rmdir(dir);
  return done_testing();
}
