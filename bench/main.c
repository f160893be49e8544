/*
 * The benchmark harness (make bench, make bench-smoke).
 *
 *   cmgbench --lib .libs/libcumemguard.so [--sim DIR] [--tool PROGRAM]
 *            [--page-load bench/page-load.js] [--chain libcmgbchain.so]
 *            [--json FILE] [--smoke]
 *   cmgbench --framework-script     (framework.c's Python driver)
 *
 * It starts itself again as child processes (work.c) with the interposer in
 * LD_PRELOAD, one per configuration, collects the "key value" lines they
 * print into results.c, and has table.c print one table and write the same
 * figures as JSON.  Each child compares the interposed path with the bare
 * one inside itself, so no ratio mixes two processes; only the fixed costs
 * of a configuration (stack depth) need a process each, because the
 * interposer reads its options once.  Memory is the exception: resident
 * memory can only be compared between two fresh processes that do the same
 * work, one through the interposer and one around it.
 *
 * Targets are printed PASS or MISS and never change the exit status, which
 * is 0 when every child ran and 1 when the harness itself broke.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmgbench.h"

static char tmpdir[] = "/tmp/cmgbench.XXXXXX";

static struct {
  const char *lib, *sim, *tool, *json, *page_load, *base, *chain;
  bool smoke;
} arg;

static const struct cmgb_plan full = {
  "full",
  11,
  "20",
  "60",
  "10",
  "1000,100000,1000000",
  { 100000, 1000000 },
  10000,
  1000000,
  10000,
  3,
  8,
  5,
  "10",
};
static const struct cmgb_plan smoke = {
  "smoke", 3, "1", "2", "1", "100,1000,10000", { 1000, 10000 }, 1000, 10000,
  100,     1, 2,   3,   "1",
};
/* ---- children --------------------------------------------------------- */

/* Runs this program as a child with the interposer preloaded and `options`
 * in CUMEMGUARD_OPTIONS; stores what it prints under prefix.  Returns 0 if
 * it ran to its end. */
static int
run_child(const char *prefix, const char *options, const char *const *args)
{
  char *argv[64];
  int argc = 0, fds[2];
  argv[argc++] = "cmgbench";
  for (; *args != NULL && argc < 60; args++)
    argv[argc++] = (char *)*args;
  argv[argc++] = "--tmp";
  argv[argc++] = tmpdir;
  argv[argc] = NULL;

  fprintf(stderr, "  %-24s", prefix);
  uint64_t t0 = cmgb_now_ns();
  fflush(stderr);
  if (pipe(fds) != 0)
    return -1;
  pid_t pid = fork();
  if (pid == 0) {
    char ld[8192];
    const char *old = getenv("LD_LIBRARY_PATH");
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    setenv("LD_PRELOAD", cmgb_lib, 1);
    setenv("CUMEMGUARD_OPTIONS", options, 1);
    setenv("CMG_SIM_DEVICES", "16G,16G", 1);
    unsetenv("CMG_SIM_TRACE");
    unsetenv("CMG_SIM_FAIL_ALLOC_AFTER");
    unsetenv("CMG_SIM_FAIL_FREE_AFTER");
    unsetenv("CMG_SIM_GETPROC_TRAMPOLINE");
    if (arg.sim != NULL) {
      snprintf(ld, sizeof(ld), "%s%s%s", arg.sim, old ? ":" : "",
               old ? old : "");
      setenv("LD_LIBRARY_PATH", ld, 1);
    }
    execv("/proc/self/exe", argv);
    _exit(127);
  }
  close(fds[1]);
  FILE *in = fdopen(fds[0], "r");
  char line[512], key[96], full_key[112];
  double v;
  bool ok = false;
  while (in != NULL && fgets(line, sizeof(line), in) != NULL) {
    if (sscanf(line, "%95s %lf", key, &v) != 2)
      continue;
    ok |= strcmp(key, "ok") == 0;
    snprintf(full_key, sizeof(full_key), "%s.%s", prefix, key);
    cmgb_store(full_key, v);
  }
  if (in != NULL)
    fclose(in);
  int st = 0;
  waitpid(pid, &st, 0);
  bool good = ok && WIFEXITED(st) && WEXITSTATUS(st) == 0;
  fprintf(stderr, "%7.2f s%s\n", (double)(cmgb_now_ns() - t0) / 1e9,
          good ? "" : "  FAILED");
  if (!good)
    cmgb_broken = 1;
  return good ? 0 : -1;
}

const char *cmgb_options;

static void
options(char *buf, size_t len, int depth)
{
  snprintf(buf, len, "limit=15GiB,stack_depth=%d,%s%sreport=%s/exit.%%p.json",
           depth, cmgb_options ? cmgb_options : "", cmgb_options ? "," : "",
           tmpdir);
}

static void
run_calls(void)
{
  char rounds[16], opts[256], prefix[64];
  snprintf(rounds, sizeof(rounds), "%d", cmgb_plan->rounds);
  for (int d = 0; d < CMGB_NDEPTHS; d++) {
    const char *args[] = { "--child", "calls",      "--rounds",
                           rounds,    "--block-ms", cmgb_plan->block_ms,
                           NULL };
    options(opts, sizeof(opts), cmgb_depths[d]);
    snprintf(prefix, sizeof(prefix), "calls.%d", cmgb_depths[d]);
    run_child(prefix, opts, args);
  }
}

/* The direct path per stack mode and depth, from frames with and without
 * frame pointers: a process each, since the interposer reads its options
 * once. */
static void
run_modes(void)
{
  char rounds[16], opts[320], prefix[64];
  snprintf(rounds, sizeof(rounds), "%d", cmgb_plan->rounds);
  for (int c = 0; c < 2; c++)
    for (int m = 0; m < CMGB_NMODES; m++)
      for (int d = 0; d < CMGB_NMODE_DEPTHS; d++) {
        const char *args[] = { "--child",    "calls",
                               "--rounds",   rounds,
                               "--block-ms", cmgb_plan->block_ms,
                               "--paths",    "direct",
                               "--frames",   cmgb_chains[c],
                               NULL };
        options(opts, sizeof(opts), cmgb_mode_depths[d]);
        size_t len = strlen(opts);
        snprintf(opts + len, sizeof(opts) - len, ",stack_mode=%s",
                 cmgb_modes[m]);
        snprintf(prefix, sizeof(prefix), "modes.%s.%s.%d", cmgb_chains[c],
                 cmgb_modes[m], cmgb_mode_depths[d]);
        run_child(prefix, opts, args);
      }
}

/* The deep-stack rows (deep.c): a process per stack_depth. */
static void
run_deep(void)
{
  char rounds[16], opts[256], prefix[64];
  snprintf(rounds, sizeof(rounds), "%d", cmgb_plan->rounds);
  for (int d = 0; d < 2; d++) {
    const char *args[] = { "--child", "deep",       "--rounds",
                           rounds,    "--block-ms", cmgb_plan->block_ms,
                           NULL };
    options(opts, sizeof(opts), cmgb_deep_depths[d]);
    snprintf(prefix, sizeof(prefix), "deep.%d", cmgb_deep_depths[d]);
    run_child(prefix, opts, args);
  }
}

/* The VMM and pool rows (vmm.c): at the default stack depth and with
 * stacks off, a process each. */
static void
run_vmm(void)
{
  char rounds[16], opts[256], prefix[64];
  snprintf(rounds, sizeof(rounds), "%d", cmgb_plan->rounds);
  for (int d = 0; d < 2; d++) {
    const char *args[] = { "--child", "vmm",        "--rounds",
                           rounds,    "--block-ms", cmgb_plan->block_ms,
                           NULL };
    options(opts, sizeof(opts), cmgb_vmm_depths[d]);
    snprintf(prefix, sizeof(prefix), "vmm.%d", cmgb_vmm_depths[d]);
    run_child(prefix, opts, args);
  }
}

/* make bench-compare: the "calls" children of the base library and of this
 * one, alternated, and which goes first alternated too. */
static void
run_compare(int alternations)
{
  char rounds[16], opts[256], prefix[64];
  const char *libs[2] = { arg.base, arg.lib }, *tags[2] = { "base", "new" };
  snprintf(rounds, sizeof(rounds), "%d", cmgb_plan->rounds);
  for (int a = 0; a < alternations; a++)
    for (int d = 0; d < CMGB_NDEPTHS; d++)
      for (int i = 0; i < 2; i++) {
        int which = (a + d + i) % 2;
        const char *args[] = { "--child", "calls",      "--rounds",
                               rounds,    "--block-ms", cmgb_plan->block_ms,
                               NULL };
        options(opts, sizeof(opts), cmgb_depths[d]);
        snprintf(prefix, sizeof(prefix), "cmp.%s.%d.%d", tags[which], a,
                 cmgb_depths[d]);
        cmgb_lib = libs[which];
        run_child(prefix, opts, args);
      }
  cmgb_lib = arg.lib;
}

/*
 * The stacks-off pair again, in short processes spread over the run: the
 * machine this was built on moves between a fast and a slow state that can
 * last for seconds, so one process shows the state it happened to meet,
 * and processes spread over a minute show both and how often each comes.
 * Each call runs the next `share` of them.
 */
static void
run_repeats(int share)
{
  static int next;
  char rounds[16], opts[256], prefix[64];
  snprintf(rounds, sizeof(rounds), "%d", cmgb_plan->repeat_rounds);
  options(opts, sizeof(opts), 0);
  for (; share > 0 && next < cmgb_plan->repeats; share--, next++) {
    const char *args[] = { "--child", "calls",      "--rounds",
                           rounds,    "--block-ms", cmgb_plan->repeat_ms,
                           NULL };
    snprintf(prefix, sizeof(prefix), "repeat.%d", next);
    run_child(prefix, opts, args);
    /* The same without the timeline, right after: the timeline's cost is
     * the difference within each such pair, which met one state of the
     * machine more often than two processes far apart. */
    char off[300];
    snprintf(off, sizeof(off), "%s,timeline=0", opts);
    snprintf(prefix, sizeof(prefix), "untimed.%d", next);
    run_child(prefix, off, args);
  }
}

static void
run_threads(void)
{
  char rounds[16], opts[256], prefix[64];
  snprintf(rounds, sizeof(rounds), "%d", cmgb_plan->rounds);
  for (int l = 0; l < 2; l++)
    for (int d = 0; d < 2; d++) {
      const char *args[] = { "--child",   "threads",       "--rounds",
                             rounds,      "--block-ms",    cmgb_plan->thread_ms,
                             "--devices", cmgb_layouts[l], NULL };
      options(opts, sizeof(opts), cmgb_thread_depths[d]);
      snprintf(prefix, sizeof(prefix), "threads.%s.%d", cmgb_layouts[l],
               cmgb_thread_depths[d]);
      run_child(prefix, opts, args);
    }
}

static void
run_scale(void)
{
  char rounds[16], opts[256], prefix[64];
  snprintf(rounds, sizeof(rounds), "%d",
           cmgb_plan->rounds < 7 ? cmgb_plan->rounds : 7);
  for (int d = 0; d < 2; d++) {
    const char *args[] = { "--child",    "scale",
                           "--rounds",   rounds,
                           "--block-ms", cmgb_plan->scale_ms,
                           "--live",     cmgb_plan->scale_live,
                           NULL };
    options(opts, sizeof(opts), cmgb_thread_depths[d]);
    snprintf(prefix, sizeof(prefix), "scale.%d", cmgb_thread_depths[d]);
    run_child(prefix, opts, args);
  }
}

static void
run_mem_one(const char *prefix, const char *path, const char *mix, long n)
{
  char opts[256], live[32];
  snprintf(live, sizeof(live), "%ld", n);
  const char *args[] = { "--child", "mem",    "--path", path, "--stack-mix",
                         mix,       "--live", live,     NULL };
  options(opts, sizeof(opts), 32);
  run_child(prefix, opts, args);
}

static void
run_mem(void)
{
  char prefix[64];
  for (int i = 0; i < 2; i++) {
    snprintf(prefix, sizeof(prefix), "mem.%ld.bare", cmgb_plan->mem_live[i]);
    run_mem_one(prefix, "bare", "single", cmgb_plan->mem_live[i]);
    snprintf(prefix, sizeof(prefix), "mem.%ld.with", cmgb_plan->mem_live[i]);
    run_mem_one(prefix, "with", "single", cmgb_plan->mem_live[i]);
  }
  run_mem_one("mem.stacks.single", "with", "single", cmgb_plan->mem_stacks);
  run_mem_one("mem.stacks.distinct", "with", "distinct", cmgb_plan->mem_stacks);
}

/* Pairs over live memory without snapshots, then with them (snapshot.c). */
static void
run_snapshot(void)
{
  const struct cmgb_snapshot_plan *p = cmgb_snapshot_plan();
  char live[32], opts[320];
  snprintf(live, sizeof(live), "%ld", p->live);
  const char *args[] = { "--child",   "hold",     "--live", live,
                         "--seconds", p->seconds, NULL };
  for (int on = 0; on < 2; on++) {
    options(opts, sizeof(opts), 32);
    if (on) {
      size_t len = strlen(opts);
      snprintf(opts + len, sizeof(opts) - len, ",snapshot=%s", p->every);
    }
    run_child(on ? "snapshot.on" : "snapshot.off", opts, args);
  }
}

static char report_file[4096];

static void
run_report(void)
{
  char opts[256], live[32], stacks[32], reps[16];
  snprintf(live, sizeof(live), "%ld", cmgb_plan->report_live);
  snprintf(stacks, sizeof(stacks), "%ld", cmgb_plan->report_stacks);
  snprintf(reps, sizeof(reps), "%d", cmgb_plan->report_reps);
  snprintf(report_file, sizeof(report_file), "%s/report.json", tmpdir);
  const char *args[] = { "--child",  "report",    "--live",   live,
                         "--stacks", stacks,      "--rounds", reps,
                         "--out",    report_file, NULL };
  options(opts, sizeof(opts), 32);
  run_child("report", opts, args);
}

/* Times `tool [extra] FILE`, output discarded, into key.s_min and
 * key.s_med.  Leaves them unset when there is no tool; a tool that fails
 * is reported in cmgb_tool_state, not counted as the harness breaking (it
 * is not ours). */
static void
time_tool(const char *extra, const char *key, const char *label)
{
  char name[64];
  struct stat st;
  if (arg.tool == NULL || access(arg.tool, X_OK) != 0 ||
      stat(report_file, &st) != 0) {
    cmgb_tool_state = arg.tool == NULL || access(arg.tool, X_OK) != 0
                          ? "n/a (no cumemguard-report built)"
                          : "n/a (no report written)";
    return;
  }
  char *argv[] = { (char *)arg.tool, (char *)extra, report_file, NULL };
  if (extra == NULL)
    argv[1] = report_file, argv[2] = NULL;
  fprintf(stderr, "  %-24s", label);
  fflush(stderr);
  uint64_t t0 = cmgb_now_ns();
  double med, min;
  int rc = cmgb_time_run(argv, cmgb_plan->report_reps, &med, &min);
  if (rc != 0) {
    static char why[64];
    snprintf(why, sizeof(why), "failed (status %d)", rc);
    cmgb_tool_state = why;
    fprintf(stderr, "%s\n", why);
    return;
  }
  snprintf(name, sizeof(name), "%s.s_min", key);
  cmgb_store(name, min);
  snprintf(name, sizeof(name), "%s.s_med", key);
  cmgb_store(name, med);
  cmgb_tool_state = "ok";
  fprintf(stderr, "%6.1f s\n", (double)(cmgb_now_ns() - t0) / 1e9);
}

/* The summary as people run it (the program's files read for names), and
 * with --no-symbolize: what reading the files costs. */
static void
run_tool(void)
{
  time_tool(NULL, "report.read", "cumemguard-report");
  if (strcmp(cmgb_tool_state, "ok") == 0)
    time_tool("--no-symbolize", "report.read_nosym",
              "cumemguard-report (no sym)");
}

/* ---- the machine ------------------------------------------------------ */

/* The 1-minute load average: other processes on a 2-core machine make
 * every figure noisier, so the table says how busy it was. */
static double
loadavg(void)
{
  double l = NAN;
  FILE *f = fopen("/proc/loadavg", "re");
  if (f != NULL && fscanf(f, "%lf", &l) != 1)
    l = NAN;
  if (f != NULL)
    fclose(f);
  return l;
}

static void
read_machine(void)
{
  char line[256];
  FILE *f = fopen("/proc/cpuinfo", "re");
  while (f != NULL && fgets(line, sizeof(line), f) != NULL)
    if (strncmp(line, "model name", 10) == 0) {
      const char *p = strchr(line, ':');
      if (p != NULL) {
        snprintf(cmgb_machine.cpu, sizeof(cmgb_machine.cpu), "%s", p + 2);
        cmgb_machine.cpu[strcspn(cmgb_machine.cpu, "\n")] = '\0';
      }
      break;
    }
  if (f != NULL)
    fclose(f);
  f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource",
            "re");
  if (f != NULL && fgets(cmgb_machine.clocksource,
                         sizeof(cmgb_machine.clocksource), f) != NULL)
    cmgb_machine.clocksource[strcspn(cmgb_machine.clocksource, "\n")] = '\0';
  if (f != NULL)
    fclose(f);
  struct utsname u;
  if (uname(&u) == 0)
    snprintf(cmgb_machine.kernel, sizeof(cmgb_machine.kernel), "%s %s %s",
             u.sysname, u.release, u.machine);
  cmgb_machine.cores = sysconf(_SC_NPROCESSORS_ONLN);
}

/* ---- main ------------------------------------------------------------- */

/* The chain library where the build leaves it, beside this program (which
 * is built with -no-install, so it is the real one, not a wrapper). */
static const char *
chain_beside(void)
{
  static char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
  if (n <= 0)
    return NULL;
  path[n] = '\0';
  char *slash = strrchr(path, '/');
  if (slash == NULL)
    return NULL;
  strcpy(slash, "/.libs/libcmgbchain.so");
  return path;
}

static void
remove_tmpdir(void)
{
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0)
    fprintf(stderr, "cmgbench: could not remove %s\n", tmpdir);
}

static int
usage(void)
{
  fprintf(
      stderr,
      "usage: cmgbench --lib LIBCUMEMGUARD [--sim DIR] "
      "[--tool PROGRAM] [--page-load SCRIPT] [--chain SO] [--json FILE] "
      "[--smoke]\n"
      "       cmgbench --lib LIBCUMEMGUARD --base LIBCUMEMGUARD [--sim DIR] "
      "[--chain SO] [--options KEY=VALUE,...] [--smoke]\n"
      "       cmgbench --framework-script\n");
  return 2;
}

int
main(int argc, char **argv)
{
  if (argc > 1 && strcmp(argv[1], "--child") == 0) {
    int rc = cmgb_child(argc, argv);
    fflush(stdout);
    _exit(rc);
  }
  if (argc == 2 && strcmp(argv[1], "--framework-script") == 0)
    return fputs(cmgb_framework_script, stdout) < 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--smoke") == 0)
      arg.smoke = true;
    else if (v == NULL)
      return usage();
    else if (strcmp(a, "--lib") == 0)
      arg.lib = v, i++;
    else if (strcmp(a, "--sim") == 0)
      arg.sim = v, i++;
    else if (strcmp(a, "--tool") == 0)
      arg.tool = v, i++;
    else if (strcmp(a, "--json") == 0)
      arg.json = v, i++;
    else if (strcmp(a, "--page-load") == 0)
      arg.page_load = v, i++;
    else if (strcmp(a, "--base") == 0)
      arg.base = v, i++;
    else if (strcmp(a, "--chain") == 0)
      arg.chain = v, i++;
    else if (strcmp(a, "--options") == 0)
      cmgb_options = *v != '\0' ? v : NULL, i++;
    else
      return usage();
  }
  if (arg.lib == NULL || access(arg.lib, R_OK) != 0)
    return usage();
  if (arg.base != NULL && access(arg.base, R_OK) != 0) {
    fprintf(stderr,
            "cmgbench: bad --base '%s': expected a built "
            "libcumemguard.so\n",
            arg.base);
    return 2;
  }
  cmgb_lib = arg.lib;
  cmgb_plan = arg.smoke ? &smoke : &full;
  if (mkdtemp(tmpdir) == NULL) {
    perror("cmgbench: mkdtemp");
    return 1;
  }
  read_machine();
  cmgb_machine.load_start = loadavg();
  fprintf(stderr, "cmgbench: %s run, children:\n", cmgb_plan->mode);
  if (arg.base != NULL) {
    int alternations = arg.smoke ? 1 : 5;
    run_compare(alternations);
    cmgb_run_compare_framework(arg.base, arg.sim,
                               arg.chain ? arg.chain : chain_beside(), tmpdir);
    remove_tmpdir();
    cmgb_print_compare(arg.base, alternations);
    cmgb_print_compare_framework();
    return cmgb_broken ? 1 : 0;
  }
  int share = (cmgb_plan->repeats + 5) / 6;
  run_calls();
  run_repeats(share);
  run_modes();
  run_deep();
  run_repeats(share);
  run_threads();
  run_vmm();
  run_repeats(share);
  run_scale();
  run_repeats(share);
  run_mem();
  run_repeats(share);
  run_report();
  run_tool();
  cmgb_run_page(arg.tool, report_file, tmpdir, arg.page_load);
  run_snapshot();
  cmgb_run_python(arg.lib, arg.sim, tmpdir);
  cmgb_run_framework(arg.lib, arg.sim, arg.chain ? arg.chain : chain_beside(),
                     tmpdir);
  run_repeats(cmgb_plan->repeats);
  remove_tmpdir();
  cmgb_machine.load_end = loadavg();
  cmgb_check_complete();
  cmgb_print_table();
  cmgb_print_python();
  cmgb_print_snapshot();
  cmgb_print_framework();
  cmgb_print_deep();
  cmgb_print_vmm();
  if (arg.json != NULL) {
    int err = cmgb_write_json(arg.json);
    if (err != 0) {
      fprintf(stderr, "cmgbench: %s: %s\n", arg.json, strerror(-err));
      return 1;
    }
    printf("\nThe same figures: %s\n", arg.json);
  }
  return cmgb_broken;
}
