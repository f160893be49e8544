/*
 * utf8_text.c: report text made valid UTF-8 without control characters, and
 * characters counted in text that is.
 */
#ifndef CMG_READER_LOAD_UTF8_TEXT_H
#define CMG_READER_LOAD_UTF8_TEXT_H

#include <stddef.h>

/* A copy of s with control bytes and invalid UTF-8 made '?', so that no
 * output (terminal, SVG, JSON) carries them; NULL when out of memory. */
char *cmg__utf8_clean(const char *s);

/* The characters of s, which is valid UTF-8. */
size_t cmg__utf8_count(const char *s);

/* The bytes of the first `chars` characters of s, which is valid UTF-8
 * (all of it when it has fewer). */
size_t cmg__utf8_prefix(const char *s, size_t chars);

#endif /* CMG_READER_LOAD_UTF8_TEXT_H */
