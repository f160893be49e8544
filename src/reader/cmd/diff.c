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
#include <stdio.h>
#include <stdlib.h>

#include "core/jsonw.h"

#include "reader/cmd/diff.h"
#include "reader/model/delta.h"
#include "reader/run/run.h"
#include "reader/show/diff_json.h"
#include "reader/show/diff_text.h"
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
    char *text = NULL;

    if (cmg__jsonw_open(&w, -1, true) == 0) {
      cmg__diff_json_write(&w, base, now, c, n, o);
      text = cmg__jsonw_take(&w);
    }
    if (text != NULL)
      fprintf(f, "%s\n", text);
    else
      rc = -ENOMEM;
    free(text);
  } else {
    cmg__diff_text_print(f, base, now, c, n, o);
  }
  free(c);
  return rc;
}

static int
print_diff(const struct cmg__view *base, const struct cmg__view *now, void *o)
{
  return cmg__diff_print(stdout, base, now, o) == 0 ? 0 : -1;
}

int
cmg__diff_main(const char *base_file, const char *new_file,
               struct cmg__supp *supp, const struct cmg__tool_opts *o)
{
  return cmg__run_pair(base_file, new_file, supp, print_diff, (void *)o) == 0
             ? 0
             : CMG__TOOL_EXIT_ERROR;
}
