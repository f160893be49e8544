/*
 * What every file of cumemguard-report uses and no module owns.  The tool
 * reads version-1 reports (docs/report-format.md) into a struct
 * cmg__tool_report (read.h), one per file, with every field it uses
 * checked; then folds one or more of them into a struct cmg__tool_view
 * (view.h), where modules, frames and stacks are interned by identity
 * (module name, offset in the module, function), not by address, so that
 * reports of different runs and different processes line up.  Every
 * command prints from a view.
 *
 * Indexes are uint32_t and CMG__TOOL_NONE stands for "none" (a frame
 * without a module, a leak without a stack).  Functions named cmg__tool_
 * return 0 or a negative errno unless their comment says otherwise; errors
 * meant for the user are written into a caller's buffer, and only
 * run.c's cmg__tool_say() prints them.
 *
 * Each file NAME.c of src/reader/ declares what it gives the others in
 * NAME.h beside it.  The files call one way only, each into files later in
 * this list: main.c; check.c; summary.c, diff.c, flame.c, timeline.c,
 * pprof.c, plot.c, html.c; raw.c; json.c; held.c; footprint.c; graphmem.c; run.c;
 * show.c; supp.c; view.c; pools.c; index.c; code.c; read.c; devices.c;
 * symbolize.c; series.c; stacks.c; file.c; fields.c.
 */
#ifndef CMG_READER_TOOL_H
#define CMG_READER_TOOL_H

#include <stdint.h>

#define CMG__TOOL_NAME "cumemguard-report"
#define CMG__TOOL_NONE UINT32_MAX

/* Exit statuses: check found too much leaked; anything went wrong. */
#define CMG__TOOL_EXIT_LEAK 1
#define CMG__TOOL_EXIT_ERROR 2

/* Room for one error line. */
#define CMG__TOOL_ERR_MAX 512

/* Addition that stops at INT64_MAX: sizes come from files we do not trust,
 * and a sum must still convert to int64_t for a difference. */
static inline uint64_t
cmg__tool_add(uint64_t a, uint64_t b)
{
  uint64_t s;

  if (__builtin_add_overflow(a, b, &s) || s > (uint64_t)INT64_MAX)
    return (uint64_t)INT64_MAX;
  return s;
}

#endif /* CMG_READER_TOOL_H */
