/*
 * Python call sites: each distinct (code object, instruction offset) a
 * stack passed through, named once, when first seen, with its function,
 * file and line, and kept by a small id (pyline.c).
 */
#ifndef CMG_RUNTIME_PYTHON_PYLINE_H
#define CMG_RUNTIME_PYTHON_PYLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The word at p + off of an interpreter's object. */
static inline uintptr_t
cmg__py_word_at(uintptr_t p, size_t off)
{
  return *(const uintptr_t *)(p + off);
}

/* Where the objects a code object refers to keep what a site needs, for
 * the running interpreter (filled by pyframes.c). */
struct cmg__py_objects {
  uintptr_t unicode_type, bytes_type;
  size_t ascii_size;   /* sizeof(PyASCIIObject): where ASCII data starts */
  size_t compact_size; /* sizeof(PyCompactUnicodeObject) */
  size_t compact_utf8; /* offset of its utf8 pointer */
  size_t compact_utf8_length;
};

/* A code object at one instruction, as the frame walk read it: its
 * address and instruction, and beside them fields that differ between a
 * freed code object and another allocated at its address (its strings' and
 * table's addresses, sizes, first line, and tags: 3.12's serial co_version,
 * or in 3.11 its names' hashes), so that a site named for one is never
 * taken for the other's. */
struct cmg__py_where {
  uintptr_t code;
  uintptr_t qualname, filename, linetable;
  uint32_t lasti; /* in code units */
  int firstlineno;
  int64_t units;     /* the code's length in code units */
  int64_t table_len; /* the location table's length in bytes */
  uint64_t tag[2];
};

/* The hash Python keeps in str object s (-1 where it has computed none)
 * with its length: the tag of a str that has one. */
static inline uint64_t
cmg__py_hash_word(uintptr_t s)
{
  return *(const uint64_t *)(s + 24) ^ *(const uint64_t *)(s + 16) << 40;
}

/* A hash of str object s for a where's tag: the hash Python keeps in it
 * when it has computed one, else (with bytes) of its length and first and
 * last bytes, else of its length alone; 0 for anything but a compact
 * string.  Reads at most 64 bytes of its data, and its last bytes only
 * when it is short enough to trust its length. */
uint64_t cmg__py_str_hash(const struct cmg__py_objects *o, uintptr_t s,
                          bool bytes);

/* What cmg__py_site() returns for a site it cannot name: the table is
 * full or cannot be mapped.  Never an id. */
#define CMG__PY_NO_ROOM UINT32_MAX

/* The id (>= 1) of the site, naming it on first sight; CMG__PY_NO_ROOM,
 * counted, when it cannot.  Lock-free for a site already seen, and for one
 * seen lately no hash of its fields: one load and a compare. */
uint32_t cmg__py_site(const struct cmg__py_objects *o,
                      const struct cmg__py_where *w);

/* How many times cmg__py_site() returned CMG__PY_NO_ROOM: the Python
 * frames left out of stacks for want of room to name their sites. */
uint64_t cmg__py_sites_dropped(void);

struct cmg__py_site_view {
  const char *function; /* qualified name */
  const char *file;
  int line; /* 0 when the instruction has no line */
};

/* A forked child: the table's lock made anew (a thread of the parent may
 * have held it); the sites stay. */
void cmg__py_sites_after_fork(void);

/* Fills *out for site id; false for an unknown id. */
bool cmg__py_site_get(uint32_t id, struct cmg__py_site_view *out);

/* The line of instruction lasti (code units) in a 3.11+ location table
 * (CPython's Objects/locations.md), from firstlineno; 0 when the table
 * gives it none or ends first.  Exposed for the unit test. */
int cmg__py_line(const unsigned char *table, size_t len, int firstlineno,
                 uint32_t lasti);

#endif /* CMG_RUNTIME_PYTHON_PYLINE_H */
