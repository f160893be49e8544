/*
 * Fake device address spaces for the simulated driver.
 *
 * An arena is a range of addresses that are handed out but never backed by
 * memory: the simulated GPU only has to give each live allocation a unique,
 * aligned address, and give freed addresses back out the way a real
 * allocator does.  A live table maps each address to what the driver knows
 * about the allocation.  Neither structure locks; the driver holds its
 * per-device mutex around every call.
 */
#ifndef CMGSIM_ARENA_H
#define CMGSIM_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_HIDDEN __attribute__((visibility("hidden")))

/* Alignment of every simulated device address, as cudaMalloc promises. */
#define SIM_ALIGN 512u

struct sim_extent {
  uint64_t start;
  uint64_t len;
};

/* Free extents kept sorted by address: first fit reuses the lowest hole, so
 * an address freed a moment ago is the next one handed out. */
struct sim_arena {
  uint64_t base;
  uint64_t size;
  struct sim_extent *free;
  size_t nfree;
  size_t cap;
};

/* What a live address is.  Only PLAIN and POOL records count against the
 * device; IPC and EXTBUF records are aliases of memory counted elsewhere
 * (or by another process), which the driver gives an address of their
 * own so that they can be found and closed. */
enum sim_kind {
  SIM_KIND_PLAIN,  /* cuMemAlloc*, cuMemAllocPitch, cuMemAllocManaged */
  SIM_KIND_POOL,   /* cuMemAllocAsync, cuMemAllocFromPoolAsync: obj = pool */
  SIM_KIND_IPC,    /* cuIpcOpenMemHandle: freed only by cuIpcCloseMemHandle */
  SIM_KIND_EXTBUF, /* cuExternalMemoryGetMappedBuffer: freed by cuMemFree */
};

struct sim_live {
  uint64_t addr;     /* 0 marks an empty slot */
  uint64_t bytes;    /* bytes counted against the device (0 for aliases) */
  uint64_t span;     /* bytes taken from the arena (aligned) */
  const void *owner; /* the context that made it */
  void *obj;         /* the pool of a POOL record, else NULL */
  unsigned char kind; /* enum sim_kind */
  bool legacy;       /* from the 32-bit arena */
};

/* Open addressing with linear probing and backward-shift deletion, so
 * there are no tombstones to slow a long alloc/free loop down. */
struct sim_table {
  struct sim_live *slots;
  size_t cap;        /* a power of two, or 0 */
  size_t count;
};

/* Sets up an arena covering [base, base + size); 0 or -ENOMEM. */
SIM_HIDDEN int sim_arena_init(struct sim_arena *a, uint64_t base,
                              uint64_t size);

/* Takes `len` bytes (a multiple of SIM_ALIGN) first-fit; 0, or -ENOMEM
 * when no hole is large enough. */
SIM_HIDDEN int sim_arena_take(struct sim_arena *a, uint64_t len,
                              uint64_t *addr);

/* Gives back a range taken before, merging it with its neighbours; 0, or
 * -ENOMEM if the extent list could not grow (the range is then lost). */
SIM_HIDDEN int sim_arena_give(struct sim_arena *a, uint64_t addr,
                              uint64_t len);

/* Records a live allocation; 0 or -ENOMEM. */
SIM_HIDDEN int sim_table_insert(struct sim_table *t,
                                const struct sim_live *rec);

/* Removes the allocation at `addr` into *out; false if there is none. */
SIM_HIDDEN bool sim_table_remove(struct sim_table *t, uint64_t addr,
                                 struct sim_live *out);

/* The record of the allocation at `addr`, or NULL; valid until the table
 * changes. */
SIM_HIDDEN struct sim_live *sim_table_get(struct sim_table *t,
                                         uint64_t addr);

/* Copies the addresses of every allocation made by `owner` into a new
 * malloc'd array; returns the count, or -ENOMEM. */
SIM_HIDDEN long sim_table_owned(const struct sim_table *t, const void *owner,
                                uint64_t **out);

#endif /* CMGSIM_ARENA_H */
