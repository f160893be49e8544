/*
 * The framework-shaped row: an allocation as PyTorch makes one from Python,
 * under PY_DEPTH Python frames and the 50 native frames of libcmgbchain.so
 * (chain.c, half of them built without frame pointers), cudaMalloc(4096)
 * and cudaFree of the simulated runtime in a loop at the bottom.  A Python
 * driver, carried here and run with -c, nests PY_DEPTH / 3 modules of
 * three frames each (a forward of its own and two shared wrappers) and
 * calls the chain through ctypes; the chain times itself (best of 7 blocks) and
 * counts the native frames on the stack once with backtrace(3).
 *
 * Each configuration is a process of its own (the interposer reads its
 * options once), several per configuration, the configurations
 * interleaved round by round so that a busy neighbour slows them alike;
 * each figure is the median over processes.  Subtracting configurations of
 * the same run splits the added cost: the hooks and the accounting (stacks
 * off minus bare), the native capture (python_frames=0 minus stacks off)
 * and the Python frames (the default minus python_frames=0).
 *
 * Only Debian's python3.11 is run.  Without it, or without the chain
 * library, the row is left out with a line saying why; a child that fails
 * breaks the harness.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmgbench.h"

#define PY_DEPTH (CMGB_FW_PY_FRAMES - 1)
#define PY_FRAMES CMGB_FW_PY_FRAMES
_Static_assert(PY_DEPTH % 3 == 0, "the driver's modules are three frames");
#define TARGET_NS 400.0
#define MAX_RUNS 9
#define PYTHON "/usr/bin/python3.11"

const char cmgb_framework_script[] =
    "import ctypes, os, sys\n"
    "chain = ctypes.CDLL(sys.argv[1])\n"
    "rt = ctypes.CDLL('libcudart.so.13')\n"
    "run = chain.cmgb_chain_run\n"
    "run.restype = ctypes.c_double\n"
    "run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long,\n"
    "                ctypes.POINTER(ctypes.c_int)]\n"
    /* What a framework's native code calls: the runtime's functions as the
     * dynamic linker gives them, the interposer's under LD_PRELOAD. */
    "alloc = ctypes.cast(rt.cudaMalloc, ctypes.c_void_p).value\n"
    "free = ctypes.cast(rt.cudaFree, ctypes.c_void_p).value\n"
    /* Nested modules, as a model's layers call each other: each level a
     * forward of its own (a code object of its own) called through the
     * same two wrappers, as nn.Module's __call__ goes through
     * _wrapped_call_impl and _call_impl at every level. */
    "def wrapped_call(level, n):\n"
    "    return call_impl(level, n)\n"
    "def call_impl(level, n):\n"
    "    return forwards[level](level, n)\n"
    "FORWARD = ('def forward(level, n):\\n'\n"
    "           '    if level > 0:\\n'\n"
    "           '        return wrapped_call(level - 1, n)\\n'\n"
    "           '    frames = ctypes.c_int()\\n'\n"
    "           '    return run(alloc, free, n, ctypes.byref(frames)), '\n"
    "           'frames.value\\n')\n"
    "forwards = []\n"
    "for k in range(int(sys.argv[2]) // 3):\n"
    "    exec(compile(FORWARD, 'layer%d.py' % k, 'exec'))\n"
    "    forwards.append(forward)\n"
    "ns, frames = wrapped_call(len(forwards) - 1, int(sys.argv[3]))\n"
    "if ns < 0:\n"
    "    os._exit(1)\n"
    "print('ns %.1f\\nframes %d' % (ns, frames), flush=True)\n"
    /* As the C children do: no report at exit, so no line on stderr. */
    "os._exit(0)\n";

struct config {
  const char *key, *label;
  const char *options; /* NULL: no interposer */
};

static const struct config configs[] = {
  { "bare", "without the interposer", NULL },
  { "default", "the default options", "" },
  { "off", "stack_depth=0", "stack_depth=0," },
  { "d8", "stack_depth=8", "stack_depth=8," },
  { "d32", "stack_depth=32", "stack_depth=32," },
  { "d128", "stack_depth=128", "stack_depth=128," },
  { "nopy", "python_frames=0", "python_frames=0," },
};
#define NCONFIGS (sizeof(configs) / sizeof(*configs))

const char *cmgb_framework_state = "n/a (not run)";

double
cmgb_framework_once(const char *options, const char *lib, const char *sim,
                    const char *chain, const char *tmpdir, long pairs,
                    double *frames)
{
  char depth[16], n[24], opts[512], line[128];
  int fds[2];
  double ns = NAN;
  snprintf(depth, sizeof(depth), "%d", PY_DEPTH);
  snprintf(n, sizeof(n), "%ld", pairs);
  snprintf(opts, sizeof(opts), "%s%s%sreport=%s/framework.%%p.json",
           options ? options : "", options && cmgb_options ? cmgb_options : "",
           options && cmgb_options ? "," : "", tmpdir);
  *frames = NAN;
  if (pipe(fds) != 0)
    return NAN;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    if (options != NULL)
      setenv("LD_PRELOAD", lib, 1);
    else
      unsetenv("LD_PRELOAD");
    setenv("CUMEMGUARD_OPTIONS", opts, 1);
    setenv("CMG_SIM_DEVICES", "16G", 1);
    setenv("LD_LIBRARY_PATH", sim, 1);
    execl(PYTHON, PYTHON, "-c", cmgb_framework_script, chain, depth, n,
          (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  FILE *in = fdopen(fds[0], "r");
  while (in != NULL && fgets(line, sizeof(line), in) != NULL)
    if (sscanf(line, "ns %lf", &ns) != 1)
      sscanf(line, "frames %lf", frames);
  if (in != NULL)
    fclose(in);
  int st = 0;
  waitpid(pid, &st, 0);
  bool good = WIFEXITED(st) && WEXITSTATUS(st) == 0 && !isnan(ns + *frames);
  return good ? ns : NAN;
}

bool
cmgb_framework_can_run(const char *chain)
{
  static char why[600];
  const char *absent = access(PYTHON, X_OK) != 0  ? PYTHON
                       : chain == NULL            ? "libcmgbchain.so"
                       : access(chain, R_OK) != 0 ? chain
                                                  : NULL;
  if (absent == NULL)
    return true;
  snprintf(why, sizeof(why), "n/a (%s absent)", absent);
  cmgb_framework_state = why;
  fprintf(stderr, "  framework: %s absent, the row is left out\n", absent);
  return false;
}

void
cmgb_run_framework(const char *lib, const char *sim, const char *chain,
                   const char *tmpdir)
{
  bool smoke = strcmp(cmgb_plan->mode, "smoke") == 0;
  int runs = smoke ? 1 : 5;
  long pairs = smoke ? 300 : 20000;
  double v[NCONFIGS][MAX_RUNS], frames[MAX_RUNS];
  if (sim == NULL || !cmgb_framework_can_run(chain))
    return;
  fprintf(stderr, "  %-24s", "framework");
  fflush(stderr);
  uint64_t t0 = cmgb_now_ns();
  bool good = true;
  for (int r = 0; r < runs; r++)
    for (size_t c = 0; c < NCONFIGS; c++) {
      double f;
      v[c][r] = cmgb_framework_once(configs[c].options, lib, sim, chain, tmpdir,
                                    pairs, &f);
      good &= !isnan(v[c][r]);
      if (c == 0)
        frames[r] = f;
    }
  char key[112];
  for (size_t c = 0; c < NCONFIGS; c++) {
    snprintf(key, sizeof(key), "framework.%s.ns", configs[c].key);
    cmgb_store(key, cmgb_median(v[c], (size_t)runs));
    snprintf(key, sizeof(key), "framework.%s.min", configs[c].key);
    cmgb_store(key, cmgb_min(v[c], (size_t)runs));
  }
  cmgb_store("framework.frames", cmgb_median(frames, (size_t)runs));
  cmgb_store("framework.processes", runs);
  cmgb_store("framework.pairs", (double)pairs);
  cmgb_framework_end(t0, good);
}

void
cmgb_framework_end(uint64_t t0, bool good)
{
  fprintf(stderr, "%7.2f s%s\n", (double)(cmgb_now_ns() - t0) / 1e9,
          good ? "" : "  FAILED");
  cmgb_framework_state = good ? "ok" : "failed";
  if (!good)
    cmgb_broken = 1;
}

/* ns added over the bare pair in configuration `key`. */
static double
added(const char *key)
{
  return cmgb_get("framework.%s.ns", key) - cmgb_get("framework.bare.ns");
}

/* The same of the least process of each: the machine's quiet spells. */
static double
added_min(const char *key)
{
  return cmgb_get("framework.%s.min", key) - cmgb_get("framework.bare.min");
}

double
cmgb_framework_added(void)
{
  return added("default");
}

/* The split of the default's added cost, by subtraction. */
static void
profile(double *hooks, double *native, double *python)
{
  double off = added("off"), nopy = added("nopy");
  *hooks = off;
  *native = nopy - off;
  *python = added("default") - nopy;
}

void
cmgb_print_framework(void)
{
  double frames = cmgb_get("framework.frames");
  if (strcmp(cmgb_framework_state, "ok") != 0) {
    printf("\nFramework-shaped pair: %d Python frames over 50 native ones: "
           "left out,\n   %s\n",
           PY_FRAMES, cmgb_framework_state);
    return;
  }
  printf("\nFramework-shaped pair: cudaMalloc(4096) + cudaFree under %d "
         "Python frames\nand the 50 native frames of libcmgbchain.so "
         "(every other one without frame\npointers): %.0f native frames "
         "on the stack (backtrace), %s.\nns per pair, best of 7 blocks "
         "of %.0f pairs, median of %.0f processes each (the least);\n"
         "per frame: added ns over the native frames, all of which are "
         "walked.\n",
         PY_FRAMES, frames, PYTHON, cmgb_get("framework.pairs"),
         cmgb_get("framework.processes"));
  printf("   %-24s %17s %17s %10s\n", "configuration", "ns/pair", "added",
         "per frame");
  for (size_t c = 0; c < NCONFIGS; c++) {
    const char *k = configs[c].key;
    double a = added(k);
    printf("   %-24s %9.0f (%5.0f)", configs[c].label,
           cmgb_get("framework.%s.ns", k), cmgb_get("framework.%s.min", k));
    if (c == 0)
      printf("\n");
    else if (strcmp(k, "off") == 0)
      printf(" %+9.0f (%+5.0f) %10s\n", a, added_min(k), "-");
    else
      printf(" %+9.0f (%+5.0f) %10.1f\n", a, added_min(k), a / frames);
  }
  double hooks, native, python;
  profile(&hooks, &native, &python);
  printf("   where the default's added ns go, by subtraction:\n"
         "     hooks and accounting (stack_depth=0 - without)     %+7.0f\n"
         "     native capture (python_frames=0 - stack_depth=0)   %+7.0f"
         "  (%.1f per native frame)\n"
         "     Python frames (default - python_frames=0)          %+7.0f"
         "  (%.1f per Python frame)\n",
         hooks, native, native / frames, python, python / PY_FRAMES);
}

void
cmgb_framework_json(FILE *f)
{
  double hooks, native, python;
  profile(&hooks, &native, &python);
  fputs(",\n  \"framework\": {\"state\": ", f);
  cmgb_jstr(f, cmgb_framework_state);
  fprintf(f,
          ", \"interpreter\": \"%s\", \"python_frames\": %d, "
          "\"chain_frames\": 50, \"native_frames\": ",
          PYTHON, PY_FRAMES);
  cmgb_jnum(f, cmgb_get("framework.frames"));
  fprintf(f, ", \"target_added_ns\": %.0f, \"rows\": [", TARGET_NS);
  for (size_t c = 0; c < NCONFIGS; c++) {
    fprintf(f, "%s\n    {\"config\": \"%s\", \"options\": ", c ? "," : "",
            configs[c].key);
    cmgb_jstr(f, configs[c].label);
    fputs(", \"ns\": ", f);
    cmgb_jnum(f, cmgb_get("framework.%s.ns", configs[c].key));
    fputs(", \"ns_min\": ", f);
    cmgb_jnum(f, cmgb_get("framework.%s.min", configs[c].key));
    fputs(", \"added\": ", f);
    cmgb_jnum(f, c ? added(configs[c].key) : NAN);
    fputs(", \"added_min\": ", f);
    cmgb_jnum(f, c ? added_min(configs[c].key) : NAN);
    fputs(", \"added_per_native_frame\": ", f);
    bool walks = c > 0 && strcmp(configs[c].key, "off") != 0;
    cmgb_jnum(f, walks ? added(configs[c].key) / cmgb_get("framework.frames")
                       : NAN);
    fputs("}", f);
  }
  fputs("\n  ], \"profile\": {\"hooks_accounting\": ", f);
  cmgb_jnum(f, hooks);
  fputs(", \"native_capture\": ", f);
  cmgb_jnum(f, native);
  fputs(", \"python_frames\": ", f);
  cmgb_jnum(f, python);
  fputs("}}", f);
}
