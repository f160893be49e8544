/*
 * Unit tests of names.c, a path's base name: the part after the last '/',
 * which is how suppressions, the rules of whose code a file is and the
 * index's modules name a file.  It points into the path given (the index
 * keeps a module's name inside its path), and a path that ends in '/' or
 * has none is still answered.
 */
#include "config.h"

#include <string.h>

#include "reader/model/names.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void
test_base(void)
{
  static const struct {
    const char *path, *want;
  } cases[] = {
    { "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda.so.1" },
    { "/opt/venv/lib/python3.12/site-packages/torch/nn/linear.py",
      "linear.py" },
    { "libtorch_cuda.so", "libtorch_cuda.so" },
    { "./app", "app" },
    { "/app", "app" },
    { "a//b", "b" },
    { "/opt/lib/", "" },
    { "/", "" },
    { "", "" },
    { "[vdso]", "[vdso]" },
  };

  for (size_t i = 0; i < N(cases); i++)
    is_str(cmg__names_base(cases[i].path), cases[i].want, "'%s' is '%s'",
           cases[i].path, cases[i].want);
}

static void
test_inside(void)
{
  static const char path[] = "/home/u/proj/app";
  static const char bare[] = "app";

  ok(cmg__names_base(path) == path + 13, "the name points into the path");
  ok(cmg__names_base(bare) == bare, "a path without '/' is its own name");
}

int
main(void)
{
  test_base();
  test_inside();
  return done_testing();
}
