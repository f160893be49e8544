/*
 * The tables every stack of a report is made of, read as read.c reads the
 * rest: a frame's module and a stack's frames are indexes, checked against
 * the table read before, so that no command follows one out of range.
 *
 * The rest of the report names a stack by its id, not by its place in
 * stacks[]; the ids are sorted once and each reference found by binary
 * search, and an id given to two stacks is refused, since a reference to
 * it would name either.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reader/load/fields.h"
#include "reader/load/model.h"
#include "reader/load/read_stacks.h"
#include "reader/tool.h"

static int
compare_ids(const void *a, const void *b)
{
  const struct cmg__read_stacks_id *x = a, *y = b;

  return x->id < y->id ? -1 : x->id > y->id;
}

int
cmg__read_stacks_ref(struct cmg__fields_reader *rd, const cJSON *o,
                     const char *at, const struct cmg__read_stacks_id *ids,
                     size_t n, uint32_t *out)
{
  struct cmg__read_stacks_id key;
  bool has;
  double d;

  CHECK(
      cmg__fields_int(rd, o, at, "stack", 1, CMG__FIELDS_EXACT_MAX, &has, &d));
  *out = CMG__TOOL_NONE;
  if (!has)
    return 0;
  key.id = (uint64_t)d;
  /* bsearch is given no table at all when the report has no stacks. */
  struct cmg__read_stacks_id *hit =
      n > 0 ? bsearch(&key, ids, n, sizeof(*ids), compare_ids) : NULL;
  if (hit == NULL)
    return cmg__fields_fail(
        rd, "%s.stack: %.0f is not the id of a stack in stacks[]", at, d);
  *out = hit->index;
  return 0;
}

int
cmg__read_stacks_modules(struct cmg__fields_reader *rd, const cJSON *root,
                         struct cmg__model_module **out, size_t *n)
{
  const cJSON *arr, *it;
  char at[64];
  size_t i = 0;

  CHECK(cmg__fields_array(rd, root, "", "modules", &arr, n));
  *out = cmg__fields_table(*n, sizeof(**out));
  if (*out == NULL)
    return -ENOMEM;
  cJSON_ArrayForEach(it, arr)
  {
    struct cmg__model_module *m = &(*out)[i];

    CHECK(cmg__fields_element(rd, it, "modules", i++, at, sizeof(at)));
    CHECK(cmg__fields_name(rd, it, at, "path", false, &m->path));
    CHECK(cmg__fields_name(rd, it, at, "build_id", false, &m->build_id));
  }
  return 0;
}

/* A frame with "lang": "python" has a file and a line instead of a
 * module; older reports have no "lang", and another language is refused
 * rather than shown as a native frame. */
static int
read_python_frame(struct cmg__fields_reader *rd, const cJSON *it,
                  const char *at, struct cmg__model_frame *fr)
{
  const cJSON *lang = cJSON_GetObjectItemCaseSensitive(it, "lang");
  bool has_line;
  double d;

  if (lang == NULL)
    return 0;
  if (!cJSON_IsString(lang) || strcmp(lang->valuestring, "python") != 0)
    return cmg__fields_wrong(rd, at, "lang", "\"python\"", lang);
  fr->python = true;
  CHECK(cmg__fields_name(rd, it, at, "file", false, &fr->file));
  CHECK(cmg__fields_int(rd, it, at, "line", 1, INT32_MAX, &has_line, &d));
  fr->line = has_line ? (uint64_t)d : 0;
  return 0;
}

static int
read_frame(struct cmg__fields_reader *rd, const cJSON *it, const char *at,
           size_t n_modules, struct cmg__model_frame *fr)
{
  bool has_module;
  double d;

  CHECK(cmg__fields_hex(rd, it, at, "address", NULL, &fr->address));
  CHECK(cmg__fields_int(rd, it, at, "module", 0, CMG__FIELDS_EXACT_MAX,
                        &has_module, &d));
  if (has_module && d >= (double)n_modules)
    return cmg__fields_fail(rd, "%s.module: %.0f is out of range (%zu modules)",
                            at, d, n_modules);
  fr->module = has_module ? (uint32_t)d : CMG__TOOL_NONE;
  CHECK(cmg__fields_hex(rd, it, at, "offset", &fr->has_offset, &fr->offset));
  CHECK(cmg__fields_name(rd, it, at, "function", true, &fr->function));
  CHECK(cmg__fields_count(rd, it, at, "function_offset",
                          &fr->has_function_offset, &fr->function_offset));
  return read_python_frame(rd, it, at, fr);
}

int
cmg__read_stacks_frames(struct cmg__fields_reader *rd, const cJSON *root,
                        size_t n_modules, struct cmg__model_frame **out,
                        size_t *n)
{
  const cJSON *arr, *it;
  char at[64];
  size_t i = 0;

  CHECK(cmg__fields_array(rd, root, "", "frames", &arr, n));
  if (*n >= CMG__TOOL_NONE)
    return cmg__fields_fail(rd, "frames: too many frames");
  *out = cmg__fields_table(*n, sizeof(**out));
  if (*out == NULL)
    return -ENOMEM;
  cJSON_ArrayForEach(it, arr)
  {
    CHECK(cmg__fields_element(rd, it, "frames", i, at, sizeof(at)));
    CHECK(read_frame(rd, it, at, n_modules, &(*out)[i]));
    i++;
  }
  return 0;
}

/* A stack's frames member; at, the stack's path, is extended to name a bad
 * element. */
static int
read_stack_frames(struct cmg__fields_reader *rd, const cJSON *it, char *at,
                  size_t atlen, size_t n_frames, struct cmg__model_stack *s)
{
  const cJSON *frames, *f;
  size_t n, k = 0;

  CHECK(cmg__fields_array(rd, it, at, "frames", &frames, &n));
  if (n > CMG__TOOL_STACK_MAX)
    return cmg__fields_fail(rd,
                            "%s.frames: %zu frames, more than the %u this tool "
                            "reads of a stack",
                            at, n, CMG__TOOL_STACK_MAX);
  s->frames = cmg__fields_table(n, sizeof(*s->frames));
  if (s->frames == NULL)
    return -ENOMEM;
  s->n = (uint32_t)n;
  cJSON_ArrayForEach(f, frames)
  {
    double x = cJSON_IsNumber(f) ? f->valuedouble : -1;

    if (!(x >= 0 && x < (double)n_frames && x == floor(x))) {
      char want[64];

      snprintf(want, sizeof(want), "an index into frames[] (%zu frames)",
               n_frames);
      snprintf(at + strlen(at), atlen - strlen(at), ".frames[%zu]", k);
      return cmg__fields_fail_item(rd, at, want, f);
    }
    s->frames[k++] = (uint32_t)x;
  }
  return 0;
}

static int
sort_ids(struct cmg__fields_reader *rd, struct cmg__read_stacks_id *ids,
         size_t n)
{
  qsort(ids, n, sizeof(*ids), compare_ids);
  for (size_t i = 1; i < n; i++) {
    if (ids[i].id == ids[i - 1].id)
      return cmg__fields_fail(
          rd, "stacks[%u].id: %" PRIu64 " is the id of two stacks",
          ids[i].index, ids[i].id);
  }
  return 0;
}

/* The frames table, grown for the cuts' frames. */
struct growing {
  struct cmg__model_frame **frames;
  size_t *n, cap;
};

/* A cut's frame: module-less, named for what was left out. */
static int
add_cut_frame(struct growing *g, bool python, bool has_count, double count,
              uint32_t *out)
{
  char name[64];

  if (*g->n == g->cap) {
    size_t cap = g->cap * 2 + 16;
    struct cmg__model_frame *p = realloc(*g->frames, cap * sizeof(*p));
    if (p == NULL)
      return -ENOMEM;
    *g->frames = p;
    g->cap = cap;
  }
  if (has_count)
    snprintf(name, sizeof(name), "[%.0f %s %s not recorded]", count,
             python ? "Python" : "native", count == 1 ? "frame" : "frames");
  else
    snprintf(name, sizeof(name), "[more %s frames not recorded]",
             python ? "Python" : "native");
  struct cmg__model_frame *fr = &(*g->frames)[*g->n];
  memset(fr, 0, sizeof(*fr));
  fr->module = CMG__TOOL_NONE;
  fr->cut = has_count ? (uint32_t)count : CMG__MODEL_CUT_UNKNOWN;
  if ((fr->function = strdup(name)) == NULL)
    return -ENOMEM;
  *out = (uint32_t)(*g->n)++;
  return 0;
}

/* One element of a stack's cuts: its frame goes in before frame at; the
 * cuts come in order of place, as the writer made them. */
static int
read_cut(struct cmg__fields_reader *rd, const cJSON *c, const char *at,
         struct cmg__model_stack *s, uint32_t recorded, uint32_t *last,
         struct growing *g)
{
  const cJSON *lang;
  bool has_count;
  double where, count;
  uint32_t frame;

  CHECK(cmg__fields_int(rd, c, at, "at", 0, recorded, NULL, &where));
  if ((uint32_t)where < *last)
    return cmg__fields_fail(
        rd, "%s.at: %.0f comes before the cut listed before", at, where);
  CHECK(cmg__fields_int(rd, c, at, "frames", 1, UINT32_MAX - 1, &has_count,
                        &count));
  CHECK(cmg__fields_member(rd, c, at, "lang", &lang));
  bool python = cJSON_IsString(lang) && !strcmp(lang->valuestring, "python");
  if (!python &&
      !(cJSON_IsString(lang) && !strcmp(lang->valuestring, "native")))
    return cmg__fields_wrong(rd, at, "lang", "\"native\" or \"python\"", lang);
  CHECK(add_cut_frame(g, python, has_count, count, &frame));
  uint32_t *p = realloc(s->frames, (s->n + 1) * sizeof(*p));
  if (p == NULL)
    return -ENOMEM;
  s->frames = p;
  uint32_t k = (uint32_t)where + (s->n - recorded);
  memmove(p + k + 1, p + k, (s->n - k) * sizeof(*p));
  p[k] = frame;
  s->n++;
  *last = (uint32_t)where;
  return 0;
}

/* A stack's cuts, an optional member: reports before it have none. */
static int
read_cuts(struct cmg__fields_reader *rd, const cJSON *it, const char *at,
          struct cmg__model_stack *s, struct growing *g)
{
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(it, "cuts"), *c;
  char where[96];
  size_t i = 0;
  uint32_t last = 0, recorded = s->n;

  if (arr == NULL)
    return 0;
  snprintf(where, sizeof(where), "%s.cuts", at);
  if (!cJSON_IsArray(arr))
    return cmg__fields_wrong(rd, at, "cuts", "an array", arr);
  size_t n = (size_t)cJSON_GetArraySize(arr);
  if (n > CMG__TOOL_STACK_MAX - s->n)
    return cmg__fields_fail(rd,
                            "%s: %zu cuts after %u frames, more than the %u "
                            "frames and cuts this tool reads of a stack",
                            where, n, s->n, CMG__TOOL_STACK_MAX);
  cJSON_ArrayForEach(c, arr)
  {
    char el[128];

    CHECK(cmg__fields_element(rd, c, where, i++, el, sizeof(el)));
    CHECK(read_cut(rd, c, el, s, recorded, &last, g));
  }
  return 0;
}

int
cmg__read_stacks_list(struct cmg__fields_reader *rd, const cJSON *root,
                      struct cmg__model_frame **frames, size_t *n_frames,
                      struct cmg__model_stack **out, size_t *n,
                      struct cmg__read_stacks_id **ids_out)
{
  const cJSON *arr, *it;
  char at[64];
  size_t i = 0, recorded = *n_frames;
  struct growing g = { frames, n_frames, *n_frames };

  CHECK(cmg__fields_array(rd, root, "", "stacks", &arr, n));
  if (*n >= CMG__TOOL_NONE)
    return cmg__fields_fail(rd, "stacks: too many stacks");
  *out = cmg__fields_table(*n, sizeof(**out));
  struct cmg__read_stacks_id *ids = *ids_out =
      cmg__fields_table(*n, sizeof(*ids));
  if (*out == NULL || ids == NULL)
    return -ENOMEM;
  cJSON_ArrayForEach(it, arr)
  {
    struct cmg__model_stack *s = &(*out)[i];
    const cJSON *t;
    double d;

    CHECK(cmg__fields_element(rd, it, "stacks", i, at, sizeof(at)));
    CHECK(
        cmg__fields_int(rd, it, at, "id", 1, CMG__FIELDS_EXACT_MAX, NULL, &d));
    ids[i].id = (uint64_t)d;
    ids[i].index = (uint32_t)i;
    i++;
    CHECK(cmg__fields_member(rd, it, at, "truncated", &t));
    if (!cJSON_IsBool(t))
      return cmg__fields_wrong(rd, at, "truncated", "a boolean", t);
    s->truncated = cJSON_IsTrue(t);
    CHECK(read_stack_frames(rd, it, at, sizeof(at), recorded, s));
    CHECK(read_cuts(rd, it, at, s, &g));
  }
  return sort_ids(rd, ids, *n);
}
