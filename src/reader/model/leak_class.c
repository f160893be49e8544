/*
 * The one place that says how a leak group counts.  A group's kind says
 * what memory it is: device memory (device, array, vmm) that stays open at
 * the end is leaked; pinned host and imported memory is listed with the
 * leaks but is no device memory, so it never counts against --max-leak; a
 * CUDA graph memory pool's growth (graph) and what a context took
 * (context) are device memory the driver holds and frees with the
 * context, so they are listed apart and are no leak.  A suppression rule
 * hides a group of the first two classes only, and its group then counts
 * as suppressed, whatever its kind.
 *
 * The summary, its JSON, the diff, the flame graph, check, the pool hint
 * and the suppressions all ask here, so that a group is never a leak in
 * one of them and held in another.
 */
#include "config.h"

#include <string.h>

#include "reader/model/leak_class.h"
#include "reader/model/view.h"
#include "reader/tool.h"

bool
cmg__leak_class_is_device_kind(const char *kind)
{
  return strcmp(kind, "device") == 0 || strcmp(kind, "array") == 0 ||
         strcmp(kind, "vmm") == 0 || strcmp(kind, "graph") == 0 ||
         strcmp(kind, "context") == 0;
}

enum cmg__leak_class
cmg__leak_class_of_kind(const char *kind)
{
  if (strcmp(kind, "graph") == 0)
    return CMG__LEAK_CLASS_GRAPH;
  if (strcmp(kind, "context") == 0)
    return CMG__LEAK_CLASS_CONTEXT;
  return cmg__leak_class_is_device_kind(kind) ? CMG__LEAK_CLASS_LEAKED
                                              : CMG__LEAK_CLASS_OTHER;
}

enum cmg__leak_class
cmg__leak_class_of(const struct cmg__view_leak *l)
{
  return l->rule != CMG__TOOL_NONE ? CMG__LEAK_CLASS_SUPPRESSED : l->by_kind;
}

bool
cmg__leak_class_in_leaks(enum cmg__leak_class c)
{
  return c == CMG__LEAK_CLASS_LEAKED || c == CMG__LEAK_CLASS_OTHER;
}

bool
cmg__leak_class_is_device(enum cmg__leak_class c)
{
  return c == CMG__LEAK_CLASS_LEAKED || c == CMG__LEAK_CLASS_GRAPH ||
         c == CMG__LEAK_CLASS_CONTEXT;
}

bool
cmg__leak_class_is_listed(const struct cmg__view_leak *l, uint64_t min_bytes,
                          size_t top, size_t listed)
{
  return cmg__leak_class_of(l) != CMG__LEAK_CLASS_SUPPRESSED &&
         l->bytes >= min_bytes && (top == 0 || listed < top);
}

void
cmg__leak_class_total(const struct cmg__view *v, enum cmg__leak_class c,
                      uint64_t *bytes, uint64_t *count)
{
  *bytes = *count = 0;
  for (size_t i = 0; i < v->n_leaks; i++) {
    if (cmg__leak_class_of(&v->leaks[i]) != c)
      continue;
    *bytes = cmg__tool_add(*bytes, v->leaks[i].bytes);
    *count = cmg__tool_add(*count, v->leaks[i].count);
  }
}
