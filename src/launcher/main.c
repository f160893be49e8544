/*
 * The cumemguard program: turns its flags into CUMEMGUARD_OPTIONS, puts
 * libcumemguard.so first in LD_PRELOAD and execs the program, in the manner
 * of eatmydata(1) and faketime(1).  It owns no policy of its own: the
 * combined option string is checked with cmg__config_parse(), the parser the
 * library will run, so a typo is refused here with exit status 2 instead of
 * leaving a job uncapped (the library would fail closed as well, but only
 * after the job had started).
 *
 * Flags map to option keys through one table, `flags`; a new option key
 * needs one row here.  Flags are spelled with dashes and keys with
 * underscores, as command lines and MALLOC_CONF each usually are.  A flag
 * replaces the environment's item with the same key rather than appending
 * a second one, since the parser refuses duplicates.  If the library
 * cannot be found the program is not run at all: running it without the
 * cap that was asked for would be the one wrong answer.  The exit status
 * is the program's own once it runs; before that it is 2 for our own
 * errors and 126 or 127 for a failed exec, as env(1) does.  leak_exitcode
 * does not change that: the library sets the program's status at its
 * exit, and the launcher is long gone by then.
 *
 * `cumemguard status [GROUP] [--json]` runs no program: it prints the live
 * view of the user's groups, which group_status.c reads from their segments.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cumemguard.h"
#include "core/conf.h"
#include "core/conf_merge.h"
#include "core/conf_table.h"
#include "core/conf_report.h"
#include "core/log.h"
#include "core/pools.h"
#include "core/args.h"
#include "launcher/cdi.h"
#include "launcher/library.h"
#include "launcher/status.h"
#include "ops/preload_env.h"

#define OPTIONS_VAR "CUMEMGUARD_OPTIONS"

/* The file exists but could not be run; env(1) and POSIX shells use 126. */
#define EXIT_CANNOT_RUN 126

#define STR_(x) #x
#define STR(x) STR_(x)

/* A flag that sets an option key: --name SIZE or --name=SIZE, or a switch
 * (arg NULL) that sets its key to 1, or to 0 when the switch is --no-KEY
 * (the key naming what it turns off, as python_frames). */
struct flag {
  const char *name; /* without the leading "--" */
  const char *key;  /* option key in CUMEMGUARD_OPTIONS */
  const char *arg;  /* placeholder in the usage line; NULL: a switch */
  const char *help; /* lines of at most HELP_WIDTH columns */
};

static const struct flag flags[] = {
  { "limit", "limit", "SIZE",
    "cap each device at SIZE (4GiB, 1.5GB, 512M) or at\n"
    "a share of it (50%)" },
  { "report", "report", "PATTERN",
    "write the leak report to PATTERN: %p pid, %h host,\n"
    "%t unix time, %% a '%' (default " CMG__REPORT_DEFAULT ")" },
  { "stack-depth", "stack_depth", "N",
    "record N native frames of each allocation's stack\n"
    "(its innermost and outermost when deeper), 0 for\n"
    "none (default " STR(CMG__STACK_DEPTH_DEFAULT) ", at most " STR(
        CMG__STACK_DEPTH_MAX) ")" },
  { "stack-mode", "stack_mode", "MODE",
    "how stacks are walked: auto (default: each step\n"
    "proven against DWARF once, libunwind where it\n"
    "cannot be), fp (frame pointers only) or dwarf" },
  { "dump-signal", "dump_signal", "NAME",
    "write a report whenever the program gets signal\n"
    "NAME: USR1, USR2, HUP, WINCH, URG or PWR" },
  { "leak-exitcode", "leak_exitcode", "N",
    "make the program exit with N (1 to 255) when\n"
    "device memory is still allocated at its exit" },
  { "on-exceed", "on_exceed", "ACTION",
    "past the limit: fail (default), warn (allow and\n"
    "record), or wait for frees up to --wait-timeout" },
  { "wait-timeout", "wait_timeout", "TIME",
    "how long --on-exceed wait waits (default 30s;\n"
    "500ms, 2m, 1h)" },
  { "soft-limit", "soft_limit", "SIZE",
    "warn and write a snapshot report each time a\n"
    "device's usage rises above SIZE" },
  { "max-alloc", "max_alloc", "SIZE",
    "refuse any single allocation larger than SIZE" },
  { "host-limit", "host_limit", "SIZE",
    "cap page-locked host memory (cudaMallocHost) at SIZE" },
  { "group", "group", "NAME",
    "count this program in group NAME: every process of\n"
    "this user in the group shares --group-limit" },
  { "group-limit", "group_limit", "SIZE",
    "the cap per device the group's processes share\n"
    "(the first member's stands; see 'status')" },
  { "no-pools", "no_pools", NULL,
    "turn PyTorch's, TensorFlow's and JAX's memory pools\n"
    "off, so leaks are reported per tensor (slower; sets\n"
    "PYTORCH_NO_CUDA_MEMORY_CACHING=1,\n"
    "TF_GPU_ALLOCATOR=cuda_malloc,\n"
    "XLA_PYTHON_CLIENT_ALLOCATOR=platform and\n"
    "XLA_PYTHON_CLIENT_PREALLOCATE=false unless set)" },
  { "no-python-frames", "python_frames", NULL,
    "leave Python functions and lines out of the stacks\n"
    "of a Python program (they are in by default)" },
  { "snapshot", "snapshot", "TIME",
    "rewrite the report every TIME (30s, 10m) while the\n"
    "program runs, so that one killed outright (SIGKILL,\n"
    "the OOM killer) leaves its last one" },
  { "no-timeline", "timeline", NULL,
    "keep no memory-over-time series in the report" },
  { "no-signal-report", "signal_report", NULL,
    "write no report as a deadly signal kills the program\n"
    "(its default actions are left alone)" },
  { "no-count-context", "count_context", NULL,
    "count allocations only: leave CUDA contexts and\n"
    "modules out of the limits and the group's cap" },
};

static const char *
switch_value(const struct flag *f)
{
  bool negates =
      strncmp(f->name, "no-", 3) == 0 && strncmp(f->key, "no_", 3) != 0;
  return negates ? "0" : "1";
}

/* Frameworks that grab most of the card at start-up grow on demand instead
 * with these; set by --on-demand-growth. */
static const struct {
  const char *name, *value, *why;
} growth_env[] = {
  { "TF_FORCE_GPU_ALLOW_GROWTH", "true",
    "TensorFlow allocates as it needs, not 'free minus a margin'" },
  { "XLA_PYTHON_CLIENT_PREALLOCATE", "false",
    "JAX/XLA does not preallocate 75% of what it sees" },
};
static bool on_demand_growth;

#define N_GROWTH_ENV (sizeof(growth_env) / sizeof(growth_env[0]))

#define N_FLAGS (sizeof(flags) / sizeof(flags[0]))

/* Columns of the help text: 2 + FLAG_WIDTH + HELP_WIDTH <= 80. */
#define FLAG_WIDTH 20
#define HELP_WIDTH 58
#define USAGE_START "usage: cumemguard"
#define STATUS_USAGE "       cumemguard status [GROUP] [--json]"
#define CDI_USAGE                                                              \
  "       cumemguard cdi --limit SIZE [...] [--report-dir DIR] [--output "     \
  "FILE]"

/*
 * Appends one word of the usage text, starting a new line indented under
 * the first word when it would pass column 80.
 */
static void
usage_word(FILE *f, const char *word, size_t *col)
{
  size_t len = strlen(word) + 1;

  if (*col + len > 80) {
    fprintf(f, "\n%*s", (int)strlen(USAGE_START), "");
    *col = strlen(USAGE_START);
  }
  fprintf(f, " %s", word);
  *col += len;
}

static void
print_usage(FILE *f)
{
  char word[64];
  size_t col = strlen(USAGE_START);

  fputs(USAGE_START, f);
  for (size_t i = 0; i < N_FLAGS; i++) {
    if (flags[i].arg == NULL)
      snprintf(word, sizeof(word), "[--%s]", flags[i].name);
    else
      snprintf(word, sizeof(word), "[--%s %s]", flags[i].name, flags[i].arg);
    usage_word(f, word, &col);
  }
  usage_word(f, "[--on-demand-growth]", &col);
  usage_word(f, "[--list-options]", &col);
  usage_word(f, "[--help]", &col);
  usage_word(f, "[--version]", &col);
  usage_word(f, "[--]", &col);
  usage_word(f, "PROGRAM", &col);
  usage_word(f, "[ARGS...]", &col);
  fprintf(f, "\n" STATUS_USAGE "\n" CDI_USAGE "\n");
}

/* Prints "  --name ARG" and its help, each help line in the help column. */
static void
print_flag(const char *name, const char *arg, const char *help)
{
  char left[64];
  const char *p = help;

  snprintf(left, sizeof(left), "--%s%s%s", name, arg[0] ? " " : "", arg);
  printf("  %-*s", FLAG_WIDTH, left);
  for (;;) {
    size_t n = strcspn(p, "\n");

    printf("%.*s\n", (int)n, p);
    if (p[n] == '\0')
      break;
    p += n + 1;
    printf("  %*s", FLAG_WIDTH, "");
  }
}

/* The option table's keys, as conf_table.c has them, in the help's column:
 * KEY, or KEY(.N) for one that also takes a device. */
static void
print_keys(void)
{
  size_t col = 78;
  bool indexed, first = true;
  const char *key;

  for (size_t i = 0; (key = cmg__conf_table_key(i, &indexed)) != NULL; i++) {
    bool both = false, shown = false;
    const char *k2;
    for (size_t j = 0; (k2 = cmg__conf_table_key(j, NULL)) != NULL; j++) {
      shown = shown || (j < i && strcmp(k2, key) == 0);
      both = both || (j != i && strcmp(k2, key) == 0);
    }
    if (shown)
      continue;
    int n = (int)strlen(key) + (both || indexed ? 4 : 0) + 2;
    if (!first)
      putchar(',');
    if (col + (size_t)n > 78) {
      printf("\n%*s", 22, "");
      col = 22;
    } else {
      putchar(' ');
    }
    printf("%s%s", key, both || indexed ? "(.N)" : "");
    col += (size_t)n;
    first = false;
  }
  printf(";\n");
}

static void
print_help(void)
{
  print_usage(stdout);
  printf("\nRuns PROGRAM with " CMG__LIBRARY_NAME " preloaded, which caps the "
         "CUDA device memory\nit can allocate and reports what it leaves "
         "allocated.\n\n");
  for (size_t i = 0; i < N_FLAGS; i++)
    print_flag(flags[i].name, flags[i].arg ? flags[i].arg : "", flags[i].help);
  print_flag("on-demand-growth", "",
             "make TensorFlow and JAX allocate as they go:\n"
             "sets TF_FORCE_GPU_ALLOW_GROWTH=true and\n"
             "XLA_PYTHON_CLIENT_PREALLOCATE=false unless set");
  print_flag("list-options", "",
             "print each key of " OPTIONS_VAR " with its\n"
             "default and range, and exit");
  print_flag("help", "", "print this help and exit");
  print_flag("version", "", "print the version and exit");
  printf("\n'cumemguard status' runs no program: it prints each of your "
         "groups (or\nGROUP) with its cap and usage per device and per "
         "process; --json for\nmachines.  'cumemguard -- status' runs a "
         "program named status.\n"
         "'cumemguard cdi' writes a CDI spec that caps containers; see "
         "'cumemguard cdi\n--help'.\n");
  printf("\nEnvironment:\n  " OPTIONS_VAR "  options as key=value,...:");
  print_keys();
  printf("                      each as the flag of its name (a flag "
         "replaces its\n"
         "                      key); keys of one device (KEY.N, device N "
         "as the\n"
         "                      process numbers it, or KEY.GPU-<uuid>) "
         "have no flag,\n"
         "                      as a flag would cap every process's device "
         "N alike\n"
         "  " CMG__LIBRARY_VAR "  the library to preload; by default\n"
         "                      " CMG_LIBDIR "/" CMG__LIBRARY_NAME "\n"
         "\nExit status: the program's own, which the library sets to N "
         "for\n--leak-exitcode N; 2 for a bad flag or option, 126 or 127 "
         "when PROGRAM\ncannot be run.\n");
}

/* The option table, one entry a line: the key (KEY.N for a device's), its
 * default and its range, tab-separated for the manual's test and scripts. */
static void
print_options(void)
{
  struct cmg__option_doc d;

  for (size_t i = 0; cmg__conf_table_doc(i, &d); i++)
    printf("%s%s\t%s\t%s\n", d.key, d.indexed ? ".N" : "", d.dflt, d.range);
}

/* ---- the option string -------------------------------------------------- */

/* Whether a flag was given whose key is key[0..len). */
static bool
is_overridden(const char *key, size_t len, void *arg)
{
  const char *const *values = arg;
  for (size_t i = 0; i < N_FLAGS; i++) {
    if (values[i] != NULL && strlen(flags[i].key) == len &&
        memcmp(flags[i].key, key, len) == 0)
      return true;
  }
  return false;
}

/*
 * The environment's option string with the flags' items in place of its
 * items of the same keys, flags last (cmg__conf_merge).  Returns a
 * malloc'd string, or NULL when out of memory.
 */
static char *
build_options(const char *env, const char *values[])
{
  char *items[N_FLAGS];
  size_t n = 0;
  char *out = NULL;
  for (size_t i = 0; i < N_FLAGS; i++) {
    if (values[i] == NULL)
      continue;
    if (asprintf(&items[n], "%s=%s", flags[i].key, values[i]) < 0)
      goto done;
    n++;
  }
  out = cmg__conf_merge(env, is_overridden, (void *)values,
                        (const char *const *)items, n);
done:
  while (n > 0)
    free(items[--n]);
  return out;
}

/* ---- LD_PRELOAD --------------------------------------------------------- */

/* Puts lib in LD_PRELOAD by cmg__preload_add's rule; 0, or -1 after one
 * line. */
static int
add_preload(const char *lib)
{
  char err[PATH_MAX + 160];
  char *value;
  int rc =
      cmg__preload_add(getenv("LD_PRELOAD"), lib, &value, err, sizeof(err));

  if (rc == -EINVAL) {
    cmg__log("%s", err);
    return -1;
  }
  if (rc == 0 && setenv("LD_PRELOAD", value, 1) != 0)
    rc = -errno;
  free(value);
  if (rc != 0)
    cmg__log("cannot set the environment: %s", strerror(-rc));
  return rc == 0 ? 0 : -1;
}

/* ---- main --------------------------------------------------------------- */

/* The options of the program runner: the flags' rows, then its own. */
#define N_OPTS (N_FLAGS + 4)

static void
runner_opts(struct cmg__opt opts[N_OPTS])
{
  for (size_t i = 0; i < N_FLAGS; i++)
    opts[i] = (struct cmg__opt){ flags[i].name, flags[i].arg };
  opts[N_FLAGS] = (struct cmg__opt){ "on-demand-growth", NULL };
  opts[N_FLAGS + 1] = (struct cmg__opt){ "list-options", NULL };
  opts[N_FLAGS + 2] = (struct cmg__opt){ "help", NULL };
  opts[N_FLAGS + 3] = (struct cmg__opt){ "version", NULL };
}

/* Sets values[f] from the option a read, a row of `flags`; 0, or -1 after
 * one line. */
static int
take_flag(const struct cmg__args *a, size_t f, const char *values[])
{
  values[f] = flags[f].arg == NULL ? switch_value(&flags[f]) : a->value;
  /* A comma would smuggle a second item past the flag's key. */
  if (strchr(values[f], ',') != NULL) {
    cmg__log("bad value '%s' for --%s: expected one %s, without ','", values[f],
             flags[f].name, flags[f].arg);
    return -1;
  }
  return 0;
}

/*
 * Reads the flags into values[] (one per row of `flags`, the last one
 * given wins) and returns the index of PROGRAM in argv, or -1 after
 * printing why the arguments are wrong, or 0 after --help, --version or
 * --list-options.
 */
static int
parse_args(int argc, char **argv, const char *values[])
{
  struct cmg__opt opts[N_OPTS];
  struct cmg__args a = { .argc = argc,
                         .argv = argv,
                         .command = "cumemguard",
                         .opts = opts,
                         .n_opts = N_OPTS,
                         .next = 1 };
  enum cmg__args_read r;

  runner_opts(opts);
  while ((r = cmg__args_next(&a)) == CMG__ARGS_OPTION) {
    size_t f = (size_t)(a.opt - opts);
    if (f < N_FLAGS) {
      if (take_flag(&a, f, values) != 0)
        return -1;
    } else if (cmg__args_is(&a, "on-demand-growth")) {
      on_demand_growth = true;
    } else if (cmg__args_is(&a, "list-options")) {
      print_options();
      return 0;
    } else if (cmg__args_is(&a, "help")) {
      print_help();
      return 0;
    } else {
      printf("cumemguard " CMG_VERSION_STRING "\n");
      return 0;
    }
  }
  if (r == CMG__ARGS_BAD)
    return -1;
  return r == CMG__ARGS_OPERAND ? a.next - 1 : a.next;
}

/* Gives the program the library in LD_PRELOAD, the options, and what
 * they ask of CUDA's allocator: 0, or -1 after one line. */
static int
set_environment(const char *lib, const char *opts,
                const struct cmg__config *cfg)
{
  if (add_preload(lib) != 0)
    return -1;
  char pid[24];
  snprintf(pid, sizeof(pid), "%ld", (long)getpid());
  if (setenv(OPTIONS_VAR, opts, 1) != 0 ||
      setenv(CMG__REPORT_PID_VAR, pid, 1) != 0) {
    cmg__log("cannot set the environment: %s", strerror(errno));
    return -1;
  }
  /* Here as well as in the library's constructor, so that every process
   * of the program sees them in its initial environment, /proc/PID/environ
   * included, even one the library is not loaded into. */
  if (cfg->no_pools && cmg__pools_apply() != 0) {
    cmg__log("cannot set the environment: %s", strerror(errno));
    return -1;
  }
  for (size_t g = 0; on_demand_growth && g < N_GROWTH_ENV; g++)
    if (cmg__pools_setenv(growth_env[g].name, growth_env[g].value) != 0) {
      cmg__log("cannot set the environment: %s", strerror(errno));
      return -1;
    }
  return 0;
}

int
main(int argc, char **argv)
{
  const char *values[N_FLAGS] = { NULL };
  struct cmg__config cfg;
  char err[512];
  char *lib = NULL;
  int rc = CMG_EXIT_USAGE;

  if (argc >= 2 && strcmp(argv[1], "status") == 0)
    return cmg__status_main(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "cdi") == 0)
    return cmg__cdi_main(argc - 1, argv + 1);
  int prog = parse_args(argc, argv, values);
  if (prog == 0) {
    /* --help, --version or --list-options: a full disk or closed stdout is still an error. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
      cmg__log("cannot write to standard output: %s", strerror(errno));
      return EXIT_FAILURE;
    }
    return EXIT_SUCCESS;
  }
  if (prog < 0)
    return CMG_EXIT_USAGE;
  if (prog >= argc) {
    cmg__log("no PROGRAM given");
    print_usage(stderr);
    return CMG_EXIT_USAGE;
  }

  char *opts = build_options(getenv(OPTIONS_VAR), values);
  if (opts == NULL) {
    cmg__log("out of memory");
    return CMG_EXIT_USAGE;
  }
  if (cmg__config_parse(opts, &cfg, err, sizeof(err)) != 0) {
    cmg__log("%s", err);
    goto out;
  }

  lib = cmg__find_library();
  if (lib == NULL || set_environment(lib, opts, &cfg) != 0)
    goto out;
  free(lib);
  free(opts);

  execvp(argv[prog], argv + prog);
  rc = errno;
  cmg__log("cannot run '%s': %s", argv[prog], strerror(rc));
  return rc == ENOENT ? CMG_EXIT_EXEC : EXIT_CANNOT_RUN;

out:
  free(lib);
  free(opts);
  return rc;
}
