/*
 * CUDA graph memory under the summary's device table.  A device's graph
 * memory pool grows when a graph upload or launch needs more than it
 * holds; the groups it grew by are held.c's, listed apart from the leaks.
 * The line says what the pool held by the driver's count (or the
 * library's estimate, where the driver could not be asked) and how often
 * the program uploaded, launched and trimmed.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "core/log.h"

#include "reader/graphmem.h"
#include "reader/model/view.h"
#include "reader/show.h"

#define SIZE_BUF 32

void
cmg__tool_graph_devices(FILE *f, const struct cmg__view *v)
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
