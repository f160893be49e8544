/*
 * HAMi's device plugin caps a container by environment: it sets
 * CUDA_DEVICE_MEMORY_LIMIT_<i>=<size> for each GPU it gives the container
 * (i its index among them, as the container numbers them) and perhaps
 * CUDA_DEVICE_MEMORY_LIMIT for all, sizes such as 3000m or 4g, in every
 * process of the container, and mounts an /etc/ld.so.preload that names
 * HAMi-core's library.  An operator who mounts this library at that path
 * keeps the rest of HAMi: where CUMEMGUARD_OPTIONS is absent, the
 * variables become the options of one group for the container, because
 * HAMi's limit is one cap that the container's processes share (its
 * shared cache file), not one each.  The group is named after
 * CUDA_DEVICE_MEMORY_SHARED_CACHE, which HAMi makes per container: two
 * containers of one pod share /dev/shm, and must not share a cap.
 *
 * Not read: CUDA_DEVICE_SM_LIMIT (a share of the GPU's cores, which this
 * library does not limit), CUDA_OVERSUBSCRIBE and the other switches of
 * HAMi-core's own.  CUDA_DISABLE_CONTROL=true turns the variables off, as
 * it turns HAMi-core off.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload/hami.h"

#define LIMIT_VAR "CUDA_DEVICE_MEMORY_LIMIT"
#define CACHE_VAR "CUDA_DEVICE_MEMORY_SHARED_CACHE"

extern char **environ;

/* Appends ",KEY=VALUE" (no comma first) to out at *n: false when it does
 * not fit. */
static bool
append(char *out, size_t len, size_t *n, const char *key, const char *value)
{
  int k = snprintf(out + *n, len - *n, "%s%s=%s", *n ? "," : "", key, value);
  if (k < 0 || (size_t)k >= len - *n)
    return false;
  *n += (size_t)k;
  return true;
}

/* Whether a value of HAMi's is one the options could take as one item. */
static bool
is_plain(const char *v)
{
  return *v != '\0' && strchr(v, ',') == NULL;
}

/* The group's name: after the container's cache file, so that each
 * container has its own. */
static void
group_name(char *out, size_t len)
{
  const char *cache = getenv(CACHE_VAR);
  uint64_t h = 0xcbf29ce484222325ull;

  if (cache == NULL || *cache == '\0') {
    snprintf(out, len, "hami");
    return;
  }
  for (const char *p = cache; *p != '\0'; p++)
    h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
  snprintf(out, len, "hami-%016llx", (unsigned long long)h);
}

int
cmg__hami_options(char *out, size_t len)
{
  const char *off = getenv("CUDA_DISABLE_CONTROL");
  char key[64], group[32];
  size_t n = 0;
  bool any = false;

  if (off != NULL && strcmp(off, "true") == 0)
    return 0;
  for (char **e = environ; e != NULL && *e != NULL; e++) {
    const char *eq = strchr(*e, '=');
    size_t klen = eq ? (size_t)(eq - *e) : 0;
    size_t base = strlen(LIMIT_VAR);
    if (klen < base || strncmp(*e, LIMIT_VAR, base) != 0 || !is_plain(eq + 1))
      continue;
    if (klen == base)
      snprintf(key, sizeof(key), "group_limit");
    else if ((*e)[base] == '_' && klen - base - 1 < 8)
      snprintf(key, sizeof(key), "group_limit.%.*s", (int)(klen - base - 1),
               *e + base + 1);
    else
      continue;
    if (!append(out, len, &n, key, eq + 1))
      return -ENAMETOOLONG;
    any = true;
  }
  if (!any)
    return 0;
  group_name(group, sizeof(group));
  return append(out, len, &n, "group", group) ? 1 : -ENAMETOOLONG;
}
