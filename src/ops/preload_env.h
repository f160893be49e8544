/*
 * LD_PRELOAD with the library added (preload_env.c): the one rule that the
 * launcher, its CDI spec writer and the Slurm plugin follow, so that a
 * program gets the same list whichever of them starts it.
 */
#ifndef CMG_OPS_PRELOAD_ENV_H
#define CMG_OPS_PRELOAD_ENV_H

#include <stddef.h>

/*
 * Sets *out to a malloc'd LD_PRELOAD value holding lib: after the sanitizer
 * runtimes that lead old (libasan, libtsan, liblsan, libubsan, libhwasan,
 * libclang_rt), which must be loaded first, and before the rest of old.
 * old is NULL when unset; NULL, empty or separators only give lib alone.
 * If an entry of old is lib (the same path, as written), *out is a copy of
 * old.  Returns 0; -EINVAL with one line in err, and *out NULL, when lib is
 * empty or holds a space, tab, newline or ':'; -ENOMEM, *out NULL.
 */
int cmg__preload_add(const char *old, const char *lib, char **out, char *err,
                     size_t errlen);

#endif /* CMG_OPS_PRELOAD_ENV_H */
