/*
 * What every command of cumemguard-report does around its own printing:
 * the stages below it run in order.  A report file is loaded into the
 * data model (load/read.c), its frames are named from this machine's
 * files (model/symbolize.c), and it is folded into a view (model/view.c);
 * once every report is in, the view is finished: sorted, with the
 * suppressions applied afresh.  The commands that draw time take the
 * reports as they were written instead, loaded and named the same way.
 *
 * The commands stop at the first problem, because a summary that silently
 * skipped a report would be a wrong answer.  Nothing below this file
 * prints: the loader and the model write their one line into a buffer,
 * and this file says it (show/output.c).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>

#include "reader/load/model.h"
#include "reader/load/read.h"
#include "reader/model/index.h"
#include "reader/model/supp.h"
#include "reader/model/symbolize.h"
#include "reader/model/view.h"
#include "reader/run/run.h"
#include "reader/show/one_line.h"
#include "reader/show/output.h"
#include "reader/tool.h"

int
cmg__run_load(struct cmg__view *v, const char *file)
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
    cmg__output_say("%s: %s", file, err[0] != '\0' ? err : "cannot read");
  return rc;
}

int
cmg__run_finish(struct cmg__view *v, struct cmg__supp *supp)
{
  cmg__view_sort(v);
  for (size_t i = 0; i < supp->n; i++)
    supp->rules[i].count = supp->rules[i].bytes = 0;
  if (cmg__supp_apply(supp, v) != 0) {
    cmg__output_say("out of memory");
    return -ENOMEM;
  }
  return 0;
}

int
cmg__run_load_all(struct cmg__view *v, char *const *files, int n_files,
                  struct cmg__supp *supp)
{
  int rc = 0;

  for (int i = 0; rc == 0 && i < n_files; i++)
    rc = cmg__run_load(v, files[i]);
  if (rc == 0)
    rc = cmg__run_finish(v, supp);
  return rc;
}

int
cmg__run_pair(const char *base_file, const char *new_file,
              struct cmg__supp *supp,
              int (*done)(const struct cmg__view *, const struct cmg__view *,
                          void *),
              void *arg)
{
  struct cmg__index ix;
  struct cmg__view base, now;
  int rc = -1;

  cmg__index_init(&ix);
  cmg__view_init(&base, &ix, false);
  cmg__view_init(&now, &ix, false);
  if (cmg__run_load(&base, base_file) == 0 &&
      cmg__run_load(&now, new_file) == 0 && cmg__run_finish(&base, supp) == 0 &&
      cmg__run_finish(&now, supp) == 0) {
    rc = done(&base, &now, arg);
    if (rc != 0)
      cmg__output_say("out of memory");
  }
  cmg__view_free(&base);
  cmg__view_free(&now);
  cmg__index_free(&ix);
  return rc;
}

int
cmg__run_raw_read(char *const *files, int n, unsigned what,
                  struct cmg__model_report **out)
{
  char err[CMG__TOOL_ERR_MAX];

  *out = calloc((size_t)n, sizeof(**out));
  if (*out == NULL) {
    cmg__output_say("out of memory");
    return -1;
  }
  for (int i = 0; i < n; i++) {
    err[0] = '\0';
    if (cmg__read_report_with(files[i], what, &(*out)[i], err, sizeof(err)) !=
            0 ||
        (cmg__symbolize_report(&(*out)[i]) != 0 &&
         snprintf(err, sizeof(err), "out of memory") > 0)) {
      cmg__output_say("%s: %s", files[i], err[0] != '\0' ? err : "cannot read");
      cmg__run_raw_free(*out, i + 1);
      *out = NULL;
      return -1;
    }
  }
  return 0;
}

void
cmg__run_raw_free(struct cmg__model_report *r, int n)
{
  for (int i = 0; r != NULL && i < n; i++)
    cmg__read_report_free(&r[i]);
  free(r);
}

int
cmg__run_need_timeline(const struct cmg__model_report *r, int n)
{
  for (int i = 0; i < n; i++) {
    if (!r[i].timeline.present) {
      cmg__output_say("%s: no \"timeline\" in this report (written with "
                      "timeline=0, or by an older cumemguard): expected a "
                      "report with memory over time",
                      r[i].file);
      return -1;
    }
  }
  return 0;
}

int
cmg__run_stacks_init(struct cmg__run_stacks *s,
                     const struct cmg__model_report *r)
{
  cmg__index_init(&s->ix);
  s->ids = malloc((r->n_stacks + 1) * sizeof(*s->ids));
  if (s->ids == NULL || cmg__index_add(&s->ix, r, s->ids) != 0)
    return -ENOMEM;
  return 0;
}

char *
cmg__run_stacks_line(const struct cmg__run_stacks *s, uint32_t stack)
{
  return cmg__one_line_text(
      &s->ix, stack != CMG__TOOL_NONE ? s->ids[stack] : CMG__TOOL_NONE, false);
}

void
cmg__run_stacks_free(struct cmg__run_stacks *s)
{
  cmg__index_free(&s->ix);
  free(s->ids);
  s->ids = NULL;
}

uint64_t
cmg__run_limit(const struct cmg__model_report *r, int device)
{
  for (size_t i = 0; i < r->n_devices; i++)
    if (r->devices[i].ordinal == device && r->devices[i].has_limit)
      return r->devices[i].limit_bytes;
  return 0;
}
