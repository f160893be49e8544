/*
 * What the summary says under its device table, beyond the table itself:
 * each process's footprint on the card beyond its allocations, and each
 * device's CUDA graph memory.
 *
 * The footprint.  A CUDA context, with the modules loaded into it, takes
 * device memory that no allocation asks for (about half a GiB on an H100),
 * so nvidia-smi shows a process holding more than it allocated.  The
 * library measures what each context's creation took and, under
 * count_context, records it as an allocation of kind context with the
 * stack that made the context, which the caps count.  That memory is not
 * a leak: the driver frees it with the context.  So the summary lists
 * these groups apart from the leaks (summary_held.c), and says under the device
 * table how the card's figure for the process splits into allocations,
 * contexts and what nothing explains, from devices[].footprint, for the
 * engineer who wonders where the rest went and the operator who checks
 * the caps against nvidia-smi.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/size.h"

#include "reader/load/model.h"
#include "reader/model/view.h"
#include "reader/show/summary_devices.h"
#include "reader/tool.h"

#define SIZE_BUF 32

/* Whether the caps count the contexts: the last words of a device's line. */
static const char *
caps(const struct cmg__view_device *d)
{
  const struct cmg__model_footprint *fp = &d->footprint;

  if (fp->counted && !fp->has_context_bytes)
    return "the caps count the contexts that were measured";
  if (fp->counted)
    return fp->contexts == 1 ? "the caps count the context"
                             : "the caps count the contexts";
  if (d->counted_any)
    return "the caps of some processes count their contexts";
  return "the caps count allocations only";
}

/* The contexts' share where it was measured: "780.0 MiB in 2 contexts",
 * with the way it was measured where the total does not say it. */
static void
print_contexts(FILE *f, const struct cmg__view_device *d)
{
  const struct cmg__model_footprint *fp = &d->footprint;
  char a[SIZE_BUF];

  fprintf(f, "%s in %" PRIu64 " %s",
          cmg__format_size(fp->context_bytes, a, sizeof(a)), fp->contexts,
          cmg__tool_plural(fp->contexts, "context", "contexts"));
  if (d->mixed_sources)
    fprintf(f, " (NVML's and the driver's counts)");
  else if (fp->source == CMG__MODEL_FP_DRIVER)
    fprintf(f, " (the driver's count)");
  else if (!fp->has_process_bytes)
    fprintf(f, " (NVML's count)");
}

static void
print_footprint(FILE *f, const struct cmg__view_device *d)
{
  const struct cmg__model_footprint *fp = &d->footprint;
  char a[SIZE_BUF], b[SIZE_BUF];

  fprintf(f, "device %d on the card", d->ordinal);
  /* A merge of processes some of which have no footprint on the device
   * (reports written before it) sums only those that have one. */
  if (d->footprints < d->processes)
    fprintf(f, " (%u of %u processes)", d->footprints, d->processes);
  if (!fp->has_context_bytes) {
    fprintf(f, ": not measured%s%s%s; %s allocated, %" PRIu64 " %s",
            fp->why != NULL ? " (" : "", fp->why != NULL ? fp->why : "",
            fp->why != NULL ? ")" : "",
            cmg__format_size(fp->allocated_bytes, a, sizeof(a)), fp->contexts,
            cmg__tool_plural(fp->contexts, "context", "contexts"));
    if (fp->has_process_bytes)
      fprintf(f, ", %s in all (NVML)",
              cmg__format_size(fp->process_bytes, b, sizeof(b)));
    fprintf(f, "; %s\n", caps(d));
    return;
  }
  fprintf(f, ": ");
  if (fp->has_process_bytes)
    fprintf(f,
            "%s (NVML) = ", cmg__format_size(fp->process_bytes, a, sizeof(a)));
  fprintf(f, "%s allocated + ",
          cmg__format_size(fp->allocated_bytes, b, sizeof(b)));
  print_contexts(f, d);
  if (fp->has_unexplained_bytes)
    fprintf(f, " + %s unexplained",
            cmg__format_size(fp->unexplained_bytes, a, sizeof(a)));
  if (!fp->has_process_bytes)
    fprintf(f, "; NVML gave no figure for the whole process");
  fprintf(f, "; %s\n", caps(d));
}

/* NVML's count beside the driver's, for the contexts measured both ways:
 * a few MiB apart per context on an H100, where the driver keeps some for
 * itself; much more, and other processes used the card meanwhile. */
static void
print_cross_check(FILE *f, const struct cmg__view_device *d)
{
  const struct cmg__model_footprint *fp = &d->footprint;
  char a[SIZE_BUF], b[SIZE_BUF], c[SIZE_BUF];
  bool more = fp->checked_driver >= fp->checked_nvml;
  uint64_t gap = more ? fp->checked_driver - fp->checked_nvml
                      : fp->checked_nvml - fp->checked_driver;

  fprintf(f,
          "device %d cross-check of %" PRIu64
          " %s: NVML %s, the driver's free memory %s (%s%s)\n",
          d->ordinal, fp->checked,
          cmg__tool_plural(fp->checked, "context", "contexts"),
          cmg__format_size(fp->checked_nvml, a, sizeof(a)),
          cmg__format_size(fp->checked_driver, b, sizeof(b)), more ? "+" : "-",
          cmg__format_size(gap, c, sizeof(c)));
}

void
cmg__summary_devices_footprint(FILE *f, const struct cmg__view *v)
{
  for (size_t i = 0; i < v->n_devices; i++) {
    if (!v->devices[i].footprint.present)
      continue;
    print_footprint(f, &v->devices[i]);
    if (v->devices[i].footprint.checked > 0)
      print_cross_check(f, &v->devices[i]);
  }
}

/*
 * CUDA graph memory.  A device's graph memory pool grows when a graph
 * upload or launch needs more than it holds; the groups it grew by are
 * summary_held.c's, listed apart from the leaks.  The line says what the
 * pool held by the driver's count (or the library's estimate, where the
 * driver could not be asked) and how often the program uploaded, launched
 * and trimmed.
 */
void
cmg__summary_devices_graph(FILE *f, const struct cmg__view *v)
{
  char a[SIZE_BUF], b[SIZE_BUF], c[SIZE_BUF], d[SIZE_BUF];

  for (size_t i = 0; i < v->n_devices; i++) {
    const struct cmg__model_graphmem *g = &v->devices[i].graph;

    if (!g->present)
      continue;
    fprintf(f,
            "device %d graph memory: %s reserved (high %s), %s in use "
            "(high %s), %s; %" PRIu64 " %s, %" PRIu64 " %s, %" PRIu64
            " %s, %" PRIu64 " denied\n",
            v->devices[i].ordinal,
            cmg__format_size(g->reserved_bytes, a, sizeof(a)),
            cmg__format_size(g->reserved_high_bytes, b, sizeof(b)),
            cmg__format_size(g->used_bytes, c, sizeof(c)),
            cmg__format_size(g->used_high_bytes, d, sizeof(d)),
            g->estimate ? "cumemguard's estimate" : "the driver's count",
            g->launches, cmg__tool_plural(g->launches, "launch", "launches"),
            g->uploads, cmg__tool_plural(g->uploads, "upload", "uploads"),
            g->trims, cmg__tool_plural(g->trims, "trim", "trims"), g->denied);
  }
}
