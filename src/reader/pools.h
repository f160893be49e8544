/*
 * pools.c: which leak groups are blocks of a framework's memory pool rather
 * than memory the program's own code asked for.
 */
#ifndef CMG_READER_POOLS_H
#define CMG_READER_POOLS_H

#include <stdint.h>

struct cmg__tool_index;
struct cmg__model_report;

/* The pool a device-memory leak group of report r belongs to, judged by
 * its stack (an interned id, or CMG__TOOL_NONE) and its API: a label such
 * as "PyTorch caching allocator", or NULL for none. */
const char *cmg__tool_pool_of(const struct cmg__tool_index *ix, uint32_t stack,
                              const char *api,
                              const struct cmg__model_report *r);

/* The library that keeps a leak group's memory for the life of the
 * process (a cuBLAS or cuDNN handle's workspace, an NCCL communicator's
 * buffers), by a function of its stack; NULL when none does. */
const char *cmg__tool_held_by(const struct cmg__tool_index *ix, uint32_t stack);

#endif /* CMG_READER_POOLS_H */
