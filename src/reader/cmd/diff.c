/*
 * diff BASE NEW: what grew and what shrank between two reports of one
 * program, such as a dump taken after warm-up and the report at exit of a
 * long-running service.  The two reports are read into views over one
 * index (run/run.c), their groups compared key by key (model/delta.c) and
 * the changes printed as text (show/diff_text.c) or, with --json, as one
 * document (show/diff_json.c).
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"

#include "reader/cmd/diff.h"
#include "reader/model/delta.h"
#include "reader/run/run.h"
#include "reader/show/diff_json.h"
#include "reader/show/diff_text.h"
#include "reader/show/output.h"
#include "reader/tool.h"

int
cmg__diff_print(FILE *f, const struct cmg__view *base,
                const struct cmg__view *now, const struct cmg__tool_opts *o)
{
  size_t n;
  struct cmg__delta *c = cmg__delta_of(base, now, &n);
  int rc = 0;

  if (c == NULL)
    return -ENOMEM;
  if (o->json) {
    struct cmg__jsonw w;

    /* Both views are read: nothing left can fail but writing, so the
     * document goes out as it is made. */
    fflush(f);
    rc = cmg__jsonw_open(&w, fileno(f), true);
    if (rc == 0) {
      cmg__diff_json_write(&w, base, now, c, n, o);
      cmg__jsonw_lit(&w, "\n");
      rc = cmg__jsonw_close(&w);
    }
  } else {
    cmg__diff_text_print(f, base, now, c, n, o);
  }
  free(c);
  return rc;
}

struct print_arg {
  const struct cmg__tool_opts *o;
  bool unwritten; /* said why */
};

/* Out of memory is said by cmg__run_pair, which takes -1 for it. */
static int
print_diff(const struct cmg__view *base, const struct cmg__view *now, void *arg)
{
  struct print_arg *a = arg;
  int rc = cmg__diff_print(stdout, base, now, a->o);

  if (rc == -ENOMEM)
    return -1;
  if (rc != 0) {
    cmg__output_say("cannot write to standard output: %s", strerror(-rc));
    a->unwritten = true;
  }
  return 0;
}

int
cmg__diff_main(const char *base_file, const char *new_file,
               struct cmg__supp *supp, const struct cmg__tool_opts *o)
{
  struct print_arg a = { o, false };

  return cmg__run_pair(base_file, new_file, supp, print_diff, &a) == 0 &&
                 !a.unwritten
             ? 0
             : CMG__TOOL_EXIT_ERROR;
}
