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

int
cmg__group_status(const char *name, enum cmg__status_format format,
                  char **text_out, size_t *len_out, char *err, size_t errlen)
{
  char *text = NULL, (*errors)[256] = NULL;
  struct cmg__seg_entry *e = NULL, one;
  struct seg **copies = NULL;
  bool *scaled = NULL;
  size_t size = 0, n = 0;
  bool root = geteuid() == 0;
  FILE *f = NULL;
  int rc = 0, named_rc = 0;

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
  scaled = calloc(n + 1, sizeof(*scaled));
  errors = calloc(n + 1, sizeof(*errors));
  if (copies == NULL || scaled == NULL || errors == NULL) {
    rc = cmg__seg_fail(err, errlen, "*", -ENOMEM, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    rc = cmg__seg_read(&e[i], &copies[i], &scaled[i], errors[i],
                       sizeof(errors[i]));
    /* One group asked for by name: its error is the command's.  The text
     * view is that one line; JSON is still one document, the view of
     * every group cut down to that name: none while there is no such
     * group (or its first member is still setting it up), else the group
     * with its error. */
    if (rc != 0 && name != NULL) {
      snprintf(err, errlen, "%s", errors[0]);
      if (format != CMG__STATUS_JSON)
        goto out;
      named_rc = rc;
    }
    rc = 0;
  }
  size_t shown = named_rc == -ENOENT || named_rc == -EINPROGRESS ? 0 : n;
  f = open_memstream(&text, &size);
  if (f == NULL) {
    rc = cmg__seg_fail(err, errlen, "*", -ENOMEM, "out of memory");
    goto out;
  }
  if (format == CMG__STATUS_PROMETHEUS)
    cmg__metrics_print(f, e, (const struct seg *const *)copies,
                       (const char(*)[256])errors, n);
  else if (format == CMG__STATUS_JSON)
    rc = print_json(f, e, copies, scaled, (const char(*)[256])errors, shown);
  else
    print_text(f, e, copies, scaled, (const char(*)[256])errors, n, root);
  if (fclose(f) != 0 || rc != 0) {
    rc = cmg__seg_fail(err, errlen, "*", -ENOMEM, "out of memory");
    goto out;
  }
  *text_out = text;
  *len_out = size;
  text = NULL;
  rc = named_rc;
out:
  free(text);
  for (size_t i = 0; copies != NULL && i < n; i++)
    free(copies[i]);
  free(copies);
  free(scaled);
  free(errors);
  if (e != &one)
    free(e);
  return rc;
}
