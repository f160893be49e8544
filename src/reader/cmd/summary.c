/*
 * summary FILE... and merge FILE...: summary prints each report on its
 * own, merge all of them as one view; as text (show/summary_text.c) or,
 * with --json, as one document of summaries (show/summary_json.c).
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "reader/cmd/summary.h"
#include "reader/model/index.h"
#include "reader/model/view.h"
#include "reader/run/run.h"
#include "reader/show/output.h"
#include "reader/show/summary_json.h"
#include "reader/show/summary_text.h"
#include "reader/tool.h"

static cJSON *
summary_document(void)
{
  cJSON *doc = cJSON_CreateObject();

  cJSON_AddStringToObject(doc, "format", "cumemguard-report-summary");
  cJSON_AddNumberToObject(doc, "version", 1);
  cJSON_AddItemToObject(doc, "summaries", cJSON_CreateArray());
  return doc;
}

int
cmg__summary_main(char *const *files, int n_files, bool merged,
                  struct cmg__supp *supp, const struct cmg__tool_opts *o)
{
  cJSON *doc = o->json ? summary_document() : NULL;
  int i = 0, rc = 0;

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
    if (rc == 0 && doc != NULL) {
      cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(doc, "summaries"),
                           cmg__summary_json_of(&v, o));
    } else if (rc == 0) {
      if (i > 1 && !merged)
        printf("\n");
      cmg__summary_text_print(stdout, &v, o, false);
    }
    cmg__view_free(&v);
    cmg__index_free(&ix);
  }
  if (doc != NULL && rc == 0 && cmg__output_json(doc) != 0)
    rc = CMG__TOOL_EXIT_ERROR;
  else if (doc != NULL && rc != 0)
    cJSON_Delete(doc);
  return rc;
}
