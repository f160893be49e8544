/*
 * The status view of one group as a JSON object, for `cumemguard status
 * --json`: its cap, each device shown and each process, laid out as
 * cJSON_PrintUnformatted laid it out (core/jsonw.c).  Command names are
 * printable ASCII, spaces kept ('?' for anything else; the text view makes
 * a space '?' too, for its columns): a name is bytes the kernel took from
 * the program, not UTF-8.
 */
#include "config.h"

#include <string.h>

#include "core/jsonw.h"
#include "core/segment.h"
#include "core/size.h"
#include "ops/group_view.h"
#include "ops/seg_find.h"

#define KEY(name) cmg__jsonw_key(w, name)

static void
string_or_null(struct cmg__jsonw *w, const char *s)
{
  if (s[0] != '\0')
    cmg__jsonw_string(w, s);
  else
    cmg__jsonw_null(w);
}

/* "cap" and "cap_percent" of a limit; a share of an unknown device's size
 * has no cap in bytes yet. */
static void
limit(struct cmg__jsonw *w, const struct seg_limit *l, uint64_t physical)
{
  if (l->kind == CMG__LIMIT_NONE ||
      (l->kind == CMG__LIMIT_PERCENT && physical == 0))
    cmg__jsonw_null(KEY("cap"));
  else
    cmg__jsonw_uint(KEY("cap"), cmg__seg_limit_bytes(l, physical));
  if (l->kind == CMG__LIMIT_PERCENT)
    cmg__jsonw_number(KEY("cap_percent"), l->ppm / 10000.0);
  else
    cmg__jsonw_null(KEY("cap_percent"));
}

static void
devices(struct cmg__jsonw *w, const struct cmg__group_view *v)
{
  const struct seg *c = v->c;

  cmg__jsonw_array(w);
  /* The registry keeps no group counters: its processes are the view. */
  for (int d = 0; d < SEG_DEVICES && !v->reg; d++) {
    if (!v->shown[d])
      continue;
    char gpu[CMG__UUID_TEXT];
    cmg__jsonw_object(w);
    cmg__jsonw_number(KEY("device"), d);
    if (cmg__seg_gpu_of(c, d, gpu))
      cmg__jsonw_string(KEY("uuid"), gpu);
    else
      cmg__jsonw_null(KEY("uuid"));
    limit(w, cmg__seg_cap_of(c, d), c->dev[d].physical);
    if (c->dev[d].physical != 0)
      cmg__jsonw_uint(KEY("physical"), c->dev[d].physical);
    else
      cmg__jsonw_null(KEY("physical"));
    cmg__jsonw_uint(KEY("used"), c->dev[d].used);
    cmg__jsonw_uint(KEY("peak"), c->dev[d].peak);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

static void
process_devices(struct cmg__jsonw *w, const struct seg_slot *sl)
{
  cmg__jsonw_array(w);
  for (int d = 0; d < SEG_DEVICES; d++) {
    if (sl->dev[d].used == 0 && sl->dev[d].peak == 0)
      continue;
    cmg__jsonw_object(w);
    cmg__jsonw_number(KEY("device"), d);
    cmg__jsonw_uint(KEY("live"), sl->dev[d].used);
    cmg__jsonw_uint(KEY("peak"), sl->dev[d].peak);
    cmg__jsonw_uint(KEY("context"), sl->dev[d].context);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

static void
process(struct cmg__jsonw *w, const struct seg_slot *sl, bool alive)
{
  char comm[sizeof(sl->comm) + 1];
  uint64_t live = 0;
  size_t i;

  for (int d = 0; d < SEG_DEVICES; d++)
    live += sl->dev[d].used;
  for (i = 0; i < sizeof(sl->comm) && sl->comm[i] != '\0'; i++)
    comm[i] = sl->comm[i] >= 0x20 && sl->comm[i] < 0x7f ? sl->comm[i] : '?';
  comm[i] = '\0';
  cmg__jsonw_object(w);
  cmg__jsonw_number(KEY("pid"), (int)(sl->owner >> 32));
  cmg__jsonw_string(KEY("command"), comm);
  cmg__jsonw_bool(KEY("alive"), alive);
  cmg__jsonw_uint(KEY("live"), live);
  cmg__jsonw_number(KEY("denials"), (unsigned)sl->denials);
  process_devices(KEY("devices"), sl);
  cmg__jsonw_object_end(w);
}

void
cmg__group_json(struct cmg__jsonw *w, const struct cmg__group_view *v)
{
  const struct seg *c = v->c;

  cmg__jsonw_object(w);
  if (v->reg)
    cmg__jsonw_null(KEY("name"));
  else
    string_or_null(KEY("name"), v->e->name);
  cmg__jsonw_number(KEY("uid"), v->e->uid);
  string_or_null(KEY("container"), v->e->container);
  struct cmg__k8s k;
  if (!v->reg && cmg__seg_k8s(v->e->name, &k) == 0) {
    cmg__jsonw_object(KEY("kubernetes"));
    cmg__jsonw_string(KEY("namespace"), k.ns);
    cmg__jsonw_string(KEY("pod"), k.pod);
    cmg__jsonw_string(KEY("container"), k.container);
    cmg__jsonw_object_end(w);
  } else {
    cmg__jsonw_null(KEY("kubernetes"));
  }
  cmg__jsonw_number(KEY("creator"), (int)c->h.creator);
  cmg__jsonw_number(KEY("created"), (double)c->h.created);
  limit(w, &c->h.limit, 0);
  cmg__jsonw_number(KEY("members"), v->members);
  cmg__jsonw_number(KEY("dead"), v->dead);
  cmg__jsonw_bool(KEY("scaled"), v->scaled);
  devices(KEY("devices"), v);
  cmg__jsonw_array(KEY("processes"));
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    if ((uint32_t)c->slot[i].owner == SLOT_CLAIMED)
      process(w, &c->slot[i], v->alive[i]);
  }
  cmg__jsonw_array_end(w);
  cmg__jsonw_object_end(w);
}

void
cmg__group_json_error(struct cmg__jsonw *w, const struct cmg__seg_entry *e,
                      const char *error)
{
  cmg__jsonw_object(w);
  cmg__jsonw_string(KEY("name"), e->name);
  cmg__jsonw_number(KEY("uid"), e->uid);
  cmg__jsonw_string(KEY("error"), error);
  cmg__jsonw_object_end(w);
}
