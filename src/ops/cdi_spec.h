/*
 * Container Device Interface specs, as `cumemguard cdi` and the device
 * plugin write them (cdi_spec.c): devices that give a container the
 * library and its options, and the mounts that put the library in it.
 */
#ifndef CMG_OPS_CDI_SPEC_H
#define CMG_OPS_CDI_SPEC_H

#include <stdbool.h>
#include <stddef.h>

/* Where a container sees the library's folder: beside nothing an image
 * ships, so the mount never hides a file of it. */
#define CMG__CDI_DIR "/usr/lib/cumemguard"

struct cmg__cdi_mount {
  const char *host, *container;
  bool writable;
};

struct cmg__cdi_device {
  const char *name;
  const char *const *env; /* NAME=VALUE */
  size_t n_env;
};

/* The spec of kind (vendor/class) with devs, and mounts that apply to a
 * container given any of them: malloc'd text in cJSON_Print's layout, or
 * NULL when out of memory.  Its cdiVersion is the lowest that has what it
 * uses: device names that start with a digit need 0.5.0 (requiresV050 in
 * the reference library's version.go); others do with 0.3.0, the first
 * version runtimes still accept with mounts and env as used here. */
char *cmg__cdi_spec(const char *kind, const struct cmg__cdi_device *devs,
                    size_t n, const struct cmg__cdi_mount *mounts,
                    size_t n_mounts);

/* What a spec mounts for the library at `library`: the folder around it
 * when that is a portable folder (its lib/ holds the library, PORTABLE is
 * beside lib/), mounted at CMG__CDI_DIR, else the library alone.  Sets
 * *host (malloc'd; the folder or the library) and *container (static: the
 * library as the container sees it); 0 or -ENOMEM. */
int cmg__cdi_library(const char *library, char **host, const char **container);

/* Whether a CDI device name is one runtimes take: letters, digits, '_',
 * '-', '.' and ':', starting and ending with a letter or digit. */
bool cmg__cdi_is_name(const char *name);

#endif /* CMG_OPS_CDI_SPEC_H */
