/*
 * UTF-8 as RFC 3629 has it (utf8.c): the one rule by which the library
 * escapes what it writes and the reader cleans what it reads.
 */
#ifndef CMG_CORE_UTF8_H
#define CMG_CORE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of the valid UTF-8 character at s, of n >= 1 bytes left, its code
 * point in *cp (when cp is not NULL); 0 when none starts there: a byte
 * that cannot lead, a cut sequence, an overlong form, a surrogate, or a
 * code point past U+10FFFF.  A NUL is the one-byte character U+0000. */
size_t cmg__utf8_char(const unsigned char *s, size_t n, uint32_t *cp);

#endif /* CMG_CORE_UTF8_H */
