/*
 * names.c: a path's base name, as the reader compares names.
 */
#ifndef CMG_READER_MODEL_NAMES_H
#define CMG_READER_MODEL_NAMES_H

/* The last part of path, after its last '/' (all of it without one). */
const char *cmg__names_base(const char *path);

#endif /* CMG_READER_MODEL_NAMES_H */
