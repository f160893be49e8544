/*
 * Prometheus's text exposition format (version 0.0.4) of what `cumemguard
 * status` shows: per group and device the cap and the bytes held, per
 * process and device the bytes held and the peak, and per process the
 * allocations refused (a counter).  Every family is printed whole, HELP and
 * TYPE first, as the format asks, so the segments' copies are all read
 * before anything is printed.  No timestamps: node_exporter's textfile
 * collector refuses them.
 *
 * Labels: group (absent for processes in no group), job for a Slurm job's
 * group (slurm.JOBID), container for a container's /dev/shm, namespace,
 * pod and pod_container for a Kubernetes container's group (the device
 * plugin's, as the kubelet named its pod), uid, and pid,
 * command and device where they apply.  Label values are escaped as the
 * format says (backslash, double quote, newline); a command name's bytes
 * outside printable ASCII become '?', so a name can never make the output
 * invalid UTF-8.  Members that died and were not reclaimed yet are left
 * out of the per-process families; the group's bytes still count them, as
 * its cap does.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>
#include <sys/types.h>

#include "ops/metrics.h"
#include "ops/seg_find.h"
#include "core/conf_gpu.h"
#include "core/segment.h"
#include "core/size.h"

/* One label value, escaped; at most max bytes of s. */
static void
label_value(FILE *f, const char *s, size_t max)
{
  fputc('"', f);
  for (size_t i = 0; i < max && s[i] != '\0'; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '\\' || ch == '"')
      fprintf(f, "\\%c", ch);
    else if (ch == '\n')
      fputs("\\n", f);
    else
      fputc(ch >= 0x20 && ch < 0x7f ? ch : '?', f);
  }
  fputc('"', f);
}

/* The labels every series of a segment carries, without the braces. */
static void
seg_labels(FILE *f, const struct cmg__seg_entry *e)
{
  const char *job = cmg__seg_slurm_job(e->name);
  bool reg = strcmp(e->name, REGISTRY_NAME) == 0;

  if (!reg) {
    fputs("group=", f);
    label_value(f, e->name, sizeof(e->name));
    fputc(',', f);
  }
  if (job != NULL) {
    fputs("job=", f);
    label_value(f, job, 32);
    fputc(',', f);
  }
  if (e->container[0] != '\0') {
    fputs("container=", f);
    label_value(f, e->container, sizeof(e->container));
    fputc(',', f);
  }
  struct cmg__k8s k;
  if (!reg && cmg__seg_k8s(e->name, &k) == 0) {
    fputs("namespace=", f);
    label_value(f, k.ns, sizeof(k.ns));
    fputs(",pod=", f);
    label_value(f, k.pod, sizeof(k.pod));
    fputs(",pod_container=", f);
    label_value(f, k.container, sizeof(k.container));
    fputc(',', f);
  }
  fprintf(f, "uid=\"%u\"", e->uid);
}

static void
family(FILE *f, const char *name, const char *type, const char *help)
{
  fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Whether slot i of a copy is a member to show: claimed, and not known to
 * be dead (a slot of another pid namespace cannot be judged from here). */
static bool
is_shown(const struct seg_slot *sl, uint64_t ns)
{
  if ((uint32_t)sl->owner != SLOT_CLAIMED)
    return false;
  if (sl->pidns != 0 && ns != 0 && sl->pidns != ns)
    return true;
  return !cmg__seg_is_dead((pid_t)(sl->owner >> 32), sl->start);
}

/* The bytes of a group's cap on device d, or false when it has none (or a
 * share of a device whose size no member has seen yet). */
static bool
group_limit(const struct seg *c, int d, uint64_t *out)
{
  /* Its GPU's, else group_limit.d where set, else group_limit. */
  const struct seg_limit *l = cmg__seg_cap_of(c, d);
  if (l->kind == CMG__LIMIT_NONE ||
      (l->kind == CMG__LIMIT_PERCENT && c->dev[d].physical == 0))
    return false;
  *out = cmg__seg_limit_bytes(l, c->dev[d].physical);
  return true;
}

enum which { LIMIT, USED, PEAK, MEMBERS, P_USED, P_PEAK, P_CONTEXT, P_DENIALS };

static uint64_t
held(const struct seg_held *h, enum which w)
{
  return w == P_USED ? h->used : w == P_PEAK ? h->peak : h->context;
}

/* The device label, and the GPU's UUID where the segment knows it: an
 * ordinal names a different GPU in processes that see the GPUs in a
 * different order. */
static void
device_labels(FILE *f, const struct seg *c, int d)
{
  char gpu[CMG__UUID_TEXT];

  fprintf(f, ",device=\"%d\"", d);
  if (cmg__seg_gpu_of(c, d, gpu))
    fprintf(f, ",uuid=\"%s\"", gpu);
}

/* The series of one family for every segment. */
static void
series(FILE *f, enum which w, const char *name, const struct cmg__seg_entry *e,
       const struct seg *const *copies, size_t n, uint64_t ns)
{
  for (size_t i = 0; i < n; i++) {
    const struct seg *c = copies[i];
    bool reg = strcmp(e[i].name, REGISTRY_NAME) == 0;

    if (c == NULL || (reg && w <= MEMBERS))
      continue;
    if (w == MEMBERS) {
      fprintf(f, "%s{", name);
      seg_labels(f, &e[i]);
      fprintf(f, "} %u\n", cmg__seg_members(c));
      continue;
    }
    if (w <= PEAK) {
      for (int d = 0; d < SEG_DEVICES; d++) {
        uint64_t v = w == USED ? c->dev[d].used : c->dev[d].peak, cap = 0;
        /* The devices the group has used, or has a cap of its own on. */
        if (c->h.limit_dev[d].kind == CMG__LIMIT_NONE &&
            c->dev[d].physical == 0 && c->dev[d].used == 0 &&
            c->dev[d].peak == 0)
          continue;
        if (!group_limit(c, d, &cap) && w == LIMIT)
          continue;
        fprintf(f, "%s{", name);
        seg_labels(f, &e[i]);
        device_labels(f, c, d);
        fprintf(f, "} %" PRIu64 "\n", w == LIMIT ? cap : v);
      }
      continue;
    }
    for (unsigned k = 0; k < SEG_SLOTS; k++) {
      const struct seg_slot *sl = &c->slot[k];
      if (!is_shown(sl, ns))
        continue;
      for (int d = 0; d < SEG_DEVICES; d++) {
        if (w != P_DENIALS && sl->dev[d].used == 0 && sl->dev[d].peak == 0)
          continue;
        fprintf(f, "%s{", name);
        seg_labels(f, &e[i]);
        fprintf(f, ",pid=\"%d\",command=", (int)(sl->owner >> 32));
        label_value(f, sl->comm, sizeof(sl->comm));
        if (w == P_DENIALS) {
          fprintf(f, "} %u\n", (unsigned)sl->denials);
          break;
        }
        device_labels(f, c, d);
        fprintf(f, "} %" PRIu64 "\n", held(&sl->dev[d], w));
      }
    }
  }
}

void
cmg__metrics_print(FILE *f, const struct cmg__seg_entry *e,
                   const struct seg *const *copies, const char (*errors)[256],
                   size_t n)
{
  static const struct {
    enum which w;
    const char *name, *type, *help;
  } families[] = {
    { LIMIT, "cumemguard_group_limit_bytes", "gauge",
      "The cap a group's processes share on a device, in bytes." },
    { USED, "cumemguard_group_used_bytes", "gauge",
      "Device memory a group's processes hold on a device, in bytes." },
    { PEAK, "cumemguard_group_peak_bytes", "gauge",
      "The most a group's processes held at once on a device, in bytes." },
    { MEMBERS, "cumemguard_group_members", "gauge",
      "Processes in a group, counting dead ones not yet reclaimed." },
    { P_USED, "cumemguard_process_used_bytes", "gauge",
      "Device memory a guarded process holds on a device, in bytes." },
    { P_PEAK, "cumemguard_process_peak_bytes", "gauge",
      "The most a guarded process held at once on a device, in bytes." },
    { P_CONTEXT, "cumemguard_process_context_bytes", "gauge",
      "Device memory a guarded process's CUDA contexts and modules took on a "
      "device when each was made, in bytes (part of used under "
      "count_context=1)." },
    { P_DENIALS, "cumemguard_process_denials_total", "counter",
      "Device allocations refused to a guarded process." },
  };
  uint64_t ns = cmg__seg_pidns_of("/proc/self/ns/pid");
  unsigned unreadable = 0;

  (void)errors;
  for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
    family(f, families[i].name, families[i].type, families[i].help);
    series(f, families[i].w, families[i].name, e, copies, n, ns);
  }
  for (size_t i = 0; i < n; i++)
    unreadable += copies[i] == NULL;
  family(f, "cumemguard_segments_unreadable", "gauge",
         "Segments found that could not be read (cumemguard status says "
         "why).");
  fprintf(f, "cumemguard_segments_unreadable %u\n", unreadable);
}
