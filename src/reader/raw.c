/*
 * The commands that draw time read each report on its own, as it was
 * written: a trace puts processes side by side and a profile keeps one
 * report's addresses, where a view would merge them.  Reading stops at
 * the first bad file, said in one line, before any output is created, so
 * a bad report leaves no empty trace or picture behind.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "reader/load/model.h"
#include "reader/load/read.h"
#include "reader/model/names.h"
#include "reader/model/symbolize.h"
#include "reader/raw.h"
#include "reader/run.h"
#include "reader/tool.h"

int
cmg__tool_raw_read(char *const *files, int n, unsigned what,
                   struct cmg__model_report **out)
{
  char err[CMG__TOOL_ERR_MAX];

  *out = calloc((size_t)n, sizeof(**out));
  if (*out == NULL) {
    cmg__tool_say("out of memory");
    return -1;
  }
  for (int i = 0; i < n; i++) {
    err[0] = '\0';
    if (cmg__read_report_with(files[i], what, &(*out)[i], err, sizeof(err)) !=
            0 ||
        (cmg__symbolize_report(&(*out)[i]) != 0 &&
         snprintf(err, sizeof(err), "out of memory") > 0)) {
      cmg__tool_say("%s: %s", files[i], err[0] != '\0' ? err : "cannot read");
      cmg__tool_raw_free(*out, i + 1);
      *out = NULL;
      return -1;
    }
  }
  return 0;
}

void
cmg__tool_raw_free(struct cmg__model_report *r, int n)
{
  for (int i = 0; r != NULL && i < n; i++)
    cmg__read_report_free(&r[i]);
  free(r);
}

int
cmg__tool_raw_need_timeline(const struct cmg__model_report *r, int n)
{
  for (int i = 0; i < n; i++) {
    if (!r[i].timeline.present) {
      cmg__tool_say("%s: no \"timeline\" in this report (written with "
                    "timeline=0, or by an older cumemguard): expected a "
                    "report with memory over time",
                    r[i].file);
      return -1;
    }
  }
  return 0;
}

FILE *
cmg__tool_raw_create(const char *output)
{
  if (output == NULL || strcmp(output, "-") == 0)
    return stdout;
  FILE *f = fopen(output, "w");
  if (f == NULL)
    cmg__tool_say("%s: cannot create: %s", output, strerror(errno));
  return f;
}

int
cmg__tool_raw_close(FILE *f, const char *output, int rc)
{
  if (f == stdout)
    return rc == 0 ? 0 : CMG__TOOL_EXIT_ERROR;
  bool bad = (ferror(f) | fclose(f)) != 0;
  if (bad && rc == 0)
    cmg__tool_say("%s: cannot write: %s", output, strerror(errno));
  return rc == 0 && !bad ? 0 : CMG__TOOL_EXIT_ERROR;
}

const char *
cmg__tool_raw_frame(const struct cmg__model_report *r, uint32_t f, char *buf,
                    size_t len)
{
  const struct cmg__model_frame *fr = &r->frames[f];

  if (fr->function != NULL)
    snprintf(buf, len, "%s", fr->function);
  else if (fr->module != CMG__TOOL_NONE && fr->has_offset)
    snprintf(buf, len, "%s+0x%" PRIx64,
             cmg__names_base(r->modules[fr->module].path), fr->offset);
  else
    snprintf(buf, len, "0x%" PRIx64, fr->address);
  return buf;
}

const char *
cmg__tool_raw_stack(const struct cmg__model_report *r, uint32_t s,
                    unsigned depth, char *buf, size_t len)
{
  char name[256];
  size_t used = 0;

  buf[0] = '\0';
  if (s == CMG__TOOL_NONE)
    return buf;
  for (uint32_t i = 0; i < r->stacks[s].n && i < depth; i++) {
    int k = snprintf(
        buf + used, len - used, "%s%s", i ? " < " : "",
        cmg__tool_raw_frame(r, r->stacks[s].frames[i], name, sizeof(name)));
    if (k < 0 || (size_t)k >= len - used)
      break;
    used += (size_t)k;
  }
  return buf;
}

uint64_t
cmg__tool_raw_limit(const struct cmg__model_report *r, int device)
{
  for (size_t i = 0; i < r->n_devices; i++)
    if (r->devices[i].ordinal == device && r->devices[i].has_limit)
      return r->devices[i].limit_bytes;
  return 0;
}
