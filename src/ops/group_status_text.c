/*
 * The status view of one group as text: a heading, the cap and usage of
 * each device shown, and one line per process and device it used.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/conf_gpu.h"
#include "core/segment.h"
#include "core/size.h"
#include "ops/group_view.h"
#include "ops/seg_find.h"

/* A command name for the text view: printable ASCII only, and no space,
 * which would split its column for whoever reads the view with awk. */
static const char *
printable(const char *s, char *buf, size_t len)
{
  size_t i;

  for (i = 0; i + 1 < len && s[i] != '\0'; i++)
    buf[i] = s[i] > 0x20 && s[i] < 0x7f ? s[i] : '?';
  buf[i] = '\0';
  return buf;
}

static const char *
text_limit(const struct seg_limit *l, uint64_t physical, char *buf, size_t len)
{
  char pct[32];

  if (l->kind != CMG__LIMIT_PERCENT || physical == 0)
    return cmg__seg_describe_one(l, buf, len);
  cmg__seg_describe_one(l, pct, sizeof(pct));
  cmg__format_size(cmg__seg_limit_bytes(l, physical), buf, len);
  snprintf(buf + strlen(buf), len - strlen(buf), " (%s)", pct);
  return buf;
}

static void
heading(FILE *f, const struct cmg__group_view *v)
{
  const struct cmg__seg_entry *e = v->e;
  /* The Slurm plugin names a job's group slurm.JOBID: shown as the job. */
  const char *job = cmg__seg_slurm_job(e->name);
  char a[1024];

  if (e->container[0] != '\0')
    fprintf(f, "container %s, ", e->container);
  struct cmg__k8s k;
  if (v->reg)
    fprintf(f, "not in a group");
  else if (job != NULL)
    fprintf(f, "Slurm job %s", job);
  else if (cmg__seg_k8s(e->name, &k) == 0)
    fprintf(f, "pod %s/%s, container %s (group %s)", k.ns, k.pod, k.container,
            e->name);
  else
    fprintf(f, "group %s", e->name);
  if (e->uid != (unsigned)geteuid() || e->container[0] != '\0')
    fprintf(f, " (uid %u)", e->uid);
  if (v->reg)
    fprintf(f, ": %u process%s", v->members, v->members == 1 ? "" : "es");
  else
    fprintf(f, ": cap %s per device, %u member%s",
            cmg__seg_describe(v->limits, v->c->h.limit_gpu, v->c->h.n_limit_gpu,
                              a, sizeof(a)),
            v->members, v->members == 1 ? "" : "s");
  if (v->dead > 0)
    fprintf(f, " (%u dead, not yet reclaimed)", v->dead);
  fprintf(f, "\n");
}

/* The registry keeps no group counters: its processes are the view. */
static void
devices(FILE *f, const struct cmg__group_view *v)
{
  const struct seg *c = v->c;
  char a[200], b[32];

  if (v->reg)
    return;
  fprintf(f, "  %6s %20s %12s %12s  %s\n", "device", "cap", "used", "peak",
          "gpu");
  for (int d = 0; d < SEG_DEVICES; d++) {
    if (!v->shown[d])
      continue;
    char gpu[CMG__UUID_TEXT];
    fprintf(
        f, "  %6d %20s", d,
        text_limit(cmg__seg_cap_of(c, d), c->dev[d].physical, a, sizeof(a)));
    fprintf(f, " %12s", cmg__format_size(c->dev[d].used, b, sizeof(b)));
    fprintf(f, " %12s", cmg__format_size(c->dev[d].peak, b, sizeof(b)));
    fprintf(f, "  %s\n", cmg__seg_gpu_of(c, d, gpu) ? gpu : "-");
  }
}

/* One line per device the process used, or one "-" line if it used none. */
static void
process(FILE *f, const struct seg_slot *sl, bool alive)
{
  char b[32], cc[32], comm[17];
  bool any = false;

  printable(sl->comm, comm, sizeof(comm));
  for (int d = 0; d <= SEG_DEVICES; d++) {
    if (d < SEG_DEVICES && sl->dev[d].used == 0 && sl->dev[d].peak == 0)
      continue;
    if (d == SEG_DEVICES && any)
      break;
    fprintf(f, "  %8d  %-16s ", (int)(sl->owner >> 32), comm);
    if (d == SEG_DEVICES)
      fprintf(f, "%6s %12s %12s", "-", "0 B", "0 B");
    else
      fprintf(f, "%6d %12s %12s", d,
              cmg__format_size(sl->dev[d].used, b, sizeof(b)),
              cmg__format_size(sl->dev[d].peak, cc, sizeof(cc)));
    if (d < SEG_DEVICES && sl->dev[d].context != 0)
      fprintf(f, "  contexts %s",
              cmg__format_size(sl->dev[d].context, b, sizeof(b)));
    if (sl->denials != 0 && !any)
      fprintf(f, "  %u denied", (unsigned)sl->denials);
    fprintf(f, "%s\n", alive ? "" : "  dead");
    any = true;
  }
}

void
cmg__group_print_text(FILE *f, const struct cmg__group_view *v)
{
  heading(f, v);
  devices(f, v);
  if (v->scaled)
    fprintf(f, "  (read while its members changed it: their bytes below are "
               "scaled to the\n  group's)\n");
  fprintf(f, "  %8s  %-16s %6s %12s %12s\n", "pid", "command", "device", "live",
          "peak");
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    if ((uint32_t)v->c->slot[i].owner == SLOT_CLAIMED)
      process(f, &v->c->slot[i], v->alive[i]);
  }
}
