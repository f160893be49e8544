/*
 * cumemguard status: the operator's view of the groups and guarded
 * processes, as text or JSON, printed from private copies of their
 * segments that seg_find.c finds and reads.  The registry (processes in
 * no group) is shown as such, without a cap.  A segment that cannot be
 * read is one line (one object with "error") in the output, never a
 * failure of the whole view.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "core/group_status.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/seg_find.h"
#include "core/segment.h"
#include "core/size.h"

/* A JSON string: quotes, backslashes and every byte outside printable
 * ASCII escaped, so that a command name cannot break the document. */
static void
json_str(FILE *f, const char *s, size_t max)
{
  fputc('"', f);
  for (size_t i = 0; i < max && s[i] != '\0'; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20 || ch >= 0x7f)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

/* A command name for the text view: printable ASCII only. */
static const char *
printable(const char *s, char *buf, size_t len)
{
  size_t i;

  for (i = 0; i + 1 < len && s[i] != '\0'; i++)
    buf[i] = s[i] > 0x20 && s[i] < 0x7f ? s[i] : '?';
  buf[i] = '\0';
  return buf;
}

static void
json_limit(FILE *f, const struct seg_limit *l, uint64_t physical)
{
  uint64_t b = cmg__seg_limit_bytes(l, physical);

  if (l->kind == CMG__LIMIT_NONE ||
      (l->kind == CMG__LIMIT_PERCENT && physical == 0))
    fprintf(f, "\"cap\":null,");
  else
    fprintf(f, "\"cap\":%" PRIu64 ",", b);
  if (l->kind == CMG__LIMIT_PERCENT)
    fprintf(f, "\"cap_percent\":%g", l->ppm / 10000.0);
  else
    fprintf(f, "\"cap_percent\":null");
}

static const char *
text_limit(const struct seg_limit *l, uint64_t physical, char *buf,
           size_t len)
{
  char pct[32];

  if (l->kind != CMG__LIMIT_PERCENT || physical == 0)
    return cmg__seg_describe_one(l, buf, len);
  cmg__seg_describe_one(l, pct, sizeof(pct));
  cmg__format_size(cmg__seg_limit_bytes(l, physical), buf, len);
  snprintf(buf + strlen(buf), len - strlen(buf), " (%s)", pct);
  return buf;
}

/* Prints one group from its checked copy, as text or as a JSON object. */
static void
print_group(FILE *f, const struct cmg__seg_entry *e, const struct seg *c,
            bool json)
{
  const char *name = e->name;
  bool reg = strcmp(name, REGISTRY_NAME) == 0;
  struct seg_limit limits[SEG_DEVICES + 1];
  bool shown[SEG_DEVICES] = { false };
  bool alive[SEG_SLOTS];
  unsigned members = 0, dead = 0;
  uint64_t ns = cmg__seg_pidns_of("/proc/self/ns/pid");
  char a[200], b[32], cc[32], comm[17];
  const char *sep = "";

  memcpy(limits, c->h.limit_dev, sizeof(c->h.limit_dev));
  limits[SEG_DEVICES] = c->h.limit;
  for (int d = 0; d < SEG_DEVICES; d++)
    shown[d] = c->h.limit_dev[d].kind != CMG__LIMIT_NONE ||
               c->dev[d].used != 0 || c->dev[d].peak != 0;
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    const struct seg_slot *sl = &c->slot[i];
    pid_t pid = (pid_t)(sl->owner >> 32);
    alive[i] = true;
    if ((uint32_t)sl->owner != SLOT_CLAIMED)
      continue;
    members++;
    if ((sl->pidns == 0 || ns == 0 || sl->pidns == ns) &&
        cmg__seg_is_dead(pid, sl->start)) {
      alive[i] = false;
      dead++;
    }
    for (int d = 0; d < SEG_DEVICES; d++)
      shown[d] = shown[d] || sl->dev[d].used != 0 || sl->dev[d].peak != 0;
  }

  if (!json) {
    /* The Slurm plugin names a job's group slurm.JOBID: shown as the job. */
    const char *job = cmg__seg_slurm_job(name);
    if (e->container[0] != '\0')
      fprintf(f, "container %s, ", e->container);
    if (reg)
      fprintf(f, "not in a group");
    else if (job != NULL)
      fprintf(f, "Slurm job %s", job);
    else
      fprintf(f, "group %s", name);
    if (e->uid != (unsigned)geteuid() || e->container[0] != '\0')
      fprintf(f, " (uid %u)", e->uid);
    if (reg)
      fprintf(f, ": %u process%s", members, members == 1 ? "" : "es");
    else
      fprintf(f, ": cap %s per device, %u member%s",
              cmg__seg_describe(limits, a, sizeof(a)), members,
              members == 1 ? "" : "s");
    if (dead > 0)
      fprintf(f, " (%u dead, not yet reclaimed)", dead);
    fprintf(f, "\n");
    if (!reg)
      fprintf(f, "  %6s %20s %12s %12s\n", "device", "cap", "used", "peak");
    for (int d = 0; d < SEG_DEVICES && !reg; d++) {
      if (!shown[d])
        continue;
      fprintf(f, "  %6d %20s", d,
              text_limit(cmg__seg_limit_entry(limits, d), c->dev[d].physical, a,
                         sizeof(a)));
      fprintf(f, " %12s", cmg__format_size(c->dev[d].used, b, sizeof(b)));
      fprintf(f, " %12s\n", cmg__format_size(c->dev[d].peak, b, sizeof(b)));
    }
    fprintf(f, "  %8s  %-16s %6s %12s %12s\n", "pid", "command", "device",
            "live", "peak");
    for (unsigned i = 0; i < SEG_SLOTS; i++) {
      const struct seg_slot *sl = &c->slot[i];
      bool any = false;
      if ((uint32_t)sl->owner != SLOT_CLAIMED)
        continue;
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
        if (sl->denials != 0 && !any)
          fprintf(f, "  %u denied", (unsigned)sl->denials);
        fprintf(f, "%s\n", alive[i] ? "" : "  dead");
        any = true;
      }
    }
    return;
  }

  fprintf(f, "{\"name\":");
  if (reg)
    fprintf(f, "null");
  else
    json_str(f, name, 64);
  fprintf(f, ",\"uid\":%u,\"container\":", e->uid);
  if (e->container[0] != '\0')
    json_str(f, e->container, sizeof(e->container));
  else
    fprintf(f, "null");
  fprintf(f, ",\"creator\":%d,\"created\":%" PRId64 ",",
          (int)c->h.creator, c->h.created);
  json_limit(f, &c->h.limit, 0);
  fprintf(f, ",\"members\":%u,\"dead\":%u,\"devices\":[", members, dead);
  /* The registry keeps no group counters: its processes are the view. */
  for (int d = 0; d < SEG_DEVICES && !reg; d++) {
    if (!shown[d])
      continue;
    fprintf(f, "%s{\"device\":%d,", sep, d);
    json_limit(f, cmg__seg_limit_entry(limits, d), c->dev[d].physical);
    fprintf(f, ",\"physical\":");
    if (c->dev[d].physical != 0)
      fprintf(f, "%" PRIu64, (uint64_t)c->dev[d].physical);
    else
      fprintf(f, "null");
    fprintf(f, ",\"used\":%" PRIu64 ",\"peak\":%" PRIu64 "}",
            (uint64_t)c->dev[d].used, (uint64_t)c->dev[d].peak);
    sep = ",";
  }
  fprintf(f, "],\"processes\":[");
  sep = "";
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    const struct seg_slot *sl = &c->slot[i];
    const char *dsep = "";
    uint64_t live = 0;
    if ((uint32_t)sl->owner != SLOT_CLAIMED)
      continue;
    for (int d = 0; d < SEG_DEVICES; d++)
      live += sl->dev[d].used;
    fprintf(f, "%s{\"pid\":%d,\"command\":", sep, (int)(sl->owner >> 32));
    json_str(f, sl->comm, sizeof(sl->comm));
    fprintf(f, ",\"alive\":%s,\"live\":%" PRIu64 ",\"denials\":%u,"
            "\"devices\":[", alive[i] ? "true" : "false", live,
            (unsigned)sl->denials);
    for (int d = 0; d < SEG_DEVICES; d++) {
      if (sl->dev[d].used == 0 && sl->dev[d].peak == 0)
        continue;
      fprintf(f, "%s{\"device\":%d,\"live\":%" PRIu64 ",\"peak\":%" PRIu64
              "}", dsep, d, (uint64_t)sl->dev[d].used,
              (uint64_t)sl->dev[d].peak);
      dsep = ",";
    }
    fprintf(f, "]}");
    sep = ",";
  }
  fprintf(f, "]}");
}

int
cmg__group_status(const char *name, enum cmg__status_format format,
                  char **text_out, size_t *len_out, char *err, size_t errlen)
{
  char *text = NULL, (*errors)[256] = NULL;
  struct cmg__seg_entry *e = NULL, one;
  struct seg **copies = NULL;
  size_t size = 0, n = 0;
  bool json = format == CMG__STATUS_JSON;
  bool root = geteuid() == 0;
  FILE *f = NULL;
  int rc = 0;

  if (err != NULL && errlen > 0)
    err[0] = '\0';
  if (name != NULL && !cmg__seg_is_valid_name(name))
    return cmg__seg_fail(err, errlen, name, -EINVAL,
                         "bad group name: expected 1 to "
                         "63 letters, digits, '-', '_' or '.'");
  if (name != NULL) {
    cmg__seg_entry_own(name, &one);
    e = &one;
    n = 1;
  } else {
    /* Root sees every user's segments and the containers'. */
    e = cmg__seg_find(root, root, &n);
    if (e == NULL && n != 0)
      return cmg__seg_fail(err, errlen, "*", -ENOMEM, "out of memory");
  }
  copies = calloc(n + 1, sizeof(*copies));
  errors = calloc(n + 1, sizeof(*errors));
  if (copies == NULL || errors == NULL) {
    rc = cmg__seg_fail(err, errlen, "*", -ENOMEM, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    rc = cmg__seg_load(&e[i], &copies[i], errors[i], sizeof(errors[i]));
    /* One group asked for by name: its error is the command's. */
    if (rc != 0 && name != NULL) {
      snprintf(err, errlen, "%s", errors[0]);
      goto out;
    }
    rc = 0;
  }
  f = open_memstream(&text, &size);
  if (f == NULL) {
    rc = cmg__seg_fail(err, errlen, "*", -ENOMEM, "out of memory");
    goto out;
  }
  if (format == CMG__STATUS_PROMETHEUS) {
    cmg__metrics_print(f, e, (const struct seg *const *)copies,
                       (const char(*)[256])errors, n);
  } else {
    if (json)
      fprintf(f, "{\"uid\":%u,\"groups\":[", (unsigned)geteuid());
    for (size_t i = 0; i < n; i++) {
      if (json && i > 0)
        fputc(',', f);
      if (copies[i] != NULL) {
        print_group(f, &e[i], copies[i], json);
      } else if (json) {
        fprintf(f, "{\"name\":");
        json_str(f, e[i].name, sizeof(e[i].name));
        fprintf(f, ",\"uid\":%u,\"error\":", e[i].uid);
        json_str(f, errors[i], sizeof(errors[i]));
        fputc('}', f);
      } else {
        fprintf(f, "%s\n", errors[i]);
      }
    }
    if (json)
      fprintf(f, "]}\n");
    else if (n == 0)
      fprintf(f, "no groups and no guarded processes for %s\n",
              root ? "any user" : "this user");
  }
  if (fclose(f) != 0) {
    rc = cmg__seg_fail(err, errlen, "*", -ENOMEM, "out of memory");
    goto out;
  }
  *text_out = text;
  *len_out = size;
  text = NULL;
out:
  free(text);
  for (size_t i = 0; copies != NULL && i < n; i++)
    free(copies[i]);
  free(copies);
  free(errors);
  if (e != &one)
    free(e);
  return rc;
}
