/*
 * leak_class.c: how a view counts each leak group: leaked, other live
 * memory, held by the driver (graph memory pools, contexts), or
 * suppressed; which groups the listings show; the totals of each.
 */
#ifndef CMG_READER_MODEL_LEAK_CLASS_H
#define CMG_READER_MODEL_LEAK_CLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cmg__view;
struct cmg__view_leak;

enum cmg__leak_class {
  CMG__LEAK_CLASS_LEAKED,     /* device memory the program did not free */
  CMG__LEAK_CLASS_OTHER,      /* pinned host or imported memory still open */
  CMG__LEAK_CLASS_GRAPH,      /* a CUDA graph memory pool's: no leak */
  CMG__LEAK_CLASS_CONTEXT,    /* what a CUDA context took: no leak */
  CMG__LEAK_CLASS_SUPPRESSED, /* hidden by a suppression rule */
};

/* True for the kinds that count as device memory (device, array, vmm,
 * graph, context), as the limits and the report's summary.live_bytes
 * count them. */
bool cmg__leak_class_is_device_kind(const char *kind);

/* The class a group of this kind has before any suppression: GRAPH,
 * CONTEXT, LEAKED for the other kinds of device memory, else OTHER. */
enum cmg__leak_class cmg__leak_class_of_kind(const char *kind);

/* The class of a view's group, SUPPRESSED once a rule hid it. */
enum cmg__leak_class cmg__leak_class_of(const struct cmg__view_leak *l);

/* Whether groups of class c are listed among the leaks (LEAKED, OTHER):
 * the driver's are listed apart, the suppressed not at all. */
bool cmg__leak_class_in_leaks(enum cmg__leak_class c);

/* Whether class c is device memory that no rule hid (LEAKED, GRAPH,
 * CONTEXT): what the flame graph of live memory adds up. */
bool cmg__leak_class_is_device(enum cmg__leak_class c);

/* Whether group l, among the leaks, is listed when `listed` were listed
 * before it: --min-bytes (min_bytes) and --top (top, 0 for all) choose;
 * a suppressed group never is. */
bool cmg__leak_class_is_listed(const struct cmg__view_leak *l,
                               uint64_t min_bytes, size_t top, size_t listed);

/* The bytes and allocations of v's groups of class c.  Totals never skip
 * a group for --top or --min-bytes. */
void cmg__leak_class_total(const struct cmg__view *v, enum cmg__leak_class c,
                           uint64_t *bytes, uint64_t *count);

#endif /* CMG_READER_MODEL_LEAK_CLASS_H */
