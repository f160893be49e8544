/*
 * summary FILE... and merge FILE...: summary prints each report on its
 * own, merge all of them as one view; as text (show/summary_text.c) or,
 * with --json, as one document of summaries (show/summary_json.c), written
 * as it is made: into memory until the last report is read, so that a bad
 * report leaves no half document, then on standard output.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/jsonw.h"

#include "reader/cmd/summary.h"
#include "reader/model/index.h"
#include "reader/model/view.h"
#include "reader/run/run.h"
#include "reader/show/output.h"
#include "reader/show/summary_json.h"
#include "reader/show/summary_text.h"
#include "reader/tool.h"

int
cmg__summary_main(char *const *files, int n_files, bool merged,
                  struct cmg__supp *supp, const struct cmg__tool_opts *o)
{
  struct cmg__jsonw w;
  int i = 0, rc = 0;

  if (o->json) {
    if (cmg__jsonw_open(&w, -1, true) != 0) {
      cmg__output_say("out of memory");
      return CMG__TOOL_EXIT_ERROR;
    }
    cmg__jsonw_object(&w);
    cmg__jsonw_string(cmg__jsonw_key(&w, "format"),
                      "cumemguard-report-summary");
    cmg__jsonw_number(cmg__jsonw_key(&w, "version"), 1);
    cmg__jsonw_array(cmg__jsonw_key(&w, "summaries"));
  }
  while (rc == 0 && i < n_files) {
    struct cmg__index ix;
    struct cmg__view v;

    cmg__index_init(&ix);
    cmg__view_init(&v, &ix, true);
    do {
      if (cmg__run_load(&v, files[i++]) != 0)
        rc = CMG__TOOL_EXIT_ERROR;
    } while (rc == 0 && merged && i < n_files);
    if (rc == 0 && cmg__run_finish(&v, supp) != 0)
      rc = CMG__TOOL_EXIT_ERROR;
    if (rc == 0 && o->json) {
      /* Every report is read: only writing can fail now. */
      if (i == n_files) {
        fflush(stdout);
        cmg__jsonw_to_fd(&w, STDOUT_FILENO);
      }
      cmg__summary_json_write(&w, &v, o);
    } else if (rc == 0) {
      if (i > 1 && !merged)
        printf("\n");
      cmg__summary_text_print(stdout, &v, o, false);
    }
    cmg__view_free(&v);
    cmg__index_free(&ix);
  }
  if (!o->json)
    return rc;
  if (rc != 0) {
    cmg__jsonw_close(&w); /* still in memory: nothing was printed */
    return rc;
  }
  cmg__jsonw_array_end(&w);
  cmg__jsonw_object_end(&w);
  cmg__jsonw_lit(&w, "\n");
  int err = cmg__jsonw_close(&w);
  if (err == -ENOMEM)
    cmg__output_say("out of memory");
  else if (err != 0)
    cmg__output_say("cannot write to standard output: %s", strerror(-err));
  return err == 0 ? 0 : CMG__TOOL_EXIT_ERROR;
}
