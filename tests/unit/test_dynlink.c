/*
 * The lookups that never go through the library's own dlsym: libc's dlsym
 * reached by version, and a definition read from one object's dynamic
 * symbol table.  The second stands in for dlsym(RTLD_NEXT) while a
 * sanitizer starts, so it must answer as glibc would: checked against
 * dlsym itself on libc, libm (a default version beside a hidden one, an
 * IFUNC), this program (its references, undefined; its copy of stdout)
 * and the vDSO, whose dynamic section glibc leaves unrelocated.  The rules
 * glibc applies that those objects do not all show (weak, unique, no
 * type; local, undefined, at 0 and section symbols skipped; an unversioned
 * definition winning over a default version met first; thread-local
 * variables refused) are checked on made-up objects, hashed the SysV way,
 * which the objects here, hashed the GNU way, never are.
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "runtime/linker/dynlink.h"
#include "../tap.h"

static void *libm, *libc;
static struct link_map *libm_map, *libc_map, *main_map, *vdso_map;

static struct link_map *
map_of(void *handle)
{
  struct link_map *lm = NULL;
  if (handle == NULL || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0)
    return NULL;
  return lm;
}

static void *
lookup(const struct link_map *l, const char *name, bool *tls)
{
  bool ignored;
  return cmg__dynlink_object_symbol(l, name, tls ? tls : &ignored);
}

static void
find_objects(void)
{
  libm = dlopen("libm.so.6", RTLD_NOW | RTLD_GLOBAL);
  libm_map = map_of(libm);
  libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  libc_map = map_of(libc);
  main_map = _r_debug.r_map;
  for (struct link_map *l = _r_debug.r_map; l != NULL; l = l->l_next)
    if (strstr(l->l_name, "linux-vdso") || strstr(l->l_name, "linux-gate"))
      vdso_map = l;
  ok(libm_map != NULL && libc_map != NULL && main_map != NULL,
     "libm, libc and the program");
}

static void
test_dlsym(void)
{
  void *p = cmg__dynlink_dlsym(RTLD_DEFAULT, "getpid");
  ok(p != NULL && p == dlsym(RTLD_DEFAULT, "getpid"),
     "RTLD_DEFAULT: what dlsym gives");
  is_int(p ? ((pid_t(*)(void))p)() : -1, getpid(), "libc's getpid");
  Dl_info info;
  ok(p && dladdr(p, &info) && strcmp(info.dli_fname, libc_map->l_name) == 0,
     "defined in libc");
  ok(cmg__dynlink_dlsym(RTLD_NEXT, "getpid") == dlsym(RTLD_NEXT, "getpid"),
     "RTLD_NEXT: what dlsym gives");
  ok(cmg__dynlink_dlsym(libm, "exp") == dlsym(libm, "exp") &&
         dlsym(libm, "exp") != NULL,
     "a dlopen handle: what dlsym gives");

  /* Where the program holds a copy of stdout, every reference binds to
   * it, and only RTLD_NEXT from the program reaches libc's. */
  void *libc_stdout = lookup(libc_map, "stdout", NULL);
  void *own = lookup(main_map, "stdout", NULL);
  fflush(stdout);
  ok(cmg__dynlink_dlsym(RTLD_DEFAULT, "stdout") == (void *)&stdout,
     "RTLD_DEFAULT: the stdout this program uses");
  ok(libc_stdout != NULL &&
         cmg__dynlink_dlsym(RTLD_NEXT, "stdout") == libc_stdout,
     "RTLD_NEXT: libc's own");
  ok(own == NULL || (own == (void *)&stdout && own != libc_stdout),
     "the program's copy apart from libc's (%s)",
     own ? "it has one" : "it has none");

  ok(cmg__dynlink_dlsym(RTLD_DEFAULT, "cmg_test_no_such_symbol") == NULL,
     "a name defined nowhere: NULL for RTLD_DEFAULT");
  ok(cmg__dynlink_dlsym(RTLD_NEXT, "cmg_test_no_such_symbol") == NULL,
     "for RTLD_NEXT");
  ok(cmg__dynlink_dlsym(libm, "cmg_test_no_such_symbol") == NULL,
     "for a handle");
}

static void
test_libm(void)
{
  bool tls = true;
  void *p = lookup(libm_map, "exp", &tls);
  ok(p != NULL && p == dlsym(libm, "exp"), "libm's exp, as dlsym has it");
  ok(!tls, "not thread-local");
#if defined(__x86_64__)
  void *old = dlvsym(libm, "exp", "GLIBC_2.2.5");
#elif defined(__aarch64__)
  void *old = dlvsym(libm, "exp", "GLIBC_2.17");
#else
  void *old = NULL;
#endif
  ok(old == NULL || p != old, "the default version, not the old one");
  void *cos_at = dlsym(libm, "cos");
  ok(cos_at != NULL && lookup(libm_map, "cos", NULL) == cos_at,
     "cos, its IFUNC resolved as dlsym resolves it");
  ok(dlsym(libm, "getpid") != NULL && lookup(libm_map, "getpid", NULL) == NULL,
     "what libm only depends on is not libm's");
  ok(lookup(libm_map, "cmg_test_no_such_symbol", NULL) == NULL,
     "a name it does not define");
  ok(lookup(libm_map, "ex", NULL) == NULL &&
         lookup(libm_map, "expx", NULL) == NULL,
     "nor one a letter shorter or longer");
}

static void
test_libc_and_program(void)
{
  bool tls = true;
  ok(lookup(libc_map, "getpid", &tls) == dlsym(libc, "getpid") && !tls,
     "libc's getpid");
  ok(lookup(libc_map, "strlen", NULL) == dlsym(libc, "strlen"),
     "libc's strlen, an IFUNC");
  ok(lookup(libc_map, "realpath", NULL) == dlsym(libc, "realpath"),
     "realpath, of two versions the default");
  ok(lookup(libc_map, "exp", NULL) == NULL, "not libm's exp");
  ok(lookup(libc_map, "errno", &tls) == NULL, "errno gives no address");
  ok(tls, "being thread-local");
  ok(lookup(libc_map, "getpid", &tls) != NULL && !tls,
     "a later lookup clears the flag");
  ok(lookup(main_map, "getpid", &tls) == NULL && !tls,
     "the program's reference to getpid is no definition");

  int defining = 0;
  struct link_map *which = NULL;
  for (struct link_map *l = _r_debug.r_map; l != NULL; l = l->l_next)
    if (lookup(l, "exp", NULL) != NULL)
      defining++, which = l;
  is_int(defining, 1, "of the loaded objects one defines exp");
  ok(which == libm_map, "libm");
}

/* The vDSO's clock, called: it gives the time the system call gives. */
static void
test_vdso(void)
{
  if (vdso_map == NULL) {
    ok(1, "# SKIP no vDSO");
    ok(1, "# SKIP no vDSO");
    return;
  }
#if defined(__aarch64__)
  const char *name = "__kernel_clock_gettime";
#else
  const char *name = "__vdso_clock_gettime";
#endif
  int (*vclock)(clockid_t, struct timespec *) = lookup(vdso_map, name, NULL);
  ok(vclock != NULL, "the vDSO's %s", name);
  struct timespec a, b, v = { 0, 0 };
  clock_gettime(CLOCK_MONOTONIC, &a);
  int rc = vclock ? vclock(CLOCK_MONOTONIC, &v) : -1;
  clock_gettime(CLOCK_MONOTONIC, &b);
  double va = a.tv_sec + a.tv_nsec / 1e9, vv = v.tv_sec + v.tv_nsec / 1e9;
  double vb = b.tv_sec + b.tv_nsec / 1e9;
  ok(rc == 0 && vv >= va && vv <= vb, "called, it tells the time");
}

/* ---- made-up objects --------------------------------------------------- */

#define NSYM 18

struct def {
  const char *name;
  unsigned char type, bind;
  uint16_t shndx, ver;
  uintptr_t value;
};

static int ifunc_target;
static unsigned long seen_hwcap;
static int resolved;

static void *
resolver(unsigned long hwcap)
{
  seen_hwcap = hwcap;
  resolved++;
  return &ifunc_target;
}

#define HIDDEN 0x8000
static const struct def defs[NSYM] = {
  { "", 0, 0, 0, 0, 0 },
  { "plain", STT_FUNC, STB_GLOBAL, 1, 1, 0x100 },
  { "weak", STT_FUNC, STB_WEAK, 1, 0, 0x200 },
  { "unique", STT_OBJECT, STB_GNU_UNIQUE, 1, 1, 0x300 },
  { "untyped", STT_NOTYPE, STB_GLOBAL, 1, 1, 0x400 },
  { "common", STT_COMMON, STB_GLOBAL, 1, 1, 0x480 },
  { "local", STT_FUNC, STB_LOCAL, 1, 1, 0x500 },
  { "undefined", STT_FUNC, STB_GLOBAL, SHN_UNDEF, 1, 0x600 },
  { "at_zero", STT_OBJECT, STB_GLOBAL, 1, 1, 0 },
  { "section", STT_SECTION, STB_GLOBAL, 1, 1, 0x700 },
  { "file", STT_FILE, STB_GLOBAL, 1, 1, 0x780 },
  { "hidden_first", STT_FUNC, STB_GLOBAL, 1, HIDDEN | 2, 0x800 },
  { "hidden_first", STT_FUNC, STB_GLOBAL, 1, 2, 0x810 },
  { "default_first", STT_FUNC, STB_GLOBAL, 1, 3, 0x900 },
  { "default_first", STT_FUNC, STB_GLOBAL, 1, 1, 0x910 },
  { "only_hidden", STT_FUNC, STB_GLOBAL, 1, HIDDEN | 3, 0xa00 },
  { "tls", STT_TLS, STB_GLOBAL, 1, 1, 0 },
  { "ifunc", STT_GNU_IFUNC, STB_GLOBAL, 1, 1, 1 },
};

struct fake {
  ElfW(Dyn) dyn[6];
  ElfW(Sym) sym[NSYM];
  ElfW(Half) versym[NSYM];
  Elf32_Word hash[2 + 3 + NSYM];
  char str[400];
  struct link_map map;
};

static uint32_t
elf_hash(const char *name)
{
  uint32_t h = 0;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
    h = (h << 4) + *c;
    uint32_t g = h & 0xf0000000u;
    if (g)
      h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

/* Loaded at base; its dynamic section relocated as glibc leaves most
 * objects', or left with offsets from base, as the vDSO's is. */
static void
make(struct fake *f, uintptr_t base, bool relocated, bool versym,
     unsigned nbucket)
{
  memset(f, 0, sizeof(*f));
  size_t at = 1;
  for (unsigned i = 1; i < NSYM; i++) {
    const struct def *d = &defs[i];
    f->sym[i] = (ElfW(Sym)){ .st_name = (Elf32_Word)at,
                             .st_info = ELF64_ST_INFO(d->bind, d->type),
                             .st_shndx = d->shndx,
                             .st_value = d->value };
    f->versym[i] = d->ver;
    at += (size_t)sprintf(f->str + at, "%s", d->name) + 1;
  }
  f->sym[NSYM - 1].st_value = (uintptr_t)resolver - base;
  /* Each chain in the table's order, as the linker writes it. */
  Elf32_Word *bucket = f->hash + 2, *chain = bucket + nbucket;
  f->hash[0] = nbucket;
  f->hash[1] = NSYM;
  for (unsigned i = NSYM - 1; i > 0; i--) {
    Elf32_Word b = elf_hash(defs[i].name) % nbucket;
    chain[i] = bucket[b];
    bucket[b] = i;
  }
  uintptr_t off = relocated ? 0 : base;
  ElfW(Dyn) *e = f->dyn;
  *e++ = (ElfW(Dyn)){ DT_SYMTAB, { (uintptr_t)f->sym - off } };
  *e++ = (ElfW(Dyn)){ DT_STRTAB, { (uintptr_t)f->str - off } };
  *e++ = (ElfW(Dyn)){ DT_HASH, { (uintptr_t)f->hash - off } };
  if (versym)
    *e++ = (ElfW(Dyn)){ DT_VERSYM, { (uintptr_t)f->versym - off } };
  f->map = (struct link_map){ .l_addr = base, .l_name = "", .l_ld = f->dyn };
}

static struct fake fake;

static void
test_made_up(bool relocated)
{
  uintptr_t base = relocated ? 0x10000 : (uintptr_t)&fake;
  const char *how = relocated ? "relocated" : "unrelocated";
  make(&fake, base, relocated, true, 3);
  const struct link_map *l = &fake.map;
  bool tls = true;
  ok(lookup(l, "plain", &tls) == (void *)(base + 0x100) && !tls,
     "%s: a global function at the base plus its value", how);
  ok(lookup(l, "weak", NULL) == (void *)(base + 0x200) &&
         lookup(l, "unique", NULL) == (void *)(base + 0x300) &&
         lookup(l, "untyped", NULL) == (void *)(base + 0x400) &&
         lookup(l, "common", NULL) == (void *)(base + 0x480),
     "weak, unique, untyped and common ones too");
  ok(lookup(l, "local", NULL) == NULL, "not a local one");
  ok(lookup(l, "undefined", NULL) == NULL, "nor an undefined one");
  ok(lookup(l, "at_zero", NULL) == NULL, "nor one at 0");
  ok(lookup(l, "section", NULL) == NULL && lookup(l, "file", NULL) == NULL,
     "nor section or file symbols");
  ok(lookup(l, "hidden_first", NULL) == (void *)(base + 0x810),
     "a hidden version passed over for the default");
  ok(lookup(l, "default_first", NULL) == (void *)(base + 0x910),
     "an unversioned definition beats a default version met first");
  ok(lookup(l, "only_hidden", NULL) == NULL, "a hidden version alone: none");
  ok(lookup(l, "tls", &tls) == NULL && tls, "a thread-local one refused");
  resolved = 0;
  ok(lookup(l, "ifunc", &tls) == &ifunc_target && !tls,
     "an IFUNC gives what its resolver returns");
  ok(resolved == 1 && seen_hwcap == getauxval(AT_HWCAP),
     "called once, given the hardware's capabilities");
  ok(lookup(l, "plai", NULL) == NULL && lookup(l, "plainer", NULL) == NULL,
     "no name but the whole name");
}

static void
test_made_up_edges(void)
{
  /* One chain: every name is compared. */
  make(&fake, 0x10000, true, false, 1);
  const struct link_map *l = &fake.map;
  ok(lookup(l, "hidden_first", NULL) == (void *)0x10800,
     "without version table the first definition wins");
  ok(lookup(l, "only_hidden", NULL) == (void *)0x10a00, "versions or not");
  ok(lookup(l, "plai", NULL) == NULL && lookup(l, "plainer", NULL) == NULL &&
         lookup(l, "", NULL) == NULL,
     "in one chain, no name but the whole name");

  make(&fake, 0x10000, true, true, 3);
  fake.dyn[2] = (ElfW(Dyn)){ DT_NULL, { 0 } };
  ok(lookup(l, "plain", NULL) == NULL, "no hash table: nothing found");
  make(&fake, 0x10000, true, true, 3);
  fake.dyn[0] = (ElfW(Dyn)){ DT_NULL, { 0 } };
  ok(lookup(l, "plain", NULL) == NULL, "no symbol table: nothing found");
  bool tls = true;
  struct link_map none = { .l_addr = 0, .l_name = "", .l_ld = NULL };
  ok(lookup(&none, "plain", &tls) == NULL && !tls,
     "no dynamic section: nothing found");
}

int
main(void)
{
  find_objects();
  if (libm_map == NULL || libc_map == NULL)
    return done_testing();
  test_dlsym();
  test_libm();
  test_libc_and_program();
  test_vdso();
  test_made_up(true);
  test_made_up(false);
  test_made_up_edges();
  return done_testing();
}
