/*
 * Finding and reading the segments `cumemguard status` shows (seg_find.c):
 * this user's, every user's for root, and those in containers' private
 * /dev/shm, without a daemon.
 */
#ifndef CMG_OPS_SEG_FIND_H
#define CMG_OPS_SEG_FIND_H

#include <stdbool.h>
#include <stddef.h>

#include "core/segment.h"

/* One segment found: where, whose, and what it is. */
struct cmg__seg_entry {
  char path[128];     /* the file, under /dev/shm or /proc/PID/root */
  char name[64];      /* group name, or REGISTRY_NAME */
  char container[80]; /* "" for the host's /dev/shm */
  unsigned uid;       /* as its name says */
  bool own_dir;       /* in the host's /dev/shm: the owner is checked */
};

/* The segments of this user (all users when all_users) in /dev/shm, and,
 * when containers, those in the /dev/shm of every container that has a
 * process with the library mapped (each directory once), sorted by
 * container, uid and name.  Returns a malloc'd array (NULL with *n 0 when
 * there are none) or NULL with *n SIZE_MAX when out of memory. */
struct cmg__seg_entry *cmg__seg_find(bool all_users, bool containers,
                                     size_t *n);

/* The entry for group `name` of this user in the host's /dev/shm. */
void cmg__seg_entry_own(const char *name, struct cmg__seg_entry *e);

/* The name to show for an entry in messages: "NAME", or "NAME (uid U)"
 * for another user's, "container C: NAME" for a container's. */
const char *cmg__seg_label(const struct cmg__seg_entry *e, char *buf,
                           size_t len);

/* Reads the entry's segment into a checked private copy (free() it): 0, or
 * a negative errno with one line in err ("group 'NAME': ..."). */
int cmg__seg_load(const struct cmg__seg_entry *e, struct seg **out, char *err,
                  size_t errlen);

/* cmg__seg_load, with *scaled true where members changed the segment
 * faster than it could be read whole: the members' bytes in the copy, which
 * added up to more than the group's count, are then scaled down to it. */
int cmg__seg_read(const struct cmg__seg_entry *e, struct seg **out,
                  bool *scaled, char *err, size_t errlen);

/* The Slurm job of a group named slurm.JOBID, or NULL. */
const char *cmg__seg_slurm_job(const char *name);

/* Where the Kubernetes device plugin puts what the kubelet says of each
 * container's group: $CUMEMGUARD_K8S_DIR, else this. */
#define CMG__K8S_DIR "/var/run/cumemguard/k8s"

/* The pod, its namespace and the container a group of the device plugin
 * (k8s-...) caps, as the kubelet's PodResources API told the plugin. */
struct cmg__k8s {
  char ns[64], pod[256], container[64];
};

/* Fills *out for group `name`: 0, or -ENOENT when nothing is known. */
int cmg__seg_k8s(const char *name, struct cmg__k8s *out);

#endif /* CMG_OPS_SEG_FIND_H */
