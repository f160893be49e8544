/*
 * Memory for the tables the allocation path uses, straight from mmap: the
 * library runs inside programs whose malloc may itself be interposed, and
 * inside CUDA calls, so those tables never come from malloc.
 */
#ifndef CMG_RUNTIME_TABLE_MEMORY_H
#define CMG_RUNTIME_TABLE_MEMORY_H

#include <stddef.h>
#include <sys/mman.h>

/* bytes of private, zeroed memory; NULL when mmap fails. */
static inline void *
cmg__pages(size_t bytes)
{
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Records kept for the life of the process, bump-allocated from chunks of
 * `size` bytes of pages; the owner serialises takes with its own lock. */
struct cmg__chunks {
  char *next, *end;
  size_t size;
};

/* n bytes from the current chunk, or from a new one when it is short (the
 * rest of the old one is left); NULL when mmap fails or n is larger than a
 * chunk.  A chunk starts on a page, so records whose sizes keep an
 * alignment keep it. */
static inline void *
cmg__chunks_take(struct cmg__chunks *c, size_t n)
{
  if (n > c->size)
    return NULL;
  if ((size_t)(c->end - c->next) < n) {
    char *p = cmg__pages(c->size);
    if (p == NULL)
      return NULL;
    c->next = p;
    c->end = p + c->size;
  }
  void *r = c->next;
  c->next += n;
  return r;
}

#endif /* CMG_RUNTIME_TABLE_MEMORY_H */
