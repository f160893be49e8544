/*
 * cumemguard-report: reads the JSON reports that libcumemguard.so writes
 * and answers the questions people bring to them.  This file reads the
 * command line and hands it to one command of cmd/: summary.c has summary
 * and merge, diff.c diff, flame.c folded and flame, check.c check,
 * timeline_trace.c timeline, pprof.c pprof, plot.c plot, html.c html.
 * The stages below them are in the folders beside it: load/ reads a report
 * into the data model, model/ answers questions of it (views, classes of
 * groups, suppressions, names of frames), show/ is how the commands print
 * what they share, and run/ runs the stages for every command.
 *
 *   cumemguard-report [summary] FILE...   each report, as LeakSanitizer and
 *                                         heaptrack_print would print it
 *   cumemguard-report merge FILE...       the reports of one job as one
 *   cumemguard-report diff BASE NEW       what grew and what shrank
 *   cumemguard-report folded FILE...      folded stacks for flame graphs
 *   cumemguard-report flame FILE... -o X  a self-contained SVG flame graph
 *   cumemguard-report check FILE...       exit 1 when too much leaked (CI)
 *   cumemguard-report timeline FILE... -o X  memory over time, a trace
 *   cumemguard-report pprof FILE -o X     live memory as a pprof profile
 *   cumemguard-report plot FILE -o X      memory over time, an SVG chart
 *
 * Exit status: 0, 1 when check finds more leaked than --max-leak allows,
 * and 2 for everything that went wrong: a bad option, a file that is not
 * a report we can read, output that could not be written.  Each such
 * problem is one line on stderr naming the file and the problem; the tool
 * stops at the first one, because a summary that silently skipped a
 * report would be a wrong answer.
 *
 * Options are read by the project's one rule (core/args.c: spelled out
 * whole, -o and -h as the one-letter forms of --output and --help), before
 * or after the files; "--" ends them.  An option that means nothing to the command
 * (--json for folded) is refused rather than ignored.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cumemguard.h"
#include "core/args.h"
#include "core/log.h"
#include "core/size.h"

#include "reader/cmd/check.h"
#include "reader/cmd/diff.h"
#include "reader/cmd/flame.h"
#include "reader/cmd/html.h"
#include "reader/cmd/plot.h"
#include "reader/cmd/pprof.h"
#include "reader/run/run.h"
#include "reader/cmd/summary.h"
#include "reader/cmd/timeline_trace.h"
#include "reader/model/code.h"
#include "reader/model/supp.h"
#include "reader/model/symbolize.h"
#include "reader/show/output.h"
#include "reader/tool.h"

enum command {
  SUMMARY,
  MERGE,
  DIFF,
  FOLDED,
  FLAME,
  CHECK,
  TIMELINE,
  PPROF,
  PLOT,
  HTML
};

static const char *const command_names[] = {
  "summary", "merge",    "diff",  "folded", "flame",
  "check",   "timeline", "pprof", "plot",   "html",
};

/* Options, and the commands each applies to (a bit per command). */
enum {
  OPT_TOP = 256,
  OPT_MIN_BYTES,
  OPT_ALL_FRAMES,
  OPT_JSON,
  OPT_SUPP,
  OPT_WEIGHT,
  OPT_OUTPUT,
  OPT_TITLE,
  OPT_WIDTH,
  OPT_MAX_LEAK,
  OPT_AT,
  OPT_NO_SYMBOLIZE,
  OPT_USER,
  OPT_LIBRARY,
  OPT_MERGE,
  OPT_HELP,
  OPT_VERSION,
};

#define ON(c) (1u << (c))
#define REPORTS (ON(SUMMARY) | ON(MERGE) | ON(DIFF))
#define ALL (REPORTS | ON(FOLDED) | ON(FLAME) | ON(CHECK) | ON(HTML))
/* The commands that draw time: no view, so no view's options. */
#define TIME (ON(TIMELINE) | ON(PPROF) | ON(PLOT))

/* In the order of the OPT_ values. */
static const struct cmg__opt options[] = {
  { "top", "N" },         { "min-bytes", "SIZE" },    { "all-frames", NULL },
  { "json", NULL },       { "suppressions", "FILE" }, { "weight", "WHAT" },
  { "output", "FILE" },   { "title", "TEXT" },        { "width", "PIXELS" },
  { "max-leak", "SIZE" }, { "at", "WHEN" },           { "no-symbolize", NULL },
  { "user", "PATHS" },    { "library", "PATHS" },     { "merge", NULL },
  { "help", NULL },       { "version", NULL },
};

static const struct cmg__letter letters[] = { { 'o', "output" },
                                              { 'h', "help" } };

static const unsigned option_commands[] = {
  [OPT_TOP - OPT_TOP] = REPORTS | ON(CHECK),
  [OPT_MIN_BYTES - OPT_TOP] = REPORTS | ON(CHECK) | ON(HTML),
  [OPT_ALL_FRAMES - OPT_TOP] = ALL,
  [OPT_JSON - OPT_TOP] = REPORTS,
  [OPT_SUPP - OPT_TOP] = ALL,
  [OPT_WEIGHT - OPT_TOP] = ON(FOLDED) | ON(FLAME),
  [OPT_OUTPUT - OPT_TOP] = ON(FLAME) | TIME | ON(HTML),
  [OPT_TITLE - OPT_TOP] = ON(FLAME),
  [OPT_WIDTH - OPT_TOP] = ON(FLAME),
  [OPT_MAX_LEAK - OPT_TOP] = ON(CHECK),
  [OPT_AT - OPT_TOP] = ON(PPROF),
  [OPT_NO_SYMBOLIZE - OPT_TOP] = ALL | TIME,
  [OPT_USER - OPT_TOP] = ALL,
  [OPT_LIBRARY - OPT_TOP] = ALL,
  [OPT_MERGE - OPT_TOP] = ON(HTML),
  [OPT_HELP - OPT_TOP] = ALL | TIME,
  [OPT_VERSION - OPT_TOP] = ALL | TIME,
};

#define DEFAULT_TOP 10
#define DEFAULT_WIDTH 1200
#define WIDTH_MIN 200
#define WIDTH_MAX 100000

struct args {
  enum command cmd;
  struct cmg__tool_opts opts;
  struct cmg__flame_opts flame;
  struct cmg__supp supp;
  const char *output;
  uint64_t max_leak;
  enum cmg__pprof_at at;
  char **files;
  int n_files;
  bool merge;
};

/* The usage lines and the commands. */
static void
print_commands(void)
{
  printf(
      "usage: " CMG__TOOL_NAME " [summary] [OPTIONS] FILE...\n"
      "       " CMG__TOOL_NAME " merge [OPTIONS] FILE...\n"
      "       " CMG__TOOL_NAME " diff [OPTIONS] BASE NEW\n"
      "       " CMG__TOOL_NAME " folded [--weight W] [OPTIONS] FILE...\n"
      "       " CMG__TOOL_NAME " flame [--weight W] -o OUT.svg FILE...\n"
      "       " CMG__TOOL_NAME " check [--max-leak SIZE] [OPTIONS] FILE...\n"
      "       " CMG__TOOL_NAME " timeline -o OUT.json FILE...\n"
      "       " CMG__TOOL_NAME " pprof [--at WHEN] -o OUT.pb.gz FILE\n"
      "       " CMG__TOOL_NAME " plot -o OUT.svg FILE\n"
      "       " CMG__TOOL_NAME " html -o OUT.html FILE | BASE NEW | "
      "--merge FILE...\n"
      "\n"
      "Reads cumemguard reports (JSON, version %d) and prints what leaked,\n"
      "from where, and what was live at each peak and first denial.\n"
      "\n"
      "  summary        each report: devices, leaks, peaks, denials\n"
      "  merge          the reports of several processes as one view\n"
      "  diff           what grew and shrank from BASE to NEW\n"
      "  folded         folded stacks (\"a;b;c BYTES\") for flamegraph.pl\n"
      "  flame          an SVG flame graph, made by this tool\n"
      "  check          exit 1 when more than --max-leak leaked\n"
      "  timeline       memory over time as a trace for Perfetto\n"
      "  pprof          live memory as a gzipped pprof profile\n"
      "  plot           an SVG chart of memory over time\n"
      "  html           one web page of a run: memory over time, what was\n"
      "                 live at the peak, a denial or the end, a flame graph;\n"
      "                 of BASE NEW also what grew and shrank\n"
      "\n",
      CMG_REPORT_VERSION);
}

/* The options, after the commands. */
static void
print_options(void)
{
  printf(
      "  --top N               list the N largest leak groups and stacks "
      "(default %d;\n"
      "                        0 lists all)\n"
      "  --min-bytes SIZE      list only leak groups of at least SIZE\n"
      "  --all-frames          also show frames inside the CUDA libraries "
      "and the\n"
      "                        C start-up code\n"
      "  --suppressions FILE   hide leaks matching leak:PATTERN lines "
      "(LeakSanitizer's\n"
      "                        format); may be given more than once\n"
      "  --json                summary, merge and diff as JSON\n"
      "  --weight W            live (default), peak or denial\n"
      "  -o, --output FILE     where flame, timeline, pprof, plot, html write "
      "(default:\n"
      "                        stdout)\n"
      "  --merge               html: several reports as one view\n"
      "  --title TEXT          the flame graph's title\n"
      "  --width PX            the flame graph's width (default %d)\n"
      "  --max-leak SIZE       what check allows (default 0)\n"
      "  --at WHEN             what pprof profiles: exit (default), peak "
      "or denial\n"
      "  --no-symbolize        keep the names the report gives, without "
      "reading\n"
      "                        the program's files on this machine\n"
      "  --user GLOB           frames of modules and Python files whose "
      "path\n"
      "                        matches GLOB are your code (first match "
      "wins)\n"
      "  --library GLOB        ... are a library's, folded by default\n"
      "  --help, --version\n"
      "\n",
      DEFAULT_TOP, DEFAULT_WIDTH);
}

static void
print_help(void)
{
  print_commands();
  print_options();
  fputs("CUMEMGUARD_DEBUGINFO_PATH: where separate debug files are looked for "
        "(as\n"
        "elfutils' --debuginfo-path; default :.debug:/usr/lib/debug).\n"
        "DEBUGINFOD_URLS: debuginfod servers to fetch missing debug files "
        "from; unset,\nthe reader stays on this machine.\n\n"
        "SIZE is bytes or 512K, 3M, 1.5GiB, 2GB.  Exit status: 0; 1 when "
        "check fails;\n2 for bad usage or a file that is not a readable "
        "report.\n",
        stdout);
}

/* A SIZE argument; false after saying why it is not one. */
static bool
parse_size(const char *opt, const char *s, uint64_t *out)
{
  struct cmg__limit l;

  if (cmg__size_parse(s, strlen(s), false, &l) != 0) {
    cmg__output_say("bad %s '%s': expected a size such as 4096, 512K, 3M or "
                    "1.5GiB",
                    opt, s);
    return false;
  }
  *out = l.bytes;
  return true;
}

/* A decimal number from min to max; false after saying why not. */
static bool
parse_number(const char *opt, const char *s, unsigned long min,
             unsigned long max, unsigned long *out)
{
  unsigned long v = 0;
  size_t i;

  for (i = 0; s[i] >= '0' && s[i] <= '9' && v <= max; i++)
    v = v * 10 + (unsigned long)(s[i] - '0');
  if (i == 0 || s[i] != '\0' || v < min || v > max) {
    cmg__output_say("bad %s '%s': expected a number from %lu to %lu", opt, s,
                    min, max);
    return false;
  }
  *out = v;
  return true;
}

/* The options of the view: which leaks and frames are shown, and how. */
static bool
set_view_option(struct args *a, int opt, const char *arg)
{
  char err[CMG__TOOL_ERR_MAX];
  unsigned long n;

  switch (opt) {
  case OPT_TOP:
    if (!parse_number("--top", arg, 0, 1000000000ul, &n))
      return false;
    a->opts.top = n;
    return true;
  case OPT_MIN_BYTES:
    return parse_size("--min-bytes", arg, &a->opts.min_bytes);
  case OPT_ALL_FRAMES:
    a->opts.all_frames = a->flame.all_frames = true;
    return true;
  case OPT_NO_SYMBOLIZE:
    cmg__symbolize_off();
    return true;
  case OPT_USER:
  case OPT_LIBRARY:
    if (cmg__code_rule(arg, opt == OPT_USER) != 0) {
      cmg__output_say("out of memory");
      return false;
    }
    return true;
  case OPT_JSON:
    a->opts.json = true;
    return true;
  case OPT_SUPP:
    if (cmg__supp_load(&a->supp, arg, err, sizeof(err)) != 0) {
      cmg__output_say("%s", err);
      return false;
    }
    return true;
  }
  return false;
}

/* The words --at and --weight take, and what each sets. */
static const char *const ats[3] = { "exit", "peak", "denial" };
static const enum cmg__pprof_at at_values[3] = { CMG__PPROF_AT_EXIT,
                                                 CMG__PPROF_AT_PEAK,
                                                 CMG__PPROF_AT_DENIAL };
static const char *const weights[3] = { "live", "peak", "denial" };
static const enum cmg__flame_weight weight_values[3] = {
  CMG__FLAME_WEIGHT_LIVE, CMG__FLAME_WEIGHT_PEAK, CMG__FLAME_WEIGHT_DENIAL
};

/* Which of an option's three words arg is, or -1 after one line naming
 * the value and the words expected. */
static int
choice(const char *option, const char *arg, const char *const words[3])
{
  for (int i = 0; i < 3; i++)
    if (strcmp(arg, words[i]) == 0)
      return i;
  cmg__output_say("bad %s '%s': expected %s, %s or %s", option, arg, words[0],
                  words[1], words[2]);
  return -1;
}

/* The options of the commands that write a file: flame, pprof, html. */
static bool
set_output_option(struct args *a, int opt, const char *arg)
{
  unsigned long n;
  int i;

  switch (opt) {
  case OPT_AT:
    if ((i = choice("--at", arg, ats)) < 0)
      return false;
    a->at = at_values[i];
    return true;
  case OPT_MERGE:
    a->merge = true;
    return true;
  case OPT_WEIGHT:
    if ((i = choice("--weight", arg, weights)) < 0)
      return false;
    a->flame.weight = weight_values[i];
    return true;
  case OPT_OUTPUT:
    a->output = arg;
    return true;
  case OPT_TITLE:
    a->flame.title = arg;
    return true;
  case OPT_WIDTH:
    if (!parse_number("--width", arg, WIDTH_MIN, WIDTH_MAX, &n))
      return false;
    a->flame.width = (unsigned)n;
    return true;
  }
  return false;
}

static bool
set_option(struct args *a, int opt, const char *arg)
{
  switch (opt) {
  case OPT_MAX_LEAK:
    return parse_size("--max-leak", arg, &a->max_leak);
  case OPT_AT:
  case OPT_MERGE:
  case OPT_WEIGHT:
  case OPT_OUTPUT:
  case OPT_TITLE:
  case OPT_WIDTH:
    return set_output_option(a, opt, arg);
  }
  return set_view_option(a, opt, arg);
}

/* Whether the command has as many reports as it takes; false after
 * saying what is wrong. */
static bool
files_fit(const struct args *a)
{
  if (a->cmd == DIFF && a->n_files != 2) {
    cmg__output_say("diff takes two reports, BASE and NEW; got %d", a->n_files);
    return false;
  }
  if (a->cmd == HTML && !a->merge && a->n_files > 2) {
    cmg__output_say("html takes one report, or BASE and NEW, or several with "
                    "--merge; got %d",
                    a->n_files);
    return false;
  }
  if (a->n_files == 0) {
    cmg__output_say("no report FILE given; try '" CMG__TOOL_NAME " --help'");
    return false;
  }
  return true;
}

/*
 * Fills *a from the command line.  Returns 0 to go on, 1 after --help or
 * --version, -1 after saying what is wrong.
 */
static int
parse_args(int argc, char **argv, struct args *a)
{
  int first = 1;

  a->cmd = SUMMARY;
  a->opts.top = DEFAULT_TOP;
  a->flame.width = DEFAULT_WIDTH;
  for (int c = 0;
       argc > 1 && c < (int)(sizeof(command_names) / sizeof(*command_names));
       c++) {
    if (strcmp(argv[1], command_names[c]) == 0) {
      a->cmd = (enum command)c;
      first = 2;
    }
  }

  /* Files and options in any order, as before the command word. */
  a->files = calloc((size_t)argc, sizeof(*a->files));
  if (a->files == NULL) {
    cmg__output_say("out of memory");
    return -1;
  }
  struct cmg__args g = { .argc = argc,
                         .argv = argv,
                         .command = CMG__TOOL_NAME,
                         .opts = options,
                         .n_opts = sizeof(options) / sizeof(*options),
                         .letters = letters,
                         .n_letters = sizeof(letters) / sizeof(*letters),
                         .next = first };
  enum cmg__args_read r;
  while ((r = cmg__args_next(&g)) != CMG__ARGS_END) {
    if (r == CMG__ARGS_BAD)
      return -1;
    if (r == CMG__ARGS_OPERAND) {
      a->files[a->n_files++] = (char *)g.value;
      continue;
    }
    int opt = OPT_TOP + (int)(g.opt - options);
    const char *word =
        g.argv[g.next -
               (g.value != NULL && g.value == g.argv[g.next - 1] ? 2 : 1)];
    if (opt == OPT_HELP) {
      print_help();
      return 1;
    }
    if (opt == OPT_VERSION) {
      printf("%s %s (reads report version %d)\n", CMG__TOOL_NAME,
             CMG_VERSION_STRING, CMG_REPORT_VERSION);
      return 1;
    }
    if (!(option_commands[opt - OPT_TOP] & ON(a->cmd))) {
      cmg__output_say("option '%s' does not apply to %s", word,
                      command_names[a->cmd]);
      return -1;
    }
    if (!set_option(a, opt, g.value))
      return -1;
  }
  while (g.next < argc)
    a->files[a->n_files++] = argv[g.next++];
  if (!files_fit(a))
    return -1;
  a->opts.supp = &a->supp;
  return 0;
}

int
main(int argc, char **argv)
{
  struct args a;

  cmg__log_program(CMG__TOOL_NAME);
  memset(&a, 0, sizeof(a));
  int rc = parse_args(argc, argv, &a);
  if (rc != 0) {
    cmg__supp_free(&a.supp);
    free(a.files);
    if (rc > 0 && (fflush(stdout) != 0 || ferror(stdout))) {
      cmg__output_say("cannot write to standard output: %s", strerror(errno));
      return CMG__TOOL_EXIT_ERROR;
    }
    return rc > 0 ? 0 : CMG__TOOL_EXIT_ERROR;
  }

  cmg__symbolize_debuginfo_path(getenv("CUMEMGUARD_DEBUGINFO_PATH"));
  switch (a.cmd) {
  case SUMMARY:
  case MERGE:
    rc =
        cmg__summary_main(a.files, a.n_files, a.cmd == MERGE, &a.supp, &a.opts);
    break;
  case DIFF:
    rc = cmg__diff_main(a.files[0], a.files[1], &a.supp, &a.opts);
    break;
  case FOLDED:
    rc = cmg__flame_folded_main(a.files, a.n_files, &a.supp, &a.flame);
    break;
  case FLAME:
    rc = cmg__flame_main(a.files, a.n_files, &a.supp, &a.flame, a.output);
    break;
  case CHECK:
    rc = cmg__check_main(a.files, a.n_files, &a.supp, &a.opts, a.max_leak);
    break;
  case TIMELINE:
    rc = cmg__timeline_trace_main(a.files, a.n_files, a.output);
    break;
  case PPROF:
    rc = cmg__pprof_main(a.files, a.n_files, a.at, a.output);
    break;
  case PLOT:
    rc = cmg__plot_main(a.files, a.n_files, a.output);
    break;
  case HTML:
    rc =
        cmg__html_main(a.files, a.n_files, a.merge, &a.supp, &a.opts, a.output);
    break;
  }
  cmg__supp_free(&a.supp);
  free(a.files);
  cmg__symbolize_end();
  cmg__code_end();
  if (fflush(stdout) != 0 || ferror(stdout)) {
    cmg__output_say("cannot write to standard output: %s", strerror(errno));
    return CMG__TOOL_EXIT_ERROR;
  }
  return rc;
}
