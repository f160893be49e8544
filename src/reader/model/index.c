/*
 * The index of cumemguard-report: modules interned by base name, frames by
 * (module, offset in the module, function) and stacks by their list of
 * interned frames, so the same call path gets the same stack id in every
 * report added to it, whatever the addresses of that run were (ASLR moves
 * them all).  A frame without a module can only be known by its address.
 * Module paths are not part of a frame's identity: the same library in
 * another container or on another machine has another path.
 *
 * The index also decides which frames the commands hide by default: at the
 * innermost end, frames inside the CUDA runtime and driver (the leak's API
 * already names the call); at the outermost end, the C start-up and thread
 * start frames, which every stack shares (frame_class.c tells them).  A
 * stack is never hidden whole.  Hiding is for display only; identity and
 * suppressions use every frame.  How a frame is named when printed is
 * show/frame_name.c's.
 *
 * The hash tables (intern.c's) hold indexes into the growing arrays, not
 * pointers, so growing an array never invalidates them.  Nothing here is
 * thread-safe; the tool has one thread.
 *
 * A Python frame has no module: it is known by its function, file and line
 * (the file's whole path, which is all a report says of it), and is never
 * hidden, whatever its function is called.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader/load/model.h"
#include "reader/model/code.h"
#include "reader/model/frame_class.h"
#include "reader/model/index.h"
#include "reader/model/intern.h"
#include "reader/model/names.h"
#include "reader/tool.h"

/* ---- the index ---------------------------------------------------------- */

void
cmg__index_init(struct cmg__index *ix)
{
  memset(ix, 0, sizeof(*ix));
}

void
cmg__index_free(struct cmg__index *ix)
{
  for (size_t i = 0; i < ix->n_modules; i++) {
    free(ix->modules[i].path);
    free(ix->modules[i].build_id);
  }
  for (size_t i = 0; i < ix->n_frames; i++) {
    free(ix->frames[i].function);
    free(ix->frames[i].name);
    free(ix->frames[i].file);
  }
  for (size_t i = 0; i < ix->n_stacks; i++)
    free(ix->stacks[i].frames);
  free(ix->modules);
  free(ix->frames);
  free(ix->stacks);
  cmg__intern_map_free(&ix->module_map);
  cmg__intern_map_free(&ix->frame_map);
  cmg__intern_map_free(&ix->stack_map);
  memset(ix, 0, sizeof(*ix));
}

static bool
module_eq(const void *ctx, uint32_t i, const void *key)
{
  const struct cmg__index *ix = ctx;

  return strcmp(ix->modules[i].name, key) == 0;
}

static int
intern_module(struct cmg__index *ix, const struct cmg__model_module *m,
              uint32_t *out)
{
  const char *name = cmg__names_base(m->path);
  uint64_t h = cmg__intern_hash_string(CMG__INTERN_HASH_INIT, name);

  if (cmg__intern_map_reserve(&ix->module_map) != 0)
    return -ENOMEM;
  size_t slot = cmg__intern_map_probe(&ix->module_map, h, module_eq, ix, name);
  if (ix->module_map.slots[slot] != 0) {
    *out = ix->module_map.slots[slot] - 1;
    return 0;
  }
  if (CMG__INTERN_GROW(ix->modules, ix->cap_modules, ix->n_modules) != 0)
    return -ENOMEM;
  struct cmg__index_module *nm = &ix->modules[ix->n_modules];
  nm->path = strdup(m->path);
  nm->build_id = strdup(m->build_id);
  if (nm->path == NULL || nm->build_id == NULL) {
    free(nm->path);
    free(nm->build_id);
    return -ENOMEM;
  }
  nm->name = cmg__names_base(nm->path);
  nm->note = m->note;
  *out = (uint32_t)ix->n_modules++;
  cmg__intern_map_set(&ix->module_map, slot, h, *out);
  return 0;
}

/* What identifies a frame: its place in its module, else its address. */
struct frame_key {
  uint32_t module;
  uint64_t where;
  const char *function;
  const char *file; /* a Python frame's; NULL for a native one */
};

static struct frame_key
frame_key(const struct cmg__index_frame *f)
{
  struct frame_key k;

  k.module = f->has_offset ? f->module : CMG__TOOL_NONE;
  k.where = k.module != CMG__TOOL_NONE ? f->offset : f->address;
  k.function = f->function;
  k.file = f->python ? f->file : NULL;
  if (f->python)
    k.where = f->line;
  return k;
}

static bool
same_string(const char *a, const char *b)
{
  return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static bool
frame_eq(const void *ctx, uint32_t i, const void *key)
{
  const struct cmg__index *ix = ctx;
  const struct frame_key *k = key;
  struct frame_key have = frame_key(&ix->frames[i]);

  return have.module == k->module && have.where == k->where &&
         same_string(have.function, k->function) &&
         same_string(have.file, k->file);
}

/* A frame of a report as the index keeps it, its strings still the
 * report's. */
static struct cmg__index_frame
frame_of(const struct cmg__model_frame *rf, const uint32_t *module_ids)
{
  struct cmg__index_frame f;

  memset(&f, 0, sizeof(f));
  f.module =
      rf->module != CMG__TOOL_NONE ? module_ids[rf->module] : CMG__TOOL_NONE;
  f.has_offset = rf->has_offset && f.module != CMG__TOOL_NONE;
  f.offset = rf->offset;
  f.address = rf->address;
  f.function = rf->function;
  f.python = rf->python;
  f.inlined = rf->inlined;
  f.file = rf->file;
  f.line = rf->line;
  f.cut = rf->cut;
  return f;
}

/* Appends f, a new frame, with copies of rf's strings, and says whose
 * code it is.  Returns 0 or -ENOMEM. */
static int
append_frame(struct cmg__index *ix, const struct cmg__index_frame *f,
             const struct cmg__model_frame *rf)
{
  if (CMG__INTERN_GROW(ix->frames, ix->cap_frames, ix->n_frames) != 0)
    return -ENOMEM;
  struct cmg__index_frame *nf = &ix->frames[ix->n_frames];
  *nf = *f;
  nf->has_function_offset = rf->has_function_offset;
  nf->function_offset = rf->function_offset;
  nf->function = rf->function != NULL ? strdup(rf->function) : NULL;
  nf->name = rf->name != NULL ? strdup(rf->name) : NULL;
  nf->file = rf->file != NULL ? strdup(rf->file) : NULL;
  if ((rf->function != NULL && nf->function == NULL) ||
      (rf->name != NULL && nf->name == NULL) ||
      (rf->file != NULL && nf->file == NULL)) {
    free(nf->function);
    free(nf->name);
    free(nf->file);
    return -ENOMEM;
  }
  const char *module =
      nf->module != CMG__TOOL_NONE ? ix->modules[nf->module].path : NULL;
  nf->class = nf->python
                  ? 0
                  : cmg__frame_class_of(nf->module != CMG__TOOL_NONE
                                            ? ix->modules[nf->module].name
                                            : NULL,
                                        nf->function);
  /* A cut is nobody's code: it never names a group. */
  nf->code = nf->cut ? CMG__CODE_LIBRARY
                     : cmg__code_of(nf->python ? nf->file : module, nf->python);
  ix->n_frames++;
  return 0;
}

static int
intern_frame(struct cmg__index *ix, const struct cmg__model_frame *rf,
             const uint32_t *module_ids, uint32_t *out)
{
  struct cmg__index_frame f = frame_of(rf, module_ids);
  struct frame_key k = frame_key(&f);
  uint64_t h = cmg__intern_hash_bytes(CMG__INTERN_HASH_INIT, &k.module,
                                      sizeof(k.module));
  h = cmg__intern_hash_bytes(h, &k.where, sizeof(k.where));
  h = cmg__intern_hash_string(h, k.function);
  h = cmg__intern_hash_string(h, k.file);

  if (cmg__intern_map_reserve(&ix->frame_map) != 0)
    return -ENOMEM;
  size_t slot = cmg__intern_map_probe(&ix->frame_map, h, frame_eq, ix, &k);
  if (ix->frame_map.slots[slot] != 0) {
    *out = ix->frame_map.slots[slot] - 1;
    return 0;
  }
  if (append_frame(ix, &f, rf) != 0)
    return -ENOMEM;
  *out = (uint32_t)ix->n_frames - 1;
  cmg__intern_map_set(&ix->frame_map, slot, h, *out);
  return 0;
}

struct stack_key {
  uint32_t n;
  const uint32_t *frames;
};

static bool
stack_eq(const void *ctx, uint32_t i, const void *key)
{
  const struct cmg__index *ix = ctx;
  const struct stack_key *k = key;
  const struct cmg__index_stack *s = &ix->stacks[i];

  return s->n == k->n &&
         (k->n == 0 || memcmp(s->frames, k->frames, k->n * 4) == 0);
}

/* The default shown range: CUDA frames off the inner end, start-up frames
 * off the outer end, unless that leaves nothing. */
static void
default_range(const struct cmg__index *ix, struct cmg__index_stack *s)
{
  uint32_t lo = 0, hi = s->n;

  while (lo < hi && ix->frames[s->frames[lo]].class & CMG__FRAME_CLASS_CUDA)
    lo++;
  while (hi > lo &&
         ix->frames[s->frames[hi - 1]].class & CMG__FRAME_CLASS_STARTUP)
    hi--;
  if (lo == hi) {
    lo = 0;
    hi = s->n;
  }
  s->lo = lo;
  s->hi = hi;
}

static int
intern_stack(struct cmg__index *ix, const uint32_t *frames, uint32_t n,
             bool truncated, uint32_t *out)
{
  struct stack_key k = { n, frames };
  uint64_t h =
      cmg__intern_hash_bytes(CMG__INTERN_HASH_INIT, frames, (size_t)n * 4);

  if (cmg__intern_map_reserve(&ix->stack_map) != 0)
    return -ENOMEM;
  size_t slot = cmg__intern_map_probe(&ix->stack_map, h, stack_eq, ix, &k);
  if (ix->stack_map.slots[slot] != 0) {
    *out = ix->stack_map.slots[slot] - 1;
    ix->stacks[*out].truncated |= truncated;
    return 0;
  }
  if (CMG__INTERN_GROW(ix->stacks, ix->cap_stacks, ix->n_stacks) != 0)
    return -ENOMEM;
  struct cmg__index_stack *s = &ix->stacks[ix->n_stacks];
  s->n = n;
  s->truncated = truncated;
  s->frames = malloc(n > 0 ? (size_t)n * 4 : 1);
  if (s->frames == NULL)
    return -ENOMEM;
  memcpy(s->frames, frames, (size_t)n * 4);
  default_range(ix, s);
  *out = (uint32_t)ix->n_stacks++;
  cmg__intern_map_set(&ix->stack_map, slot, h, *out);
  return 0;
}

int
cmg__index_add(struct cmg__index *ix, const struct cmg__model_report *r,
               uint32_t *ids)
{
  uint32_t *mods = malloc((r->n_modules + 1) * sizeof(*mods));
  uint32_t *frames = malloc((r->n_frames + 1) * sizeof(*frames));
  uint32_t *path = NULL;
  size_t longest = 0;
  int rc = -ENOMEM;

  if (mods == NULL || frames == NULL)
    goto out;
  for (size_t i = 0; i < r->n_stacks; i++)
    longest = r->stacks[i].n > longest ? r->stacks[i].n : longest;
  path = malloc((longest + 1) * sizeof(*path));
  if (path == NULL)
    goto out;
  for (size_t i = 0; i < r->n_modules; i++) {
    if ((rc = intern_module(ix, &r->modules[i], &mods[i])) != 0)
      goto out;
  }
  for (size_t i = 0; i < r->n_frames; i++) {
    if ((rc = intern_frame(ix, &r->frames[i], mods, &frames[i])) != 0)
      goto out;
  }
  for (size_t i = 0; i < r->n_stacks; i++) {
    const struct cmg__model_stack *s = &r->stacks[i];

    for (uint32_t k = 0; k < s->n; k++)
      path[k] = frames[s->frames[k]];
    if ((rc = intern_stack(ix, path, s->n, s->truncated, &ids[i])) != 0)
      goto out;
  }
  rc = 0;
out:
  free(mods);
  free(frames);
  free(path);
  return rc;
}

bool
cmg__index_is_cut_unplaced(const struct cmg__index *ix, uint32_t stack)
{
  const struct cmg__index_stack *s = &ix->stacks[stack];

  for (uint32_t k = 0; k < s->n; k++)
    if (ix->frames[s->frames[k]].cut != 0)
      return false;
  return s->truncated;
}

void
cmg__index_stack_range(const struct cmg__index *ix, uint32_t stack,
                       bool all_frames, uint32_t *lo, uint32_t *hi)
{
  if (stack == CMG__TOOL_NONE) {
    *lo = *hi = 0;
    return;
  }
  const struct cmg__index_stack *s = &ix->stacks[stack];
  *lo = all_frames ? 0 : s->lo;
  *hi = all_frames ? s->n : s->hi;
}
