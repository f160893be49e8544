/*
 * The pprof command: one report's live memory as a pprof profile (the
 * protocol buffer of github.com/google/pprof's proto/profile.proto, whose
 * messages profile.proto beside this file repeats), gzipped as pprof
 * writes it.  protobuf-c encodes it from the code protoc-c generates at
 * build time; zlib compresses it.
 *
 * Sample types are inuse_objects (count) and inuse_space (bytes), as Go's
 * heap profiles name them, so `go tool pprof -sample_index` works as for a
 * heap profile.  A sample is a leak group (--at exit: device memory live
 * when the report was written, the report's leaks of kinds device, array,
 * vmm, graph and context, which add up to summary.live_bytes), or a
 * stack's share of a device's peak or first denial (--at peak, --at
 * denial), labelled with its device.  Each frame is a location at its own address in a mapping
 * per module, with the module's path, build-id and load bias, so that
 * pprof can symbolize what the report could not; the name the report
 * gives a frame is its function ("module+0xoffset" when it has none).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "reader/cmd/pprof.h"
#include "reader/load/fields.h"
#include "reader/load/model.h"
#include "reader/model/leak_class.h"
#include "reader/profile.pb-c.h"
#include "reader/run/run.h"
#include "reader/show/frame_name.h"
#include "reader/show/output.h"
#include "reader/tool.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__ValueType ValueType;

/* The string table, with a hash from string to index. */
struct strings {
  char **s;
  size_t n, cap;
  size_t *slot; /* index + 1, 0 for empty */
  size_t n_slots;
};

struct build {
  const struct cmg__model_report *r;
  struct strings st;
  Profile p;
  bool *used_frame; /* by frame index */
  bool oom;
};

static size_t
hash(const char *s)
{
  size_t h = 14695981039346656037u;

  while (*s)
    h = (h ^ (unsigned char)*s++) * 1099511628211u;
  return h;
}

static bool
grow_slots(struct strings *t)
{
  size_t n = t->n_slots ? t->n_slots * 2 : 256;
  size_t *slot = calloc(n, sizeof(*slot));

  if (slot == NULL)
    return false;
  for (size_t i = 0; i < t->n; i++) {
    size_t k = hash(t->s[i]) & (n - 1);
    while (slot[k] != 0)
      k = (k + 1) & (n - 1);
    slot[k] = i + 1;
  }
  free(t->slot);
  t->slot = slot;
  t->n_slots = n;
  return true;
}

/* The index of s in the string table, added if new; 0 ("") when out of
 * memory, which b->oom then says. */
static int64_t
intern(struct build *b, const char *s)
{
  struct strings *t = &b->st;
  size_t k;

  if ((t->n + 1) * 2 > t->n_slots && !grow_slots(t))
    goto oom;
  k = hash(s) & (t->n_slots - 1);
  for (; t->slot[k] != 0; k = (k + 1) & (t->n_slots - 1))
    if (strcmp(t->s[t->slot[k] - 1], s) == 0)
      return (int64_t)(t->slot[k] - 1);
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    char **p = realloc(t->s, cap * sizeof(*p));
    if (p == NULL)
      goto oom;
    t->s = p;
    t->cap = cap;
  }
  if ((t->s[t->n] = strdup(s)) == NULL)
    goto oom;
  t->slot[k] = ++t->n;
  return (int64_t)(t->n - 1);
oom:
  b->oom = true;
  return 0;
}

static ValueType *
value_type(struct build *b, const char *type, const char *unit)
{
  ValueType *v = malloc(sizeof(*v));

  if (v == NULL) {
    b->oom = true;
    return NULL;
  }
  perftools__profiles__value_type__init(v);
  v->type = intern(b, type);
  v->unit = intern(b, unit);
  return v;
}

static void
add_label(struct build *b, Sample *s, const char *key, const char *str,
          int64_t num)
{
  Label *l = calloc(1, sizeof(*l));
  Label **ls = realloc(s->label, (s->n_label + 1) * sizeof(*ls));

  if (l == NULL || ls == NULL) {
    free(l);
    if (ls != NULL)
      s->label = ls;
    b->oom = true;
    return;
  }
  perftools__profiles__label__init(l);
  l->key = intern(b, key);
  if (str != NULL)
    l->str = intern(b, str);
  else
    l->num = num;
  s->label = ls;
  ls[s->n_label++] = l;
}

/* A sample of stack s (an index, or CMG__TOOL_NONE) holding count
 * allocations of bytes. */
static Sample *
add_sample(struct build *b, uint32_t s, uint64_t count, uint64_t bytes)
{
  const struct cmg__model_report *r = b->r;
  Sample *x = calloc(1, sizeof(*x));
  Sample **all = realloc(b->p.sample, (b->p.n_sample + 1) * sizeof(*all));
  uint32_t n = s == CMG__TOOL_NONE ? 0 : r->stacks[s].n;

  if (all != NULL)
    b->p.sample = all;
  if (x == NULL || all == NULL) {
    free(x);
    b->oom = true;
    return NULL;
  }
  perftools__profiles__sample__init(x);
  x->location_id = cmg__fields_table(n, sizeof(*x->location_id));
  x->value = calloc(2, sizeof(*x->value));
  if (x->location_id == NULL || x->value == NULL)
    b->oom = true;
  for (uint32_t i = 0; !b->oom && i < n; i++) {
    uint32_t f = r->stacks[s].frames[i];
    x->location_id[x->n_location_id++] = (uint64_t)f + 1;
    b->used_frame[f] = true;
  }
  if (x->value != NULL) {
    x->n_value = 2;
    x->value[0] = (int64_t)count;
    x->value[1] = (int64_t)bytes;
  }
  all[b->p.n_sample++] = x;
  return x;
}

static void
comp_samples(struct build *b, const struct cmg__model_comp *c, int device)
{
  for (size_t i = 0; i < c->n && !b->oom; i++) {
    Sample *x =
        add_sample(b, c->items[i].stack, c->items[i].count, c->items[i].bytes);
    if (x != NULL)
      add_label(b, x, "device", NULL, device);
  }
}

/* The samples of `at`; false after saying that the report has none to
 * give (no denial for --at denial). */
static bool
samples(struct build *b, enum cmg__pprof_at at)
{
  const struct cmg__model_report *r = b->r;
  bool any = false;

  if (at == CMG__PPROF_AT_EXIT) {
    for (size_t i = 0; i < r->n_leaks && !b->oom; i++) {
      const struct cmg__model_leak *l = &r->leaks[i];

      if (!cmg__leak_class_is_device_kind(l->kind))
        continue;
      Sample *x = add_sample(b, l->stack, l->count, l->bytes);
      if (x == NULL)
        break;
      add_label(b, x, "device", NULL, l->device);
      add_label(b, x, "api", l->api, 0);
      add_label(b, x, "kind", l->kind, 0);
    }
    return true;
  }
  if (at == CMG__PPROF_AT_PEAK) {
    for (size_t i = 0; i < r->n_peaks; i++)
      comp_samples(b, &r->peaks[i].comp, r->peaks[i].device);
    return true;
  }
  for (size_t i = 0; i < r->n_denials; i++) {
    if (r->denials_list[i].has_comp) {
      comp_samples(b, &r->denials_list[i].comp, r->denials_list[i].device);
      any = true;
    }
  }
  if (!any)
    cmg__output_say("%s: no denial in this report: --at denial needs one "
                    "(try --at exit or --at peak)",
                    r->file);
  return any;
}

/* A mapping per module, from its frames: the load bias (address minus
 * offset) to past the highest address seen. */
static void
mappings(struct build *b)
{
  const struct cmg__model_report *r = b->r;
  Mapping **m = cmg__fields_table(r->n_modules, sizeof(*m));

  if (m == NULL) {
    b->oom = true;
    return;
  }
  b->p.mapping = m;
  for (size_t i = 0; i < r->n_modules && !b->oom; i++) {
    if ((m[i] = calloc(1, sizeof(**m))) == NULL) {
      b->oom = true;
      return;
    }
    b->p.n_mapping++;
    perftools__profiles__mapping__init(m[i]);
    m[i]->id = i + 1;
    m[i]->filename = intern(b, r->modules[i].path);
    m[i]->build_id = intern(b, r->modules[i].build_id);
    m[i]->has_functions = true;
  }
  for (size_t f = 0; f < r->n_frames; f++) {
    const struct cmg__model_frame *fr = &r->frames[f];

    if (fr->module == CMG__TOOL_NONE || !fr->has_offset)
      continue;
    Mapping *x = m[fr->module];
    if (x->memory_limit == 0 || fr->address - fr->offset < x->memory_start)
      x->memory_start = fr->address - fr->offset;
    if (fr->address + 1 > x->memory_limit)
      x->memory_limit = fr->address + 1;
  }
}

/* A location and a function for each frame the samples use. */
static void
locations(struct build *b)
{
  const struct cmg__model_report *r = b->r;
  size_t n = r->n_frames ? r->n_frames : 1;
  char name[512];

  b->p.location = calloc(n, sizeof(*b->p.location));
  b->p.function = calloc(n, sizeof(*b->p.function));
  if (b->p.location == NULL || b->p.function == NULL) {
    b->oom = true;
    return;
  }
  for (size_t f = 0; f < r->n_frames && !b->oom; f++) {
    const struct cmg__model_frame *fr = &r->frames[f];

    if (!b->used_frame[f])
      continue;
    Location *l = calloc(1, sizeof(*l));
    Function *fn = calloc(1, sizeof(*fn));
    Line *line = calloc(1, sizeof(*line));
    if (l != NULL)
      b->p.location[b->p.n_location++] = l;
    if (fn != NULL)
      b->p.function[b->p.n_function++] = fn;
    if (l == NULL || fn == NULL || line == NULL) {
      free(line);
      b->oom = true;
      return;
    }
    perftools__profiles__location__init(l);
    perftools__profiles__function__init(fn);
    perftools__profiles__line__init(line);
    l->line = calloc(1, sizeof(*l->line));
    if (l->line == NULL) {
      free(line);
      b->oom = true;
      return;
    }
    l->id = fn->id = f + 1;
    l->address = fr->address;
    if (fr->module != CMG__TOOL_NONE)
      l->mapping_id = fr->module + 1;
    fn->name = fn->system_name =
        intern(b, cmg__frame_name_raw(r, (uint32_t)f, name, sizeof(name)));
    if (fr->module != CMG__TOOL_NONE)
      fn->filename = intern(b, r->modules[fr->module].path);
    /* A frame whose source is known: its file and line.  A Python frame's
     * "address" is only a token of the report. */
    if (fr->python)
      l->address = 0;
    if (fr->file != NULL) {
      fn->filename = intern(b, fr->file);
      line->line = (int64_t)fr->line;
    }
    line->function_id = fn->id;
    l->line[0] = line;
    l->n_line = 1;
  }
}

static void
header(struct build *b, enum cmg__pprof_at at)
{
  static const char *const names[] = { "exit", "peak", "denial" };
  char comment[512];
  ValueType **types = calloc(2, sizeof(*types));

  perftools__profiles__profile__init(&b->p);
  intern(b, "");
  if (types == NULL) {
    b->oom = true;
    return;
  }
  b->p.sample_type = types;
  types[0] = value_type(b, "inuse_objects", "count");
  types[1] = value_type(b, "inuse_space", "bytes");
  b->p.n_sample_type = 2;
  b->p.period_type = value_type(b, "space", "bytes");
  b->p.default_sample_type = intern(b, "inuse_space");
  b->p.time_nanos = (int64_t)(b->r->start_time * 1e9);
  if (b->r->end_time > b->r->start_time)
    b->p.duration_nanos = (int64_t)((b->r->end_time - b->r->start_time) * 1e9);
  snprintf(comment, sizeof(comment), "cumemguard: %s at %s, pid %ld",
           b->r->file, names[at], b->r->pid);
  b->p.comment = calloc(1, sizeof(*b->p.comment));
  if (b->p.comment == NULL) {
    b->oom = true;
    return;
  }
  b->p.comment[0] = intern(b, comment);
  b->p.n_comment = 1;
}

/* Frees what the build allocated; protobuf-c's free_unpacked is for what
 * it unpacked, not for this. */
static void
build_free(struct build *b)
{
  Profile *p = &b->p;

  for (size_t i = 0; p->sample != NULL && i < p->n_sample; i++) {
    for (size_t k = 0; k < p->sample[i]->n_label; k++)
      free(p->sample[i]->label[k]);
    free(p->sample[i]->label);
    free(p->sample[i]->location_id);
    free(p->sample[i]->value);
    free(p->sample[i]);
  }
  for (size_t i = 0; p->location != NULL && i < p->n_location; i++) {
    if (p->location[i]->line != NULL)
      free(p->location[i]->line[0]);
    free(p->location[i]->line);
    free(p->location[i]);
  }
  for (size_t i = 0; p->function != NULL && i < p->n_function; i++)
    free(p->function[i]);
  for (size_t i = 0; p->mapping != NULL && i < p->n_mapping; i++)
    free(p->mapping[i]);
  for (size_t i = 0; p->sample_type != NULL && i < 2; i++)
    free(p->sample_type[i]);
  for (size_t i = 0; i < b->st.n; i++)
    free(b->st.s[i]);
  free(p->sample);
  free(p->location);
  free(p->function);
  free(p->mapping);
  free(p->sample_type);
  free(p->period_type);
  free(p->comment);
  free(b->st.s);
  free(b->st.slot);
  free(b->used_frame);
}

/* The encoded profile, gzipped, into *out (malloc'd) and *len.  Returns 0
 * or -ENOMEM. */
static int
encode(Profile *p, unsigned char **out, size_t *len)
{
  size_t n = perftools__profiles__profile__get_packed_size(p);
  unsigned char *raw = malloc(n ? n : 1), *gz = NULL;
  z_stream z;
  int rc = -ENOMEM;

  memset(&z, 0, sizeof(z));
  if (raw == NULL)
    return -ENOMEM;
  perftools__profiles__profile__pack(p, raw);
  /* 15 + 16: a gzip header and trailer around the deflate stream. */
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) == Z_OK) {
    size_t cap = deflateBound(&z, (uLong)n) + 32;
    gz = malloc(cap);
    z.next_in = raw;
    z.avail_in = (uInt)n;
    z.next_out = gz;
    z.avail_out = (uInt)cap;
    if (gz != NULL && deflate(&z, Z_FINISH) == Z_STREAM_END) {
      *len = cap - z.avail_out;
      *out = gz;
      gz = NULL;
      rc = 0;
    }
    deflateEnd(&z);
  }
  free(gz);
  free(raw);
  return rc;
}

int
cmg__pprof_main(char *const *files, int n_files, enum cmg__pprof_at at,
                const char *output)
{
  struct cmg__model_report *r;
  struct build b;
  unsigned char *gz = NULL;
  size_t len = 0;
  FILE *f;
  int rc = CMG__TOOL_EXIT_ERROR;

  if (n_files != 1) {
    cmg__output_say("pprof takes one report; got %d", n_files);
    return CMG__TOOL_EXIT_ERROR;
  }
  if (cmg__run_raw_read(files, 1, 0, &r) != 0)
    return CMG__TOOL_EXIT_ERROR;
  memset(&b, 0, sizeof(b));
  b.r = r;
  b.used_frame = cmg__fields_table(r->n_frames, sizeof(bool));
  b.oom = b.used_frame == NULL;
  header(&b, at);
  if (!b.oom && samples(&b, at)) {
    mappings(&b);
    locations(&b);
    b.p.string_table = b.st.s;
    b.p.n_string_table = b.st.n;
    if (b.oom || encode(&b.p, &gz, &len) != 0)
      cmg__output_say("out of memory");
    else if ((f = cmg__output_create(output)) != NULL) {
      fwrite(gz, 1, len, f);
      rc = cmg__output_close(f, output, 0);
    }
  } else if (b.oom)
    cmg__output_say("out of memory");
  free(gz);
  build_free(&b);
  cmg__run_raw_free(r, 1);
  return rc;
}
