/*
 * What the printers of summary, merge, check, diff and flame share: the
 * listing options of the commands that list leak groups, which groups
 * --top and --min-bytes let through, the totals of leaked and of other live
 * memory, the numbered frames of a stack, and plurals.  Totals never skip
 * a group for --top or --min-bytes; they skip only what a suppression hid.
 * Nothing here reads a file or knows about JSON.
 */
#include "config.h"

#include <stdio.h>

#include "reader/index.h"
#include "reader/show.h"
#include "reader/tool.h"
#include "reader/view.h"

const char *
cmg__tool_plural(uint64_t n, const char *one, const char *many)
{
  return n == 1 ? one : many;
}

void
cmg__tool_leaked(const struct cmg__tool_view *v, uint64_t *bytes,
                 uint64_t *count)
{
  *bytes = *count = 0;
  for (size_t i = 0; i < v->n_leaks; i++) {
    if (v->leaks[i].rule != CMG__TOOL_NONE || !v->leaks[i].is_device_memory)
      continue;
    *bytes = cmg__tool_add(*bytes, v->leaks[i].bytes);
    *count = cmg__tool_add(*count, v->leaks[i].count);
  }
}

void
cmg__tool_other_live(const struct cmg__tool_view *v, uint64_t *bytes,
                     uint64_t *count)
{
  *bytes = *count = 0;
  for (size_t i = 0; i < v->n_leaks; i++) {
    if (v->leaks[i].rule != CMG__TOOL_NONE || v->leaks[i].is_device_memory)
      continue;
    *bytes = cmg__tool_add(*bytes, v->leaks[i].bytes);
    *count = cmg__tool_add(*count, v->leaks[i].count);
  }
}

bool
cmg__tool_is_listed(const struct cmg__tool_leak *l,
                    const struct cmg__tool_opts *o, size_t listed)
{
  return l->rule == CMG__TOOL_NONE && l->bytes >= o->min_bytes &&
         (o->top == 0 || listed < o->top);
}

void
cmg__tool_print_frames(FILE *f, const struct cmg__tool_index *ix,
                       uint32_t stack, bool all_frames)
{
  uint32_t lo, hi;

  if (stack == CMG__TOOL_NONE) {
    fprintf(f, "    (no stack was recorded: stack_depth=0, or the capture "
               "failed)\n");
    return;
  }
  cmg__tool_stack_range(ix, stack, all_frames, &lo, &hi);
  for (uint32_t k = lo; k < hi; k++) {
    fprintf(f, "    #%u ", k - lo);
    cmg__tool_put_frame(f, ix, ix->stacks[stack].frames[k], all_frames);
    fputc('\n', f);
  }
  if (hi == ix->stacks[stack].n && ix->stacks[stack].truncated)
    fprintf(f, "    ... (the stack was deeper than stack_depth)\n");
}

void
cmg__tool_print_unread(FILE *f, const struct cmg__tool_index *ix)
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
