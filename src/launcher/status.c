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
#include "launcher/files.h"
#include "launcher/args.h"
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

int
cmg__status_main(int argc, char **argv)
{
  const char *name = NULL, *textfile = NULL, *every = NULL;
  enum cmg__status_format format = CMG__STATUS_TEXT;
  bool prometheus = false, json = false;
  uint64_t period_ns = 0;
  char err[512];

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

  while ((r = cmg__args_next(&a)) > CMG__ARGS_END) {
    if (r == CMG__ARGS_OPERAND && name != NULL) {
      cmg__log("status takes one GROUP, not also '%s'", a.value);
      return CMG_EXIT_USAGE;
    }
    if (r == CMG__ARGS_OPERAND)
      name = a.value;
    else if (cmg__args_is(&a, "json"))
      json = true;
    else if (cmg__args_is(&a, "prometheus"))
      prometheus = true;
    else if (cmg__args_is(&a, "textfile"))
      textfile = a.value;
    else if (cmg__args_is(&a, "every"))
      every = a.value;
    else {
      help();
      return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    }
  }
  if (r == CMG__ARGS_BAD)
    return CMG_EXIT_USAGE;
  if (a.next < argc && name == NULL)
    name = argv[a.next++];
  if (a.next < argc) {
    cmg__log("status takes one GROUP, not also '%s'", argv[a.next]);
    return CMG_EXIT_USAGE;
  }
  if (json && (prometheus || textfile != NULL)) {
    cmg__log("--json and --prometheus (or --textfile) are two formats: "
             "choose one");
    return CMG_EXIT_USAGE;
  }
  if (textfile != NULL && !cmg__file_has_ext(textfile, ".prom")) {
    cmg__log("bad value '%s' for --textfile: expected a file name ending "
             "in .prom, the files node_exporter's textfile collector reads",
             textfile);
    return CMG_EXIT_USAGE;
  }
  prometheus = prometheus || textfile != NULL;
  if (every != NULL) {
    if (textfile == NULL) {
      cmg__log("--every needs --textfile FILE: it rewrites that file");
      return CMG_EXIT_USAGE;
    }
    if (cmg__duration_parse(every, strlen(every), &period_ns) != 0) {
      cmg__log("bad value '%s' for --every: expected a duration from 1ms "
               "to 24h (15, 500ms, 2m)",
               every);
      return CMG_EXIT_USAGE;
    }
  }
  if (prometheus)
    format = CMG__STATUS_PROMETHEUS;
  else if (json)
    format = CMG__STATUS_JSON;

  for (;;) {
    char *text = NULL;
    size_t len = 0;
    int rc = cmg__group_status(name, format, &text, &len, err, sizeof(err));

    if (rc != 0) {
      cmg__log("%s", err);
      /* --json says it on standard output too, as one document. */
      if (text != NULL)
        (void)cmg__write_all(STDOUT_FILENO, text, len);
      if (period_ns == 0) {
        free(text);
        return CMG_EXIT_USAGE;
      }
    } else if (textfile != NULL) {
      rc = cmg__write_atomic(textfile, text, len);
    } else {
      rc = cmg__write_all(STDOUT_FILENO, text, len);
      if (rc != 0)
        cmg__log("cannot write the status: %s", strerror(-rc));
    }
    free(text);
    if (period_ns == 0)
      return rc == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    nanosleep(&(struct timespec){ (time_t)(period_ns / 1000000000u),
                                  (long)(period_ns % 1000000000u) },
              NULL);
  }
}
