/*
 * Sizes as people write them: "4GiB", "512M", "1.5GB", "1073741824", and
 * "50%" of a device (size.c).  The library, the launcher and the report
 * reader all read sizes through it, so they agree on every spelling.
 */
#ifndef CMG_CORE_SIZE_H
#define CMG_CORE_SIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cmg__limit_kind {
  CMG__LIMIT_NONE = 0,
  CMG__LIMIT_BYTES,
  CMG__LIMIT_PERCENT,
};

struct cmg__limit {
  enum cmg__limit_kind kind;
  uint64_t bytes; /* CMG__LIMIT_BYTES */
  uint32_t ppm;   /* CMG__LIMIT_PERCENT, in millionths of the device */
};

/* Parses one size ("4GiB", "512M", "1.5GB", "1073741824", "50%" when
 * allow_percent) of `len` bytes at s.  Returns 0, -EINVAL (not a size) or
 * -ERANGE (does not fit in 64 bits, or a percentage outside (0, 100]). */
int cmg__size_parse(const char *s, size_t len, bool allow_percent,
                    struct cmg__limit *out);

/* Bytes for one limit on a device of `physical` bytes, rounded down;
 * CMG__NO_LIMIT for none. */
uint64_t cmg__limit_bytes(const struct cmg__limit *l, uint64_t physical);

/* Parses a duration: digits, an optional fraction and a unit ms, s, m or
 * h (seconds without one), into nanoseconds.  Returns 0, -EINVAL (not a
 * duration) or -ERANGE (below 1 ms or above 24 h). */
int cmg__duration_parse(const char *s, size_t len, uint64_t *ns_out);

/* Formats `bytes` for people ("512 B", "1.5 GiB") into buf; returns buf. */
const char *cmg__format_size(uint64_t bytes, char *buf, size_t len);

/* True if s[0..len) spells name, ignoring ASCII case on both sides (the
 * C library's tolower() follows the program's locale). */
bool cmg__equals_nocase(const char *s, size_t len, const char *name);

#endif /* CMG_CORE_SIZE_H */
