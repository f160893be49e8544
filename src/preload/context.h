/*
 * Contexts as the ledger knows them: a small id for each context seen, and
 * the device of the calling thread's current context (context.c).
 */
#ifndef CMG_PRELOAD_CONTEXT_H
#define CMG_PRELOAD_CONTEXT_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

/* The device of the calling thread's current context; -1 without one. */
int cmg__current_device(void);

/* The device of the calling thread's current context, or -1 without one,
 * and that context's id in *id (0 without one): a small number the ledger
 * keeps per allocation. */
int cmg__context_device(uint16_t *id);

/* The id of ctx, given on first sight; 0 for NULL or a full table. */
uint16_t cmg__context_id(CUcontext ctx);

/* After cuCtxCreate returned rc: a context made by it is not a primary
 * context, whose teardown spares it. */
void cmg__context_created(CUresult rc, const CUcontext *pctx);

/* After the context with this id was destroyed. */
void cmg__context_destroyed(uint16_t id);

/* Whether the context with this id came from cuCtxCreate. */
bool cmg__context_is_created(uint16_t id);

/* Forgets every thread's cached current context: one was created or died,
 * and its address may come back as another device's. */
void cmg__context_forget(void);

#endif /* CMG_PRELOAD_CONTEXT_H */
