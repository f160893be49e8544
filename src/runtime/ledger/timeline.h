/*
 * Memory over time: each device's bytes in use against time, in a bounded
 * number of points whatever the length of the run, and the times reports
 * were written (timeline.c).
 */
#ifndef CMG_RUNTIME_LEDGER_TIMELINE_H
#define CMG_RUNTIME_LEDGER_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most points a device keeps, and the most report writes listed. */
#define CMG__TIMELINE_POINTS 1024
#define CMG__TIMELINE_DUMPS 64

/* What a device held from time_ns up to the next point's time: `live`
 * right after the first change in that span, and the least and most. */
struct cmg__timeline_point {
  uint64_t time_ns;
  uint64_t live;
  uint64_t min, max;
};

/* A device's series as the report writes it. */
struct cmg__timeline {
  size_t n;
  uint64_t resolution_ns; /* the width of a point's span now */
  uint64_t peak_bytes;    /* the most bytes in use at once */
  uint64_t peak_time_ns;  /* when that was first reached */
  struct cmg__timeline_point points[CMG__TIMELINE_POINTS];
};

struct cmg__timeline_dump {
  uint64_t time_ns;
  unsigned reason; /* enum cmg__reason */
};

/* Whether the timeline is kept (timeline=0 turns it off); set once at
 * start-up. */
extern bool cmg__timeline_on;

/* After a change of `device`'s bytes in use to `live` at now_ns (since the
 * process started; the coarse clock is precise enough): widens the open
 * point, or opens a new one when now_ns is past its span.  Lock-free unless
 * a point opens.  Devices outside 0..CMG__MAX_DEVICES-1 are ignored. */
void cmg__timeline_note(int device, uint64_t live, uint64_t now_ns);

/* Opens a point at exactly now_ns holding exactly `live` (a denial). */
void cmg__timeline_mark(int device, uint64_t live, uint64_t now_ns);

/* Notes that a report is being written, for `reason`. */
void cmg__timeline_dump(unsigned reason, uint64_t now_ns);

/* Copies `device`'s series into *out.  Returns true when the device has
 * any point. */
bool cmg__timeline_get(int device, struct cmg__timeline *out);

/* Copies up to max report writes, oldest first; *total counts them all. */
size_t cmg__timeline_dumps(struct cmg__timeline_dump *out, size_t max,
                           uint64_t *total);

/* Forgets everything (a forked child, whose life starts at the fork). */
void cmg__timeline_reset(void);

#endif /* CMG_RUNTIME_LEDGER_TIMELINE_H */
