/*
 * Memory for the tables the allocation path uses, straight from mmap: the
 * library runs inside programs whose malloc may itself be interposed, and
 * inside CUDA calls, so those tables never come from malloc.
 */
#ifndef CMG_CORE_PAGES_H
#define CMG_CORE_PAGES_H

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

#endif /* CMG_CORE_PAGES_H */
