/*
 * What a return address is, for a report: its module, build-id, offset and
 * function (symbols.c).  Slow; report time only.
 */
#ifndef CMG_RUNTIME_STACKS_SYMBOLS_H
#define CMG_RUNTIME_STACKS_SYMBOLS_H

#include <stdint.h>

struct cmg__symbol {
  char module[1024];     /* path of the object holding the address */
  uintptr_t module_base; /* its load address */
  char build_id[65];     /* lower-case hex of NT_GNU_BUILD_ID, "" if none */
  uint64_t offset;       /* address - module_base */
  char function[256];    /* "" when unknown */
  uint64_t function_offset;
};

/* Describes a return address for a report, looking up ip - 1 so that a call
 * at the end of a function is attributed to it.  Slow: report time only.
 * Returns 0, or -ENOENT when no loaded object holds it. */
int cmg__symbolize(uintptr_t ip, struct cmg__symbol *out);

/* A forked child: the cache's lock made anew. */
void cmg__symbols_after_fork(void);

#endif /* CMG_RUNTIME_STACKS_SYMBOLS_H */
