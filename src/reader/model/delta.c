/*
 * diff BASE NEW: what grew and what shrank between two reports of one
 * program, such as a dump taken after warm-up and the report at exit of a
 * long-running service.  Both views share one index, so a leak group of
 * BASE and one of NEW are the same when their stacks are the same call path
 * (module, offset, function of every frame: never raw addresses, which ASLR
 * changes from run to run), their API is the same and their device ordinal
 * is the same.  Devices are matched by ordinal here, not by UUID: the two
 * runs may well have been given different GPUs.
 *
 * The groups of both views are put in one array with their key and sorted,
 * so that equal keys meet; the work is O(n log n) in the number of groups.
 * Groups that a suppression hid are left out of both sides.  What grew
 * comes first, then what is still held unchanged (after a release, the
 * question is what did not go), then what shrank.  show/diff_text.c and
 * show/diff_json.c print it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "reader/model/delta.h"
#include "reader/model/leak_class.h"
#include "reader/model/view.h"
#include "reader/tool.h"

static int
compare_keys(const void *a, const void *b)
{
  const struct cmg__delta *x = a, *y = b;

  if (x->stack != y->stack)
    return x->stack < y->stack ? -1 : 1;
  if (x->device != y->device)
    return x->device < y->device ? -1 : 1;
  if (strcmp(x->api, y->api) != 0)
    return strcmp(x->api, y->api);
  return strcmp(x->kind, y->kind);
}

enum cmg__delta_what
cmg__delta_what(const struct cmg__delta *c)
{
  if (c->delta_bytes > 0 || (c->delta_bytes == 0 && c->delta_count > 0))
    return CMG__DELTA_GREW;
  return c->delta_bytes == 0 && c->delta_count == 0 ? CMG__DELTA_HELD
                                                    : CMG__DELTA_SHRANK;
}

/* What grew, largest growth first; then what is still held unchanged,
 * largest first, since after a release that is the question; then what
 * shrank, largest first.  Equal ones by key. */
static int
compare_deltas(const void *a, const void *b)
{
  const struct cmg__delta *x = a, *y = b;
  enum cmg__delta_what wx = cmg__delta_what(x), wy = cmg__delta_what(y);
  bool gx = wx == CMG__DELTA_GREW;

  if (wx != wy)
    return wx < wy ? -1 : 1;
  if (wx == CMG__DELTA_HELD && x->new_bytes != y->new_bytes)
    return x->new_bytes > y->new_bytes ? -1 : 1;
  if (x->delta_bytes != y->delta_bytes)
    return (x->delta_bytes > y->delta_bytes) == gx ? -1 : 1;
  if (x->delta_count != y->delta_count)
    return (x->delta_count > y->delta_count) == gx ? -1 : 1;
  return compare_keys(a, b);
}

struct cmg__delta *
cmg__delta_of(const struct cmg__view *base, const struct cmg__view *now,
              size_t *n_out)
{
  struct cmg__delta *c =
      malloc((base->n_leaks + now->n_leaks + 1) * sizeof(*c));
  size_t n = 0, o = 0;

  if (c == NULL)
    return NULL;
  for (int side = 0; side < 2; side++) {
    const struct cmg__view *v = side == 0 ? base : now;

    for (size_t i = 0; i < v->n_leaks; i++) {
      const struct cmg__view_leak *l = &v->leaks[i];

      if (cmg__leak_class_of(l) == CMG__LEAK_CLASS_SUPPRESSED)
        continue;
      memset(&c[n], 0, sizeof(c[n]));
      c[n].stack = l->stack;
      c[n].device = cmg__view_ordinal(v, l->device);
      c[n].api = l->api;
      c[n].kind = l->kind;
      c[n].class = cmg__leak_class_of(l);
      if (side == 0) {
        c[n].base_count = l->count;
        c[n].base_bytes = l->bytes;
      } else {
        c[n].new_count = l->count;
        c[n].new_bytes = l->bytes;
      }
      n++;
    }
  }
  qsort(c, n, sizeof(*c), compare_keys);
  for (size_t i = 0; i < n; i++) {
    if (o > 0 && compare_keys(&c[o - 1], &c[i]) == 0) {
      c[o - 1].base_count = cmg__tool_add(c[o - 1].base_count, c[i].base_count);
      c[o - 1].base_bytes = cmg__tool_add(c[o - 1].base_bytes, c[i].base_bytes);
      c[o - 1].new_count = cmg__tool_add(c[o - 1].new_count, c[i].new_count);
      c[o - 1].new_bytes = cmg__tool_add(c[o - 1].new_bytes, c[i].new_bytes);
    } else {
      c[o++] = c[i];
    }
  }
  n = 0;
  for (size_t i = 0; i < o; i++) {
    c[i].delta_count = (int64_t)c[i].new_count - (int64_t)c[i].base_count;
    c[i].delta_bytes = (int64_t)c[i].new_bytes - (int64_t)c[i].base_bytes;
    c[n++] = c[i];
  }
  qsort(c, n, sizeof(*c), compare_deltas);
  *n_out = n;
  return c;
}

bool
cmg__delta_shown(const struct cmg__delta *c, uint64_t min_bytes)
{
  uint64_t mag =
      c->delta_bytes < 0 ? (uint64_t)-c->delta_bytes : (uint64_t)c->delta_bytes;

  return (cmg__delta_what(c) == CMG__DELTA_HELD ? c->new_bytes : mag) >=
         min_bytes;
}

const struct cmg__view_device *
cmg__delta_device(const struct cmg__view *v, int ordinal)
{
  for (size_t i = 0; i < v->n_devices; i++) {
    if (v->devices[i].ordinal == ordinal)
      return &v->devices[i];
  }
  return NULL;
}
