/*
 * elfutils' dwfl_standard_find_debuginfo asks debuginfod for any debug
 * file the machine lacks, whether or not DEBUGINFOD_URLS names a server:
 * it loads libdebuginfod, and with it libcurl, gnutls, krb5 and twenty
 * more, in every run that meets a stripped module, which was most of a
 * small report's run.  Without a server the reader does the local lookups
 * itself, as libdwfl documents them: dwfl_build_id_find_debuginfo (which
 * is local) for the build-id tree, then the .gnu_debuglink name, checked
 * by the module's build-id, or by the link's CRC where it has none.
 */
#include "config.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "reader/model/debuginfo.h"

#define DEFAULT_PATH ":.debug:/usr/lib/debug"

_Bool
cmg__debuginfo_network(void)
{
  const char *urls = getenv("DEBUGINFOD_URLS");

  return urls != NULL && urls[strspn(urls, " \t")] != '\0';
}

/* Whether the file's CRC-32 (zlib's is the one GNU's debuglink uses) is
 * crc. */
static _Bool
same_crc(int fd, GElf_Word crc)
{
  unsigned char buf[65536];
  uLong c = crc32(0L, Z_NULL, 0);
  ssize_t n;

  while ((n = pread(fd, buf, sizeof(buf), 0)) < 0 && errno == EINTR)
    ;
  for (off_t at = 0; n > 0;) {
    c = crc32(c, buf, (uInt)n);
    at += n;
    while ((n = pread(fd, buf, sizeof(buf), at)) < 0 && errno == EINTR)
      ;
  }
  return n == 0 && (GElf_Word)c == crc;
}

/* Whether fd holds the module's debug file: the same build-id where the
 * module has one, else the link's CRC when asked to check it. */
static _Bool
belongs(Dwfl_Module *mod, int fd, _Bool check, GElf_Word crc)
{
  const unsigned char *bits;
  const void *theirs;
  GElf_Addr vaddr;
  int len = dwfl_module_build_id(mod, &bits, &vaddr);

  if (len > 0) {
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    ssize_t n = e != NULL ? dwelf_elf_gnu_build_id(e, &theirs) : -1;
    _Bool same = n == len && memcmp(bits, theirs, (size_t)len) == 0;

    elf_end(e);
    return same;
  }
  return !check || crc == 0 || same_crc(fd, crc);
}

/* The first of dir/name under each element of path (empty: dir itself;
 * relative: under dir; absolute: followed by dir) that is the module's
 * debug file and not the module itself. */
static int
by_link(Dwfl_Module *mod, const struct stat *self, const char *dir,
        const char *name, GElf_Word crc, const char *path, char **found)
{
  _Bool check = *path != '-';
  int fd = -1;

  for (const char *e = path + (*path == '+' || *path == '-'); e != NULL;) {
    const char *end = strchr(e, ':');
    int len = end != NULL ? (int)(end - e) : (int)strlen(e), r;
    char *file;
    struct stat st;

    if (len == 0)
      r = asprintf(&file, "%s/%s", dir, name);
    else if (*e == '/')
      r = asprintf(&file, "%.*s%s/%s", len, e, dir, name);
    else
      r = asprintf(&file, "%s/%.*s/%s", dir, len, e, name);
    if (r < 0)
      return -1;
    fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        !(st.st_dev == self->st_dev && st.st_ino == self->st_ino) &&
        belongs(mod, fd, check, crc)) {
      *found = file;
      return fd;
    }
    free(file);
    if (fd >= 0)
      close(fd);
    e = end != NULL ? end + 1 : NULL;
  }
  return -1;
}

int
cmg__debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname,
                    Dwarf_Addr base, const char *file_name,
                    const char *debuglink, GElf_Word crc, char **found,
                    const char *path)
{
  if (cmg__debuginfo_network())
    return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
                                        debuglink, crc, found);
  int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
                                        debuglink, crc, found);
  struct stat self;
  const char *slash = file_name ? strrchr(file_name, '/') : NULL;
  char *dir, *name = NULL;

  if (fd >= 0 || slash == NULL || stat(file_name, &self) != 0)
    return fd;
  if (asprintf(&dir, "%.*s", (int)(slash - file_name), file_name) < 0)
    return -1;
  if (debuglink == NULL && asprintf(&name, "%s.debug", slash + 1) < 0)
    name = NULL;
  fd = debuglink != NULL || name != NULL
           ? by_link(mod, &self, dir, debuglink ? debuglink : name, crc,
                     path ? path : DEFAULT_PATH, found)
           : -1;
  free(name);
  free(dir);
  return fd;
}
