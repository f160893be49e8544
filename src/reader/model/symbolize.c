/*
 * A report keeps, for each native frame, its module's path and build-id and
 * the frame's offset in it; the library names frames at exit only from the
 * dynamic symbols, which is cheap and enough for exported functions.  Here,
 * after the run, the module files are read as heaptrack and the sanitizers'
 * symbolizers read them (elfutils' libdwfl): the symbol tables, .symtab
 * included, so that a program built without -rdynamic is named; DWARF for
 * file, line and the calls inlined at the address; separate debug files
 * where the system has them (/usr/lib/debug, .gnu_debuglink), and from a
 * debuginfod server when DEBUGINFOD_URLS names one.  Names are
 * demangled by libiberty, the demangler of GNU's toolchain.
 *
 * A module is read only when its file has the build-id the report
 * recorded: a file rebuilt or replaced since the run would give names that
 * look right and are wrong.  Such a module, or one that is gone, keeps the
 * report's own names and gets a note saying why.
 *
 * Frames are return addresses: the call is the instruction before, so
 * lookups are made one byte back (as addr2line -i and every unwinder's
 * symbolizer do), or a call that ends a function would be taken for the
 * next function.
 */
#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <libiberty/demangle.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader/load/fields.h"
#include "reader/load/model.h"
#include "reader/model/debuginfo.h"
#include "reader/model/symbolize.h"
#include "reader/tool.h"

/* One function at an address: the innermost inlined call first. */
struct sym {
  char *function; /* demangled, parameters included; NULL when unknown */
  char *name;     /* without parameters; NULL when the same */
  char *file;     /* NULL when DWARF does not say */
  uint64_t line;
  bool inlined;
  bool has_function_offset;
  uint64_t function_offset;
};

struct hit {
  uint64_t offset;
  size_t n; /* 0: nothing known, the report's own names stay */
  struct sym *syms;
};

/* A module file, opened once for every report naming it. */
struct module {
  char *path, *build_id;
  Dwfl *dwfl;
  Dwfl_Module *mod;
  const char *note; /* why it is not read; NULL when it is */
  size_t n_hits, cap_hits;
  struct hit *hits; /* open addressing by offset; n = SIZE_MAX: empty */
};

static bool off;
static char *debuginfo_path; /* NULL: elfutils' own, ":.debug:/usr/lib/debug" */
static struct module **modules;
static size_t n_modules, cap_modules;

/* Separate debug files from this machine; from a debuginfod server only
 * when DEBUGINFOD_URLS names one (debuginfo.c). */
static int
find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
               Dwarf_Addr base, const char *file_name, const char *debuglink,
               GElf_Word crc, char **found)
{
  return cmg__debuginfo_find(mod, userdata, modname, base, file_name, debuglink,
                             crc, found, debuginfo_path);
}

static const Dwfl_Callbacks callbacks = {
  .find_elf = dwfl_build_id_find_elf,
  .find_debuginfo = find_debuginfo,
  .section_address = dwfl_offline_section_address,
  .debuginfo_path = &debuginfo_path,
};

/* ---- names -------------------------------------------------------------- */

/* The demangled name with parameters (full) and without (*name, NULL when
 * the same); a name that is not mangled is returned as it is. */
static char *
demangle(const char *symbol, char **name)
{
  /* A symbol table's name may carry its version ("memcpy@@GLIBC_2.14"),
   * which is not part of the function's name. */
  char *mangled = strndup(symbol, strcspn(symbol, "@"));
  char *full =
      mangled != NULL ? cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI) : NULL;

  *name = NULL;
  if (full == NULL)
    return mangled;
  *name = cplus_demangle(mangled, DMGL_ANSI);
  free(mangled);
  if (*name != NULL && strcmp(*name, full) == 0) {
    free(*name);
    *name = NULL;
  }
  return full;
}

/* A DIE's name as people read it: its linkage name demangled, else its
 * plain name (a C function). */
static void
die_name(Dwarf_Die *die, struct sym *s)
{
  Dwarf_Attribute a;
  const char *n =
      dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));

  if (n == NULL)
    n = dwarf_formstring(
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
  if (n != NULL) {
    s->function = demangle(n, &s->name);
    return;
  }
  n = dwarf_diename(die);
  if (n == NULL)
    n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
  if (n != NULL)
    s->function = strdup(n);
}

/* ---- one address ---------------------------------------------------------- */

static void
free_syms(struct sym *s, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    free(s[i].function);
    free(s[i].name);
    free(s[i].file);
  }
  free(s);
}

/* The call site of inlined subroutine die, in its compilation unit. */
static void
call_site(Dwarf_Die *die, Dwarf_Files *files, char **file, uint64_t *line)
{
  Dwarf_Attribute a;
  Dwarf_Word idx = 0, ln = 0;
  const char *name = NULL;

  *file = NULL;
  *line = 0;
  if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &idx) == 0 &&
      files != NULL)
    name = dwarf_filesrc(files, idx, NULL, NULL);
  if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &ln) == 0)
    *line = ln;
  if (name != NULL)
    *file = strdup(name);
}

/* The inlined calls at pc, innermost first, then the function that holds
 * them: syms[0] takes the line table's file and line, each caller the call
 * site of the call it made.  Returns how many, 0 without DWARF. */
static size_t
inline_chain(Dwfl_Module *mod, Dwarf_Addr pc, struct sym *out, size_t max,
             const char *file, uint64_t line)
{
  Dwarf_Addr bias = 0;
  Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias), *scopes = NULL;
  Dwarf_Files *files = NULL;
  char *at_file = file != NULL ? strdup(file) : NULL;
  uint64_t at_line = line;
  size_t n = 0;
  int nscopes;

  if (cu == NULL || (nscopes = dwarf_getscopes(cu, pc - bias, &scopes)) <= 0) {
    free(at_file);
    return 0;
  }
  dwarf_getsrcfiles(cu, &files, NULL);
  for (int i = 0; i < nscopes && n < max; i++) {
    int tag = dwarf_tag(&scopes[i]);

    if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
      continue;
    memset(&out[n], 0, sizeof(out[n]));
    die_name(&scopes[i], &out[n]);
    out[n].file = at_file;
    out[n].line = at_line;
    out[n].inlined = tag == DW_TAG_inlined_subroutine;
    n++;
    if (tag == DW_TAG_subprogram)
      break;
    call_site(&scopes[i], files, &at_file, &at_line);
  }
  /* DWARF need not nest an inlined call in the function holding it (GCC
   * leaves main's out when its code is in pieces): the holder is then the
   * symbol table's, at the last call site. */
  if (n > 0 && n < max && out[n - 1].inlined) {
    memset(&out[n], 0, sizeof(out[n]));
    out[n].file = at_file;
    out[n].line = at_line;
    n++;
  } else if (n == 0 || out[n - 1].inlined) {
    free(at_file);
  }
  free(scopes);
  return n;
}

/* What is known at offset in m: its function from the symbol tables, and
 * from DWARF its line and inlined calls.  *n 0 when nothing is known. */
static struct sym *
look_up(struct module *m, uint64_t offset, size_t *n)
{
  enum { MAX_INLINE = 64 };
  Dwarf_Addr pc = offset > 0 ? offset - 1 : 0;
  GElf_Off off = 0;
  GElf_Sym sym;
  const char *symname =
      dwfl_module_addrinfo(m->mod, pc, &off, &sym, NULL, NULL, NULL);
  Dwfl_Line *dl = dwfl_module_getsrc(m->mod, pc);
  const char *file = NULL;
  int line = 0;
  struct sym *s = calloc(MAX_INLINE, sizeof(*s));

  *n = 0;
  if (s == NULL)
    return NULL;
  if (dl != NULL)
    file = dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL);
  *n = inline_chain(m->mod, pc, s, MAX_INLINE, file, line > 0 ? line : 0);
  if (*n == 0 && (symname != NULL || file != NULL)) {
    s[0].file = file != NULL ? strdup(file) : NULL;
    s[0].line = line > 0 ? (uint64_t)line : 0;
    *n = 1;
  }
  /* The holding function's own name comes from the symbol table, which
   * names it whole (a clone, a function DWARF does not describe). */
  if (*n > 0 && symname != NULL) {
    struct sym *outer = &s[*n - 1];

    free(outer->function);
    free(outer->name);
    outer->function = demangle(symname, &outer->name);
    outer->has_function_offset = true;
    outer->function_offset = off + (pc != offset ? 1 : 0);
  }
  /* Kept for the life of the command, one per distinct address: only the
   * room used. */
  struct sym *fit = realloc(s, (*n > 0 ? *n : 1) * sizeof(*s));
  return fit != NULL ? fit : s;
}

/* ---- modules -------------------------------------------------------------- */

static bool
same_build_id(Dwfl_Module *mod, const char *want)
{
  const unsigned char *bits;
  GElf_Addr vaddr;
  int len = dwfl_module_build_id(mod, &bits, &vaddr);
  char hex[3];

  if (len <= 0 || want == NULL || strlen(want) != (size_t)len * 2)
    return false;
  for (int i = 0; i < len; i++) {
    snprintf(hex, sizeof(hex), "%02x", bits[i]);
    if (strncmp(want + 2 * i, hex, 2) != 0)
      return false;
  }
  return true;
}

/* Opens path as a module at address 0, so that a report's offsets are its
 * addresses; sets m->note when it cannot be read or is another build. */
static void
open_module(struct module *m)
{
  int fd;

  if (m->build_id == NULL) {
    m->note = "the report has no build-id to check";
    return;
  }
  /* A report's path is data: a device or a pipe there is never read. */
  struct stat st;
  fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    m->note = "not found here";
    return;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    m->note = "not a regular file here";
    return;
  }
  m->dwfl = dwfl_begin(&callbacks);
  if (m->dwfl != NULL)
    m->mod = dwfl_report_elf(m->dwfl, m->path, m->path, fd, 0, false);
  if (m->mod == NULL) {
    close(fd);
    m->note = "not a readable ELF file here";
    return;
  }
  dwfl_report_end(m->dwfl, NULL, NULL);
  if (!same_build_id(m->mod, m->build_id))
    m->note = "another build here: its build-id is not the report's";
}

/* The module of path and build_id, opened the first time.  Each lives on
 * its own, so the pointers handed out stay good as the table grows. */
static struct module *
find_module(const char *path, const char *build_id)
{
  struct module *m;

  for (size_t i = 0; i < n_modules; i++) {
    m = modules[i];
    if (strcmp(m->path, path) == 0 &&
        (m->build_id == NULL
             ? build_id == NULL
             : build_id != NULL && strcmp(m->build_id, build_id) == 0))
      return m;
  }
  if (n_modules == cap_modules) {
    size_t cap = cap_modules ? cap_modules * 2 : 16;
    struct module **t = realloc(modules, cap * sizeof(*t));

    if (t == NULL)
      return NULL;
    modules = t;
    cap_modules = cap;
  }
  if ((m = calloc(1, sizeof(*m))) == NULL)
    return NULL;
  m->path = strdup(path);
  m->build_id = build_id != NULL ? strdup(build_id) : NULL;
  if (m->path == NULL || (build_id != NULL && m->build_id == NULL)) {
    free(m->path);
    free(m->build_id);
    free(m);
    return NULL;
  }
  modules[n_modules++] = m;
  open_module(m);
  return m;
}

/* The cached answer for offset in m, looked up the first time. */
static struct hit *
hit_of(struct module *m, uint64_t offset)
{
  size_t mask, i;

  if ((m->n_hits + 1) * 2 > m->cap_hits) {
    size_t cap = m->cap_hits ? m->cap_hits * 2 : 64;
    struct hit *t = malloc(cap * sizeof(*t));

    if (t == NULL)
      return NULL;
    for (i = 0; i < cap; i++)
      t[i].n = SIZE_MAX;
    for (size_t k = 0; k < m->cap_hits; k++) {
      if (m->hits[k].n == SIZE_MAX)
        continue;
      for (i = (m->hits[k].offset * 0x9e3779b97f4a7c15ull) & (cap - 1);
           t[i].n != SIZE_MAX; i = (i + 1) & (cap - 1))
        ;
      t[i] = m->hits[k];
    }
    free(m->hits);
    m->hits = t;
    m->cap_hits = cap;
  }
  mask = m->cap_hits - 1;
  for (i = (offset * 0x9e3779b97f4a7c15ull) & mask; m->hits[i].n != SIZE_MAX;
       i = (i + 1) & mask)
    if (m->hits[i].offset == offset)
      return &m->hits[i];
  m->hits[i].offset = offset;
  m->hits[i].syms = look_up(m, offset, &m->hits[i].n);
  if (m->hits[i].syms == NULL)
    return NULL;
  m->n_hits++;
  return &m->hits[i];
}

/* ---- the report ------------------------------------------------------------ */

static char *
dup_or_null(const char *s)
{
  return s != NULL ? strdup(s) : NULL;
}

/* Frame f takes what sym says of it (what sym does not know stays). */
static int
name_frame(struct cmg__model_frame *f, const struct sym *s)
{
  if (s->function != NULL) {
    char *fn = strdup(s->function), *name = dup_or_null(s->name);

    if (fn == NULL || (s->name != NULL && name == NULL)) {
      free(fn);
      return -ENOMEM;
    }
    free(f->function);
    free(f->name);
    f->function = fn;
    f->name = name;
    f->has_function_offset = s->has_function_offset;
    f->function_offset = s->function_offset;
  }
  if (s->file != NULL) {
    free(f->file);
    if ((f->file = strdup(s->file)) == NULL)
      return -ENOMEM;
    f->line = s->line;
  }
  f->inlined = s->inlined;
  return 0;
}

/* Appends to r's frames the inlined calls of hit h at frame f, innermost
 * first: *first is the first of them, h->n - 1 in all. */
static int
add_inlined(struct cmg__model_report *r, size_t f, const struct hit *h,
            size_t *first)
{
  size_t extra = h->n - 1;
  struct cmg__model_frame *t =
      realloc(r->frames, (r->n_frames + extra) * sizeof(*t));

  if (t == NULL)
    return -ENOMEM;
  r->frames = t;
  *first = r->n_frames;
  for (size_t k = 0; k < extra; k++) {
    struct cmg__model_frame *nf = &r->frames[r->n_frames];

    memset(nf, 0, sizeof(*nf));
    nf->address = r->frames[f].address;
    nf->module = r->frames[f].module;
    nf->has_offset = r->frames[f].has_offset;
    nf->offset = r->frames[f].offset;
    r->n_frames++;
    if (name_frame(nf, &h->syms[k]) != 0)
      return -ENOMEM;
    nf->has_function_offset = false;
  }
  return 0;
}

/* Each stack with the inlined frames before the frame that holds them. */
static int
expand_stacks(struct cmg__model_report *r, const size_t *first,
              const uint32_t *extra)
{
  for (size_t s = 0; s < r->n_stacks; s++) {
    struct cmg__model_stack *st = &r->stacks[s];
    size_t n = 0, k = 0;
    uint32_t *fr;

    for (uint32_t i = 0; i < st->n; i++)
      n += 1 + extra[st->frames[i]];
    if (n == st->n)
      continue;
    if (n > UINT32_MAX || (fr = malloc(n * sizeof(*fr))) == NULL)
      return -ENOMEM;
    for (uint32_t i = 0; i < st->n; i++) {
      uint32_t f = st->frames[i];

      for (uint32_t e = 0; e < extra[f]; e++)
        fr[k++] = (uint32_t)(first[f] + e);
      fr[k++] = f;
    }
    free(st->frames);
    st->frames = fr;
    st->n = (uint32_t)n;
  }
  return 0;
}

static int
symbolize_frames(struct cmg__model_report *r, struct module **mods,
                 size_t *first, uint32_t *extra)
{
  size_t n = r->n_frames; /* the frames the report had */

  for (size_t f = 0; f < n; f++) {
    struct cmg__model_frame *fr = &r->frames[f];
    struct module *m = fr->module != CMG__TOOL_NONE ? mods[fr->module] : NULL;
    const struct hit *h;

    if (fr->python || !fr->has_offset || m == NULL || m->note != NULL)
      continue;
    if ((h = hit_of(m, fr->offset)) == NULL)
      return -ENOMEM;
    if (h->n == 0)
      continue;
    if (name_frame(&r->frames[f], &h->syms[h->n - 1]) != 0)
      return -ENOMEM;
    if (h->n > 1) {
      if (add_inlined(r, f, h, &first[f]) != 0)
        return -ENOMEM;
      extra[f] = (uint32_t)(h->n - 1);
    }
  }
  return 0;
}

/* The report's own names of the frames not named here, demangled: a
 * module that is not on this machine still has C++ names people read.  A
 * name already demangled (a short name beside it) is left as it is. */
static int
demangle_rest(struct cmg__model_report *r)
{
  for (size_t f = 0; f < r->n_frames; f++) {
    struct cmg__model_frame *fr = &r->frames[f];
    char *name, *full;

    if (fr->python || fr->function == NULL || fr->name != NULL)
      continue;
    if ((full = demangle(fr->function, &name)) == NULL)
      return -ENOMEM;
    free(fr->function);
    free(fr->name);
    fr->function = full;
    fr->name = name;
  }
  return 0;
}

void
cmg__symbolize_off(void)
{
  off = true;
}

int
cmg__symbolize_report(struct cmg__model_report *r)
{
  if (off)
    return demangle_rest(r);
  struct module **mods = cmg__fields_table(r->n_modules, sizeof(*mods));
  size_t *first = cmg__fields_table(r->n_frames, sizeof(*first));
  uint32_t *extra = cmg__fields_table(r->n_frames, sizeof(*extra));
  int rc = -ENOMEM;

  if (mods == NULL || first == NULL || extra == NULL)
    goto out;
  for (size_t i = 0; i < r->n_modules; i++) {
    mods[i] = find_module(r->modules[i].path, r->modules[i].build_id);
    if (mods[i] == NULL)
      goto out;
    r->modules[i].note = mods[i]->note;
  }
  rc = symbolize_frames(r, mods, first, extra);
  if (rc == 0)
    rc = expand_stacks(r, first, extra);
  if (rc == 0)
    rc = demangle_rest(r);
out:
  free(mods);
  free(first);
  free(extra);
  return rc;
}

void
cmg__symbolize_debuginfo_path(const char *path)
{
  debuginfo_path = (char *)path;
}

void
cmg__symbolize_end(void)
{
  for (size_t i = 0; i < n_modules; i++) {
    struct module *m = modules[i];

    for (size_t k = 0; k < m->cap_hits; k++)
      if (m->hits[k].n != SIZE_MAX)
        free_syms(m->hits[k].syms, m->hits[k].n);
    free(m->hits);
    if (m->dwfl != NULL)
      dwfl_end(m->dwfl);
    free(m->path);
    free(m->build_id);
    free(m);
  }
  free(modules);
  modules = NULL;
  n_modules = cap_modules = 0;
}
