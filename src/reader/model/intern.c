/*
 * The reader's one hash table, and the strings interned with it.
 *
 * The table maps a 64-bit hash of the whole key to an index into an array
 * the caller keeps (the index's modules, frames and stacks; the view's leak
 * groups; the strings below): open addressing with linear probing, at most
 * half full, indexes rather than pointers so that growing the array never
 * invalidates them.  The hash is FNV-1a over every byte of the key.  The
 * reader's keys share long beginnings (every frame of the page starts with
 * {"function", every summary block with its API), and a hash of only their
 * first bytes, as glibc's hsearch has, put them all in one chain: the page
 * of 4000 stacks of 32 frames each took six minutes.
 *
 * The string table numbers strings in the order first met, for the page's
 * "frames" and "strings" (written once, named by index) and the summary's
 * folding of groups that read the same.  It takes the strings it is given
 * rather than copying them: the page interns a printed frame per frame of
 * every group.  Nothing here is thread-safe; the tool has one thread.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader/model/intern.h"

/* ---- the hash table ----------------------------------------------------- */

#define FNV_PRIME 1099511628211ull

uint64_t
cmg__intern_hash_bytes(uint64_t h, const void *p, size_t n)
{
  const unsigned char *b = p;

  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * FNV_PRIME;
  return h;
}

uint64_t
cmg__intern_hash_string(uint64_t h, const char *s)
{
  return cmg__intern_hash_bytes(h, s != NULL ? s : "",
                                s != NULL ? strlen(s) + 1 : 0);
}

int
cmg__intern_map_reserve(struct cmg__intern_map *m)
{
  struct cmg__intern_map bigger;

  if ((m->len + 1) * 2 <= m->cap)
    return 0;
  bigger.cap = m->cap != 0 ? m->cap * 2 : 64;
  bigger.len = m->len;
  bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
  bigger.hashes = calloc(bigger.cap, sizeof(*bigger.hashes));
  if (bigger.slots == NULL || bigger.hashes == NULL) {
    free(bigger.slots);
    free(bigger.hashes);
    return -ENOMEM;
  }
  for (size_t i = 0; i < m->cap; i++) {
    size_t p;

    if (m->slots[i] == 0)
      continue;
    for (p = m->hashes[i] & (bigger.cap - 1); bigger.slots[p] != 0;
         p = (p + 1) & (bigger.cap - 1))
      ;
    bigger.slots[p] = m->slots[i];
    bigger.hashes[p] = m->hashes[i];
  }
  free(m->slots);
  free(m->hashes);
  *m = bigger;
  return 0;
}

size_t
cmg__intern_map_probe(const struct cmg__intern_map *m, uint64_t h,
                      cmg__intern_eq_fn eq, const void *ctx, const void *key)
{
  size_t p;

  for (p = h & (m->cap - 1); m->slots[p] != 0; p = (p + 1) & (m->cap - 1)) {
    if (m->hashes[p] == h && eq(ctx, m->slots[p] - 1, key))
      break;
  }
  return p;
}

void
cmg__intern_map_set(struct cmg__intern_map *m, size_t slot, uint64_t h,
                    uint32_t index)
{
  m->slots[slot] = index + 1;
  m->hashes[slot] = h;
  m->len++;
}

void
cmg__intern_map_free(struct cmg__intern_map *m)
{
  free(m->slots);
  free(m->hashes);
  memset(m, 0, sizeof(*m));
}

/* ---- strings ------------------------------------------------------------ */

void
cmg__intern_init(struct cmg__intern *t, bool owns)
{
  memset(t, 0, sizeof(*t));
  t->owns = owns;
}

static bool
same_string(const void *ctx, uint32_t index, const void *key)
{
  const struct cmg__intern *t = ctx;

  return strcmp(t->keys[index], key) == 0;
}

/* Room for one more key in t->keys and the map; -ENOMEM. */
static int
make_room(struct cmg__intern *t)
{
  if (t->n >= UINT32_MAX - 1)
    return -ENOMEM;
  if (t->n == t->cap) {
    size_t cap = t->cap != 0 ? t->cap * 2 : 64;
    char **keys = realloc(t->keys, cap * sizeof(*keys));

    if (keys == NULL)
      return -ENOMEM;
    t->keys = keys;
    t->cap = cap;
  }
  return cmg__intern_map_reserve(&t->map);
}

int
cmg__intern_add(struct cmg__intern *t, char *key, size_t *index)
{
  uint64_t h;
  size_t slot;

  if (key == NULL || make_room(t) != 0) {
    if (t->owns)
      free(key);
    return -ENOMEM;
  }
  h = cmg__intern_hash_string(CMG__INTERN_HASH_INIT, key);
  slot = cmg__intern_map_probe(&t->map, h, same_string, t, key);
  if (t->map.slots[slot] != 0) {
    *index = t->map.slots[slot] - 1;
    if (t->owns)
      free(key);
    return 0;
  }
  cmg__intern_map_set(&t->map, slot, h, (uint32_t)t->n);
  t->keys[t->n] = key;
  *index = t->n++;
  return 0;
}

void
cmg__intern_free(struct cmg__intern *t)
{
  for (size_t i = 0; t->owns && i < t->n; i++)
    free(t->keys[i]);
  free(t->keys);
  cmg__intern_map_free(&t->map);
  memset(t, 0, sizeof(*t));
}

/* ---- the arrays the tables index into ------------------------------------ */

/* Grows an array to hold n + 1 elements. */
int
cmg__intern_grow(void **array, size_t *cap, size_t n, size_t size)
{
  size_t want = *cap != 0 ? *cap * 2 : 16;

  if (n < *cap)
    return 0;
  void *bigger = realloc(*array, want * size);
  if (bigger == NULL)
    return -ENOMEM;
  *array = bigger;
  *cap = want;
  return 0;
}
