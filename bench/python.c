/*
 * The Python row: what Python frames add to an allocation made from 20
 * Python frames deep (target: at most 1 us).  A Python program calls the
 * simulated runtime's cudaMalloc and cudaFree through ctypes; each child
 * prints the best of 7 blocks of pairs, in ns per pair, and the figure is
 * the median over processes of python_frames=1 minus python_frames=0, both
 * with the interposer and the same native stack_depth, so only the Python
 * frames' walk, naming and splice are left (frees capture no stack).
 *
 * Every CPython the tests use is run when present: Debian's python3.11 and
 * pyenv's 3.11, 3.12 and 3.13 ($PYENV_ROOT, else ~/.pyenv).  One that is
 * absent is left out of the table with a line, never counted as a broken
 * harness.  The script is carried here, run with -c, so that the harness
 * needs no path to the source tree.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmgbench.h"

#define PY_DEPTH 20
#define TARGET_NS 1000.0
#define MAX_RUNS 9

static const char script[] =
    "import ctypes, os, sys, time\n"
    "rt = ctypes.CDLL('libcudart.so.13')\n"
    "rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), "
    "ctypes.c_size_t]\n"
    "rt.cudaFree.argtypes = [ctypes.c_void_p]\n"
    "malloc, free = rt.cudaMalloc, rt.cudaFree\n"
    "def pairs(n):\n"
    "    p = ctypes.c_void_p()\n"
    "    ref = ctypes.byref(p)\n"
    "    t0 = time.perf_counter_ns()\n"
    "    for _ in range(n):\n"
    "        assert malloc(ref, 4096) == 0\n"
    "        free(p)\n"
    "    return (time.perf_counter_ns() - t0) / n\n"
    "def at(depth, n):\n"
    "    if depth > 1:\n"
    "        return at(depth - 1, n)\n"
    "    return min(pairs(n) for _ in range(7))\n"
    "print('ns %.1f' % at(int(sys.argv[1]), int(sys.argv[2])), flush=True)\n"
    /* As the C children do: no report at exit, so no line on stderr. */
    "os._exit(0)\n";

struct interpreter {
  const char *name;
  char path[512];
};

static struct interpreter found[4];
static int n_found;
static const char *const modes[] = { "bare", "off", "on" };

static void
find_interpreters(void)
{
  static const char *const pyenv[] = { "3.11.7", "3.12.1", "3.13.0" };
  const char *root = getenv("PYENV_ROOT"), *home = getenv("HOME");
  char dir[400];
  if (root != NULL)
    snprintf(dir, sizeof(dir), "%s/versions", root);
  else
    snprintf(dir, sizeof(dir), "%s/.pyenv/versions", home ? home : "/root");
  found[0].name = "debian-3.11";
  snprintf(found[0].path, sizeof(found[0].path), "/usr/bin/python3.11");
  for (int i = 0; i < 3; i++) {
    found[i + 1].name = pyenv[i];
    snprintf(found[i + 1].path, sizeof(found[i + 1].path), "%s/%s/bin/python3",
             dir, pyenv[i]);
  }
  for (int i = 0; i < 4; i++)
    if (access(found[i].path, X_OK) == 0)
      found[n_found++] = found[i];
    else
      fprintf(stderr, "  python %s: %s absent, skipped\n", found[i].name,
              found[i].path);
}

/* One child: "bare" without the interposer, "off" and "on" with it and
 * python_frames=0 or 1.  NAN when it failed. */
static double
run_one(const struct interpreter *py, const char *mode, long pairs,
        const char *lib, const char *sim, const char *tmpdir)
{
  char depth[16], n[24], opts[512];
  int fds[2];
  snprintf(depth, sizeof(depth), "%d", PY_DEPTH);
  snprintf(n, sizeof(n), "%ld", pairs);
  snprintf(opts, sizeof(opts),
           "stack_depth=32,python_frames=%d,"
           "report=%s/python.%%p.json",
           strcmp(mode, "on") == 0, tmpdir);
  if (pipe(fds) != 0)
    return NAN;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    if (strcmp(mode, "bare") != 0)
      setenv("LD_PRELOAD", lib, 1);
    setenv("CUMEMGUARD_OPTIONS", opts, 1);
    setenv("CMG_SIM_DEVICES", "16G", 1);
    setenv("LD_LIBRARY_PATH", sim, 1);
    execl(py->path, py->path, "-c", script, depth, n, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  double v = NAN;
  FILE *in = fdopen(fds[0], "r");
  char line[128];
  while (in != NULL && fgets(line, sizeof(line), in) != NULL)
    if (sscanf(line, "ns %lf", &v) != 1)
      v = NAN;
  if (in != NULL)
    fclose(in);
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? v : NAN;
}

/* The modes alternate within each round, so that a busy neighbour slows
 * them alike. */
void
cmgb_run_python(const char *lib, const char *sim, const char *tmpdir)
{
  bool smoke = strcmp(cmgb_plan->mode, "smoke") == 0;
  int runs = smoke ? 1 : 5;
  long pairs = smoke ? 500 : 20000;
  if (sim == NULL)
    return;
  find_interpreters();
  for (int i = 0; i < n_found; i++) {
    double v[3][MAX_RUNS];
    uint64_t t0 = cmgb_now_ns();
    fprintf(stderr, "  python %-17s", found[i].name);
    fflush(stderr);
    for (int r = 0; r < runs; r++)
      for (int m = 0; m < 3; m++)
        v[m][r] = run_one(&found[i], modes[m], pairs, lib, sim, tmpdir);
    char key[112];
    double med[3];
    for (int m = 0; m < 3; m++) {
      med[m] = cmgb_median(v[m], (size_t)runs);
      snprintf(key, sizeof(key), "python.%s.%s_ns", found[i].name, modes[m]);
      cmgb_store(key, med[m]);
    }
    snprintf(key, sizeof(key), "python.%s.added_ns", found[i].name);
    cmgb_store(key, med[2] - med[1]);
    bool good = !isnan(med[0] + med[1] + med[2]);
    fprintf(stderr, "%7.2f s%s\n", (double)(cmgb_now_ns() - t0) / 1e9,
            good ? "" : "  FAILED");
    if (!good)
      cmgb_broken = 1;
  }
}

void
cmgb_print_python(void)
{
  printf("\nPython frames: cudaMalloc + cudaFree through ctypes from %d "
         "Python frames deep,\nns per pair, median of processes; added = "
         "python_frames=1 minus python_frames=0\n",
         PY_DEPTH);
  printf("%-14s %10s %10s %10s %10s  %s\n", "interpreter", "without",
         "frames off", "frames on", "added", "target");
  for (int i = 0; i < n_found; i++) {
    const char *k = found[i].name;
    double added = cmgb_get("python.%s.added_ns", k);
    printf("%-14s %10.0f %10.0f %10.0f %+10.0f  <= %.0f ns %s\n", k,
           cmgb_get("python.%s.bare_ns", k), cmgb_get("python.%s.off_ns", k),
           cmgb_get("python.%s.on_ns", k), added, TARGET_NS,
           isnan(added)         ? "n/a"
           : added <= TARGET_NS ? "PASS"
                                : "MISS");
  }
  if (n_found == 0)
    printf("(no CPython 3.11 to 3.13 found: no figures)\n");
}

static void
number(FILE *f, double v)
{
  if (isnan(v))
    fputs("null", f);
  else
    fprintf(f, "%.1f", v);
}

void
cmgb_python_json(FILE *f)
{
  fprintf(f,
          ",\n  \"python\": {\"python_frames\": %d, \"target_added_ns\": "
          "%.0f, \"rows\": [",
          PY_DEPTH, TARGET_NS);
  for (int i = 0; i < n_found; i++) {
    const char *k = found[i].name;
    fprintf(f, "%s\n    {\"interpreter\": \"%s\"", i ? "," : "", k);
    for (int m = 0; m < 3; m++) {
      fprintf(f, ", \"%s\": ", modes[m]);
      number(f, cmgb_get("python.%s.%s_ns", k, modes[m]));
    }
    fputs(", \"added\": ", f);
    number(f, cmgb_get("python.%s.added_ns", k));
    fputs("}", f);
  }
  fputs("\n  ]}", f);
}
