/*
 * Unit tests of debuginfo.c, how the reader finds a module's separate
 * debug file without asking the network: by build-id under each absolute
 * folder of the debug path, else by the .gnu_debuglink name (or NAME.debug)
 * beside the module, in each relative folder under it and in each absolute
 * folder followed by the module's own, in the path's order.  A file there
 * of another build, the module itself, or what is no regular file is never
 * taken: its names would look right and be wrong.  And DEBUGINFOD_URLS,
 * which alone sends the reader to a server, counts only when it names one.
 * The module is a copy of tests/reader/prog/symprog; the "debug files" are
 * copies of it too (the same build-id) or of this test (another).  No
 * server is asked: DEBUGINFOD_URLS is unset before any lookup.
 */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader/model/debuginfo.h"
#include "symprog_files.h"
#include "../tap.h"

static char dir[256];
static char module[512];
static char build_id[128];
static char *tree_path; /* the module's dwfl's debuginfo_path */
static Dwfl_Module *mod;

static void
test_network(void)
{
  static const struct {
    const char *urls;
    bool want;
  } cases[] = {
    { "", false },
    { " ", false },
    { " \t ", false },
    { "http://debuginfod.example", true },
    { "  https://a https://b", true },
  };

  unsetenv("DEBUGINFOD_URLS");
  ok(!cmg__debuginfo_network(), "DEBUGINFOD_URLS unset: no server");
  for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
    setenv("DEBUGINFOD_URLS", cases[i].urls, 1);
    is_int(cmg__debuginfo_network(), cases[i].want, "DEBUGINFOD_URLS='%s': %s",
           cases[i].urls, cases[i].want ? "a server" : "none");
  }
  unsetenv("DEBUGINFOD_URLS");
}

/* dir/rel, made with its folders (the last part a file unless it ends in
 * '/'), into out. */
static const char *
at(const char *rel, char *out, size_t size)
{
  snprintf(out, size, "%s/%s", dir, rel);
  for (char *p = out + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
    *p = '\0';
    mkdir(out, 0755);
    *p = '/';
  }
  return out;
}

static bool
same_file(int fd, const char *path)
{
  struct stat a, b;

  return fd >= 0 && fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The lookup for the module, by debuglink, along path; the fd closed.
 * Whether it found the file want (NULL: nothing). */
static bool
finds(const char *file_name, const char *debuglink, const char *path,
      const char *want)
{
  char *found = NULL;
  void *userdata = NULL;
  int fd = cmg__debuginfo_find(mod, &userdata, "prog", 0, file_name, debuglink,
                               0, &found, path);
  bool good = want == NULL ? fd < 0 && found == NULL
                           : same_file(fd, want) && found != NULL &&
                                 same_file(fd, found);

  if (!good)
    printf("#   got fd %d, %s\n", fd, found ? found : "(nothing)");
  if (fd >= 0)
    close(fd);
  free(found);
  return good;
}

static void
test_by_link(void)
{
  const char *prog = symprog_path();
  char own[512], sub[512], abs_dir[512], deep[512], root[512];

  at("l/own/prog.debug", own, sizeof(own));
  at("l/own/.debug/prog.debug", sub, sizeof(sub));
  at("root/", root, sizeof(root));
  snprintf(abs_dir, sizeof(abs_dir), "root%s/l/own/prog.debug", dir);
  at(abs_dir, deep, sizeof(deep));

  ok(finds(module, "prog.debug", ":.debug", NULL),
     "no debug file anywhere: nothing");
  symprog_copy(prog, own);
  ok(finds(module, "prog.debug", ":.debug", own),
     "the debuglink's name beside the module");
  ok(finds(module, NULL, ":.debug", own),
     "without a debuglink, the module's name and .debug");
  ok(finds(module, "prog.debug", "+:.debug", own) &&
         finds(module, "prog.debug", "-:.debug", own),
     "a path's leading '+' or '-' is no folder");
  symprog_copy(prog, sub);
  ok(finds(module, "prog.debug", ":.debug", own),
     "the path's order: its own folder first");
  ok(finds(module, "prog.debug", ".debug:", sub), "or .debug under it first");
  unlink(own);
  ok(finds(module, "prog.debug", ":.debug", sub),
     "the next folder when the first has none");
  unlink(sub);
  ok(finds(module, "prog.debug", ":.debug", NULL),
     "a folder not in the path is not looked in");
  char path[600];
  snprintf(path, sizeof(path), ":.debug:%s", root);
  symprog_copy(prog, deep);
  ok(finds(module, "prog.debug", path, deep),
     "an absolute folder, followed by the module's own folder");
  unlink(deep);

  /* Never the wrong file. */
  symprog_copy("/proc/self/exe", own);
  ok(finds(module, "prog.debug", ":.debug", NULL),
     "a file of that name from another build: not taken");
  ok(finds(module, "prog.debug", "-:.debug", NULL),
     "not even with the CRC check off: the build-id decides");
  unlink(own);
  ok(finds(module, "prog", ":.debug", NULL),
     "a debuglink naming the module itself: not taken");
  mkdir(own, 0755);
  ok(finds(module, "prog.debug", ":.debug", NULL), "a folder of that name: no");
  rmdir(own);
  symprog_copy(prog, own);
  ok(finds(NULL, "prog.debug", ":.debug", NULL), "no module file: nothing");
  ok(finds("prog", "prog.debug", ":.debug", NULL),
     "a module file with no folder: nothing");
  snprintf(path, sizeof(path), "%s/l/gone/prog", dir);
  ok(finds(path, "prog.debug", ":.debug", NULL), "a module file gone: nothing");
  ok(finds(module, "prog.debug", NULL, own),
     "no path: elfutils' own, which looks beside the module");
  unlink(own);
}

static void
test_by_build_id(void)
{
  char rel[256], file[512];

  snprintf(rel, sizeof(rel), "tree/.build-id/%.2s/%s.debug", build_id,
           build_id + 2);
  at(rel, file, sizeof(file));
  symprog_copy(symprog_path(), file);
  ok(finds(module, "prog.debug", ":.debug", file),
     "by build-id under an absolute folder of the module's debug path");
  unlink(file);
  ok(finds(module, "prog.debug", ":.debug", NULL),
     "and nothing once it is gone");
}

static int
remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
  return remove(path);
}

int
main(void)
{
  const char *t = getenv("TMPDIR");
  Dwfl *dwfl = NULL;
  Dwfl_Callbacks cb = symprog_callbacks;
  char tree[512];

  unsetenv("DEBUGINFOD_URLS");
  test_network();
  if (symprog_path() == NULL) {
    printf("# tests/reader/prog/symprog is not built: no lookups\n");
    return done_testing();
  }
  snprintf(dir, sizeof(dir), "%s/cmgdbg.XXXXXX", t && *t ? t : "/tmp");
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 99;
  }
  at("l/own/prog", module, sizeof(module));
  symprog_copy(symprog_path(), module);
  snprintf(tree, sizeof(tree), "%s/tree", dir);
  tree_path = tree;
  cb.debuginfo_path = &tree_path;
  mod = symprog_open(module, &cb, &dwfl);
  if (mod == NULL || !symprog_build_id(mod, build_id, sizeof(build_id))) {
    printf("# %s: no module with a build-id\n", module);
    return 99;
  }
  test_by_link();
  test_by_build_id();
  dwfl_end(dwfl);
  nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
  return done_testing();
}
