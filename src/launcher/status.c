/*
 * cumemguard status [GROUP] [--json | --prometheus] [--textfile FILE]
 * [--every SECONDS]: the operator's view of the guarded processes, read
 * from their shared segments (group_status.c); runs no program and needs
 * no daemon.
 *
 * --textfile writes the metrics for node_exporter's textfile collector,
 * which reads every *.prom file of its directory at each scrape: through a
 * temporary file in the same directory and a rename, so a scrape never
 * sees half a file.  --every repeats that until the process is killed; a
 * write that fails once (a full disk) is said and tried again next time,
 * not the end of the loop.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cumemguard.h"
#include "ops/group_status.h"
#include "core/log.h"
#include "core/size.h"
#include "ops/files.h"
#include "core/args.h"
#include "launcher/status.h"

#define USAGE                                                                  \
  "usage: cumemguard status [GROUP] [--json | --prometheus] "                  \
  "[--textfile FILE]\n"                                                        \
  "                         [--every SECONDS]\n"

static void
help(void)
{
  printf(USAGE
         "\n"
         "Prints each group of this user (or GROUP), and this user's "
         "processes in no\ngroup: its cap and usage per device, and each "
         "process: pid, command, live\nbytes and peak per device.  Root "
         "sees every user's, and those in containers.\nDead members not "
         "yet reclaimed are marked.\n\n"
         "  --json              one JSON document\n"
         "  --prometheus        Prometheus metrics (text exposition "
         "format)\n"
         "  --textfile FILE     write the metrics to FILE (*.prom) "
         "atomically, for\n"
         "                      node_exporter's textfile collector\n"
         "  --every SECONDS     with --textfile: write again every SECONDS "
         "(500ms, 15s)\n");
}

/* The command line, as parse_options reads it. */
struct status_options {
  const char *name, *textfile, *every;
  bool prometheus, json;
};

/* Reads the command line into *o: true to go on, else false with the exit
 * status in *status (after --help, or one line saying what is wrong). */
static bool
parse_options(int argc, char **argv, struct status_options *o, int *status)
{
  static const struct cmg__opt opts[] = {
    { "json", NULL },       { "prometheus", NULL }, { "textfile", "FILE" },
    { "every", "SECONDS" }, { "help", NULL },
  };
  struct cmg__args a = { .argc = argc,
                         .argv = argv,
                         .command = "cumemguard status",
                         .opts = opts,
                         .n_opts = sizeof(opts) / sizeof(opts[0]),
                         .next = 1 };
  enum cmg__args_read r;

  *status = CMG_EXIT_USAGE;
  while ((r = cmg__args_next(&a)) > CMG__ARGS_END) {
    if (r == CMG__ARGS_OPERAND && o->name != NULL) {
      cmg__log("status takes one GROUP, not also '%s'", a.value);
      return false;
    }
    if (r == CMG__ARGS_OPERAND)
      o->name = a.value;
    else if (cmg__args_is(&a, "json"))
      o->json = true;
    else if (cmg__args_is(&a, "prometheus"))
      o->prometheus = true;
    else if (cmg__args_is(&a, "textfile"))
      o->textfile = a.value;
    else if (cmg__args_is(&a, "every"))
      o->every = a.value;
    else {
      help();
      *status = fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
      return false;
    }
  }
  if (r == CMG__ARGS_BAD)
    return false;
  if (a.next < argc && o->name == NULL)
    o->name = argv[a.next++];
  if (a.next < argc) {
    cmg__log("status takes one GROUP, not also '%s'", argv[a.next]);
    return false;
  }
  return true;
}

/* Checks the options together and works out the format and the period
 * (0: once): 0, or CMG_EXIT_USAGE after one line. */
static int
check_options(const struct status_options *o, enum cmg__status_format *format,
              uint64_t *period_ns)
{
  if (o->json && (o->prometheus || o->textfile != NULL)) {
    cmg__log("--json and --prometheus (or --textfile) are two formats: "
             "choose one");
    return CMG_EXIT_USAGE;
  }
  if (o->textfile != NULL && !cmg__file_has_ext(o->textfile, ".prom")) {
    cmg__log("bad value '%s' for --textfile: expected a file name ending "
             "in .prom, the files node_exporter's textfile collector reads",
             o->textfile);
    return CMG_EXIT_USAGE;
  }
  if (o->every != NULL) {
    if (o->textfile == NULL) {
      cmg__log("--every needs --textfile FILE: it rewrites that file");
      return CMG_EXIT_USAGE;
    }
    if (cmg__duration_parse(o->every, strlen(o->every), period_ns) != 0) {
      cmg__log("bad value '%s' for --every: expected a duration from 1ms "
               "to 24h (15, 500ms, 2m)",
               o->every);
      return CMG_EXIT_USAGE;
    }
  }
  if (o->prometheus || o->textfile != NULL)
    *format = CMG__STATUS_PROMETHEUS;
  else if (o->json)
    *format = CMG__STATUS_JSON;
  return 0;
}

/* Gets the status once and writes it to textfile, or standard output when
 * NULL: 0, or not 0 after one line, with *unread set when the status
 * itself could not be had. */
static int
status_once(const char *name, enum cmg__status_format format,
            const char *textfile, bool *unread)
{
  char *text = NULL, err[512];
  size_t len = 0;
  int rc = cmg__group_status(name, format, &text, &len, err, sizeof(err));

  *unread = rc != 0;
  if (rc != 0) {
    cmg__log("%s", err);
    /* --json says it on standard output too, as one document. */
    if (text != NULL)
      (void)cmg__write_all(STDOUT_FILENO, text, len);
  } else if (textfile != NULL) {
    rc = cmg__write_atomic(textfile, text, len);
  } else {
    rc = cmg__write_all(STDOUT_FILENO, text, len);
    if (rc != 0)
      cmg__log("cannot write the status: %s", strerror(-rc));
  }
  free(text);
  return rc;
}

int
cmg__status_main(int argc, char **argv)
{
  struct status_options o = { .name = NULL };
  enum cmg__status_format format = CMG__STATUS_TEXT;
  uint64_t period_ns = 0;
  int rc;

  if (!parse_options(argc, argv, &o, &rc))
    return rc;
  if (check_options(&o, &format, &period_ns) != 0)
    return CMG_EXIT_USAGE;
  for (;;) {
    bool unread;

    rc = status_once(o.name, format, o.textfile, &unread);
    if (period_ns == 0 && unread)
      return CMG_EXIT_USAGE;
    if (period_ns == 0)
      return rc == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    nanosleep(&(struct timespec){ (time_t)(period_ns / 1000000000u),
                                  (long)(period_ns % 1000000000u) },
              NULL);
  }
}
