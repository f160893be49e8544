/*
 * CDI specs as JSON (a valid CDI spec; YAML is not needed), written by the
 * report's writer (core/jsonw.c) in cJSON_Print's layout, for `cumemguard
 * cdi` (launcher/cdi.c) and the device plugin (k8s/).  A device's edits
 * set the container's environment; the spec's own edits mount the library
 * read-only from the host, and a report folder read-write, once for a
 * container given any of its devices.
 *
 * A library in a portable folder (scripts/portable: PORTABLE beside bin/
 * and lib/) is mounted with the whole folder, read-only, at
 * /usr/lib/cumemguard: its dependencies are in lib/deps, found through its
 * run path, and it needs nothing of the image but a C library.  One of an
 * ordinary install is mounted alone, as /usr/lib/cumemguard/libcumemguard.so,
 * and then needs the libraries it was linked with, and a C library as new
 * as the build machine's, in the image.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/base.h"
#include "core/jsonw.h"
#include "ops/cdi_spec.h"

#define PORTABLE_MARK "PORTABLE"

/* A mount edit: hostPath, containerPath and options. */
static void
mount(struct cmg__jsonw *w, const struct cmg__cdi_mount *m)
{
  const char *opts[] = { m->writable ? "rw" : "ro", "nosuid", "nodev", "bind" };

  cmg__jsonw_object(w);
  cmg__jsonw_string(cmg__jsonw_key(w, "hostPath"), m->host);
  cmg__jsonw_string(cmg__jsonw_key(w, "containerPath"), m->container);
  cmg__jsonw_array(cmg__jsonw_key(w, "options"));
  for (int i = 0; i < 4; i++)
    cmg__jsonw_string(w, opts[i]);
  cmg__jsonw_array_end(w);
  cmg__jsonw_object_end(w);
}

static void
device(struct cmg__jsonw *w, const struct cmg__cdi_device *d)
{
  cmg__jsonw_object(w);
  cmg__jsonw_string(cmg__jsonw_key(w, "name"), d->name);
  cmg__jsonw_object(cmg__jsonw_key(w, "containerEdits"));
  cmg__jsonw_array(cmg__jsonw_key(w, "env"));
  for (size_t i = 0; i < d->n_env; i++)
    cmg__jsonw_string(w, d->env[i]);
  cmg__jsonw_array_end(w);
  cmg__jsonw_object_end(w);
  cmg__jsonw_object_end(w);
}

char *
cmg__cdi_spec(const char *kind, const struct cmg__cdi_device *devs, size_t n,
              const struct cmg__cdi_mount *mounts, size_t n_mounts)
{
  struct cmg__jsonw w;
  bool digit_first = false;

  if (cmg__jsonw_open(&w, -1, true) < 0)
    return NULL;
  for (size_t i = 0; i < n; i++)
    digit_first =
        digit_first || (devs[i].name[0] >= '0' && devs[i].name[0] <= '9');
  cmg__jsonw_object(&w);
  cmg__jsonw_string(cmg__jsonw_key(&w, "cdiVersion"),
                    digit_first ? "0.5.0" : "0.3.0");
  cmg__jsonw_string(cmg__jsonw_key(&w, "kind"), kind);
  cmg__jsonw_array(cmg__jsonw_key(&w, "devices"));
  for (size_t i = 0; i < n; i++)
    device(&w, &devs[i]);
  cmg__jsonw_array_end(&w);
  cmg__jsonw_object(cmg__jsonw_key(&w, "containerEdits"));
  cmg__jsonw_array(cmg__jsonw_key(&w, "mounts"));
  for (size_t i = 0; i < n_mounts; i++)
    mount(&w, &mounts[i]);
  cmg__jsonw_array_end(&w);
  cmg__jsonw_object_end(&w);
  cmg__jsonw_object_end(&w);
  return cmg__jsonw_take(&w);
}

int
cmg__cdi_library(const char *library, char **host, const char **container)
{
  size_t len = strlen(library), n = len - strlen("/" CMG__LIBRARY_NAME);
  struct stat st;
  char *mark;

  *container = CMG__CDI_DIR "/" CMG__LIBRARY_NAME;
  if (len > strlen("/lib/" CMG__LIBRARY_NAME) &&
      strcmp(library + n, "/" CMG__LIBRARY_NAME) == 0 &&
      strncmp(library + n - 4, "/lib", 4) == 0 &&
      asprintf(&mark, "%.*s/" PORTABLE_MARK, (int)(n - 4), library) >= 0) {
    bool portable = stat(mark, &st) == 0 && S_ISREG(st.st_mode);
    free(mark);
    if (portable) {
      *container = CMG__CDI_DIR "/lib/" CMG__LIBRARY_NAME;
      *host = strndup(library, n - 4);
      return *host != NULL ? 0 : -ENOMEM;
    }
  }
  *host = strdup(library);
  return *host != NULL ? 0 : -ENOMEM;
}

static bool
is_alnum(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}

bool
cmg__cdi_is_name(const char *name)
{
  size_t n = strlen(name);

  /* The CDI reference library's rule: alphanumeric at both ends. */
  if (n == 0 || !is_alnum(name[0]) || !is_alnum(name[n - 1]))
    return false;
  for (const char *p = name; *p != '\0'; p++)
    if (!is_alnum(*p) && *p != '_' && *p != '-' && *p != '.' && *p != ':')
      return false;
  return true;
}
