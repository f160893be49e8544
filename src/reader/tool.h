/*
 * What every file of cumemguard-report uses and no module owns.  The tool
 * works in stages, a folder each, and each stage calls only the stages
 * below it:
 *
 *   cmd/    the commands, a file each, which print and do nothing else
 *   run/    what the commands run the stages with: reports read into a
 *           view and the view finished, a pair into two views over one
 *           index, or reports read as they were written
 *   show/   how the commands print what they share: the summary as text
 *           and as JSON, the diff as text and as JSON, frames and lines
 *           written once, frames, a group's lines and title, the output
 *           file and the error line
 *   model/  the model's queries: interning into an index, views that fold
 *           reports into leak groups, how a group counts, suppressions,
 *           pool blocks, what changed between two views, frames named
 *           from this machine's files
 *   load/   a report file, checked, into the data model (load/model.h),
 *           which the stages above include instead of the loader's API
 *
 * main.c reads the command line and hands it to one command.
 *
 * Indexes are uint32_t and CMG__TOOL_NONE stands for "none" (a frame
 * without a module, a leak without a stack).  Functions named cmg__ return
 * 0 or a negative errno unless their comment says otherwise; errors meant
 * for the user are written into a caller's buffer, and only
 * show/output.c's cmg__output_say() prints them.
 *
 * Each file NAME.c declares what it gives the others in NAME.h beside it,
 * and its functions are named cmg__NAME_...; module names are unique in
 * src/.  The files call one way only, each into files later in this list:
 * main.c; cmd/: check.c, diff.c, flame.c, html.c, plot.c, pprof.c,
 * summary.c, timeline_trace.c, each a command that calls no other;
 * run/: run.c;
 * show/: diff_json.c; summary_json.c, summary_text.c, diff_text.c;
 * json_once.c; summary_held.c, summary_devices.c; group_text.c; one_line.c;
 * frame_name.c; output.c; xml.c; model/: delta.c; view.c; supp.c;
 * pool_blocks.c; leak_class.c; user_first.c; index.c; frame_class.c;
 * code.c; names.c; intern.c; symbolize.c; debuginfo.c; load/: read.c;
 * read_devices.c; read_series.c; read_stacks.c; jsonfile.c; fields.c;
 * utf8_text.c.
 */
#ifndef CMG_READER_TOOL_H
#define CMG_READER_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CMG__TOOL_NAME "cumemguard-report"
#define CMG__TOOL_NONE UINT32_MAX

struct cmg__json_once;
struct cmg__supp;

/* The options of the commands that list leak groups, which the printing
 * of show/ takes as they are. */
struct cmg__tool_opts {
  size_t top; /* leak groups and composition lines; 0 = all */
  uint64_t min_bytes;
  bool all_frames;
  bool json;
  bool stack_text; /* JSON groups carry the text's title and lines */
  /* NULL, or where JSON stacks keep each frame and line once, naming them
   * by number (show/json_once.h) */
  struct cmg__json_once *once;
  const struct cmg__supp *supp;
};

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
 * frames), names of at most 4 KiB before their escapes.
 * docs/report-format.md and cumemguard-report(1) state them.
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

/* "1 allocation" / "3 allocations". */
static inline const char *
cmg__tool_plural(uint64_t n, const char *one, const char *many)
{
  return n == 1 ? one : many;
}

#endif /* CMG_READER_TOOL_H */
