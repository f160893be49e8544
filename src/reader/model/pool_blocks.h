/*
 * pool_blocks.c: which leak groups are blocks of a framework's memory pool
 * rather than memory the program's own code asked for, how much of the
 * leaked memory such blocks hold, and which groups a library keeps.
 */
#ifndef CMG_READER_MODEL_POOL_BLOCKS_H
#define CMG_READER_MODEL_POOL_BLOCKS_H

#include <stdbool.h>
#include <stdint.h>

struct cmg__index;
struct cmg__view;
struct cmg__model_report;

/* The pool a device-memory leak group of report r belongs to, judged by
 * its stack (an interned id, or CMG__TOOL_NONE) and its API: a label such
 * as "PyTorch caching allocator", or NULL for none. */
const char *cmg__pool_blocks_of(const struct cmg__index *ix, uint32_t stack,
                                const char *api,
                                const struct cmg__model_report *r);

/* The library that keeps a leak group's memory for the life of the
 * process (a cuBLAS or cuDNN handle's workspace, an NCCL communicator's
 * buffers), by a function of its stack; NULL when none does. */
const char *cmg__pool_blocks_held_by(const struct cmg__index *ix,
                                     uint32_t stack);

/* The leak groups not suppressed that count as leaked device memory (graph
 * memory pools' and contexts' groups are not leaks): their bytes
 * (*live), those of the ones that are pool blocks (*pooled), and the label
 * of the pool holding the most (*pool, NULL when none). */
void cmg__pool_blocks_share(const struct cmg__view *v, uint64_t *pooled,
                            uint64_t *live, const char **pool);

/* True when pool blocks hold more than half of those bytes: the summary
 * then says so and names --no-pools. */
bool cmg__pool_blocks_is_mostly(const struct cmg__view *v);

#endif /* CMG_READER_MODEL_POOL_BLOCKS_H */
