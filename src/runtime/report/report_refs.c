/*
 * The report's indexed tables of stacks, frames and modules.  Every part of
 * the report that names a stack marks it here; once the rest is written,
 * the distinct frames of the marked stacks are gathered, sorted, symbolized
 * once each, and written with the stacks that refer to them by index.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "runtime/python/pylayout.h"
#include "runtime/python/pyline.h"
#include "runtime/report/report_refs.h"
#include "runtime/stacks/stacks.h"
#include "runtime/stacks/stack_words.h"
#include "runtime/stacks/symbols.h"
#include "runtime/report/report_text.h"

/* The modules the frames are in, in the order a frame first names each. */
struct module {
  char *path; /* escaped */
  char build_id[sizeof(((struct cmg__symbol *)0)->build_id)];
  uintptr_t base;
};

struct modules {
  struct module *m;
  size_t n, cap;
};

int
cmg__refs_init(struct cmg__refs *r)
{
  r->n_stacks = cmg__stacks_count();
  r->used = calloc(r->n_stacks + 1, 1);
  r->ips = NULL;
  r->n_ips = 0;
  return r->used != NULL ? 0 : -ENOMEM;
}

void
cmg__refs_free(struct cmg__refs *r)
{
  free(r->used);
  free(r->ips);
}

bool
cmg__refs_is_stack(const struct cmg__refs *r, uint32_t id)
{
  return id != CMG__STACK_NONE && id <= r->n_stacks;
}

void
cmg__refs_mark(struct cmg__refs *r, uint32_t id)
{
  if (cmg__refs_is_stack(r, id))
    r->used[id] = 1;
}

void
cmg__refs_stack(struct cmg__jsonw *w, struct cmg__refs *r, uint32_t id)
{
  if (!cmg__refs_is_stack(r, id)) {
    cmg__jsonw_null(w);
    return;
  }
  r->used[id] = 1;
  cmg__jsonw_u64(w, id);
}

static int
by_ip(const void *x, const void *y)
{
  uintptr_t a = *(const uintptr_t *)x, b = *(const uintptr_t *)y;
  return a < b ? -1 : a > b;
}

static size_t
ip_index(const struct cmg__refs *r, uintptr_t ip)
{
  const uintptr_t *p = bsearch(&ip, r->ips, r->n_ips, sizeof(ip), by_ip);
  return p ? (size_t)(p - r->ips) : 0;
}

/* Collects the distinct frames of the referenced stacks. */
static int
gather_ips(struct cmg__refs *r)
{
  size_t n = 0, cap = 0;
  for (uint32_t id = 1; id <= r->n_stacks; id++) {
    struct cmg__stack_view v;
    if (!r->used[id] || cmg__stacks_get(id, &v) < 0)
      continue;
    if (n + v.depth > cap) {
      cap = (n + v.depth) * 2;
      uintptr_t *p = realloc(r->ips, cap * sizeof(*p));
      if (p == NULL)
        return -ENOMEM;
      r->ips = p;
    }
    for (unsigned i = 0; i < v.depth; i++)
      if (!cmg__is_cut(v.ips[i]))
        r->ips[n++] = v.ips[i];
  }
  if (n > 1) /* r->ips is NULL when no stack is referenced */
    qsort(r->ips, n, sizeof(*r->ips), by_ip);
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (u == 0 || r->ips[u - 1] != r->ips[i])
      r->ips[u++] = r->ips[i];
  r->n_ips = u;
  return 0;
}

/* Where a stack's capture left frames out: before which of its frames,
 * how many (null when the walk did not reach the end), and of which
 * language. */
static void
cut(struct cmg__jsonw *w, uintptr_t word, unsigned at)
{
  uint32_t n = cmg__cut_frames(word);
  cmg__jsonw_object(w);
  cmg__jsonw_u64(cmg__jsonw_key(w, "at"), at);
  if (n != CMG__CUT_UNKNOWN)
    cmg__jsonw_u64(cmg__jsonw_key(w, "frames"), n);
  else
    cmg__jsonw_null(cmg__jsonw_key(w, "frames"));
  cmg__jsonw_string(cmg__jsonw_key(w, "lang"),
                    cmg__cut_is_python(word) ? "python" : "native");
  cmg__jsonw_object_end(w);
}

/* The stack's cuts, after its frames. */
static void
cuts(struct cmg__jsonw *w, const struct cmg__stack_view *v)
{
  unsigned at = 0;
  bool any = false;
  for (unsigned i = 0; i < v->depth; i++) {
    if (!cmg__is_cut(v->ips[i])) {
      at++;
      continue;
    }
    if (!any)
      cmg__jsonw_array(cmg__jsonw_key(w, "cuts"));
    any = true;
    cut(w, v->ips[i], at);
  }
  if (any)
    cmg__jsonw_array_end(w);
}

static void
stack(struct cmg__jsonw *w, const struct cmg__refs *r, uint32_t id,
      const struct cmg__stack_view *v)
{
  cmg__jsonw_object(w);
  cmg__jsonw_uint(cmg__jsonw_key(w, "id"), id);
  cmg__jsonw_bool(cmg__jsonw_key(w, "truncated"), v->truncated);
  cmg__jsonw_array(cmg__jsonw_key(w, "frames"));
  for (unsigned i = 0; i < v->depth; i++)
    if (!cmg__is_cut(v->ips[i]))
      cmg__jsonw_u64(w, ip_index(r, v->ips[i]));
  cmg__jsonw_array_end(w);
  cuts(w, v);
  cmg__jsonw_object_end(w);
}

static void
stacks(struct cmg__jsonw *w, const struct cmg__refs *r)
{
  cmg__jsonw_array(cmg__jsonw_key(w, "stacks"));
  for (uint32_t id = 1; id <= r->n_stacks; id++) {
    struct cmg__stack_view v;
    if (r->used[id] && cmg__stacks_get(id, &v) == 0)
      stack(w, r, id, &v);
  }
  cmg__jsonw_array_end(w);
}

/* Index of the module in the list, appending it if new; -1 when out of
 * memory. */
static ptrdiff_t
module_index(struct modules *l, const struct cmg__symbol *s)
{
  char *path = cmg__text_dup(s->module);
  if (path == NULL)
    return -1;
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->m[i].path, path) == 0) {
      free(path);
      return (ptrdiff_t)i;
    }
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    struct module *m = realloc(l->m, cap * sizeof(*m));
    if (m == NULL) {
      free(path);
      return -1;
    }
    l->m = m;
    l->cap = cap;
  }
  struct module *m = &l->m[l->n];
  m->path = path;
  memcpy(m->build_id, s->build_id, sizeof(m->build_id));
  m->base = s->module_base;
  return (ptrdiff_t)l->n++;
}

/* A Python frame: its site's function, file and line, marked "lang";
 * no module, and an address that only tells it from the others. */
static void
python_frame(struct cmg__jsonw *w, uintptr_t word)
{
  struct cmg__py_site_view v;
  if (!cmg__py_site_get(cmg__py_frame_site(word), &v))
    v = (struct cmg__py_site_view){ "?", "?", 0 };
  cmg__jsonw_null(cmg__jsonw_key(w, "module"));
  cmg__jsonw_null(cmg__jsonw_key(w, "offset"));
  cmg__jsonw_string(cmg__jsonw_key(w, "function"), v.function);
  cmg__jsonw_null(cmg__jsonw_key(w, "function_offset"));
  cmg__jsonw_string(cmg__jsonw_key(w, "lang"), "python");
  cmg__jsonw_string(cmg__jsonw_key(w, "file"), v.file);
  if (v.line > 0)
    cmg__jsonw_u64(cmg__jsonw_key(w, "line"), (uint64_t)v.line);
  else
    cmg__jsonw_null(cmg__jsonw_key(w, "line"));
}

static void
native_frame(struct cmg__jsonw *w, const struct cmg__symbol *s,
             struct modules *l)
{
  ptrdiff_t m = module_index(l, s);
  if (m < 0)
    cmg__jsonw_fail(w, -ENOMEM);
  cmg__jsonw_u64(cmg__jsonw_key(w, "module"), (uint64_t)m);
  cmg__jsonw_hex(cmg__jsonw_key(w, "offset"), s->offset);
  if (s->function[0])
    cmg__text_string(cmg__jsonw_key(w, "function"), s->function);
  else
    cmg__jsonw_null(cmg__jsonw_key(w, "function"));
  cmg__jsonw_uint(cmg__jsonw_key(w, "function_offset"), s->function_offset);
}

static void
frames(struct cmg__jsonw *w, const struct cmg__refs *r, struct modules *l)
{
  static const char *const unknown[] = { "module", "offset", "function",
                                         "function_offset" };
  cmg__jsonw_array(cmg__jsonw_key(w, "frames"));
  for (size_t i = 0; i < r->n_ips; i++) {
    struct cmg__symbol s;
    cmg__jsonw_object(w);
    cmg__jsonw_hex(cmg__jsonw_key(w, "address"), r->ips[i]);
    if (cmg__py_is_frame(r->ips[i])) {
      python_frame(w, r->ips[i]);
    } else if (cmg__symbolize(r->ips[i], &s) == 0) {
      native_frame(w, &s, l);
    } else {
      for (size_t k = 0; k < 4; k++)
        cmg__jsonw_null(cmg__jsonw_key(w, unknown[k]));
    }
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

static void
modules(struct cmg__jsonw *w, struct modules *l)
{
  cmg__jsonw_array(cmg__jsonw_key(w, "modules"));
  for (size_t i = 0; i < l->n; i++) {
    cmg__jsonw_object(w);
    cmg__jsonw_string(cmg__jsonw_key(w, "path"), l->m[i].path);
    cmg__jsonw_string(cmg__jsonw_key(w, "build_id"), l->m[i].build_id);
    cmg__jsonw_hex(cmg__jsonw_key(w, "base"), l->m[i].base);
    cmg__jsonw_object_end(w);
    free(l->m[i].path);
  }
  cmg__jsonw_array_end(w);
  free(l->m);
}

/* Present when the process runs a CPython: its version, whether its
 * frames are in the stacks and, when not, the one line saying why, and the
 * frames left out for want of room in the site table. */
static void
python(struct cmg__jsonw *w)
{
  struct cmg__py_status st;
  cmg__py_get_status(&st);
  if (!st.found)
    return;
  cmg__jsonw_object(cmg__jsonw_key(w, "python"));
  cmg__jsonw_string(cmg__jsonw_key(w, "version"), st.version);
  cmg__jsonw_bool(cmg__jsonw_key(w, "frames"), st.frames);
  if (st.frames)
    cmg__jsonw_null(cmg__jsonw_key(w, "note"));
  else
    cmg__jsonw_string(cmg__jsonw_key(w, "note"), st.why);
  cmg__jsonw_u64(cmg__jsonw_key(w, "sites_dropped"), cmg__py_sites_dropped());
  cmg__jsonw_object_end(w);
}

int
cmg__refs_write_tables(struct cmg__jsonw *w, struct cmg__refs *r)
{
  struct modules l = { 0 };
  if (gather_ips(r) < 0)
    return -ENOMEM;
  stacks(w, r);
  frames(w, r, &l);
  modules(w, &l);
  python(w);
  return 0;
}
