/*
 * Each process's footprint on the card beyond its allocations (footprint.c):
 * what each context's creation took, measured around it, counted against
 * the caps under count_context, and given back when the context dies.
 */
#ifndef CMG_PRELOAD_FOOTPRINT_H
#define CMG_PRELOAD_FOOTPRINT_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

#include "preload/fn.h"
#include "preload/nvml_usage.h"

/* What is known of the process on a device just before a context is made
 * there. */
struct cmg__ctx_probe {
  int device;
  bool primary;
  int nvml; /* 0: nvml_before read; 1: not listed; < 0: no NVML */
  uint64_t nvml_before;
  bool has_free; /* the driver's free memory, where a context was
                          current to ask it */
  uint64_t free_before;
  char why[160]; /* why NVML could not be read */
  /* NVML's list and the card's used memory, for finding the process's
   * entry where NVML lists it under a pid of another PID namespace. */
  struct cmg__nvml_listing before;
  bool has_card;
  uint64_t card_before;
};

/* Before a context is made on `device` (a primary context's first retain,
 * or cuCtxCreate). */
void cmg__footprint_before(struct cmg__ctx_probe *p, int device, bool primary);

/* After: the context's cost is what the process's usage grew by; recorded,
 * and counted (kind context) under count_context, against the caps as an
 * allocation is.  `fn` labels the entry.  Returns rc, or
 * CUDA_ERROR_OUT_OF_MEMORY when the caps refuse the cost (the line is
 * said, nothing is recorded): the caller undoes the context. */
CUresult cmg__footprint_after(const struct cmg__ctx_probe *p, CUresult rc,
                              const CUcontext *pctx, enum cmg__fn fn);

/* A context died: the one with id ctx, or with ctx 0 the primary context
 * of `device` (the ledger's teardown has taken its entry out). */
void cmg__footprint_gone(uint16_t ctx, int device);

#endif /* CMG_PRELOAD_FOOTPRINT_H */
