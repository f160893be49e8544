/*
 * What the tests of the reader's symbolizer share (test_symbolize,
 * test_debuginfo): tests/reader/prog/symprog, the C++ program with DWARF
 * that make check builds, found under $top_builddir; its build-id as a
 * report writes it; copies of it in a folder of the test's own; and
 * libdwfl's view of a file at address 0, as the reader opens a module.
 * Nothing here asks debuginfod: the tests unset DEBUGINFOD_URLS first.
 */
#ifndef CMG_TEST_SYMPROG_FILES_H
#define CMG_TEST_SYMPROG_FILES_H

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The program's path, or NULL when it is not built (make check builds it;
 * `make tests/reader/prog/symprog` alone too). */
static inline const char *
symprog_path(void)
{
  static char path[1024];
  const char *top = getenv("top_builddir");

  snprintf(path, sizeof(path), "%s/tests/reader/prog/symprog",
           top != NULL && *top != '\0' ? top : ".");
  return access(path, R_OK) == 0 ? path : NULL;
}

/* Copies the file from to the path to; false when it cannot. */
static inline bool
symprog_copy(const char *from, const char *to)
{
  char buf[65536];
  FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
  size_t n;
  bool good = in != NULL && out != NULL;

  while (good && (n = fread(buf, 1, sizeof(buf), in)) > 0)
    good = fwrite(buf, 1, n, out) == n;
  if (in != NULL)
    fclose(in);
  if (out != NULL && fclose(out) != 0)
    good = false;
  if (!good)
    printf("# cannot copy %s to %s\n", from, to);
  return good;
}

static const Dwfl_Callbacks symprog_callbacks = {
  .find_elf = dwfl_build_id_find_elf,
  .find_debuginfo = dwfl_build_id_find_debuginfo,
  .section_address = dwfl_offline_section_address,
};

/* The file at path as a libdwfl module at address 0, in *dwfl (to be
 * ended with dwfl_end), or NULL; cb NULL: debug files looked for by
 * build-id on this machine only. */
static inline Dwfl_Module *
symprog_open(const char *path, const Dwfl_Callbacks *cb, Dwfl **dwfl)
{
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  Dwfl_Module *mod = NULL;

  *dwfl = fd >= 0 ? dwfl_begin(cb != NULL ? cb : &symprog_callbacks) : NULL;
  if (*dwfl != NULL)
    mod = dwfl_report_elf(*dwfl, "symprog", path, fd, 0, false);
  if (mod == NULL && fd >= 0)
    close(fd);
  if (*dwfl != NULL)
    dwfl_report_end(*dwfl, NULL, NULL);
  return mod;
}

/* The build-id of mod in lowercase hex, as reports write it, into hex;
 * false when it has none. */
static inline bool
symprog_build_id(Dwfl_Module *mod, char *hex, size_t size)
{
  const unsigned char *bits;
  GElf_Addr vaddr;
  int len = mod != NULL ? dwfl_module_build_id(mod, &bits, &vaddr) : -1;

  if (len <= 0 || (size_t)len * 2 + 1 > size)
    return false;
  for (int i = 0; i < len; i++)
    snprintf(hex + 2 * i, 3, "%02x", bits[i]);
  return true;
}

#endif /* CMG_TEST_SYMPROG_FILES_H */
