/*
 * cumemguard status: the operator's view of the groups and guarded
 * processes, as text, JSON or Prometheus metrics, printed from private
 * copies of their segments that seg_find.c finds and reads; each group is
 * worked out once (cmg__group_view) and printed by group_status_text.c or
 * group_status_json.c.  The registry (processes in
 * no group) is shown as such, without a cap.  A segment that cannot be
 * read is one line (one object with "error") in the output, never a
 * failure of the whole view.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/jsonw.h"
#include "core/segment.h"
#include "core/size.h"
#include "ops/group_status.h"
#include "ops/group_view.h"
#include "ops/metrics.h"
#include "ops/seg_find.h"

void
cmg__group_view(const struct cmg__seg_entry *e, const struct seg *c,
                bool scaled, struct cmg__group_view *v)
{
  uint64_t ns = cmg__seg_pidns_of("/proc/self/ns/pid");

  memset(v, 0, sizeof(*v));
  v->e = e;
  v->c = c;
  v->scaled = scaled;
  v->reg = strcmp(e->name, REGISTRY_NAME) == 0;
  memcpy(v->limits, c->h.limit_dev, sizeof(c->h.limit_dev));
  v->limits[SEG_DEVICES] = c->h.limit;
  for (int d = 0; d < SEG_DEVICES; d++)
    v->shown[d] = c->h.limit_dev[d].kind != CMG__LIMIT_NONE ||
                  c->dev[d].used != 0 || c->dev[d].peak != 0;
  for (unsigned i = 0; i < SEG_SLOTS; i++) {
    const struct seg_slot *sl = &c->slot[i];
    pid_t pid = (pid_t)(sl->owner >> 32);

    v->alive[i] = true;
    if ((uint32_t)sl->owner != SLOT_CLAIMED)
      continue;
    v->members++;
    /* Another pid namespace's pids mean nothing here: alive, as far as
     * this view can tell. */
    if ((sl->pidns == 0 || ns == 0 || sl->pidns == ns) &&
        cmg__seg_is_dead(pid, sl->start)) {
      v->alive[i] = false;
      v->dead++;
    }
    for (int d = 0; d < SEG_DEVICES; d++)
      v->shown[d] = v->shown[d] || sl->dev[d].used != 0 || sl->dev[d].peak != 0;
  }
}

static void
print_text(FILE *f, const struct cmg__seg_entry *e, struct seg **copies,
           const bool *scaled, const char (*errors)[256], size_t n, bool root)
{
  struct cmg__group_view v;

  for (size_t i = 0; i < n; i++) {
    if (copies[i] != NULL) {
      cmg__group_view(&e[i], copies[i], scaled[i], &v);
      cmg__group_print_text(f, &v);
    } else {
      fprintf(f, "%s\n", errors[i]);
    }
  }
  if (n == 0)
    fprintf(f, "no groups and no guarded processes for %s\n",
            root ? "any user" : "this user");
}

static int
print_json(FILE *f, const struct cmg__seg_entry *e, struct seg **copies,
           const bool *scaled, const char (*errors)[256], size_t n)
{
  struct cmg__group_view v;
  struct cmg__jsonw w;

  if (cmg__jsonw_open(&w, -1, false) < 0)
    return -ENOMEM;
  cmg__jsonw_object(&w);
  cmg__jsonw_uint(cmg__jsonw_key(&w, "uid"), (unsigned)geteuid());
  cmg__jsonw_array(cmg__jsonw_key(&w, "groups"));
  for (size_t i = 0; i < n; i++) {
    if (copies[i] != NULL) {
      cmg__group_view(&e[i], copies[i], scaled[i], &v);
      cmg__group_json(&w, &v);
    } else {
      cmg__group_json_error(&w, &e[i], errors[i]);
    }
  }
  cmg__jsonw_array_end(&w);
  cmg__jsonw_object_end(&w);
  /* Out of memory, print nothing rather than part of the view. */
  char *text = cmg__jsonw_take(&w);
  if (text == NULL)
    return -ENOMEM;
  fprintf(f, "%s\n", text);
  free(text);
  return 0;
}

/* The segments shown: the entries found, and a private copy of each (NULL
 * after the error in errors[i]) with whether its sizes were scaled. */
struct segs {
  struct cmg__seg_entry *e, one;
  size_t n;
  struct seg **copies;
  bool *scaled;
  char (*errors)[256];
};

/* Finds the entry of group name, or every one this user may see: 0, or
 * -errno with err said, nothing to free. */
static int
find_segs(const char *name, bool root, struct segs *s, char *err, size_t errlen)
{
  if (name != NULL && !cmg__seg_is_valid_name(name))
    return cmg__seg_fail(err, errlen, name, -EINVAL,
                         "bad group name: expected 1 to "
                         "63 letters, digits, '-', '_' or '.'");
  if (name != NULL) {
    cmg__seg_entry_own(name, &s->one);
    s->e = &s->one;
    s->n = 1;
    return 0;
  }
  /* Root sees every user's segments and the containers'. */
  s->e = cmg__seg_find(root, root, &s->n);
  if (s->e == NULL && s->n != 0)
    return cmg__seg_fail(err, errlen, "*", -ENOMEM, "out of memory");
  return 0;
}

/* Reads a copy of each segment: 0, or -errno with err said.  A group
 * asked for by name that cannot be read sets *named_rc for JSON. */
static int
read_segs(const char *name, enum cmg__status_format format, struct segs *s,
          int *named_rc, char *err, size_t errlen)
{
  s->copies = calloc(s->n + 1, sizeof(*s->copies));
  s->scaled = calloc(s->n + 1, sizeof(*s->scaled));
  s->errors = calloc(s->n + 1, sizeof(*s->errors));
  if (s->copies == NULL || s->scaled == NULL || s->errors == NULL)
    return cmg__seg_fail(err, errlen, "*", -ENOMEM, "out of memory");
  for (size_t i = 0; i < s->n; i++) {
    int rc = cmg__seg_read(&s->e[i], &s->copies[i], &s->scaled[i], s->errors[i],
                           sizeof(s->errors[i]));
    /* One group asked for by name: its error is the command's.  The text
     * view is that one line; JSON is still one document, the view of
     * every group cut down to that name: none while there is no such
     * group (or its first member is still setting it up), else the group
     * with its error. */
    if (rc != 0 && name != NULL) {
      snprintf(err, errlen, "%s", s->errors[0]);
      if (format != CMG__STATUS_JSON)
        return rc;
      *named_rc = rc;
    }
  }
  return 0;
}

/* Prints the view of the first `shown` segments (metrics and text: all)
 * into *text (malloc'd, also on failure) of *size bytes: 0, or -ENOMEM. */
static int
print_segs(enum cmg__status_format format, const struct segs *s, size_t shown,
           bool root, char **text, size_t *size)
{
  const char(*errors)[256] = (const char(*)[256])s->errors;
  FILE *f = open_memstream(text, size);
  int rc = 0;

  if (f == NULL)
    return -ENOMEM;
  if (format == CMG__STATUS_PROMETHEUS)
    cmg__metrics_print(f, s->e, (const struct seg *const *)s->copies, errors,
                       s->n);
  else if (format == CMG__STATUS_JSON)
    rc = print_json(f, s->e, s->copies, s->scaled, errors, shown);
  else
    print_text(f, s->e, s->copies, s->scaled, errors, s->n, root);
  return fclose(f) != 0 || rc != 0 ? -ENOMEM : 0;
}

int
cmg__group_status(const char *name, enum cmg__status_format format,
                  char **text_out, size_t *len_out, char *err, size_t errlen)
{
  struct segs s = { .e = NULL, .n = 0 };
  char *text = NULL;
  size_t size = 0;
  bool root = geteuid() == 0;
  int rc, named_rc = 0;

  if (err != NULL && errlen > 0)
    err[0] = '\0';
  rc = find_segs(name, root, &s, err, errlen);
  if (rc != 0)
    return rc;
  rc = read_segs(name, format, &s, &named_rc, err, errlen);
  size_t shown = named_rc == -ENOENT || named_rc == -EINPROGRESS ? 0 : s.n;
  if (rc == 0 && print_segs(format, &s, shown, root, &text, &size) != 0)
    rc = cmg__seg_fail(err, errlen, "*", -ENOMEM, "out of memory");
  if (rc == 0) {
    *text_out = text;
    *len_out = size;
    text = NULL;
    rc = named_rc;
  }
  free(text);
  for (size_t i = 0; s.copies != NULL && i < s.n; i++)
    free(s.copies[i]);
  free(s.copies);
  free(s.scaled);
  free(s.errors);
  if (s.e != &s.one)
    free(s.e);
  return rc;
}
