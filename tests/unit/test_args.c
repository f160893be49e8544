/*
 * The launcher's one way of reading arguments (src/launcher/args.c), as
 * its three commands use it: every form of an option, the operands, "--",
 * and each mistake refused.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/args.h"
#include "../tap.h"

static const struct cmg__opt opts[] = {
  { "limit", "SIZE" },
  { "json", NULL },
};

/* Reads the words of line (argv[0] "cmd"); writes what each read gave as
 * "o:NAME=VALUE", "p:OPERAND", "end@NEXT" or "bad", space-separated. */
static const char *
walk(const char *line)
{
  static char copy[256], out[512];
  char *argv[16];
  int argc = 0;

  snprintf(copy, sizeof(copy), "cmd %s", line);
  for (char *w = strtok(copy, " "); w != NULL && argc < 16;
       w = strtok(NULL, " "))
    argv[argc++] = strcmp(w, "''") == 0 ? (char *)"" : w;
  struct cmg__args a = { .argc = argc,
                         .argv = argv,
                         .command = "cmd",
                         .opts = opts,
                         .n_opts = 2,
                         .next = 1 };
  size_t n = 0;
  out[0] = '\0';
  for (;;) {
    enum cmg__args_read r = cmg__args_next(&a);
    const char *sep = n ? " " : "";
    if (r == CMG__ARGS_OPTION)
      n += snprintf(out + n, sizeof(out) - n, "%so:%s=%s", sep, a.opt->name,
                    a.value ? a.value : "-");
    else if (r == CMG__ARGS_OPERAND)
      n += snprintf(out + n, sizeof(out) - n, "%sp:%s", sep, a.value);
    else {
      snprintf(out + n, sizeof(out) - n, "%s%s", sep,
               r == CMG__ARGS_BAD ? "bad" : "end");
      if (r == CMG__ARGS_END)
        snprintf(out + strlen(out), sizeof(out) - strlen(out), "@%d", a.next);
      return out;
    }
  }
}

int
main(void)
{
  static const struct {
    const char *line, *want;
  } cases[] = {
    { "", "end@1" },
    { "--limit 1G", "o:limit=1G end@3" },
    { "--limit=1G", "o:limit=1G end@2" },
    { "--limit=", "o:limit= end@2" },
    { "--limit -", "o:limit=- end@3" },
    { "--limit --json", "o:limit=--json end@3" },
    { "--json", "o:json=- end@2" },
    { "--json G --limit 2G", "o:json=- p:G o:limit=2G end@5" },
    { "-- --json", "end@2" },
    { "- --json", "p:- o:json=- end@3" },
    { "prog --json", "p:prog o:json=- end@3" },
    { "--limit", "bad" },
    { "--json=1", "bad" },
    { "--lim 1G", "bad" },
    { "--limits 1G", "bad" },
    { "-l 1G", "bad" },
    { "-limit 1G", "bad" },
    { "--", "end@2" },
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    is_str(walk(cases[i].line), cases[i].want, "'%s'", cases[i].line);
  return done_testing();
}
