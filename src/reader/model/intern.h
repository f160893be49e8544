/*
 * intern.c: the reader's hash table, from a hash of a key to an index into
 * an array that holds the keys, and the table of strings each met once
 * that the summary and the page are written with; the arrays the tables
 * index into grow here too.
 */
#ifndef CMG_READER_MODEL_INTERN_H
#define CMG_READER_MODEL_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* FNV-1a, continued from h (start with CMG__INTERN_HASH_INIT). */
#define CMG__INTERN_HASH_INIT 14695981039346656037ull
uint64_t cmg__intern_hash_bytes(uint64_t h, const void *p, size_t n);
uint64_t cmg__intern_hash_string(uint64_t h, const char *s);

/* An open-addressing table from a hash to an index; keys live elsewhere. */
struct cmg__intern_map {
  uint32_t *slots; /* index + 1; 0 is empty */
  uint64_t *hashes;
  size_t cap, len;
};

typedef bool (*cmg__intern_eq_fn)(const void *ctx, uint32_t index,
                                  const void *key);

/* Makes room for one more entry; -ENOMEM. */
int cmg__intern_map_reserve(struct cmg__intern_map *m);

/* The slot holding key (eq says which entry that is), or the empty slot
 * where it would go; call cmg__intern_map_reserve() first. */
size_t cmg__intern_map_probe(const struct cmg__intern_map *m, uint64_t h,
                             cmg__intern_eq_fn eq, const void *ctx,
                             const void *key);

/* Puts index in the empty slot found by cmg__intern_map_probe(). */
void cmg__intern_map_set(struct cmg__intern_map *m, size_t slot, uint64_t h,
                         uint32_t index);
/* Frees the table and leaves it empty and usable. */
void cmg__intern_map_free(struct cmg__intern_map *m);

/* Strings, each kept once, numbered from 0 in the order first met. */
struct cmg__intern {
  struct cmg__intern_map map;
  char **keys;
  size_t n, cap;
  bool owns; /* the table frees its keys */
};

/* An empty table.  With owns, each key added becomes the table's, freed
 * when it is a repeat or with the table; without, the caller keeps every
 * key it added alive and unchanged until the table is freed. */
void cmg__intern_init(struct cmg__intern *t, bool owns);

/* The number of key in *index: the one it was first added with, or t->n
 * before the call when it is new.  Returns 0, or -ENOMEM (also for a NULL
 * key, what a failed allocation of it gives), when an owned key is
 * freed. */
int cmg__intern_add(struct cmg__intern *t, char *key, size_t *index);

/* Frees the table, and its keys when it owns them. */
void cmg__intern_free(struct cmg__intern *t);

/* Grows *array (of *cap elements of size) to hold n + 1; -ENOMEM. */
int cmg__intern_grow(void **array, size_t *cap, size_t n, size_t size);
#define CMG__INTERN_GROW(arr, cap, n)                                          \
  cmg__intern_grow((void **)&(arr), &(cap), (n), sizeof(*(arr)))

#endif /* CMG_READER_MODEL_INTERN_H */
