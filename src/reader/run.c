/*
 * What every command of cumemguard-report does around its own printing:
 * reading report files into a view, finishing the view (sorted, with the
 * suppressions applied afresh), printing a JSON document, and saying what
 * went wrong.  A problem is one line on stderr, after whatever stdout holds
 * so far, so that the two stay in order on a terminal; the commands stop at
 * the first one, because a summary that silently skipped a report would be
 * a wrong answer.
 *
 * Everything here prints; nothing below it (read.c, view.c, supp.c) does:
 * they write their one line into a buffer, and this file says it.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "reader/load/model.h"
#include "reader/load/read.h"
#include "reader/model/supp.h"
#include "reader/model/symbolize.h"
#include "reader/model/view.h"
#include "reader/run.h"
#include "reader/tool.h"

void
cmg__tool_say(const char *fmt, ...)
{
  va_list ap;

  fflush(stdout);
  fputs(CMG__TOOL_NAME ": ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

int
cmg__tool_load(struct cmg__view *v, const char *file)
{
  struct cmg__model_report r;
  char err[CMG__TOOL_ERR_MAX] = "";
  int rc = cmg__read_report(file, &r, err, sizeof(err));

  if (rc == 0 &&
      (cmg__symbolize_report(&r) != 0 || cmg__view_add(v, &r) != 0)) {
    snprintf(err, sizeof(err), "out of memory");
    rc = -ENOMEM;
  }
  cmg__read_report_free(&r);
  if (rc != 0)
    cmg__tool_say("%s: %s", file, err[0] != '\0' ? err : "cannot read");
  return rc;
}

int
cmg__tool_finish(struct cmg__view *v, struct cmg__supp *supp)
{
  cmg__view_sort(v);
  for (size_t i = 0; i < supp->n; i++)
    supp->rules[i].count = supp->rules[i].bytes = 0;
  if (cmg__supp_apply(supp, v) != 0) {
    cmg__tool_say("out of memory");
    return -ENOMEM;
  }
  return 0;
}

int
cmg__tool_load_all(struct cmg__view *v, char *const *files, int n_files,
                   struct cmg__supp *supp)
{
  int rc = 0;

  for (int i = 0; rc == 0 && i < n_files; i++)
    rc = cmg__tool_load(v, files[i]);
  if (rc == 0)
    rc = cmg__tool_finish(v, supp);
  return rc;
}

int
cmg__tool_print_json(struct cJSON *doc)
{
  char *text = doc != NULL ? cJSON_Print(doc) : NULL;
  int rc = text != NULL ? 0 : -ENOMEM;

  if (rc == 0)
    printf("%s\n", text);
  else
    cmg__tool_say("out of memory");
  cJSON_free(text);
  cJSON_Delete(doc);
  return rc;
}
