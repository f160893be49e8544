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
 * start frames, which every stack shares.  A stack is never hidden whole.
 * Hiding is for display only; identity and suppressions use every frame.
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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/code.h"
#include "reader/index.h"
#include "reader/load/model.h"
#include "reader/tool.h"

/* ---- arrays ------------------------------------------------------------- */

/* Grows an array to hold n + 1 elements. */
int
cmg__tool_grow(void **array, size_t *cap, size_t n, size_t size)
{
  size_t want = *cap != 0 ? *cap * 2 : 16;

  if (n < *cap)
    return 0;
  void *bigger = realloc(*array, want * size);
  if (bigger == NULL)
    return -ENOMEM;
  *array = bigger;
  *cap = want;
  return 0;
}

/* ---- frame classes ------------------------------------------------------ */

static bool
has_prefix(const char *s, const char *prefix)
{
  return s != NULL && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* cudaMalloc, cuMemAlloc_v2: an entry point of the runtime or the driver,
 * which a statically linked runtime leaves inside the program itself. */
static bool
is_cuda_api(const char *fn)
{
  /* The static runtime's own functions, once .symtab names them. */
  if (has_prefix(fn, "cudart::") || has_prefix(fn, "__cudart"))
    return true;
  if (has_prefix(fn, "cuda"))
    return fn[4] >= 'A' && fn[4] <= 'Z';
  if (has_prefix(fn, "cu"))
    return fn[2] >= 'A' && fn[2] <= 'Z';
  return false;
}

const char *
cmg__tool_runtime_entry(const struct cmg__tool_index *ix, uint32_t stack,
                        const char *api)
{
  const char *entry = NULL;

  if (stack == CMG__TOOL_NONE || !has_prefix(api, "cu") || api[2] < 'A' ||
      api[2] > 'Z')
    return api;
  const struct cmg__tool_stack *s = &ix->stacks[stack];
  for (uint32_t k = 0; k < s->n; k++) {
    const struct cmg__tool_frame *f = &ix->frames[s->frames[k]];

    if (!(f->class & CMG__TOOL_FRAME_CUDA))
      break;
    if (has_prefix(f->function, "cuda") && f->function[4] >= 'A' &&
        f->function[4] <= 'Z')
      entry = f->name != NULL ? f->name : f->function;
  }
  return entry != NULL ? entry : api;
}

static unsigned
classify(const char *module, const char *fn)
{
  static const char *const cuda_modules[] = { "libcuda.so", "libcudart.so" };
  static const char *const startup_modules[] = {
    "libc.so", "libc-", "ld-linux", "ld-musl", "libpthread",
  };
  static const char *const startup_functions[] = {
    "_start",
    "__libc_start_main",
    "__libc_start_call_main",
    "start_thread",
    "clone",
    "clone3",
    "__clone",
    "__clone3",
  };
  unsigned c = 0;

  for (size_t i = 0; i < sizeof(cuda_modules) / sizeof(*cuda_modules); i++) {
    if (has_prefix(module, cuda_modules[i]))
      c |= CMG__TOOL_FRAME_CUDA;
  }
  if (is_cuda_api(fn))
    c |= CMG__TOOL_FRAME_CUDA;
  for (size_t i = 0; i < sizeof(startup_modules) / sizeof(*startup_modules);
       i++) {
    if (has_prefix(module, startup_modules[i]))
      c |= CMG__TOOL_FRAME_STARTUP;
  }
  for (size_t i = 0;
       fn != NULL && i < sizeof(startup_functions) / sizeof(*startup_functions);
       i++) {
    if (strcmp(fn, startup_functions[i]) == 0)
      c |= CMG__TOOL_FRAME_STARTUP;
  }
  return c;
}

/* ---- the index ---------------------------------------------------------- */

void
cmg__tool_index_init(struct cmg__tool_index *ix)
{
  memset(ix, 0, sizeof(*ix));
}

void
cmg__tool_index_free(struct cmg__tool_index *ix)
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
  cmg__tool_map_free(&ix->module_map);
  cmg__tool_map_free(&ix->frame_map);
  cmg__tool_map_free(&ix->stack_map);
  memset(ix, 0, sizeof(*ix));
}

static const char *
base_name(const char *path)
{
  const char *slash = strrchr(path, '/');

  return slash != NULL ? slash + 1 : path;
}

static bool
module_eq(const void *ctx, uint32_t i, const void *key)
{
  const struct cmg__tool_index *ix = ctx;

  return strcmp(ix->modules[i].name, key) == 0;
}

static int
intern_module(struct cmg__tool_index *ix, const struct cmg__model_module *m,
              uint32_t *out)
{
  const char *name = base_name(m->path);
  uint64_t h = cmg__tool_hash_string(CMG__TOOL_HASH_INIT, name);

  if (cmg__tool_map_reserve(&ix->module_map) != 0)
    return -ENOMEM;
  size_t slot = cmg__tool_map_probe(&ix->module_map, h, module_eq, ix, name);
  if (ix->module_map.slots[slot] != 0) {
    *out = ix->module_map.slots[slot] - 1;
    return 0;
  }
  if (CMG__TOOL_GROW(ix->modules, ix->cap_modules, ix->n_modules) != 0)
    return -ENOMEM;
  struct cmg__tool_module *nm = &ix->modules[ix->n_modules];
  nm->path = strdup(m->path);
  nm->build_id = strdup(m->build_id);
  if (nm->path == NULL || nm->build_id == NULL) {
    free(nm->path);
    free(nm->build_id);
    return -ENOMEM;
  }
  nm->name = base_name(nm->path);
  nm->note = m->note;
  *out = (uint32_t)ix->n_modules++;
  cmg__tool_map_set(&ix->module_map, slot, h, *out);
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
frame_key(const struct cmg__tool_frame *f)
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
  const struct cmg__tool_index *ix = ctx;
  const struct frame_key *k = key;
  struct frame_key have = frame_key(&ix->frames[i]);

  return have.module == k->module && have.where == k->where &&
         same_string(have.function, k->function) &&
         same_string(have.file, k->file);
}

static int
intern_frame(struct cmg__tool_index *ix, const struct cmg__model_frame *rf,
             const uint32_t *module_ids, uint32_t *out)
{
  struct cmg__tool_frame f;

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
  struct frame_key k = frame_key(&f);
  uint64_t h =
      cmg__tool_hash_bytes(CMG__TOOL_HASH_INIT, &k.module, sizeof(k.module));
  h = cmg__tool_hash_bytes(h, &k.where, sizeof(k.where));
  h = cmg__tool_hash_string(h, k.function);
  h = cmg__tool_hash_string(h, k.file);

  if (cmg__tool_map_reserve(&ix->frame_map) != 0)
    return -ENOMEM;
  size_t slot = cmg__tool_map_probe(&ix->frame_map, h, frame_eq, ix, &k);
  if (ix->frame_map.slots[slot] != 0) {
    *out = ix->frame_map.slots[slot] - 1;
    return 0;
  }
  if (CMG__TOOL_GROW(ix->frames, ix->cap_frames, ix->n_frames) != 0)
    return -ENOMEM;
  struct cmg__tool_frame *nf = &ix->frames[ix->n_frames];
  *nf = f;
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
  nf->class = nf->python ? 0
                         : classify(nf->module != CMG__TOOL_NONE
                                        ? ix->modules[nf->module].name
                                        : NULL,
                                    nf->function);
  /* A cut is nobody's code: it never names a group. */
  nf->code = nf->cut ? CMG__TOOL_CODE_LIBRARY
                     : cmg__tool_code_of(nf->python ? nf->file
                                         : nf->module != CMG__TOOL_NONE
                                             ? ix->modules[nf->module].path
                                             : NULL,
                                         nf->python);
  *out = (uint32_t)ix->n_frames++;
  cmg__tool_map_set(&ix->frame_map, slot, h, *out);
  return 0;
}

struct stack_key {
  uint32_t n;
  const uint32_t *frames;
};

static bool
stack_eq(const void *ctx, uint32_t i, const void *key)
{
  const struct cmg__tool_index *ix = ctx;
  const struct stack_key *k = key;
  const struct cmg__tool_stack *s = &ix->stacks[i];

  return s->n == k->n &&
         (k->n == 0 || memcmp(s->frames, k->frames, k->n * 4) == 0);
}

/* The default shown range: CUDA frames off the inner end, start-up frames
 * off the outer end, unless that leaves nothing. */
static void
default_range(const struct cmg__tool_index *ix, struct cmg__tool_stack *s)
{
  uint32_t lo = 0, hi = s->n;

  while (lo < hi && ix->frames[s->frames[lo]].class & CMG__TOOL_FRAME_CUDA)
    lo++;
  while (hi > lo &&
         ix->frames[s->frames[hi - 1]].class & CMG__TOOL_FRAME_STARTUP)
    hi--;
  if (lo == hi) {
    lo = 0;
    hi = s->n;
  }
  s->lo = lo;
  s->hi = hi;
}

static int
intern_stack(struct cmg__tool_index *ix, const uint32_t *frames, uint32_t n,
             bool truncated, uint32_t *out)
{
  struct stack_key k = { n, frames };
  uint64_t h = cmg__tool_hash_bytes(CMG__TOOL_HASH_INIT, frames, (size_t)n * 4);

  if (cmg__tool_map_reserve(&ix->stack_map) != 0)
    return -ENOMEM;
  size_t slot = cmg__tool_map_probe(&ix->stack_map, h, stack_eq, ix, &k);
  if (ix->stack_map.slots[slot] != 0) {
    *out = ix->stack_map.slots[slot] - 1;
    ix->stacks[*out].truncated |= truncated;
    return 0;
  }
  if (CMG__TOOL_GROW(ix->stacks, ix->cap_stacks, ix->n_stacks) != 0)
    return -ENOMEM;
  struct cmg__tool_stack *s = &ix->stacks[ix->n_stacks];
  s->n = n;
  s->truncated = truncated;
  s->frames = malloc(n > 0 ? (size_t)n * 4 : 1);
  if (s->frames == NULL)
    return -ENOMEM;
  memcpy(s->frames, frames, (size_t)n * 4);
  default_range(ix, s);
  *out = (uint32_t)ix->n_stacks++;
  cmg__tool_map_set(&ix->stack_map, slot, h, *out);
  return 0;
}

int
cmg__tool_index_add(struct cmg__tool_index *ix,
                    const struct cmg__model_report *r, uint32_t *ids)
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
cmg__tool_is_cut_unplaced(const struct cmg__tool_index *ix, uint32_t stack)
{
  const struct cmg__tool_stack *s = &ix->stacks[stack];

  for (uint32_t k = 0; k < s->n; k++)
    if (ix->frames[s->frames[k]].cut != 0)
      return false;
  return s->truncated;
}

void
cmg__tool_stack_range(const struct cmg__tool_index *ix, uint32_t stack,
                      bool all_frames, uint32_t *lo, uint32_t *hi)
{
  if (stack == CMG__TOOL_NONE) {
    *lo = *hi = 0;
    return;
  }
  const struct cmg__tool_stack *s = &ix->stacks[stack];
  *lo = all_frames ? 0 : s->lo;
  *hi = all_frames ? s->n : s->hi;
}

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
short_name(const struct cmg__tool_frame *fr)
{
  return fr->name != NULL ? fr->name : fr->function;
}

void
cmg__tool_put_label(FILE *f, const struct cmg__tool_index *ix, uint32_t frame)
{
  const struct cmg__tool_frame *fr = &ix->frames[frame];

  if (fr->file != NULL)
    put_source(f, short_name(fr), base_name(fr->file), fr->line);
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
cmg__tool_label(const struct cmg__tool_index *ix, uint32_t frame)
{
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);

  if (f == NULL)
    return NULL;
  cmg__tool_put_label(f, ix, frame);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* Where a native frame is: its source line, its place in its module. */
static void
put_place(FILE *f, const struct cmg__tool_index *ix,
          const struct cmg__tool_frame *fr, bool all)
{
  fputs(" (", f);
  if (fr->file != NULL) {
    fprintf(f, "%s", all ? fr->file : base_name(fr->file));
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
cmg__tool_put_frame(FILE *f, const struct cmg__tool_index *ix, uint32_t frame,
                    bool all)
{
  const struct cmg__tool_frame *fr = &ix->frames[frame];
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
