/*
 * What a return address is, for a report: the loaded object holding it, its
 * build-id (so addr2line and pprof can name it later, offline), the offset,
 * and the nearest dynamic symbol.  Report time only: dladdr, reading the
 * objects' notes and the build-id cache's lock are never on the capture
 * path (stacks.c).
 */
#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/stacks/symbols.h"

#define BUILD_ID_CACHE 64

struct build_id {
  uintptr_t bias;
  uint64_t name_hash;
  bool used;
  char hex[65];
};

static pthread_mutex_t build_id_lock = PTHREAD_MUTEX_INITIALIZER;
static struct build_id build_ids[BUILD_ID_CACHE];
static unsigned build_id_next;

struct note_search {
  uintptr_t bias;
  const char *name;
  char *hex;
};

static void
to_hex(const unsigned char *p, size_t n, char *hex)
{
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    hex[2 * i] = digits[p[i] >> 4];
    hex[2 * i + 1] = digits[p[i] & 15];
  }
  hex[2 * n] = '\0';
}

/* A PT_NOTE segment is read only where a PT_LOAD maps it from the file. */
static bool
is_mapped(const struct dl_phdr_info *info, uintptr_t start, size_t len)
{
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && start >= lo &&
        start + len <= lo + ph->p_filesz)
      return true;
  }
  return false;
}

/* Reads the NT_GNU_BUILD_ID note from the module's mapped PT_NOTE segments;
 * notes are padded to the segment's alignment, 4 or 8. */
static int
find_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
  struct note_search *s = arg;
  if (info->dlpi_addr != s->bias ||
      strcmp(info->dlpi_name ? info->dlpi_name : "", s->name) != 0)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t p = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type != PT_NOTE || !is_mapped(info, p, ph->p_filesz))
      continue;
    size_t align = ph->p_align == 8 ? 8 : 4;
    uintptr_t end = p + ph->p_filesz;
    while (end - p >= sizeof(ElfW(Nhdr))) {
      const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
      size_t name = sizeof(*nh);
      size_t desc = name + ((nh->n_namesz + align - 1) & ~(align - 1));
      size_t next = desc + ((nh->n_descsz + align - 1) & ~(align - 1));
      if (next > end - p)
        break;
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
          memcmp((const char *)p + name, "GNU", 4) == 0 && nh->n_descsz > 0 &&
          nh->n_descsz <= 32) {
        to_hex((const unsigned char *)p + desc, nh->n_descsz, s->hex);
        return 1;
      }
      p += next;
    }
  }
  return 1;
}

static uint64_t
hash_name(const char *s)
{
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

/* The cache is keyed by load bias and name: after a dlclose another object
 * may be loaded at the same place. */
static void
build_id_of(const struct link_map *lm, char *hex)
{
  uint64_t nh = hash_name(lm->l_name);
  pthread_mutex_lock(&build_id_lock);
  for (int i = 0; i < BUILD_ID_CACHE; i++) {
    struct build_id *b = &build_ids[i];
    if (b->used && b->bias == lm->l_addr && b->name_hash == nh) {
      memcpy(hex, b->hex, sizeof(b->hex));
      pthread_mutex_unlock(&build_id_lock);
      return;
    }
  }
  struct build_id *b = &build_ids[build_id_next++ % BUILD_ID_CACHE];
  struct note_search s = { .bias = lm->l_addr,
                           .name = lm->l_name,
                           .hex = b->hex };
  b->hex[0] = '\0';
  dl_iterate_phdr(find_build_id, &s);
  b->bias = lm->l_addr;
  b->name_hash = nh;
  b->used = true;
  memcpy(hex, b->hex, sizeof(b->hex));
  pthread_mutex_unlock(&build_id_lock);
}

static void
copy(char *dst, size_t len, const char *src)
{
  size_t n = strlen(src);
  if (n >= len)
    n = len - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* module_base is the load bias (l_addr), not the lowest mapped address, so
 * that offset is the address in the ELF file's own terms, what addr2line and
 * llvm-symbolizer take; the two differ only for non-PIE programs. */
int
cmg__symbolize(uintptr_t ip, struct cmg__symbol *out)
{
  memset(out, 0, sizeof(*out));
  Dl_info info;
  struct link_map *lm = NULL;
  if (ip < 2 ||
      dladdr1((void *)(ip - 1), &info, (void **)&lm, RTLD_DL_LINKMAP) == 0 ||
      lm == NULL)
    return -ENOENT;

  /* For the main program dladdr gives argv[0], which may be relative or a
   * bare name. */
  ssize_t n = -1;
  if (lm->l_name[0] == '\0')
    n = readlink("/proc/self/exe", out->module, sizeof(out->module) - 1);
  if (n > 0)
    out->module[n] = '\0';
  else
    copy(out->module, sizeof(out->module),
         lm->l_name[0]    ? lm->l_name
         : info.dli_fname ? info.dli_fname
                          : "");

  out->module_base = lm->l_addr;
  out->offset = ip - lm->l_addr;
  if (info.dli_sname != NULL) {
    copy(out->function, sizeof(out->function), info.dli_sname);
    out->function_offset = ip - (uintptr_t)info.dli_saddr;
  }
  build_id_of(lm, out->build_id);
  return 0;
}

/* A thread of the parent may have held the cache's lock at fork, and it
 * does not exist in the child. */
void
cmg__symbols_after_fork(void)
{
  pthread_mutex_init(&build_id_lock, NULL);
}
