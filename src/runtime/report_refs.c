/*
 * The report's indexed tables of stacks, frames and modules.  Every part of
 * the report that names a stack marks it here; once the rest is built, the
 * distinct frames of the marked stacks are gathered, sorted, symbolized
 * once each, and written with the stacks that refer to them by index.
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/jsonw.h"
#include "runtime/pyframes.h"
#include "runtime/pyline.h"
#include "runtime/report_refs.h"
#include "runtime/stacks.h"
#include "runtime/stackword.h"
#include "runtime/symbols.h"
#include "runtime/text.h"

/* An integer as raw JSON text.  cJSON prints every number with "%1.15g"
 * and reads it back to check the round trip; integers need neither. */
static cJSON *
integer(uint64_t v)
{
  char buf[24];
  *cmg__jsonw_format_u64(buf, v) = '\0';
  return cJSON_CreateRaw(buf);
}

static cJSON *
hex(uint64_t v)
{
  char buf[24];
  snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
  return cJSON_CreateString(buf);
}

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

cJSON *
cmg__refs_stack(struct cmg__refs *r, uint32_t id)
{
  if (!cmg__refs_is_stack(r, id))
    return cJSON_CreateNull();
  r->used[id] = 1;
  return cJSON_CreateNumber(id);
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
static cJSON *
cut_json(uintptr_t word, unsigned at)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToObject(o, "at", integer(at));
  uint32_t n = cmg__cut_frames(word);
  cJSON_AddItemToObject(
      o, "frames", n != CMG__CUT_UNKNOWN ? integer(n) : cJSON_CreateNull());
  cJSON_AddStringToObject(o, "lang",
                          cmg__cut_is_python(word) ? "python" : "native");
  return o;
}

static cJSON *
stack_json(const struct cmg__refs *r, uint32_t id,
           const struct cmg__stack_view *v)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "id", id);
  cJSON_AddBoolToObject(o, "truncated", v->truncated);
  cJSON *f = cJSON_AddArrayToObject(o, "frames");
  cJSON *cuts = NULL;
  unsigned at = 0;
  for (unsigned i = 0; i < v->depth; i++) {
    if (!cmg__is_cut(v->ips[i])) {
      cJSON_AddItemToArray(f, integer(ip_index(r, v->ips[i])));
      at++;
      continue;
    }
    if (cuts == NULL)
      cuts = cJSON_AddArrayToObject(o, "cuts");
    cJSON_AddItemToArray(cuts, cut_json(v->ips[i], at));
  }
  return o;
}

static cJSON *
stacks_json(const struct cmg__refs *r)
{
  cJSON *a = cJSON_CreateArray();
  for (uint32_t id = 1; id <= r->n_stacks; id++) {
    struct cmg__stack_view v;
    if (r->used[id] && cmg__stacks_get(id, &v) == 0)
      cJSON_AddItemToArray(a, stack_json(r, id, &v));
  }
  return a;
}

/* Index of the module in the modules array, appending it if new. */
static int
module_index(cJSON *modules, const struct cmg__symbol *s)
{
  int i = 0;
  cJSON *m;
  char *path = cmg__text_dup(s->module);
  const char *text = path != NULL ? path : "?";
  cJSON_ArrayForEach(m, modules)
  {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(m, "path");
    if (strcmp(p->valuestring, text) == 0)
      break;
    i++;
  }
  if (m == NULL) {
    m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "path", text);
    cJSON_AddStringToObject(m, "build_id", s->build_id);
    cJSON_AddItemToObject(m, "base", hex(s->module_base));
    cJSON_AddItemToArray(modules, m);
  }
  free(path);
  return i;
}

/* A Python frame: its site's function, file and line, marked "lang";
 * no module, and an address that only tells it from the others. */
static void
python_frame(cJSON *o, uintptr_t word)
{
  struct cmg__py_site_view v;
  if (!cmg__py_site_get(cmg__py_frame_site(word), &v))
    v = (struct cmg__py_site_view){ "?", "?", 0 };
  cJSON_AddNullToObject(o, "module");
  cJSON_AddNullToObject(o, "offset");
  cJSON_AddStringToObject(o, "function", v.function);
  cJSON_AddNullToObject(o, "function_offset");
  cJSON_AddStringToObject(o, "lang", "python");
  cJSON_AddStringToObject(o, "file", v.file);
  cJSON_AddItemToObject(
      o, "line", v.line > 0 ? integer((uint64_t)v.line) : cJSON_CreateNull());
}

static void
add_frames(cJSON *root, const struct cmg__refs *r)
{
  cJSON *frames = cJSON_AddArrayToObject(root, "frames");
  cJSON *modules = cJSON_AddArrayToObject(root, "modules");
  for (size_t i = 0; i < r->n_ips; i++) {
    struct cmg__symbol s;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "address", hex(r->ips[i]));
    if (cmg__py_is_frame(r->ips[i])) {
      python_frame(o, r->ips[i]);
    } else if (cmg__symbolize(r->ips[i], &s) == 0) {
      cJSON_AddNumberToObject(o, "module", module_index(modules, &s));
      cJSON_AddItemToObject(o, "offset", hex(s.offset));
      cJSON_AddItemToObject(o, "function",
                            s.function[0] ? cmg__text_json(s.function)
                                          : cJSON_CreateNull());
      cJSON_AddNumberToObject(o, "function_offset", s.function_offset);
    } else {
      cJSON_AddNullToObject(o, "module");
      cJSON_AddNullToObject(o, "offset");
      cJSON_AddNullToObject(o, "function");
      cJSON_AddNullToObject(o, "function_offset");
    }
    cJSON_AddItemToArray(frames, o);
  }
}

/* Present when the process runs a CPython: its version, whether its
 * frames are in the stacks and, when not, the one line saying why, and the
 * frames left out for want of room in the site table. */
static void
add_python(cJSON *root)
{
  struct cmg__py_status st;
  cmg__py_get_status(&st);
  if (!st.found)
    return;
  cJSON *o = cJSON_AddObjectToObject(root, "python");
  cJSON_AddStringToObject(o, "version", st.version);
  cJSON_AddBoolToObject(o, "frames", st.frames);
  cJSON_AddItemToObject(
      o, "note", st.frames ? cJSON_CreateNull() : cJSON_CreateString(st.why));
  cJSON_AddItemToObject(o, "sites_dropped", integer(cmg__py_sites_dropped()));
}

int
cmg__refs_add_tables(cJSON *root, struct cmg__refs *r)
{
  if (gather_ips(r) < 0)
    return -ENOMEM;
  cJSON_AddItemToObject(root, "stacks", stacks_json(r));
  add_frames(root, r);
  add_python(root);
  return 0;
}
