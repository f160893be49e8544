/*
 * JSON text to a file descriptor, buffered, for the parts of the report
 * too large to build as a tree (jsonw.c).
 */
#ifndef CMG_RUNTIME_JSONW_H
#define CMG_RUNTIME_JSONW_H

#include <stddef.h>
#include <stdint.h>

struct cmg__jsonw {
  int fd;
  int err; /* the first failure; nothing is written after it */
  size_t len;
  char *buf;
};

/* Starts writing to fd; -ENOMEM without a buffer. */
int cmg__jsonw_open(struct cmg__jsonw *w, int fd);

/* Text that is already JSON, written as it is. */
void cmg__jsonw_put(struct cmg__jsonw *w, const char *s, size_t n);
void cmg__jsonw_text(struct cmg__jsonw *w, const char *s);
#define cmg__jsonw_lit(w, s) cmg__jsonw_put((w), "" s, sizeof(s) - 1)

/* v in decimal; an address as the string "0x..." in lower-case hex; a time
 * in nanoseconds as seconds with six decimals. */
void cmg__jsonw_u64(struct cmg__jsonw *w, uint64_t v);
void cmg__jsonw_hex(struct cmg__jsonw *w, uint64_t v);
void cmg__jsonw_seconds(struct cmg__jsonw *w, uint64_t ns);

/* The decimal digits of v at p (room for 20), unterminated; returns the
 * end. */
char *cmg__jsonw_format_u64(char *p, uint64_t v);

/* Fails the writer with err (a negative errno) unless it already failed. */
void cmg__jsonw_fail(struct cmg__jsonw *w, int err);

/* Writes what is buffered and frees the buffer; returns the first error. */
int cmg__jsonw_close(struct cmg__jsonw *w);

#endif /* CMG_RUNTIME_JSONW_H */
