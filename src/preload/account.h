/*
 * The accounting every wrapper shares: an allocation is reserved against
 * the limits before the real call and recorded after it, a free is taken
 * out of the ledger before the real call and counted after it (account.c).
 * Hooks speak CUDA; this module turns its answers into CUDA's codes.
 */
#ifndef CMG_PRELOAD_ACCOUNT_H
#define CMG_PRELOAD_ACCOUNT_H

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/ledger/ledger.h"
#include "runtime/limits/policy.h"
#include "preload/fn.h"

#define CMG__CURRENT (-1) /* the device of the current context */

struct cmg__call {
  int device;
  uint8_t fn;
  uint8_t kind;
  bool tracked;
  uint16_t ctx;
  uint32_t stack;
  struct cmg__reservation r;
};

/* Before a real allocation of `bytes` of `kind` on `device` (or
 * CMG__CURRENT): CUDA_SUCCESS to go ahead, or the error to return. */
CUresult cmg__alloc_begin(struct cmg__call *c, enum cmg__fn fn, unsigned kind,
                          int device, uint64_t bytes);

/* After it: records the allocation under `key` (its address or handle) or
 * gives the reservation back; returns rc. */
CUresult cmg__alloc_end(struct cmg__call *c, CUresult rc, uint64_t key);

/* Records `bytes` of `kind` on `device` that the driver has already handed
 * out (a graph memory pool that grew more than its launch reserved, a
 * context), past any limit, under `key`; it dies with context id *ctx, or
 * with the current context when ctx is NULL. */
void cmg__alloc_taken(enum cmg__fn fn, unsigned kind, int device,
                      uint64_t bytes, uint64_t key, const uint16_t *ctx);

/* Counts `bytes` of `kind` on `device` that a call just took and can give
 * back (a context just made), against the caps by on_exceed as an
 * allocation is, under `key`; it dies with context id ctx.  CUDA_SUCCESS,
 * or CUDA_ERROR_OUT_OF_MEMORY after the denial's line: the caller then
 * undoes the call, as the driver refuses a context on a full card. */
CUresult cmg__alloc_made(enum cmg__fn fn, unsigned kind, int device,
                         uint64_t bytes, uint64_t key, uint16_t ctx);

/* Reserves `extra` more for an allocation whose size the real call decided
 * (a pitch): CUDA_SUCCESS, or CUDA_ERROR_OUT_OF_MEMORY after saying why,
 * with the reservation unchanged; the caller then undoes the allocation. */
CUresult cmg__alloc_grow(struct cmg__call *c, uint64_t extra);

/* Before a real free: takes (key, kind) out of the ledger into *a. */
bool cmg__free_begin(uint64_t key, unsigned kind, struct cmg__alloc *a);

/* After it: counts the free, or puts the entry back if it failed. */
CUresult cmg__free_end(bool tracked, const struct cmg__alloc *a, CUresult rc,
                       uint64_t key);

/* Gives back `bytes` of the live entry (key, kind), which keeps the rest
 * (a graph memory pool trimmed part of a growth). */
void cmg__shrink(uint64_t key, unsigned kind, uint64_t bytes);

/* Counts an entry that left the ledger as freed or released. */
void cmg__uncount(const struct cmg__alloc *a, bool released);

/* A context died with its memory: the memory of context id ctx, or with
 * ctx 0 that of device's primary context, leaves the ledger as released. */
void cmg__release_context(uint16_t ctx, int device);

/* Under a cap (the process's or its group's), what the process holds on
 * `device` as the caps count it: true with *used set. */
bool cmg__virtual_used(int device, uint64_t *used);

/* Lowers *total to the smallest cap in force on `device` (the process's
 * limit or its group's cap) and *free to the least room any cap leaves. */
void cmg__virtual_meminfo(int device, uint64_t *free, uint64_t *total);

/* The same for a process that has not started CUDA, on the device CUDA
 * will number `device` (the GPU uuid, NULL if unknown), of `physical`
 * bytes as NVML says: it holds
 * nothing, and nothing is set up. */
void cmg__virtual_meminfo_no_cuda(int device, const unsigned char *uuid,
                                  uint64_t physical, uint64_t *free,
                                  uint64_t *total);

#endif /* CMG_PRELOAD_ACCOUNT_H */
