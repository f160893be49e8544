/*
 * Files the launcher and the device plugin write for other programs to
 * read (files.c): a CDI spec for a container runtime, a metrics file for
 * node_exporter.
 */
#ifndef CMG_OPS_FILES_H
#define CMG_OPS_FILES_H

#include <stdbool.h>
#include <stddef.h>

/* Whether path names a file whose name ends in ext (".json") after at
 * least one character, as the readers of such files (CDI runtimes,
 * node_exporter) find them; "x/.json" and ".json" do not. */
bool cmg__file_has_ext(const char *path, const char *ext);

/* Writes all of text to fd: 0 or a negative errno. */
int cmg__write_all(int fd, const char *text, size_t len);

/* Replaces path with text (mode 0644) through a temporary file beside it,
 * named with a leading dot so that readers of the directory skip it while
 * it grows, synced, then renamed: a reader sees the old file or the whole
 * new one.  0, or a negative errno after one line naming the path (the
 * temporary file removed). */
int cmg__write_atomic(const char *path, const char *text, size_t len);

#endif /* CMG_OPS_FILES_H */
