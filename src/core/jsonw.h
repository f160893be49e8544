/*
 * JSON text written as it is made, to a file descriptor or into memory, in
 * the layout cJSON prints (jsonw.c).
 */
#ifndef CMG_CORE_JSONW_H
#define CMG_CORE_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Containers nest at most this deep. */
#define CMG__JSONW_DEPTH 63

struct cmg__jsonw {
  int fd;  /* -1: into buf, which grows */
  int err; /* the first failure; nothing is written after it */
  bool pretty;
  unsigned depth;
  uint64_t arrays; /* bit d: the container at depth d is an array */
  uint64_t filled; /* bit d: it has a member already */
  size_t len, cap;
  size_t mark; /* in memory: where the next step of progress is counted */
  char *buf;
  /* Called at each flush to the file, or each BUF_SIZE bytes into
   * memory, so that a long write shows progress; may be NULL. */
  void (*on_flush)(void);
};

/* Starts writing to fd, or into memory when fd is -1: laid out as
 * cJSON_Print lays it out when pretty, else as cJSON_PrintUnformatted.
 * -ENOMEM without a buffer. */
int cmg__jsonw_open(struct cmg__jsonw *w, int fd, bool pretty);

/* Objects and arrays; a member's value follows its key. */
void cmg__jsonw_object(struct cmg__jsonw *w);
void cmg__jsonw_object_end(struct cmg__jsonw *w);
void cmg__jsonw_array(struct cmg__jsonw *w);
void cmg__jsonw_array_end(struct cmg__jsonw *w);
/* key is written as it is: the format's own names need no escaping.
 * Returns w, for the value. */
struct cmg__jsonw *cmg__jsonw_key(struct cmg__jsonw *w, const char *key);

/* Values.  A string escaped as cJSON escapes it (quote, backslash and
 * control characters; other bytes as they are); a number as cJSON prints
 * it ("%1.15g" or, where that does not read back, "%1.17g"); v as cJSON prints (double)v, or in decimal, every digit;
 * an address as the string
 * "0x..." in lower-case hex; a time in nanoseconds as seconds with six
 * decimals; text that is already JSON as it is. */
void cmg__jsonw_string(struct cmg__jsonw *w, const char *s);
void cmg__jsonw_null(struct cmg__jsonw *w);
/* s as a string, or null when s is NULL. */
void cmg__jsonw_string_or_null(struct cmg__jsonw *w, const char *s);
void cmg__jsonw_bool(struct cmg__jsonw *w, bool b);
void cmg__jsonw_number(struct cmg__jsonw *w, double d);
void cmg__jsonw_uint(struct cmg__jsonw *w, uint64_t v);
void cmg__jsonw_u64(struct cmg__jsonw *w, uint64_t v);
void cmg__jsonw_hex(struct cmg__jsonw *w, uint64_t v);
void cmg__jsonw_seconds(struct cmg__jsonw *w, uint64_t ns);
void cmg__jsonw_raw(struct cmg__jsonw *w, const char *json);

/* Members of an object: key, then its value as the writers above write
 * it.  For the views that write hundreds of them. */
void cmg__jsonw_member_number(struct cmg__jsonw *w, const char *key, double d);
void cmg__jsonw_member_uint(struct cmg__jsonw *w, const char *key, uint64_t v);
/* v, or null when it is not had. */
void cmg__jsonw_member_uint_or_null(struct cmg__jsonw *w, const char *key,
                                    bool has, uint64_t v);
void cmg__jsonw_member_string(struct cmg__jsonw *w, const char *key,
                              const char *s);
void cmg__jsonw_member_string_or_null(struct cmg__jsonw *w, const char *key,
                                      const char *s);
void cmg__jsonw_member_bool(struct cmg__jsonw *w, const char *key, bool b);

/* Text outside any value (a final newline), as it is. */
void cmg__jsonw_put(struct cmg__jsonw *w, const char *s, size_t n);
#define cmg__jsonw_lit(w, s) cmg__jsonw_put((w), "" s, sizeof(s) - 1)

/* The decimal digits of v at p (room for 20), unterminated; returns the
 * end. */
char *cmg__jsonw_format_u64(char *p, uint64_t v);

/* Fails the writer with err (a negative errno) unless it already failed. */
void cmg__jsonw_fail(struct cmg__jsonw *w, int err);

/* Writes what is buffered and frees the buffer; returns the first error. */
int cmg__jsonw_close(struct cmg__jsonw *w);

/* Of a writer into memory: the text, NUL-terminated, for the caller to
 * free; NULL after any failure.  The writer is closed. */
char *cmg__jsonw_take(struct cmg__jsonw *w);

/* Of a writer into memory: the text so far, NUL-terminated, left in the
 * writer and valid until its next write; NULL after any failure. */
const char *cmg__jsonw_text(struct cmg__jsonw *w);

/* Of a writer into memory: empties it, to write another value in it with
 * the buffer it has.  A failure stays. */
void cmg__jsonw_empty(struct cmg__jsonw *w);

/* Of a writer into memory: writes what it holds to fd, and all that
 * follows, as a writer opened on fd would; for a document held back until
 * what it needs is known to be good.  Returns the first error. */
int cmg__jsonw_to_fd(struct cmg__jsonw *w, int fd);

#endif /* CMG_CORE_JSONW_H */
