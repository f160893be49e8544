/*
 * Messages to people: one line to stderr, never allocating, and sizes in
 * units people read (log.c).
 */
#ifndef CMG_CORE_LOG_H
#define CMG_CORE_LOG_H

#include <stddef.h>
#include <stdint.h>

/* Writes "cumemguard: " + the formatted text + "\n" to stderr with one
 * write(2); errno is preserved. */
void cmg__log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Formats `bytes` for people ("512 B", "1.5 GiB") into buf. */
const char *cmg__format_size(uint64_t bytes, char *buf, size_t len);

#endif /* CMG_CORE_LOG_H */
