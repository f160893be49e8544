/*
 * What the driver holds for the process beside its allocations, as the
 * preload library last learned it, for the report's devices[] (driver_held.c):
 * each device's CUDA graph memory pool (graph_memory; the pool's bytes
 * themselves are ledger entries of kind graph) and what its contexts and
 * modules take (footprint).
 */
#ifndef CMG_RUNTIME_LEDGER_DRIVER_HELD_H
#define CMG_RUNTIME_LEDGER_DRIVER_HELD_H

#include <stdbool.h>
#include <stdint.h>

/* ---- graph memory pools ----------------------------------------------- */

struct cmg__graphmem {
  uint64_t reserved, reserved_high;
  uint64_t used, used_high;
  bool from_driver; /* false: the library's estimate */
  uint64_t launches, uploads, trims, denied;
};

/* Replaces device's figures; the counts are kept apart (below). */
void cmg__graphmem_set(int device, uint64_t reserved, uint64_t reserved_high,
                       uint64_t used, uint64_t used_high, bool from_driver);

enum cmg__graphmem_count {
  CMG__GRAPHMEM_LAUNCH,
  CMG__GRAPHMEM_UPLOAD,
  CMG__GRAPHMEM_TRIM,
  CMG__GRAPHMEM_DENIED,
};
void cmg__graphmem_count(int device, enum cmg__graphmem_count what);

/* 0 with device's figures, or -ENOENT when it never used graph memory. */
int cmg__graphmem_get(int device, struct cmg__graphmem *out);

/* ---- contexts and modules -------------------------------------------- */

enum cmg__footprint_source {
  CMG__FOOTPRINT_NONE,   /* not measured: `why` says why */
  CMG__FOOTPRINT_NVML,   /* NVML's per-process usage around each creation */
  CMG__FOOTPRINT_DRIVER, /* the driver's free memory around each creation */
};

struct cmg__footprint {
  unsigned contexts;      /* alive, as seen created */
  uint64_t context_bytes; /* what their creations took */
  enum cmg__footprint_source source;
  bool has_process;       /* process_bytes was read */
  uint64_t process_bytes; /* NVML: everything the process holds there */
  bool counted;           /* the caps count context_bytes */
  char why[160];          /* "" when measured */
  /* The contexts NVML measured whose creation the driver's free memory
   * could also be read around, and what each said they took. */
  unsigned checked;
  uint64_t checked_nvml, checked_driver;
};

/* Replaces device's figures but has_process and process_bytes, which
 * cmg__footprint_set_process sets apart (a report's refresh of NVML's
 * figure and a context's creation may come at once). */
void cmg__footprint_set(int device, const struct cmg__footprint *f);

/* Sets NVML's figure of everything the process holds on device, if a
 * context of it was seen. */
void cmg__footprint_set_process(int device, bool has, uint64_t bytes);

/* 0 with device's figures, or -ENOENT when no context of it was seen. */
int cmg__footprint_get(int device, struct cmg__footprint *out);

/* Forgets both (fork child). */
void cmg__held_reset(void);

#endif /* CMG_RUNTIME_LEDGER_DRIVER_HELD_H */
