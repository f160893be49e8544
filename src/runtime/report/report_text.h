/*
 * Text the report takes from the process (paths, arguments, host and
 * thread names, native symbols, Python's qualified names and file names)
 * made valid UTF-8 by one rule (report_text.c).
 */
#ifndef CMG_RUNTIME_REPORT_REPORT_TEXT_H
#define CMG_RUNTIME_REPORT_REPORT_TEXT_H

#include <stddef.h>

struct cmg__jsonw;

/* The n bytes at src as the report writes them, into dst (cap >= 1 bytes,
 * the NUL included): each byte that is not part of a valid UTF-8 character
 * (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF, no
 * cut sequence), and each NUL, becomes the four characters \xHH (two
 * lower-case hex digits), as Python's "backslashreplace" error handler
 * decodes it; the rest is kept.  Cut at a character or escape when it does
 * not fit.  Returns the length written.  No malloc. */
size_t cmg__text_escape(char *dst, size_t cap, const char *src, size_t n);

/* Room for the escaped form of n bytes, the NUL included. */
#define CMG__TEXT_ROOM(n) (4 * (n) + 1)

/* A malloc'd escaped copy of the string s; NULL when out of memory. */
char *cmg__text_dup(const char *s);

/* s escaped, as a JSON string; fails the writer when out of memory. */
void cmg__text_string(struct cmg__jsonw *w, const char *s);

#endif /* CMG_RUNTIME_REPORT_REPORT_TEXT_H */
