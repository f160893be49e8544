/*
 * What the dynamic linker gives without us: libc's dlsym, and a symbol's
 * definition in one loaded object, read from the object's own dynamic
 * symbol table.
 *
 * The library exports a dlsym of its own (preload/hooks/resolvers.c), and
 * a plain call to dlsym from inside the library binds to it; libc's is
 * found once through dlvsym, bound by version, whatever version the
 * program's own references were bound to.
 *
 * The dlsym override answers RTLD_NEXT on its caller's behalf, object by
 * object.  glibc offers no lookup confined to one loaded object except
 * dlsym on a dlopen handle, and a dlopen there is unsafe: a sanitizer
 * runtime asks dlsym(RTLD_NEXT) for its real functions while it starts,
 * when its dlopen interceptor does not work yet, and dlopen runs the
 * constructors of objects (ours among them) that have not run yet.  So the
 * table is read here, with glibc's rules for dlsym: the default version of
 * a versioned name, weak as good as global, an IFUNC resolved by calling it.
 *
 * Nothing here calls libc's string functions: while a sanitizer starts,
 * they reach its interceptors, which have no real function to call yet.
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/auxv.h>

#include "core/base.h"
#include "runtime/linker/dynlink.h"

typedef void *(*dlsym_fn)(void *, const char *);
static _Atomic(dlsym_fn) libc_dlsym;

CMG__NO_ASAN static dlsym_fn
find_libc_dlsym(void)
{
  dlsym_fn f = atomic_load_explicit(&libc_dlsym, memory_order_acquire);
  if (cmg__likely(f != NULL))
    return f;
  static const char *const versions[] = { "GLIBC_2.34", "GLIBC_2.2.5",
                                          "GLIBC_2.17" };
  for (size_t i = 0; f == NULL && i < sizeof(versions) / sizeof(*versions); i++)
    f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
  if (f != NULL)
    atomic_store_explicit(&libc_dlsym, f, memory_order_release);
  return f;
}

CMG__NO_ASAN void *
cmg__dynlink_dlsym(void *handle, const char *name)
{
  dlsym_fn f = find_libc_dlsym();
  return f ? f(handle, name) : NULL;
}

struct dynamic {
  ElfW(Addr) base;
  const ElfW(Sym) * symtab;
  const char *strtab;
  const Elf32_Word *gnu_hash;
  const Elf32_Word *hash;
  const ElfW(Half) * versym;
};

/* glibc adds the load address to the dynamic section's pointers in place,
 * except where that section is read-only (the vDSO's). */
CMG__NO_ASAN static const void *
dyn_ptr(const struct dynamic *d, ElfW(Addr) p)
{
  return (const void *)(p < d->base ? d->base + p : p);
}

CMG__NO_ASAN static bool
same(const char *a, const char *b)
{
  while (*a != '\0' && *a == *b)
    a++, b++;
  return *a == *b;
}

CMG__NO_ASAN static bool
read_dynamic(const struct link_map *l, struct dynamic *d)
{
  *d = (struct dynamic){ .base = l->l_addr };
  for (const ElfW(Dyn) *e = l->l_ld; e != NULL && e->d_tag != DT_NULL; e++) {
    switch (e->d_tag) {
    case DT_SYMTAB:
      d->symtab = dyn_ptr(d, e->d_un.d_ptr);
      break;
    case DT_STRTAB:
      d->strtab = dyn_ptr(d, e->d_un.d_ptr);
      break;
    case DT_GNU_HASH:
      d->gnu_hash = dyn_ptr(d, e->d_un.d_ptr);
      break;
    case DT_HASH:
      d->hash = dyn_ptr(d, e->d_un.d_ptr);
      break;
    case DT_VERSYM:
      d->versym = dyn_ptr(d, e->d_un.d_ptr);
      break;
    }
  }
  return d->symtab && d->strtab && (d->gnu_hash || d->hash);
}

enum verdict { SKIP, TAKE, VERSIONED };

#define ALLOWED_TYPES                                                          \
  ((1u << STT_NOTYPE) | (1u << STT_OBJECT) | (1u << STT_FUNC) |                \
   (1u << STT_COMMON) | (1u << STT_TLS) | (1u << STT_GNU_IFUNC))

/* glibc's check_match for an unversioned lookup from dlsym: an unversioned
 * definition wins at once; of versioned ones only a default (not hidden)
 * version counts. */
CMG__NO_ASAN static enum verdict
judge(const struct dynamic *d, Elf32_Word i, const char *name)
{
  const ElfW(Sym) *s = &d->symtab[i];
  unsigned type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);
  if (s->st_shndx == SHN_UNDEF || (s->st_value == 0 && type != STT_TLS))
    return SKIP;
  if (!((1u << type) & ALLOWED_TYPES))
    return SKIP;
  if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE)
    return SKIP;
  if (!same(d->strtab + s->st_name, name))
    return SKIP;
  if (d->versym == NULL || (d->versym[i] & 0x7fff) < 2)
    return TAKE;
  return d->versym[i] & 0x8000 ? SKIP : VERSIONED;
}

CMG__NO_ASAN static uint32_t
gnu_hash(const char *name)
{
  uint32_t h = 5381;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++)
    h = h * 33 + *c;
  return h;
}

CMG__NO_ASAN static uint32_t
sysv_hash(const char *name)
{
  uint32_t h = 0;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
    h = (h << 4) + *c;
    h ^= (h >> 24) & 0xf0;
  }
  return h & 0x0fffffff;
}

/* Keeps the first unversioned match, else the one default version. */
CMG__NO_ASAN static bool
consider(const struct dynamic *d, Elf32_Word i, const char *name,
         const ElfW(Sym) * *found, const ElfW(Sym) * *versioned)
{
  enum verdict v = judge(d, i, name);
  if (v == TAKE)
    *found = &d->symtab[i];
  else if (v == VERSIONED && *versioned == NULL)
    *versioned = &d->symtab[i];
  return v == TAKE;
}

CMG__NO_ASAN static const ElfW(Sym) *
    find(const struct dynamic *d, const char *name)
{
  const ElfW(Sym) *found = NULL, *versioned = NULL;
  if (d->gnu_hash) {
    const Elf32_Word *g = d->gnu_hash;
    Elf32_Word nbuckets = g[0], symoffset = g[1], bloom_size = g[2];
    const Elf32_Word *buckets =
        (const Elf32_Word *)((const ElfW(Addr) *)(g + 4) + bloom_size);
    const Elf32_Word *chain = buckets + nbuckets;
    uint32_t h = gnu_hash(name);
    Elf32_Word i = nbuckets ? buckets[h % nbuckets] : 0;
    for (; i >= symoffset && i != 0; i++) {
      Elf32_Word c = chain[i - symoffset];
      if ((c | 1) == (h | 1) && consider(d, i, name, &found, &versioned))
        break;
      if (c & 1)
        break;
    }
  } else {
    Elf32_Word nbucket = d->hash[0];
    const Elf32_Word *bucket = d->hash + 2, *chain = bucket + nbucket;
    Elf32_Word i = nbucket ? bucket[sysv_hash(name) % nbucket] : 0;
    for (; i != STN_UNDEF; i = chain[i])
      if (consider(d, i, name, &found, &versioned))
        break;
  }
  return found ? found : versioned;
}

CMG__NO_ASAN void *
cmg__dynlink_object_symbol(const struct link_map *l, const char *name,
                           bool *tls)
{
  struct dynamic d;
  *tls = false;
  if (!read_dynamic(l, &d))
    return NULL;
  const ElfW(Sym) *s = find(&d, name);
  if (s == NULL)
    return NULL;
  if (ELF64_ST_TYPE(s->st_info) == STT_TLS) {
    *tls = true; /* the address differs per thread: the caller asks glibc */
    return NULL;
  }
  void *p = (void *)(l->l_addr + s->st_value);
  if (ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC)
    p = ((void *(*)(unsigned long))p)(getauxval(AT_HWCAP));
  return p;
}
