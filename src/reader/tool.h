/*
 * What every file of cumemguard-report uses and no module owns.  The tool
 * reads version-1 reports (docs/report-format.md) with its loader
 * (load/read.h) into a struct cmg__model_report (load/model.h), one per
 * file, with every field it uses checked; then folds one or more of them
 * into a struct cmg__view
 * (model/view.h), where modules, frames and stacks are interned by identity
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
 * pprof.c, plot.c, html.c; raw.c; json.c; held.c; footprint.c; graphmem.c;
 * run.c; show.c; xml.c; show/frame_name.c; then the model, model/: supp.c;
 * view.c; pool_blocks.c; symbolize.c; index.c; frame_class.c; code.c;
 * names.c; intern.c; then the loader, load/: read.c; read_devices.c;
 * read_series.c; read_stacks.c; jsonfile.c; fields.c; utf8.c.
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

/*
 * The most the tool takes from one report.  A report is read whole into
 * memory, and a stack names its frames by index, so a small file could
 * otherwise make the tool hold, or print, far more than its size: one stack
 * of 10^6 references to one frame, 3 MB, printed as 1 GB of --json.  Past
 * any of these the report is refused with one line that names the value
 * and the limit.  The library writes far less: stacks of at most 258
 * frames and cuts together (stack_depth's 256 at most, with the Python
 * frames), names of at most 4 KiB before their escapes.  The README's
 * "The report" and cumemguard-report(1) state them.
 */
#define CMG__TOOL_FILE_MAX (1ull << 30) /* bytes of a report file */
#define CMG__TOOL_STACK_MAX 1024u       /* a stack's frames and cuts */
#define CMG__TOOL_NAME_MAX 65536u       /* bytes of a name, file or path */

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
