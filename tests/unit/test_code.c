/*
 * Unit tests of code.c, whose code a frame is: the user's, a library's or
 * the Python interpreter's.  Each stack is read from the user's own line
 * first, so a library's file taken for the user's would put a package's
 * frame at the head of a group, and the user's file taken for a library's
 * would hide the line to fix.  The built-in rules (site-packages,
 * dist-packages and jaxlib folders; the standard library; the C and C++
 * runtimes, CUDA and the frameworks by module name; the interpreter), a
 * name that only looks like one of them, a Python file named like a
 * library; the rules of --user and --library tried first, in order; and
 * the short path of a Python file.
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "reader/model/code.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const code_names[] = {
  [CMG__CODE_USER] = "the user's",
  [CMG__CODE_LIBRARY] = "a library's",
  [CMG__CODE_INTERP] = "the interpreter's",
};

struct code_case {
  const char *path;
  bool python;
  enum cmg__code want;
};

static void
check_cases(const char *what, const struct code_case *cases, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    enum cmg__code got = cmg__code_of(cases[i].path, cases[i].python);

    is_int(got, cases[i].want, "%s%s '%s' is %s", what,
           cases[i].python ? "Python file" : "module",
           cases[i].path ? cases[i].path : "(none)", code_names[cases[i].want]);
  }
}

#define U CMG__CODE_USER
#define L CMG__CODE_LIBRARY
#define I CMG__CODE_INTERP

static void
test_builtin(void)
{
  static const struct code_case cases[] = {
    /* Nothing known is not said to be a library's. */
    { NULL, false, U },
    { NULL, true, U },
    /* Python files. */
    { "/home/u/proj/train.py", true, U },
    { "model.py", true, U },
    { "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", true,
      L },
    { "/usr/lib/python3/dist-packages/numpy/core/numeric.py", true, L },
    { "/usr/lib/python3.12/json/decoder.py", true, L },
    { "/usr/local/lib/python3.11/threading.py", true, L },
    { "/usr/lib/python3.13t/threading.py", true, L },
    /* A folder only named like the standard library's is the user's. */
    { "/home/u/lib/python3_tools/train.py", true, U },
    { "/home/u/lib/python3x/train.py", true, U },
    { "/home/u/lib/python3./train.py", true, U },
    { "/home/u/lib/python3_tools/lib/python3.11/json/decoder.py", true, L },
    { "<frozen importlib._bootstrap>", true, L },
    { "<string>", true, L },
    /* A library's module name is no rule for a Python file. */
    { "/home/u/proj/libtorch.py", true, U },
    /* Native modules. */
    { "/home/u/proj/app", false, U },
    { "/opt/app/lib/libmodel.so", false, U },
    { "/lib/x86_64-linux-gnu/libc.so.6", false, L },
    { "/lib/x86_64-linux-gnu/libc-2.31.so", false, L },
    { "/lib64/ld-linux-x86-64.so.2", false, L },
    { "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", false, L },
    { "/usr/lib/x86_64-linux-gnu/libcuda.so.1", false, L },
    { "/usr/local/cuda/lib64/libcudart.so.12", false, L },
    { "/usr/local/cuda/lib64/libcublasLt.so.12", false, L },
    { "/opt/conda/lib/libtorch_cuda.so", false, L },
    { "/opt/conda/lib/libc10_cuda.so", false, L },
    { "/usr/lib/libtensorflow_framework.so.2", false, L },
    { "/opt/venv/lib/python3.12/site-packages/mypkg/_ext.so", false, L },
    { "/usr/lib/python3.12/lib-dynload/_json.cpython-312-x86_64-linux-gnu.so",
      false, L },
    { "/srv/jaxlib/xla_extension.so", false, L },
    { "/usr/bin/python3.12", false, I },
    { "/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0", false, I },
    /* Names that only begin like a library's. */
    { "/home/u/libcuda_extras.so", false, U },
    { "/home/u/libcmath.so", false, U },
    { "/home/u/pythonic", false, U },
    /* A module named like one, in the user's folder: the glob is on the
     * name, the folder is no rule. */
    { "/home/u/libcudart_shim.so", false, L },
    /* A module with no folder. */
    { "libnccl.so.2", false, L },
    { "<anonymous>", false, U },
  };

  check_cases("", cases, N(cases));
}

static void
test_rules(void)
{
  static const struct code_case with_rules[] = {
    /* --user: a package of the user's own, installed in site-packages. */
    { "/opt/venv/lib/python3.12/site-packages/mypkg/model.py", true, U },
    { "/opt/venv/lib/python3.12/site-packages/mypkg/_ext.so", false, U },
    /* Other packages stay a library's. */
    { "/opt/venv/lib/python3.12/site-packages/torch/functional.py", true, L },
    /* --library: the user's vendored code; '*' goes across '/'. */
    { "/home/u/proj/vendor/a/b/c.py", true, L },
    { "/home/u/proj/vendor/libfoo.so", false, L },
    /* The first rule given wins: vendor/mine is the user's again. */
    { "/home/u/proj/vendor/mine/x.py", true, U },
    /* Outside every rule: built in. */
    { "/home/u/proj/train.py", true, U },
    { "/lib/x86_64-linux-gnu/libc.so.6", false, L },
    { "/usr/bin/python3.12", false, I },
    /* A rule names a path: nothing known is still the user's. */
    { NULL, false, U },
  };
  static const struct code_case after_end[] = {
    { "/opt/venv/lib/python3.12/site-packages/mypkg/model.py", true, L },
    { "/home/u/proj/vendor/a/b/c.py", true, U },
  };

  is_int(cmg__code_rule("*/vendor/mine/*", true), 0, "a --user rule");
  is_int(cmg__code_rule("*/site-packages/mypkg/*", true), 0,
         "another --user rule");
  is_int(cmg__code_rule("*vendor*", false), 0, "a --library rule");
  /* The --library rule matches vendor/mine too, but comes later. */
  check_cases("with rules: ", with_rules, N(with_rules));
  /* A rule matching nothing that follows changes nothing. */
  is_int(cmg__code_rule("/nowhere/*", false), 0, "a rule matching nothing");
  is_int(cmg__code_of("/home/u/proj/train.py", true), U,
         "and the user's file is still the user's");
  cmg__code_end();
  check_cases("rules ended: ", after_end, N(after_end));
  is_int(cmg__code_rule("*/train.py", false), 0, "a rule after the end");
  is_int(cmg__code_of("/home/u/proj/train.py", true), L,
         "is tried as the first rule was");
  cmg__code_end();
}

static void
test_short_path(void)
{
  static const struct {
    const char *file, *want;
  } cases[] = {
    { "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py",
      "torch/nn/modules/linear.py" },
    { "/usr/lib/python3/dist-packages/numpy/core/numeric.py",
      "numpy/core/numeric.py" },
    /* The package's folder comes before the standard library's. */
    { "/usr/lib/python3.12/site-packages/six.py", "six.py" },
    { "/usr/lib/python3.12/json/decoder.py", "json/decoder.py" },
    { "/usr/lib/python3.12/threading.py", "threading.py" },
    { "/home/u/proj/model.py", "model.py" },
    { "/home/u/lib/python3_tools/train.py", "train.py" },
    { "/opt/lib/python3_tools/lib/python3.11/json/decoder.py",
      "json/decoder.py" },
    { "model.py", "model.py" },
    { "<frozen importlib._bootstrap>", "<frozen importlib._bootstrap>" },
  };

  for (size_t i = 0; i < N(cases); i++)
    is_str(cmg__code_short_path(cases[i].file), cases[i].want,
           "'%s' is shown as '%s'", cases[i].file, cases[i].want);
}

int
main(void)
{
  test_builtin();
  test_rules();
  test_short_path();
  return done_testing();
}
