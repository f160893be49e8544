/*
 * names.c: a path's base name and a name's prefix, as the reader compares
 * names.
 */
#ifndef CMG_READER_MODEL_NAMES_H
#define CMG_READER_MODEL_NAMES_H

#include <stdbool.h>

/* The last part of path, after its last '/' (all of it without one). */
const char *cmg__names_base(const char *path);

/* Whether s (NULL: never) starts with prefix. */
bool cmg__names_has_prefix(const char *s, const char *prefix);

#endif /* CMG_READER_MODEL_NAMES_H */
