/*
 * What the report tells beyond the live ledger: when the process started,
 * each device's peak and first denial with what was live then, the policy
 * decisions, and what context teardowns released (history.c).
 */
#ifndef CMG_RUNTIME_LEDGER_HISTORY_H
#define CMG_RUNTIME_LEDGER_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/ledger/ledger.h"

#define CMG__MAX_EVENTS 1024

struct cmg__composition {
  uint64_t bytes; /* live bytes on the device at that moment */
  uint64_t time_ns;
  size_t n;
  struct cmg__share {
    uint32_t stack;
    uint64_t bytes;
    uint64_t count;
  } * items;
};

/* A policy decision the report shows. */
enum cmg__event_kind {
  CMG__EVENT_DENIAL,     /* refused */
  CMG__EVENT_WARN,       /* allowed over the limit (on_exceed=warn) */
  CMG__EVENT_WAIT,       /* waited for frees (on_exceed=wait) */
  CMG__EVENT_SOFT_LIMIT, /* usage rose above the soft limit */
};

struct cmg__event {
  enum cmg__event_kind kind;
  uint64_t time_ns;
  uint64_t requested_bytes;
  uint64_t live_bytes;
  uint64_t limit_bytes; /* the soft limit for CMG__EVENT_SOFT_LIMIT */
  uint64_t waited_ns;   /* CMG__EVENT_WAIT */
  bool granted;         /* CMG__EVENT_WAIT: room was found in time */
  uint32_t stack;
  int16_t device;
  uint8_t fn;
};

/* Allocations a context teardown released, grouped as leaks are. */
struct cmg__released {
  uint32_t stack;
  int16_t device;
  uint8_t fn;
  uint8_t kind;
  uint64_t count;
  uint64_t bytes;
  uint64_t time_ns; /* of the last teardown that added to it */
};

struct cmg__device_history {
  char name[256];
  char uuid[48];
  bool has_peak;
  bool has_first_denial;
  struct cmg__composition peak;
  struct cmg__composition first_denial;
};

/* Marks the start of the process (constructor) or of a forked child. */
void cmg__history_start(void);

/* Nanoseconds since cmg__history_start; the process start as unix time.
 * The coarse clock (a few milliseconds of resolution) stamps allocations. */
uint64_t cmg__now_ns(void);
uint64_t cmg__now_coarse_ns(void);
double cmg__start_unix(void);

/* Notes that the process used device memory: only then is a report due.
 * True for the call that noted it first. */
bool cmg__history_touch(void);
bool cmg__history_touched(void);

void cmg__history_set_device(int device, const char *name, const char *uuid);

/* After an allocation raised `device`'s live bytes to `live`: records the
 * composition when it passed the last recorded peak by the hysteresis. */
void cmg__history_peak(int device, uint64_t live);

/* Records a policy decision; a denial also counts toward the composition
 * kept for each device's first denial. */
void cmg__history_event(const struct cmg__event *e);

/* Copies up to max recorded events; totals[kind] counts all of each kind,
 * kept or not. */
size_t cmg__history_events(struct cmg__event *out, size_t max,
                           uint64_t totals[4]);

/* Adds an allocation released by a context teardown. */
void cmg__history_released(const struct cmg__alloc *a);

/* A malloc'd copy of the released groups; *n their number. */
struct cmg__released *cmg__history_released_groups(size_t *n);

/* A copy of a device's history; release with cmg__history_device_free.
 * Returns 0, -EINVAL or -ENOMEM. */
int cmg__history_device(int device, struct cmg__device_history *out);
void cmg__history_device_free(struct cmg__device_history *h);

void cmg__history_reset(void);

#endif /* CMG_RUNTIME_LEDGER_HISTORY_H */
