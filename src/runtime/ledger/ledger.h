/*
 * The ledger: every live allocation, keyed by address (or handle) and kind,
 * and the counters the report and the public API read (ledger.c).
 */
#ifndef CMG_RUNTIME_LEDGER_LEDGER_H
#define CMG_RUNTIME_LEDGER_LEDGER_H

#include <stdbool.h>
#include <stdint.h>

#include "cumemguard.h"
#include "core/base.h"

/* API labels the ledger keeps per allocation (the library's own numbering
 * of the entry points it wraps) stay below this. */
#define CMG__LEDGER_FNS 128

/* What a ledger entry is, which decides how it counts. */
enum cmg__kind {
  CMG__KIND_DEVICE,    /* device memory at an address: counted */
  CMG__KIND_ARRAY,     /* a CUDA array or mipmapped array handle: counted */
  CMG__KIND_VMM,       /* a cuMemCreate handle on a device: counted */
  CMG__KIND_HOST,      /* page-locked host memory: counted on CMG__HOST */
  CMG__KIND_IMPORT,    /* memory another process owns: never counted */
  CMG__KIND_VMM_OTHER, /* a cuMemCreate handle at a non-device location */
  CMG__KIND_GRAPH,     /* what a device's graph memory pool grew by: counted */
  CMG__KIND_CONTEXT,   /* what a context's creation took (count_context) */
  CMG__KIND_COUNT
};

/* Context ids (preload/context.c) stay below this. */
#define CMG__MAX_CONTEXTS 4096

/* One live allocation as the ledger's callers see it; the ledger keeps it
 * packed in 40 bytes (ledger.c). */
struct cmg__alloc {
  uint64_t addr; /* device address, host address, or the handle */
  uint64_t size;
  uint64_t seq;
  uint64_t time_ns; /* since the process started */
  uint32_t stack;   /* interned stack id, CMG__STACK_NONE without one */
  uint32_t thread;
  int16_t device; /* ordinal, or CMG__HOST */
  uint8_t fn;     /* the API the program called: a label the library
                       numbers, below CMG__LEDGER_FNS */
  uint8_t kind;   /* enum cmg__kind */
  uint16_t ctx;   /* context id, 0 for none; < CMG__MAX_CONTEXTS */
  uint16_t refs;  /* references beyond the first (VMM handles) */
};

/* Whether entries of this kind count against a limit. */
static inline bool
cmg__kind_counts(unsigned kind)
{
  return kind != CMG__KIND_IMPORT && kind != CMG__KIND_VMM_OTHER;
}

/* Device memory: what the limits count and a report's summary adds up. */
static inline bool
cmg__kind_is_device(unsigned kind)
{
  return kind == CMG__KIND_DEVICE || kind == CMG__KIND_ARRAY ||
         kind == CMG__KIND_VMM || kind == CMG__KIND_GRAPH ||
         kind == CMG__KIND_CONTEXT;
}

/* Device memory the driver keeps for the process (a graph memory pool, a
 * context) rather than memory the program allocated: never a leak. */
static inline bool
cmg__kind_is_drivers(unsigned kind)
{
  return kind == CMG__KIND_GRAPH || kind == CMG__KIND_CONTEXT;
}

/* Records a live allocation and counts it.  Returns 0; 1 when the address
 * was still recorded (its free went unseen): the stale record, copied to
 * *stale, is counted as freed and the caller gives back its bytes; -ENOMEM
 * if the table cannot grow (the allocation then stays untracked); -EINVAL
 * for a bad device, kind, context or api. */
int cmg__ledger_insert(const struct cmg__alloc *a, struct cmg__alloc *stale);

/* Removes the entry for (addr, kind) into *out, leaving the counters alone
 * until the real free succeeded; -ENOENT if it is not tracked. */
int cmg__ledger_remove(uint64_t addr, unsigned kind, struct cmg__alloc *out);

/* Takes `bytes` off the size of the entry for (addr, kind), counted as
 * gone (a graph memory pool that gave part of a growth back); -ENOENT if
 * it is not tracked, -EINVAL if it is smaller than that. */
int cmg__ledger_shrink(uint64_t addr, unsigned kind, uint64_t bytes,
                       struct cmg__alloc *out);

/* Takes one more reference on an entry (cuMemRetainAllocationHandle). */
int cmg__ledger_addref(uint64_t addr, unsigned kind);

/* Drops one reference: returns 1 after removing the last one into *out
 * (the caller frees), 0 if references remain, -ENOENT if not tracked. */
int cmg__ledger_unref(uint64_t addr, unsigned kind, struct cmg__alloc *out);

/* Removes every entry for which keep() says false, calling gone() on each
 * after its shard's lock is released.  Context teardown uses it. */
void cmg__ledger_remove_if(bool (*keep)(const struct cmg__alloc *, void *),
                           void (*gone)(const struct cmg__alloc *, void *),
                           void *arg);

/* Puts back an entry removed by cmg__ledger_remove (a failed free). */
int cmg__ledger_restore(const struct cmg__alloc *a);

/* Counts the free of an entry removed by cmg__ledger_remove, or its
 * release by a context teardown. */
void cmg__ledger_count_free(const struct cmg__alloc *a);
void cmg__ledger_count_release(const struct cmg__alloc *a);

/* Copies the entry for (addr, kind) into *out; -ENOENT if not tracked. */
int cmg__ledger_lookup(uint64_t addr, unsigned kind, struct cmg__alloc *out);

/* Bytes of the device's live allocations (a sum over threads). */
uint64_t cmg__ledger_live_bytes(int device);

/* Counts a refused allocation. */
void cmg__ledger_count_denial(int device);

/* Counts a free of memory the ledger never saw. */
void cmg__ledger_count_untracked_free(void);

/* Copies the counters of a device (limit and physical left zero). */
void cmg__ledger_stats(int device, struct cmg_device_stats *out);

uint64_t cmg__ledger_untracked_frees(void);

/* Next allocation sequence number, from 1: unique in the process and
 * increasing within a thread (threads take them in blocks). */
uint64_t cmg__ledger_next_seq(void);

/* fork: lock every shard before, unlock after; the child also empties the
 * ledger, since CUDA state does not survive fork. */
void cmg__ledger_prefork(void);
void cmg__ledger_postfork(bool child);

/* Calls fn for every live allocation, one shard locked at a time. */
void cmg__ledger_foreach(void (*fn)(const struct cmg__alloc *, void *),
                         void *arg);

#endif /* CMG_RUNTIME_LEDGER_LEDGER_H */
