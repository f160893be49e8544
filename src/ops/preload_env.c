/*
 * The library's place in LD_PRELOAD.  A sanitizer's runtime must come
 * first (ASan refuses to start otherwise, and it must see every allocator
 * call, ours included), so the library goes right after the runtimes that
 * lead the list, and before everything else, whose interposers would
 * otherwise see the CUDA calls first.
 *
 * An entry is the library only when it is the same path, as written: a
 * match by file name would take another copy of the library (a job's own,
 * say) for the one that was asked for, while the same file under a second
 * spelling costs nothing, since ld.so maps a file it has loaded once.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/preload_env.h"

/* Where ld.so splits LD_PRELOAD (elf/rtld.c). */
#define SEPARATORS " :"

/* ld.so does not split the variable at tabs and newlines, but it splits
 * /etc/ld.so.preload there, and in a library's path they are a quoting
 * slip, never meant. */
#define NOT_IN_PATH SEPARATORS "\t\n"

/* Whether the entry [e, e + len) is a sanitizer's runtime, by its file
 * name: the runtimes are versioned (libasan.so.8) or per architecture
 * (libclang_rt.asan-x86_64.so). */
static bool
is_sanitizer_runtime(const char *e, size_t len)
{
  static const char *const names[] = {
    "libasan.",  "libtsan.",   "liblsan.",
    "libubsan.", "libhwasan.", "libclang_rt."
  };
  const char *base = e;

  for (const char *c = e; c < e + len; c++)
    if (*c == '/')
      base = c + 1;
  for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
    size_t n = strlen(names[i]);
    if ((size_t)(e + len - base) >= n && strncmp(base, names[i], n) == 0)
      return true;
  }
  return false;
}

static bool
has_entry(const char *old, const char *lib)
{
  size_t len = strlen(lib);

  for (const char *p = old; *p != '\0';) {
    p += strspn(p, SEPARATORS);
    size_t n = strcspn(p, SEPARATORS);
    if (n == len && strncmp(p, lib, n) == 0)
      return true;
    p += n;
  }
  return false;
}

/* The first entry of old that is not one of the sanitizer runtimes leading
 * it ("" if none is), and in *head the length of old up to the end of the
 * last of those runtimes (0 if none leads). */
static const char *
after_sanitizers(const char *old, size_t *head)
{
  const char *at = old + strspn(old, SEPARATORS);
  size_t len = strcspn(at, SEPARATORS);

  *head = 0;
  while (len > 0 && is_sanitizer_runtime(at, len)) {
    *head = (size_t)(at + len - old);
    at += len + strspn(at + len, SEPARATORS);
    len = strcspn(at, SEPARATORS);
  }
  return at;
}

static char *
insert(const char *old, const char *lib)
{
  size_t head;
  const char *rest = after_sanitizers(old, &head);
  char *value;

  if (asprintf(&value, "%.*s%s%s%s%s", (int)head, old, head > 0 ? ":" : "", lib,
               *rest != '\0' ? ":" : "", rest) < 0)
    return NULL;
  return value;
}

/* 0 if LD_PRELOAD can hold lib as one entry, else -EINVAL with why. */
static int
check_lib(const char *lib, char *err, size_t errlen)
{
  if (lib[0] == '\0') {
    snprintf(err, errlen, "cannot preload '': expected the library's path");
    return -EINVAL;
  }
  if (lib[strcspn(lib, NOT_IN_PATH)] != '\0') {
    snprintf(err, errlen,
             "cannot preload '%s': expected a path without "
             "spaces, tabs, newlines or ':' (the dynamic loader splits "
             "LD_PRELOAD at spaces and ':')",
             lib);
    return -EINVAL;
  }
  return 0;
}

int
cmg__preload_add(const char *old, const char *lib, char **out, char *err,
                 size_t errlen)
{
  int rc = check_lib(lib, err, errlen);

  *out = NULL;
  if (rc != 0)
    return rc;
  if (old == NULL || old[strspn(old, SEPARATORS)] == '\0')
    *out = strdup(lib);
  else if (has_entry(old, lib))
    *out = strdup(old);
  else
    *out = insert(old, lib);
  return *out != NULL ? 0 : -ENOMEM;
}
