/*
 * One rule for putting options into a CUMEMGUARD_OPTIONS that a user may
 * have set already, for the launcher's flags and the Slurm plugin's
 * (conf_merge.c).
 */
#ifndef CMG_CORE_CONF_MERGE_H
#define CMG_CORE_CONF_MERGE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether an item of the user's, whose key is key[0..len), gives way. */
typedef bool (*cmg__conf_drop_fn)(const char *key, size_t len, void *arg);

/* The user's items (env, may be NULL) but the empty ones and those drop
 * says give way, in their order, then ours[0..n) ("key=value" each), in
 * theirs.  Returns a malloc'd string, or NULL when out of memory. */
char *cmg__conf_merge(const char *env, cmg__conf_drop_fn drop, void *arg,
                      const char *const ours[], size_t n);

/* Whether the option string s (may be NULL) has an item with key k. */
bool cmg__conf_has_key(const char *s, const char *k);

#endif /* CMG_CORE_CONF_MERGE_H */
