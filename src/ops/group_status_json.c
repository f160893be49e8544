/*
 * The status view of one group as a JSON object (cJSON), for `cumemguard
 * status --json`: its cap, each device shown and each process.  Command
 * names are printable ASCII ('?' for anything else), as in the text view:
 * a name is bytes the kernel took from the program, not UTF-8.
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "core/segment.h"
#include "core/size.h"
#include "ops/group_view.h"
#include "ops/seg_find.h"

static cJSON *
string_or_null(const char *s)
{
  return s[0] != '\0' ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *
u64(uint64_t v)
{
  return cJSON_CreateNumber((double)v);
}

/* "cap" and "cap_percent" of a limit; a share of an unknown device's size
 * has no cap in bytes yet. */
static void
add_limit(cJSON *o, const struct seg_limit *l, uint64_t physical)
{
  if (l->kind == CMG__LIMIT_NONE ||
      (l->kind == CMG__LIMIT_PERCENT && physical == 0))
    cJSON_AddNullToObject(o, "cap");
  else
    cJSON_AddItemToObject(o, "cap", u64(cmg__seg_limit_bytes(l, physical)));
  if (l->kind == CMG__LIMIT_PERCENT)
    cJSON_AddNumberToObject(o, "cap_percent", l->ppm / 10000.0);
  else
    cJSON_AddNullToObject(o, "cap_percent");
}

static cJSON *
devices(const struct cmg__group_view *v)
{
  const struct seg *c = v->c;
  cJSON *a = cJSON_CreateArray();

  /* The registry keeps no group counters: its processes are the view. */
  for (int d = 0; d < SEG_DEVICES && !v->reg; d++) {
    if (!v->shown[d])
      continue;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "device", d);
    add_limit(o, cmg__seg_limit_entry(v->limits, d), c->dev[d].physical);
    cJSON_AddItemToObject(o, "physical",
                          c->dev[d].physical != 0 ? u64(c->dev[d].physical)
                                                  : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "used", u64(c->dev[d].used));
    cJSON_AddItemToObject(o, "peak", u64(c->dev[d].peak));
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

static cJSON *
process(const struct seg_slot *sl, bool alive)
{
  cJSON *o = cJSON_CreateObject();
  char comm[sizeof(sl->comm) + 1];
  uint64_t live = 0;
  size_t i;

  for (int d = 0; d < SEG_DEVICES; d++)
    live += sl->dev[d].used;
  for (i = 0; i < sizeof(sl->comm) && sl->comm[i] != '\0'; i++)
    comm[i] = sl->comm[i] >= 0x20 && sl->comm[i] < 0x7f ? sl->comm[i] : '?';
  comm[i] = '\0';
  cJSON_AddNumberToObject(o, "pid", (int)(sl->owner >> 32));
  cJSON_AddStringToObject(o, "command", comm);
  cJSON_AddBoolToObject(o, "alive", alive);
  cJSON_AddItemToObject(o, "live", u64(live));
  cJSON_AddNumberToObject(o, "denials", (unsigned)sl->denials);
  cJSON *a = cJSON_AddArrayToObject(o, "devices");
  for (int d = 0; d < SEG_DEVICES; d++) {
    if (sl->dev[d].used == 0 && sl->dev[d].peak == 0)
      continue;
    cJSON *x = cJSON_CreateObject();
    cJSON_AddNumberToObject(x, "device", d);
    cJSON_AddItemToObject(x, "live", u64(sl->dev[d].used));
    cJSON_AddItemToObject(x, "peak", u64(sl->dev[d].peak));
    cJSON_AddItemToObject(x, "context", u64(sl->dev[d].context));
    cJSON_AddItemToArray(a, x);
  }
  return o;
}

cJSON *
cmg__group_json(const struct cmg__group_view *v)
{
  const struct seg *c = v->c;
  cJSON *o = cJSON_CreateObject();

  cJSON_AddItemToObject(
      o, "name", v->reg ? cJSON_CreateNull() : string_or_null(v->e->name));
  cJSON_AddNumberToObject(o, "uid", v->e->uid);
  cJSON_AddItemToObject(o, "container", string_or_null(v->e->container));
  cJSON_AddNumberToObject(o, "creator", (int)c->h.creator);
  cJSON_AddNumberToObject(o, "created", (double)c->h.created);
  add_limit(o, &c->h.limit, 0);
  cJSON_AddNumberToObject(o, "members", v->members);
  cJSON_AddNumberToObject(o, "dead", v->dead);
  cJSON_AddBoolToObject(o, "scaled", v->scaled);
  cJSON_AddItemToObject(o, "devices", devices(v));
  cJSON *procs = cJSON_AddArrayToObject(o, "processes");
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    if ((uint32_t)c->slot[i].owner == SLOT_CLAIMED)
      cJSON_AddItemToArray(procs, process(&c->slot[i], v->alive[i]));
  }
  return o;
}

cJSON *
cmg__group_json_error(const struct cmg__seg_entry *e, const char *error)
{
  cJSON *o = cJSON_CreateObject();

  cJSON_AddStringToObject(o, "name", e->name);
  cJSON_AddNumberToObject(o, "uid", e->uid);
  cJSON_AddStringToObject(o, "error", error);
  return o;
}
