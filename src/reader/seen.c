/*
 * Which earlier string equals this one: glibc's reentrant hash table,
 * which keeps each string and, as data, the index it was first seen at.
 *
 * glibc hashes a key by shifting each character in, so only a key's
 * first eight or so characters reach the hash; the summary's texts share
 * long beginnings ("#0 cudaMalloc ...") and would all collide, making
 * every lookup a walk of the table.  So each key starts with a 64-bit
 * FNV-1a hash of the text, in hex, and the table hashes that.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader/seen.h"

bool
cmg__tool_seen_init(struct cmg__tool_seen *s, size_t n)
{
  memset(s, 0, sizeof(*s));
  s->keys = calloc(n ? n : 1, sizeof(*s->keys));
  if (s->keys == NULL)
    return false;
  s->cap = n;
  s->ok = hcreate_r(n * 2 + 16, &s->h) != 0;
  if (!s->ok) {
    free(s->keys);
    s->keys = NULL;
  }
  return s->ok;
}

static uint64_t
fnv1a(const char *p)
{
  uint64_t h = UINT64_C(0xcbf29ce484222325);

  while (*p != '\0')
    h = (h ^ (unsigned char)*p++) * UINT64_C(0x100000001b3);
  return h;
}

long
cmg__tool_seen_index(struct cmg__tool_seen *s, const char *text, size_t next)
{
  ENTRY e = { .data = (void *)(uintptr_t)next }, *found;

  if (!s->ok || s->n == s->cap ||
      asprintf(&e.key, "%016" PRIx64 "%s", fnv1a(text), text) < 0)
    return -1;
  if (!hsearch_r(e, ENTER, &found, &s->h)) {
    free(e.key);
    return -1;
  }
  if (found->key != e.key)
    free(e.key);
  else
    s->keys[s->n++] = e.key;
  return (long)(uintptr_t)found->data;
}

void
cmg__tool_seen_free(struct cmg__tool_seen *s)
{
  if (s->ok)
    hdestroy_r(&s->h);
  for (size_t i = 0; i < s->n; i++)
    free(s->keys[i]);
  free(s->keys);
  memset(s, 0, sizeof(*s));
}
