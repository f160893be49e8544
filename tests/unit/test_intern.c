/*
 * Unit tests of intern.c, the reader's hash table and its string table:
 * FNV-1a over every byte of a key (keys that share long beginnings, as
 * the page's frames do, must not share a hash); the table from a hash to
 * an index, at most half full, telling keys of one hash apart; strings
 * numbered in the order first met, a repeat given its first number, across
 * the table's growth; and the arrays the tables index into.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/model/intern.h"
#include "../tap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void
test_hash(void)
{
  /* The published FNV-1a 64-bit test vectors. */
  static const struct {
    const char *in;
    uint64_t want;
  } cases[] = {
    { "", 0xcbf29ce484222325ull },       { "a", 0xaf63dc4c8601ec8cull },
    { "b", 0xaf63df4c8601f1a5ull },      { "foo", 0xdcb27518fed9d577ull },
    { "foobar", 0x85944171f73967e8ull },
  };

  for (size_t i = 0; i < N(cases); i++)
    is_u64(cmg__intern_hash_bytes(CMG__INTERN_HASH_INIT, cases[i].in,
                                  strlen(cases[i].in)),
           cases[i].want, "FNV-1a of '%s'", cases[i].in);
  is_u64(cmg__intern_hash_bytes(
             cmg__intern_hash_bytes(CMG__INTERN_HASH_INIT, "foo", 3), "bar", 3),
         0x85944171f73967e8ull, "a hash continued is the hash of the whole");
  is_u64(cmg__intern_hash_string(CMG__INTERN_HASH_INIT, "foo"),
         cmg__intern_hash_bytes(CMG__INTERN_HASH_INIT, "foo", 4),
         "a string's hash takes its terminating NUL");
  ok(cmg__intern_hash_string(
         cmg__intern_hash_string(CMG__INTERN_HASH_INIT, "ab"), "c") !=
         cmg__intern_hash_string(
             cmg__intern_hash_string(CMG__INTERN_HASH_INIT, "a"), "bc"),
     "so two strings hashed one after the other keep their border");
  is_u64(cmg__intern_hash_string(CMG__INTERN_HASH_INIT, NULL),
         CMG__INTERN_HASH_INIT, "no string adds nothing");
  ok(cmg__intern_hash_string(CMG__INTERN_HASH_INIT, "") !=
         CMG__INTERN_HASH_INIT,
     "an empty string is not no string");

  /* Keys alike but for their ends: the page's frames, 4000 of them. */
  enum { KEYS = 4000 };
  static uint64_t h[KEYS];
  char key[128];
  size_t same = 0;
  for (int i = 0; i < KEYS; i++) {
    snprintf(key, sizeof(key),
             "{\"function\":\"at::native::empty_cuda\",\"module\":"
             "\"libtorch_cuda.so\",\"line\":%d}",
             i);
    h[i] = cmg__intern_hash_string(CMG__INTERN_HASH_INIT, key);
  }
  for (int i = 0; i < KEYS; i++)
    for (int j = i + 1; j < KEYS; j++)
      same += h[i] == h[j];
  is_u64(same, 0, "%d keys that differ only at their end: as many hashes",
         KEYS);
}

/* ---- the table from a hash to an index --------------------------------- */

static const char *const words[] = { "alpha", "beta", "gamma", "delta",
                                     "epsilon" };

static bool
same_word(const void *ctx, uint32_t index, const void *key)
{
  const char *const *list = ctx;
  return strcmp(list[index], key) == 0;
}

/* For keys whose hashes all differ: never asked. */
static bool
never_same(const void *ctx, uint32_t index, const void *key)
{
  return false;
}

static void
test_map(void)
{
  struct cmg__intern_map m;
  size_t slot, found = 0;

  memset(&m, 0, sizeof(m));
  is_int(cmg__intern_map_reserve(&m), 0, "an empty table makes room");
  ok(m.cap >= 2 && (m.cap & (m.cap - 1)) == 0, "a power of two (%zu slots)",
     m.cap);
  /* Every word under one hash: only eq tells them apart. */
  for (uint32_t i = 0; i < N(words); i++) {
    cmg__intern_map_reserve(&m);
    slot = cmg__intern_map_probe(&m, 42, same_word, words, words[i]);
    if (m.slots[slot] == 0)
      cmg__intern_map_set(&m, slot, 42, i);
  }
  is_int(m.len, N(words), "five keys of one hash: five entries");
  for (uint32_t i = 0; i < N(words); i++) {
    slot = cmg__intern_map_probe(&m, 42, same_word, words, words[i]);
    found += m.slots[slot] == i + 1;
  }
  is_int(found, N(words), "each found again, at its own index");
  slot = cmg__intern_map_probe(&m, 42, same_word, words, "zeta");
  is_int(m.slots[slot], 0, "a key not in the table: an empty slot");
  slot = cmg__intern_map_probe(&m, 43, same_word, words, "alpha");
  is_int(m.slots[slot], 0, "a key under another hash is another key");

  /* At most half full, whatever it holds. */
  bool half = true;
  for (uint32_t i = (uint32_t)N(words); i < 1000; i++) {
    if (cmg__intern_map_reserve(&m) != 0)
      break;
    slot = cmg__intern_map_probe(&m, (uint64_t)i * 0x9e3779b97f4a7c15ull,
                                 never_same, NULL, "");
    cmg__intern_map_set(&m, slot, (uint64_t)i * 0x9e3779b97f4a7c15ull, i);
    half = half && m.len * 2 <= m.cap;
  }
  ok(half && m.len == 1000, "1000 entries, the table never past half full");
  found = 0;
  for (uint32_t i = 0; i < N(words); i++) {
    slot = cmg__intern_map_probe(&m, 42, same_word, words, words[i]);
    found += m.slots[slot] == i + 1;
  }
  is_int(found, N(words), "growing kept every entry where probing finds it");
  cmg__intern_map_free(&m);
  ok(m.slots == NULL && m.hashes == NULL && m.cap == 0 && m.len == 0,
     "freed, the table is empty");
  is_int(cmg__intern_map_reserve(&m), 0, "and usable again");
  cmg__intern_map_free(&m);
}

/* ---- strings ------------------------------------------------------------ */

static void
test_strings(void)
{
  static const struct {
    const char *key;
    size_t index;
  } cases[] = {
    { "cudaMalloc", 0 },     { "cuMemAlloc_v2", 1 },
    { "cudaMalloc", 0 },     { "", 2 },
    { "cudaMallocHost", 3 }, { "", 2 },
    { "cuMemAlloc_v2", 1 },  { "cudamalloc", 4 },
  };
  struct cmg__intern t;
  size_t index;

  /* The caller's strings, kept as they are. */
  cmg__intern_init(&t, false);
  for (size_t i = 0; i < N(cases); i++) {
    index = 99;
    is_int(cmg__intern_add(&t, (char *)cases[i].key, &index), 0, "add '%s'",
           cases[i].key);
    is_int(index, cases[i].index, "'%s' is number %zu", cases[i].key,
           cases[i].index);
  }
  is_int(t.n, 5, "five strings, each once");
  ok(t.keys[0] == cases[0].key && t.keys[3] == cases[4].key,
     "a table that owns nothing keeps the caller's pointers");
  cmg__intern_free(&t);
  ok(t.n == 0 && t.keys == NULL, "freed, the table is empty");

  /* Owned strings: a repeat is freed (under valgrind and ASan, a leak if
   * not), and so is a key that could not be added. */
  cmg__intern_init(&t, true);
  for (size_t i = 0; i < N(cases); i++) {
    char *key = strdup(cases[i].key);

    index = 99;
    cmg__intern_add(&t, key, &index);
    is_int(index, cases[i].index, "owned '%s' is number %zu", cases[i].key,
           cases[i].index);
  }
  is_int(cmg__intern_add(&t, NULL, &index), -ENOMEM,
         "a NULL key, what a failed strdup gives, is -ENOMEM");
  is_int(t.n, 5, "and is not added");

  /* Many more: numbers stay as they were across the growth. */
  enum { MANY = 5000 };
  char buf[32];
  bool kept = true;
  for (int i = 0; i < MANY; i++) {
    snprintf(buf, sizeof(buf), "frame %d", i);
    cmg__intern_add(&t, strdup(buf), &index);
    kept = kept && index == (size_t)(5 + i);
  }
  ok(kept, "%d new strings numbered in order", MANY);
  for (int i = MANY - 1; i >= 0; i--) {
    snprintf(buf, sizeof(buf), "frame %d", i);
    cmg__intern_add(&t, strdup(buf), &index);
    kept = kept && index == (size_t)(5 + i);
  }
  ok(kept, "each met again gets its first number");
  is_int(t.n, 5 + MANY, "and the table holds each once");
  cmg__intern_add(&t, strdup("cudaMalloc"), &index);
  is_int(index, 0, "the first string is still number 0");
  is_str(t.keys[5 + MANY - 1], "frame 4999", "keys are kept in order");
  cmg__intern_free(&t);
}

/* ---- the arrays --------------------------------------------------------- */

static void
test_grow(void)
{
  int *a = NULL;
  size_t cap = 0;
  bool fits = true;

  is_int(CMG__INTERN_GROW(a, cap, 0), 0, "an empty array grows");
  is_int(cap, 16, "to 16 elements");
  int *before = a;
  is_int(CMG__INTERN_GROW(a, cap, 15), 0, "room for the 16th");
  ok(cap == 16 && a == before, "is there already");
  is_int(CMG__INTERN_GROW(a, cap, 16), 0, "the 17th");
  is_int(cap, 32, "doubles it");
  for (size_t n = 0; n < 1000; n++) {
    if (CMG__INTERN_GROW(a, cap, n) != 0) {
      fits = false;
      break;
    }
    a[n] = (int)n;
    fits = fits && n < cap;
  }
  ok(fits && a[999] == 999 && a[0] == 0, "1000 elements, each kept");
  free(a);
}

int
main(void)
{
  test_hash();
  test_map();
  test_strings();
  test_grow();
  return done_testing();
}
