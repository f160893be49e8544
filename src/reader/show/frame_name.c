/*
 * How a frame is named when printed: its short label (the flame graph's
 * boxes, the one-line views, the folded stacks) and the numbered frames'
 * fuller form, from an interned frame of the index.  Function names are
 * as the report or the symbolizer gave them, demangled; a source file is
 * named by its base name unless the whole path is asked for
 * (--all-frames); a frame nothing names is its module and offset, or its
 * address where it has no module.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "reader/load/model.h"
#include "reader/model/index.h"
#include "reader/model/names.h"
#include "reader/show/frame_name.h"
#include "reader/tool.h"

/* "function (file:LINE)", without ":LINE" when the line is unknown. */
static void
put_source(FILE *f, const char *function, const char *file, uint64_t line)
{
  fprintf(f, "%s (%s", function != NULL ? function : "?", file);
  if (line > 0)
    fprintf(f, ":%" PRIu64, line);
  fputc(')', f);
}

/* The name a person reads first: without the parameters. */
static const char *
short_name(const struct cmg__index_frame *fr)
{
  return fr->name != NULL ? fr->name : fr->function;
}

void
cmg__frame_name_put_label(FILE *f, const struct cmg__index *ix, uint32_t frame)
{
  const struct cmg__index_frame *fr = &ix->frames[frame];

  if (fr->file != NULL)
    put_source(f, short_name(fr), cmg__names_base(fr->file), fr->line);
  else if (fr->python)
    put_source(f, fr->function, "?", fr->line);
  else if (fr->function != NULL)
    fputs(short_name(fr), f);
  else if (fr->has_offset)
    fprintf(f, "%s+0x%" PRIx64, ix->modules[fr->module].name, fr->offset);
  else
    fprintf(f, "0x%" PRIx64, fr->address);
}

char *
cmg__frame_name_label(const struct cmg__index *ix, uint32_t frame)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);

  if (f == NULL)
    return NULL;
  cmg__frame_name_put_label(f, ix, frame);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* Where a native frame is: its source line, its place in its module. */
static void
put_place(FILE *f, const struct cmg__index *ix,
          const struct cmg__index_frame *fr, bool all)
{
  fputs(" (", f);
  if (fr->file != NULL) {
    fprintf(f, "%s", all ? fr->file : cmg__names_base(fr->file));
    if (fr->line > 0)
      fprintf(f, ":%" PRIu64, fr->line);
    if (!all) {
      fputs(fr->inlined ? ", inlined)" : ")", f);
      return;
    }
    fputs(", ", f);
  }
  if (fr->has_offset)
    fprintf(f, "%s+0x%" PRIx64, ix->modules[fr->module].name, fr->offset);
  else if (fr->module != CMG__TOOL_NONE)
    fputs(ix->modules[fr->module].name, f);
  else
    fprintf(f, "0x%" PRIx64, fr->address);
  fputs(fr->inlined ? ", inlined)" : ")", f);
}

void
cmg__frame_name_put_frame(FILE *f, const struct cmg__index *ix, uint32_t frame,
                          bool all)
{
  const struct cmg__index_frame *fr = &ix->frames[frame];
  const char *name = all ? fr->function : short_name(fr);

  if (fr->python) {
    put_source(f, fr->function, fr->file != NULL ? fr->file : "?", fr->line);
    return;
  }
  if (name == NULL)
    fputs("?", f);
  else if (fr->has_function_offset && (all || fr->file == NULL))
    fprintf(f, "%s+0x%" PRIx64, name, fr->function_offset);
  else
    fputs(name, f);
  put_place(f, ix, fr, all);
}

void
cmg__frame_name_put_unread(FILE *f, const struct cmg__index *ix)
{
  const char *said[8];
  size_t n_said = 0;
  bool any = false;

  for (size_t i = 0; i < ix->n_modules; i++) {
    const char *note = ix->modules[i].note;
    size_t k = 0;

    while (k < n_said && said[k] != note)
      k++;
    if (note == NULL || k < n_said || n_said == sizeof(said) / sizeof(*said))
      continue;
    said[n_said++] = note;
    fprintf(f, "%s",
            any ? "; "
                : "Not read on this machine, so their frames "
                  "keep the report's names: ");
    any = true;
    const char *sep = "";
    for (size_t j = i; j < ix->n_modules; j++) {
      if (ix->modules[j].note == note) {
        fprintf(f, "%s%s", sep, ix->modules[j].name);
        sep = ", ";
      }
    }
    fprintf(f, " (%s)", note);
  }
  if (any)
    fprintf(f, ".\n\n");
}

const char *
cmg__frame_name_raw(const struct cmg__model_report *r, uint32_t f, char *buf,
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
cmg__frame_name_raw_stack(const struct cmg__model_report *r, uint32_t s,
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
        cmg__frame_name_raw(r, r->stacks[s].frames[i], name, sizeof(name)));
    if (k < 0 || (size_t)k >= len - used)
      break;
    used += (size_t)k;
  }
  return buf;
}
