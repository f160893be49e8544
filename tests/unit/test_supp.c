/*
 * Unit tests of supp.c, suppressions in LeakSanitizer's format: what a
 * pattern matches (a substring, '*' for any run, '^' and '$' anchors, with
 * backtracking where TemplateMatch has none), the lines a file may hold and
 * the one-line error of each it may not, and the groups of a view the rules
 * hide: by API, by any frame's function, module path or base name, Python
 * file or base name, the first rule in file order taking a group, never a
 * graph pool's or a context's.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/model/index.h"
#include "reader/model/leak_class.h"
#include "reader/model/supp.h"
#include "reader/model/view.h"
#include "reader/tool.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char dir[256];

/* Writes len bytes of text to a file of the test's folder; its path. */
static const char *
write_file(const char *name, const char *text, size_t len)
{
  static char path[512];
  FILE *f;

  snprintf(path, sizeof(path), "%s/%s", dir, name);
  f = fopen(path, "w");
  if (f == NULL || fwrite(text, 1, len, f) != len)
    printf("# cannot write %s\n", path);
  if (f != NULL)
    fclose(f);
  return path;
}

static void
test_is_match(void)
{
  static const struct {
    const char *pattern, *text;
    bool want;
  } cases[] = {
    { "cudaMalloc", "cudaMalloc", true },
    { "Malloc", "cudaMallocManaged", true },
    { "malloc", "cudaMalloc", false },
    { "^cuda", "cudaMalloc", true },
    { "^cuda", "xcudaMalloc", false },
    { "Managed$", "cudaMallocManaged", true },
    { "Malloc$", "cudaMallocManaged", false },
    { "^cudaMalloc$", "cudaMalloc", true },
    { "^cudaMalloc$", "cudaMallocHost", false },
    { "^cudaMalloc$", "xcudaMalloc", false },
    { "cuda*Host", "cudaMallocHost", true },
    { "cuda*Host", "cudaHost", true },
    { "cuda*Host", "Hostcuda", false },
    { "^lib*.so", "libtorch_cuda.so", true },
    { "^lib*.so$", "libtorch_cuda.so.2", false },
    { "*", "anything", true },
    { "a**b", "ab", true },
    { "^*x", "yyx", true },
    /* TemplateMatch misses these; the glob backtracks and finds them. */
    { "a*b$", "ab_ab", true },
    { "^a*bc$", "abcxbc", true },
    { "^x*yz$", "xyzyz", true },
    { "a*b$", "ab_a", false },
    /* Nothing matches an empty or missing name. */
    { "x", "", false },
    { "*", "", false },
    { "x", NULL, false },
  };

  for (size_t i = 0; i < N(cases); i++)
    is_int(cmg__supp_is_match(cases[i].pattern, cases[i].text), cases[i].want,
           "'%s' %s '%s'", cases[i].pattern,
           cases[i].want ? "matches" : "does not match",
           cases[i].text ? cases[i].text : "(null)");
}

static void
test_load(void)
{
  static const char good[] = "# LeakSanitizer's format\n"
                             "\n"
                             "leak:cudaMalloc\n"
                             "   leak:libtorch_cuda.so   \n"
                             "\t# indented comment\n"
                             "leak:  ^train_step$\r\n"
                             "leak:a:b\n"
                             "leak:last line without a newline";
  static const struct {
    const char *pattern;
    unsigned line;
  } rules[] = {
    { "cudaMalloc", 3 },
    { "libtorch_cuda.so", 4 },
    { "^train_step$", 6 },
    { "a:b", 7 },
    { "last line without a newline", 8 },
    { "second_file", 2 },
  };
  struct cmg__supp s;
  char err[CMG__TOOL_ERR_MAX] = "";
  const char *path;
  char first[512];

  memset(&s, 0, sizeof(s));
  path = write_file("good.supp", good, sizeof(good) - 1);
  snprintf(first, sizeof(first), "%s", path);
  is_int(cmg__supp_load(&s, first, err, sizeof(err)), 0,
         "a file of rules, comments and blank lines loads");
  is_str(err, "", "without a word");
  path = write_file("more.supp", "\nleak:second_file\n", 18);
  is_int(cmg__supp_load(&s, path, err, sizeof(err)), 0, "a second file");
  is_int(s.n, N(rules), "the rules of both files, in order");
  for (size_t i = 0; i < N(rules) && i < s.n; i++) {
    ok(strcmp(s.rules[i].pattern, rules[i].pattern) == 0 &&
           s.rules[i].line == rules[i].line,
       "rule %zu: '%s' of line %u", i, rules[i].pattern, rules[i].line);
    if (strcmp(s.rules[i].pattern, rules[i].pattern) != 0 ||
        s.rules[i].line != rules[i].line)
      printf("#   got '%s' of line %u\n", s.rules[i].pattern, s.rules[i].line);
  }
  ok(s.n == N(rules) && strcmp(s.rules[0].file, first) == 0 &&
         strcmp(s.rules[5].file, path) == 0,
     "each rule names its file");
  ok(s.n > 0 && s.rules[0].count == 0 && s.rules[0].bytes == 0,
     "a rule loaded has hidden nothing yet");
  cmg__supp_free(&s);
  ok(s.n == 0 && s.rules == NULL, "freed, the set is empty");

  static const struct {
    const char *text;
    size_t len;        /* 0: strlen */
    const char *error; /* after "FILE:" */
  } bad[] = {
    { "cudaMalloc\n", 0, "1: expected leak:PATTERN, got 'cudaMalloc'" },
    { "# ok\n\nleak:x\nbogus line\n", 0,
      "4: expected leak:PATTERN, got 'bogus line'" },
    { "race:foo\n", 0,
      "1: unknown suppression type 'race' (only leak:PATTERN is read)" },
    { "LEAK:foo\n", 0,
      "1: unknown suppression type 'LEAK' (only leak:PATTERN is read)" },
    { "leak :foo\n", 0,
      "1: unknown suppression type 'leak ' (only leak:PATTERN is read)" },
    { "leak:\n", 0, "1: empty pattern after leak:" },
    { "leak:   \n", 0, "1: empty pattern after leak:" },
    { "leak:^\n", 0, "1: empty pattern after leak:" },
    { "leak:$\n", 0, "1: empty pattern after leak:" },
    { "leak:^$\n", 0, "1: empty pattern after leak:" },
    { "leak:a\nleak:b\0c\n", 16, "2: a NUL byte; not a suppressions file" },
  };
  for (size_t i = 0; i < N(bad); i++) {
    char want[CMG__TOOL_ERR_MAX];
    size_t len = bad[i].len != 0 ? bad[i].len : strlen(bad[i].text);

    memset(&s, 0, sizeof(s));
    err[0] = '\0';
    path = write_file("bad.supp", bad[i].text, len);
    snprintf(want, sizeof(want), "%s:%s", path, bad[i].error);
    is_int(cmg__supp_load(&s, path, err, sizeof(err)), -EINVAL, "refused: %s",
           bad[i].error);
    is_str(err, want, "with the line that says why");
    cmg__supp_free(&s);
  }

  char want[1024];
  memset(&s, 0, sizeof(s));
  snprintf(first, sizeof(first), "%s/no-such.supp", dir);
  snprintf(want, sizeof(want), "%s: cannot open: %s", first, strerror(ENOENT));
  is_int(cmg__supp_load(&s, first, err, sizeof(err)), -ENOENT,
         "a missing file is refused");
  is_str(err, want, "naming the file and the reason");
  ok(s.n == 0, "and adds no rule");
}

/* ---- cmg__supp_apply ---------------------------------------------------- */

enum { M_TORCH, M_APP, N_MODULES };
enum { F_EMPTY, F_ANON, F_TRAIN, F_PY_BUILD, F_MAIN, N_FRAMES };
enum { S_TORCH, S_PY, S_APP, N_STACKS };

static struct cmg__index_module modules[N_MODULES] = {
  [M_TORCH] = { "/opt/venv/site-packages/torch/lib/libtorch_cuda.so",
                "libtorch_cuda.so", NULL, NULL },
  [M_APP] = { "/home/u/proj/app", "app", NULL, NULL },
};
static struct cmg__index_frame frames[N_FRAMES];
static uint32_t torch_frames[] = { F_EMPTY, F_TRAIN, F_MAIN };
static uint32_t py_frames[] = { F_PY_BUILD, F_MAIN };
static uint32_t app_frames[] = { F_ANON, F_MAIN };
static struct cmg__index_stack stacks[N_STACKS] = {
  /* The innermost frame is hidden by default; rules see it all the same. */
  [S_TORCH] = { false, 3, torch_frames, 1, 3 },
  [S_PY] = { false, 2, py_frames, 0, 2 },
  [S_APP] = { false, 2, app_frames, 0, 2 },
};

static void
make_index(struct cmg__index *ix)
{
  memset(ix, 0, sizeof(*ix));
  for (size_t f = 0; f < N_FRAMES; f++)
    frames[f].module = CMG__TOOL_NONE;
  frames[F_EMPTY].function = "at::native::empty_cuda";
  frames[F_EMPTY].module = M_TORCH;
  frames[F_ANON].module = M_APP; /* an address of app, no name */
  frames[F_TRAIN].function = "train_step(int)";
  frames[F_TRAIN].module = M_APP;
  frames[F_PY_BUILD].function = "Model.build";
  frames[F_PY_BUILD].python = true;
  frames[F_PY_BUILD].file = "/home/u/proj/model.py";
  frames[F_MAIN].function = "main";
  frames[F_MAIN].module = M_APP;
  ix->modules = modules;
  ix->n_modules = N_MODULES;
  ix->frames = frames;
  ix->n_frames = N_FRAMES;
  ix->stacks = stacks;
  ix->n_stacks = N_STACKS;
}

/* The view's groups: API, kind, stack, bytes. */
static const struct {
  const char *api, *kind;
  uint32_t stack;
  uint64_t bytes, count;
} groups[] = {
  { "cudaMalloc", "device", S_TORCH, 1000, 1 },               /* 0 */
  { "cuMemAllocManaged", "device", CMG__TOOL_NONE, 2000, 2 }, /* 1 */
  { "cudaMallocHost", "host", S_APP, 40, 4 },                 /* 2 */
  { "cudaMalloc", "device", S_PY, 300, 3 },                   /* 3 */
  { "cuGraphLaunch", "graph", S_TORCH, 1 << 20, 1 },          /* 4 */
  { "cuCtxCreate", "context", S_APP, 1 << 21, 1 },            /* 5 */
  { "cudaMallocAsync", "device", S_APP, 50, 5 },              /* 6 */
};

/* Which rule (an index into the file, or NONE) each group ends with. */
struct apply_case {
  const char *what;
  const char *rules; /* the suppressions file */
  uint32_t want[N(groups)];
};

#define NO CMG__TOOL_NONE

static const struct apply_case apply_cases[] = {
  { "no rule hides nothing", "# nothing\n", { NO, NO, NO, NO, NO, NO, NO } },
  { "the API, on a group without a stack",
    "leak:cuMemAllocManaged\n",
    { NO, 0, NO, NO, NO, NO, NO } },
  { "a frame's function, hidden by default or not",
    "leak:at::native::empty_cuda\n",
    { 0, NO, NO, NO, NO, NO, NO } },
  { "a function with its parameters, anchored",
    "leak:^train_step(int)$\n",
    { 0, NO, NO, NO, NO, NO, NO } },
  { "a module's base name", "leak:^app$\n", { 0, NO, 0, 0, NO, NO, 0 } },
  { "a module's path",
    "leak:^/opt/venv/*/libtorch_cuda.so$\n",
    { 0, NO, NO, NO, NO, NO, NO } },
  { "a Python file's base name",
    "leak:^model.py$\n",
    { NO, NO, NO, 0, NO, NO, NO } },
  { "a Python file's path",
    "leak:^/home/u/proj/model.py$\n",
    { NO, NO, NO, 0, NO, NO, NO } },
  { "a Python frame's function",
    "leak:Model.build\n",
    { NO, NO, NO, 0, NO, NO, NO } },
  { "pinned host memory too, but never graph pools or contexts",
    "leak:cu\n",
    { 0, 0, 0, 0, NO, NO, 0 } },
  { "the first rule in file order takes a group",
    "leak:main\nleak:cu\n",
    { 0, 1, 0, 0, NO, NO, 0 } },
  { "a later rule takes what the earlier left",
    "leak:model.py\nleak:^cuda\nleak:never\n",
    { 1, NO, 1, 0, NO, NO, 1 } },
};

static void
test_apply(void)
{
  struct cmg__view_leak leaks[N(groups)];
  struct cmg__index ix;
  struct cmg__view v;

  make_index(&ix);
  for (size_t c = 0; c < N(apply_cases); c++) {
    const struct apply_case *ac = &apply_cases[c];
    struct cmg__supp s;
    char err[CMG__TOOL_ERR_MAX];
    bool same = true;
    uint64_t bytes[8] = { 0 }, count[8] = { 0 };

    memset(&s, 0, sizeof(s));
    memset(&v, 0, sizeof(v));
    memset(leaks, 0, sizeof(leaks));
    for (size_t i = 0; i < N(groups); i++) {
      leaks[i].api = (char *)groups[i].api;
      leaks[i].kind = (char *)groups[i].kind;
      leaks[i].by_kind = cmg__leak_class_of_kind(groups[i].kind);
      leaks[i].stack = groups[i].stack;
      leaks[i].bytes = groups[i].bytes;
      leaks[i].count = groups[i].count;
      leaks[i].rule = CMG__TOOL_NONE;
      leaks[i].device = CMG__TOOL_NONE;
      if (ac->want[i] != NO) {
        bytes[ac->want[i]] += groups[i].bytes;
        count[ac->want[i]] += groups[i].count;
      }
    }
    v.ix = &ix;
    v.leaks = leaks;
    v.n_leaks = N(groups);
    const char *path = write_file("apply.supp", ac->rules, strlen(ac->rules));
    if (cmg__supp_load(&s, path, err, sizeof(err)) != 0)
      printf("# %s\n", err);
    is_int(cmg__supp_apply(&s, &v), 0, "%s: applied", ac->what);
    for (size_t i = 0; i < N(groups); i++)
      same = same && leaks[i].rule == ac->want[i];
    ok(same, "%s: the groups it hides", ac->what);
    if (!same) {
      printf("#   got: ");
      for (size_t i = 0; i < N(groups); i++) {
        if (leaks[i].rule == NO)
          printf(" -");
        else
          printf(" %u", leaks[i].rule);
      }
      printf("\n");
    }
    same = true;
    for (size_t r = 0; r < s.n && r < 8; r++)
      same =
          same && s.rules[r].bytes == bytes[r] && s.rules[r].count == count[r];
    ok(same, "%s: each rule counts what it hid", ac->what);
    cmg__supp_free(&s);
  }
}

int
main(void)
{
  const char *t = getenv("TMPDIR");

  snprintf(dir, sizeof(dir), "%s/cmgsupp.XXXXXX", t && *t ? t : "/tmp");
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 99;
  }
  test_is_match();
  test_load();
  test_apply();
  static const char *const files[] = { "good.supp", "more.supp", "bad.supp",
                                       "apply.supp" };
  for (size_t i = 0; i < N(files); i++) {
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
    unlink(path);
  }
  rmdir(dir);
  return done_testing();
}
