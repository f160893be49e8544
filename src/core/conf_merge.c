/*
 * Merging option strings.  The launcher's flags and the Slurm plugin's
 * settings go into CUMEMGUARD_OPTIONS after the user's own items, and an
 * item of the user's with a key set again gives way, so that the parser,
 * which keeps the last of a key, and a reader of the string agree on it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/conf_merge.h"

/* Appends item (n bytes) to out at *len, after a comma if needed. */
static void
append(char *out, size_t *len, const char *item, size_t n)
{
  if (*len > 0)
    out[(*len)++] = ',';
  memcpy(out + *len, item, n);
  *len += n;
}

char *
cmg__conf_merge(const char *env, cmg__conf_drop_fn drop, void *arg,
                const char *const ours[], size_t n)
{
  size_t size = (env != NULL ? strlen(env) : 0) + 1, len = 0;
  for (size_t i = 0; i < n; i++)
    size += strlen(ours[i]) + 1;
  char *out = malloc(size);
  if (out == NULL)
    return NULL;
  for (const char *p = env; p != NULL && *p != '\0';) {
    size_t item = strcspn(p, ","), key = strcspn(p, "=");
    if (item > 0 && !drop(p, key < item ? key : item, arg))
      append(out, &len, p, item);
    p += item + (p[item] == ',');
  }
  for (size_t i = 0; i < n; i++)
    if (ours[i][0] != '\0')
      append(out, &len, ours[i], strlen(ours[i]));
  out[len] = '\0';
  return out;
}

bool
cmg__conf_has_key(const char *s, const char *k)
{
  size_t len = strlen(k);
  for (const char *p = s; p != NULL && *p != '\0';) {
    size_t n = strcspn(p, ",");
    if (n > len && p[len] == '=' && strncmp(p, k, len) == 0)
      return true;
    p += n + (p[n] == ',');
  }
  return false;
}
