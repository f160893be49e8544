/*
 * Device memory that is held but not leaked, in the summary.  A device's
 * graph memory pool grows when a graph upload or launch needs more than it
 * holds, and a CUDA context, with the modules loaded into it, takes device
 * memory that no allocation asks for (about half a GiB on an H100).  The
 * library records each growth as an allocation of kind graph, and each
 * context's creation, under count_context, as one of kind context, with
 * the stack of the call, so that the caps count them as device memory.
 * Neither is a leak: the driver keeps the pool for the graphs and frees
 * both with the context.  So the summary lists these groups apart from
 * the leaks, a section per device and a note on why each kind is no leak,
 * and the SUMMARY line counts them apart; the two kinds differ only in
 * their words, which the table below holds.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/size.h"

#include "reader/model/index.h"
#include "reader/model/leak_class.h"
#include "reader/model/view.h"
#include "reader/show/group_text.h"
#include "reader/show/summary_held.h"
#include "reader/tool.h"

#define SIZE_BUF 32

struct kind {
  enum cmg__leak_class class; /* of its groups */
  /* A device's section starts "<heading> device 0 at exit: 1.5 GiB", then,
   * where count_heading, " in 2 <many>", then ", <by>:"; its groups are
   * "1.0 GiB in 1 <one> (cudaGraphLaunch) from:". */
  const char *heading, *by, *one, *many;
  bool count_heading;
  const char *note; /* after the last section: why it is no leak */
  /* The SUMMARY line's "; 1.5 GiB (1610612736 bytes) <in> 2 <many_held>
   * <tail>". */
  const char *in, *one_held, *many_held, *tail;
};

static const struct kind kinds[] = {
  {
      .class = CMG__LEAK_CLASS_GRAPH,
      .heading = "Held by the CUDA graph memory pool of",
      .by = "grown by",
      .one = "growth",
      .many = "growths",
      .note = "Graph memory is not a leak: the driver keeps it for the "
              "graphs' next launches\nand frees it with the context; "
              "cuDeviceGraphMemTrim (cudaDeviceGraphMemTrim)\ngives back "
              "what no graph is using.\n\n",
      .in = "in",
      .one_held = "allocation",
      .many_held = "allocations",
      .tail = " held by CUDA graph memory pools",
  },
  {
      .class = CMG__LEAK_CLASS_CONTEXT,
      .heading = "Contexts and modules on",
      .by = "made by",
      .one = "context",
      .many = "contexts",
      .count_heading = true,
      .note = "Contexts are not leaks: a CUDA context and the modules "
              "loaded into it hold\ndevice memory that no allocation "
              "asked for, until the context is destroyed\nor the process "
              "exits; the caps count it, unless count_context=0.\n\n",
      .in = "taken by",
      .one_held = "CUDA context and its modules",
      .many_held = "CUDA contexts and their modules",
      .tail = "",
  },
};

#define N_KINDS (sizeof(kinds) / sizeof(*kinds))

/* "at exit" only where every report was written at exit: a snapshot's
 * graph memory pool may still grow, its contexts may still be destroyed. */
static const char *
at_exit(const struct cmg__view *v)
{
  for (size_t i = 0; i < v->n_sources; i++)
    if (strcmp(v->sources[i].reason, "exit") != 0)
      return "";
  return " at exit";
}

/* The section of one device (an index into v's devices, or NONE); returns
 * whether frames of a stack were hidden. */
static bool
print_device(FILE *f, const struct cmg__view *v, const struct kind *k,
             uint32_t device, uint64_t bytes, uint64_t count,
             const struct cmg__tool_opts *o)
{
  const struct cmg__index *ix = v->ix;
  int ordinal = cmg__view_ordinal(v, device);
  char a[SIZE_BUF], where[32] = "no device";
  bool hidden = false;

  if (ordinal >= 0)
    snprintf(where, sizeof(where), "device %d", ordinal);
  fprintf(f, "%s %s%s: %s", k->heading, where, at_exit(v),
          cmg__format_size(bytes, a, sizeof(a)));
  if (k->count_heading)
    fprintf(f, " in %" PRIu64 " %s", count,
            cmg__tool_plural(count, k->one, k->many));
  fprintf(f, ", %s:\n\n", k->by);
  for (size_t i = 0; i < v->n_leaks; i++) {
    const struct cmg__view_leak *l = &v->leaks[i];
    uint32_t lo, hi;

    if (cmg__leak_class_of(l) != k->class || l->device != device)
      continue;
    fprintf(f, "%s in %" PRIu64 " %s (%s) from:\n",
            cmg__format_size(l->bytes, a, sizeof(a)), l->count,
            cmg__tool_plural(l->count, k->one, k->many), l->api);
    cmg__group_text_print(f, ix, l, o->all_frames);
    fprintf(f, "\n");
    cmg__index_stack_range(ix, l->stack, o->all_frames, &lo, &hi);
    if (l->stack != CMG__TOOL_NONE && (lo > 0 || hi < ix->stacks[l->stack].n))
      hidden = true;
  }
  return hidden;
}

/* The sections of one kind and its note; returns whether frames of a
 * stack were hidden. */
static bool
print_kind(FILE *f, const struct cmg__view *v, const struct kind *k,
           const struct cmg__tool_opts *o)
{
  bool hidden = false, any = false;

  /* The devices in the table's order, then memory on none (a report's
   * mistake, but shown rather than dropped). */
  for (size_t d = 0; d <= v->n_devices; d++) {
    uint32_t device = d < v->n_devices ? (uint32_t)d : CMG__TOOL_NONE;
    uint64_t bytes = 0, count = 0;
    size_t groups = 0;

    for (size_t i = 0; i < v->n_leaks; i++) {
      if (cmg__leak_class_of(&v->leaks[i]) == k->class &&
          v->leaks[i].device == device) {
        bytes = cmg__tool_add(bytes, v->leaks[i].bytes);
        count = cmg__tool_add(count, v->leaks[i].count);
        groups++;
      }
    }
    /* A heading that counts the allocations has nothing to say of groups
     * that count none. */
    if (groups == 0 || (k->count_heading && count == 0))
      continue;
    hidden = print_device(f, v, k, device, bytes, count, o) || hidden;
    any = true;
  }
  if (any)
    fputs(k->note, f);
  return hidden;
}

/* Every group is listed, whatever --top and --min-bytes say: those choose
 * among the leaks, and a pool grows from few places, a process makes few
 * contexts. */
bool
cmg__summary_held_text(FILE *f, const struct cmg__view *v,
                       const struct cmg__tool_opts *o)
{
  bool hidden = false;

  for (size_t k = 0; k < N_KINDS; k++)
    hidden = print_kind(f, v, &kinds[k], o) || hidden;
  return hidden;
}

void
cmg__summary_held_line(FILE *f, const struct cmg__view *v)
{
  for (size_t k = 0; k < N_KINDS; k++) {
    uint64_t bytes, count;
    char a[SIZE_BUF];

    cmg__leak_class_total(v, kinds[k].class, &bytes, &count);
    if (count == 0)
      continue;
    fprintf(f, "; %s (%" PRIu64 " bytes) %s %" PRIu64 " %s%s",
            cmg__format_size(bytes, a, sizeof(a)), bytes, kinds[k].in, count,
            cmg__tool_plural(count, kinds[k].one_held, kinds[k].many_held),
            kinds[k].tail);
  }
}
