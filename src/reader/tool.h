/*
 * What the files of cumemguard-report share.  The tool reads version-1
 * reports (docs/report-format.md) into a struct cmg__tool_report, one per
 * file, with every field it uses checked; then folds one or more of them
 * into a struct cmg__tool_view, where modules, frames and stacks are
 * interned by identity (module name, offset in the module, function), not
 * by address, so that reports of different runs and different processes
 * line up.  Every command prints from a view.
 *
 * Indexes are uint32_t and CMG__TOOL_NONE stands for "none" (a frame
 * without a module, a leak without a stack).  Functions named cmg__tool_
 * return 0 or a negative errno unless their comment says otherwise; errors
 * meant for the user are written into a caller's buffer, and only
 * run.c's cmg__tool_say() prints them.
 */
#ifndef CMG_REPORT_TOOL_H
#define CMG_REPORT_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cumemguard.h"
#include "core/base.h"
#include "core/log.h"
#include "core/size.h"

#define CMG__TOOL_NAME "cumemguard-report"
#define CMG__TOOL_NONE UINT32_MAX

/* Exit statuses: check found too much leaked; anything went wrong. */
#define CMG__TOOL_EXIT_LEAK 1
#define CMG__TOOL_EXIT_ERROR 2

/* Room for one error line. */
#define CMG__TOOL_ERR_MAX 512

/* ---- read.c: one report file, checked --------------------- */

struct cmg__tool_rmodule {
  char *path;
  char *build_id;
};

struct cmg__tool_rframe {
  uint64_t address;
  uint32_t module; /* index into modules, or CMG__TOOL_NONE */
  bool has_offset;
  uint64_t offset;
  char *function; /* NULL when unknown */
  bool has_function_offset;
  uint64_t function_offset;
};

struct cmg__tool_rstack {
  bool truncated;
  uint32_t n;
  uint32_t *frames; /* indexes into frames, innermost first */
};

/* One entry of a composition (peaks[].by_stack, denials[].by_stack). */
struct cmg__tool_share {
  uint32_t stack; /* stack index, or CMG__TOOL_NONE */
  uint64_t bytes;
  uint64_t count;
};

struct cmg__tool_comp {
  uint64_t bytes; /* live bytes when it was recorded */
  double time;
  size_t n;
  struct cmg__tool_share *items;
};

struct cmg__tool_rdevice {
  int ordinal;
  char *name;
  char *uuid;
  uint64_t physical_bytes;
  bool has_limit;
  uint64_t limit_bytes;
  uint64_t live_bytes, peak_bytes, allocations, frees, denied;
};

/* A leak group, or a group released by context teardown. */
struct cmg__tool_rleak {
  uint32_t stack; /* stack index, or CMG__TOOL_NONE */
  char *api;
  char *kind; /* "device" when the report has no kind */
  int device; /* -1 for none (host memory) */
  uint64_t count, bytes;
};

/* Page-locked host memory, the report's host{} object. */
struct cmg__tool_host {
  bool has_limit;
  uint64_t limit_bytes;
  uint64_t live_bytes, peak_bytes, allocations, frees, denied;
};

struct cmg__tool_rpeak {
  int device;
  struct cmg__tool_comp comp;
};

struct cmg__tool_rdenial {
  char *api;
  int device; /* -1 for none (host memory) */
  uint64_t requested_bytes, live_bytes;
  bool has_limit;
  uint64_t limit_bytes;
  uint32_t stack;
  bool has_comp;              /* by_stack was present */
  struct cmg__tool_comp comp; /* bytes = live_bytes, time of the denial */
};

struct cmg__tool_report {
  char *file;
  long pid;
  char *exe;
  char *command; /* argv joined with spaces */
  char *hostname;
  char *reason;
  double start_time, end_time;
  uint64_t live_allocations, live_bytes, untracked_frees, denials;
  uint64_t events[3]; /* warn, wait, soft_limit; 0 in older reports */
  bool has_host;
  struct cmg__tool_host host;
  size_t n_devices, n_leaks, n_peaks, n_denials, n_released;
  size_t n_stacks, n_frames, n_modules;
  struct cmg__tool_rdevice *devices;
  struct cmg__tool_rleak *leaks;
  struct cmg__tool_rleak *released;
  struct cmg__tool_rpeak *peaks;
  struct cmg__tool_rdenial *denials_list;
  struct cmg__tool_rstack *stacks;
  struct cmg__tool_rframe *frames;
  struct cmg__tool_rmodule *modules;
};

/* Reads and checks the report at `file` ("-" is standard input).  Returns 0,
 * or -EINVAL / -ENOMEM with one line (no file name, no newline) in err
 * saying what is wrong. */
int cmg__tool_read(const char *file, struct cmg__tool_report *out, char *err,
                   size_t errlen);

/* Frees what cmg__tool_read() filled, also after it failed. */
void cmg__tool_report_free(struct cmg__tool_report *r);

/* A copy of s with control bytes and invalid UTF-8 made '?', so that no
 * output (terminal, SVG, JSON) carries them; NULL when out of memory. */
char *cmg__tool_clean_string(const char *s);

/* ---- file.c, fields.c: JSON in ---------------- */

struct cJSON;

/* The largest integer every double holds exactly; counts stop there. */
#define CMG__TOOL_EXACT_MAX 9007199254740992.0

/* Where the getters write their one line about a problem. */
struct cmg__tool_reader {
  char *err;
  size_t errlen;
};

/* Reads file ("-": standard input) and parses it.  Returns 0 with *root
 * set, to be released with cmg__tool_drop_json(), or an error with a line
 * in rd (missing, empty, not text, not JSON, truncated). */
int cmg__tool_load_json(const char *file, struct cJSON **root,
                        struct cmg__tool_reader *rd);
void cmg__tool_drop_json(struct cJSON *root);

/* Writes the line into rd; returns -EINVAL. */
int cmg__tool_fail(struct cmg__tool_reader *rd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "a string", "null", "nothing" (for NULL): what a member turned out to be. */
const char *cmg__tool_kind(const struct cJSON *item);

/* "AT: expected WANT, got ..." for an array element; returns -EINVAL. */
int cmg__tool_fail_item(struct cmg__tool_reader *rd, const char *at,
                        const char *want, const struct cJSON *got);

/* "AT.KEY: expected WANT, got ..."; returns -EINVAL. */
int cmg__tool_wrong(struct cmg__tool_reader *rd, const char *at,
                    const char *key, const char *want, const struct cJSON *got);

/* The member key of o, or -EINVAL naming it as missing. */
int cmg__tool_member(struct cmg__tool_reader *rd, const struct cJSON *o,
                     const char *at, const char *key, const struct cJSON **out);

/* An integer in [min, max]; when has is not NULL a null is allowed too and
 * clears *has. */
int cmg__tool_int(struct cmg__tool_reader *rd, const struct cJSON *o,
                  const char *at, const char *key, double min, double max,
                  bool *has, double *out);

/* An integer from 0 to 2^53 (sizes, counts); null as for cmg__tool_int. */
int cmg__tool_count(struct cmg__tool_reader *rd, const struct cJSON *o,
                    const char *at, const char *key, bool *has, uint64_t *out);

/* Any finite number. */
int cmg__tool_number(struct cmg__tool_reader *rd, const struct cJSON *o,
                     const char *at, const char *key, double *out);

/* A string, cleaned and copied into *out; a null gives NULL if nullable.
 * -ENOMEM when the copy fails. */
int cmg__tool_string(struct cmg__tool_reader *rd, const struct cJSON *o,
                     const char *at, const char *key, bool nullable,
                     char **out);

/* "0x..." with at most 16 lower-case hex digits; null as for cmg__tool_int. */
int cmg__tool_hex(struct cmg__tool_reader *rd, const struct cJSON *o,
                  const char *at, const char *key, bool *has, uint64_t *out);

/* An array member and its length. */
int cmg__tool_array(struct cmg__tool_reader *rd, const struct cJSON *o,
                    const char *at, const char *key, const struct cJSON **out,
                    size_t *n);

/* An object member. */
int cmg__tool_object(struct cmg__tool_reader *rd, const struct cJSON *o,
                     const char *at, const char *key, const struct cJSON **out);

/* Checks that element i of array is an object and writes its path
 * ("leaks[3]") into at. */
int cmg__tool_element(struct cmg__tool_reader *rd, const struct cJSON *item,
                      const char *array, size_t i, char *at, size_t atlen);

/* ---- index.c, view.c: interning, views ------- */

/* Frame classes, for hiding frames that say nothing about the program. */
#define CMG__TOOL_FRAME_CUDA 1u    /* inside the CUDA runtime or driver */
#define CMG__TOOL_FRAME_STARTUP 2u /* C start-up and thread start */

struct cmg__tool_module {
  char *path;       /* of the first report that named it */
  const char *name; /* its base name, inside path */
  char *build_id;
};

struct cmg__tool_frame {
  uint32_t module;
  bool has_offset;
  uint64_t offset;
  uint64_t address; /* of the first report; meaningless elsewhere */
  char *function;
  bool has_function_offset;
  uint64_t function_offset;
  unsigned class;
};

struct cmg__tool_stack {
  bool truncated;
  uint32_t n;
  uint32_t *frames; /* interned frame ids, innermost first */
  uint32_t lo, hi;  /* the frames shown by default: [lo, hi) */
};

/* An open-addressing table from a hash to an index; keys live elsewhere. */
struct cmg__tool_map {
  uint32_t *slots; /* index + 1; 0 is empty */
  uint64_t *hashes;
  size_t cap, len;
};

struct cmg__tool_index {
  size_t n_modules, n_frames, n_stacks;
  size_t cap_modules, cap_frames, cap_stacks;
  struct cmg__tool_module *modules;
  struct cmg__tool_frame *frames;
  struct cmg__tool_stack *stacks;
  struct cmg__tool_map module_map, frame_map, stack_map;
};

struct cmg__tool_source {
  char *file;
  long pid;
  char *exe, *command, *hostname, *reason;
  double start_time, end_time;
  uint64_t live_allocations, live_bytes, untracked_frees, denials;
};

struct cmg__tool_device {
  int ordinal; /* in the first report that has the device */
  char *name, *uuid;
  uint64_t physical_bytes;
  bool has_limit, limit_varies;
  uint64_t limit_bytes;
  uint64_t live_bytes, peak_bytes, allocations, frees, denied;
  unsigned processes;
};

struct cmg__tool_leak {
  uint32_t stack; /* interned stack id, or CMG__TOOL_NONE */
  char *api;
  char *kind;
  bool is_device_memory; /* counts as leaked device memory */
  uint32_t device;       /* index into the view's devices, or NONE */
  uint64_t count, bytes;
  uint32_t rule;  /* suppression rule that hid it, or NONE */
  uint32_t order; /* first-seen order, to sort stably */
};

/* A peak or first-denial composition with its context. */
struct cmg__tool_moment {
  uint32_t source;
  uint32_t device; /* index into the view's devices, or NONE (host) */
  struct cmg__tool_comp comp; /* items' stacks are interned ids */
  uint64_t count;             /* sum of the items' counts */
  bool has_comp;
  /* Denials only. */
  char *api;
  uint64_t requested_bytes;
  bool has_limit;
  uint64_t limit_bytes;
  uint32_t stack;
};

struct cmg__tool_view {
  struct cmg__tool_index *ix;
  bool by_uuid; /* devices matched by UUID, else by ordinal */
  size_t n_sources, n_devices, n_leaks, n_peaks, n_denials;
  size_t cap_sources, cap_devices, cap_leaks, cap_peaks, cap_denials;
  struct cmg__tool_source *sources;
  struct cmg__tool_device *devices;
  struct cmg__tool_leak *leaks;
  struct cmg__tool_moment *peaks;
  struct cmg__tool_moment *denials; /* the first of each device */
  struct cmg__tool_map leak_map;
  bool has_host;
  struct cmg__tool_host host; /* summed over the reports */
  uint64_t events[3];         /* warn, wait, soft_limit */
  uint64_t released_bytes, released_count;
};

/* True for the kinds that count as device memory (device, array, vmm), as
 * the report's summary.live_bytes counts them. */
bool cmg__tool_is_device_kind(const char *kind);

/* The ordinal of a view's device row, -1 for NONE (host memory). */
int cmg__tool_ordinal(const struct cmg__tool_view *v, uint32_t device);

/* Where a group's memory is, for its header line: "device 0", "array,
 * device 1", "pinned host memory", ...; ordinal -1 for none. */
const char *cmg__tool_where(const char *kind, int ordinal, char *buf,
                            size_t len);

/* FNV-1a, continued from h (start with CMG__TOOL_HASH_INIT). */
#define CMG__TOOL_HASH_INIT 14695981039346656037ull
uint64_t cmg__tool_hash_bytes(uint64_t h, const void *p, size_t n);
uint64_t cmg__tool_hash_string(uint64_t h, const char *s);

typedef bool (*cmg__tool_eq_fn)(const void *ctx, uint32_t index,
                                const void *key);

/* Makes room for one more entry; -ENOMEM. */
int cmg__tool_map_reserve(struct cmg__tool_map *m);

/* The slot holding key (eq says which entry that is), or the empty slot
 * where it would go; call cmg__tool_map_reserve() first. */
size_t cmg__tool_map_probe(const struct cmg__tool_map *m, uint64_t h,
                           cmg__tool_eq_fn eq, const void *ctx,
                           const void *key);

/* Puts index in the empty slot found by cmg__tool_map_probe(). */
void cmg__tool_map_set(struct cmg__tool_map *m, size_t slot, uint64_t h,
                       uint32_t index);
/* Frees the table and leaves it empty and usable. */
void cmg__tool_map_free(struct cmg__tool_map *m);

/* Grows *array (of *cap elements of size) to hold n + 1; -ENOMEM. */
int cmg__tool_grow(void **array, size_t *cap, size_t n, size_t size);
#define CMG__TOOL_GROW(arr, cap, n)                                            \
  cmg__tool_grow((void **)&(arr), &(cap), (n), sizeof(*(arr)))

/* Interns every stack of r (and their frames and modules); ids[i] becomes
 * the id of r's stack i.  Returns 0 or -ENOMEM. */
int cmg__tool_index_add(struct cmg__tool_index *ix,
                        const struct cmg__tool_report *r, uint32_t *ids);

/* An empty index; freeing it frees every module, frame and stack. */
void cmg__tool_index_init(struct cmg__tool_index *ix);
void cmg__tool_index_free(struct cmg__tool_index *ix);

/* An empty view over ix; by_uuid picks how devices of reports match. */
void cmg__tool_view_init(struct cmg__tool_view *v, struct cmg__tool_index *ix,
                         bool by_uuid);
void cmg__tool_view_free(struct cmg__tool_view *v);

/* Adds a report: interns its stacks, adds its leaks into the groups of
 * equal (stack, API, kind, device), its devices into the rows of the same
 * device, and keeps its peaks and first denials.  Returns 0 or -ENOMEM. */
int cmg__tool_view_add(struct cmg__tool_view *v,
                       const struct cmg__tool_report *r);

/* Sorts the leak groups by bytes, largest first, stable otherwise; after
 * the last cmg__tool_view_add(). */
void cmg__tool_view_sort(struct cmg__tool_view *v);

/* The shown range of a stack: [lo, hi), or everything with all_frames. */
void cmg__tool_stack_range(const struct cmg__tool_index *ix, uint32_t stack,
                           bool all_frames, uint32_t *lo, uint32_t *hi);

/* Prints a frame's short name: its function, else "module+0xOFFSET", else
 * its address. */
void cmg__tool_put_label(FILE *f, const struct cmg__tool_index *ix,
                         uint32_t frame);

/* The same in a malloc'd string; NULL when out of memory. */
char *cmg__tool_label(const struct cmg__tool_index *ix, uint32_t frame);

/* Prints "function+0x12 (module+0x1a2b)", as the numbered frames show. */
void cmg__tool_put_frame(FILE *f, const struct cmg__tool_index *ix,
                         uint32_t frame);

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

/* ---- supp.c: LeakSanitizer-style suppressions ------------- */

struct cmg__tool_rule {
  char *pattern;
  char *file;
  unsigned line;
  uint64_t count, bytes; /* what it hid */
};

struct cmg__tool_supp {
  size_t n, cap;
  struct cmg__tool_rule *rules;
};

/* Appends the rules of a suppressions file.  Returns 0, or a negative errno
 * with one line in err ("FILE:LINE: ..." for a bad line). */
int cmg__tool_supp_load(struct cmg__tool_supp *s, const char *file, char *err,
                        size_t errlen);

/* Frees the rules; an empty set is all zeroes. */
void cmg__tool_supp_free(struct cmg__tool_supp *s);

/* True if pattern (with '*', '^', '$') matches text, as LeakSanitizer's
 * TemplateMatch does. */
bool cmg__tool_is_match(const char *pattern, const char *text);

/* Marks each leak group of v that a rule matches with the first such rule,
 * and adds the group's count and bytes to the rule.  Returns 0 or -ENOMEM. */
int cmg__tool_supp_apply(struct cmg__tool_supp *s, struct cmg__tool_view *v);

/* ---- show.c: what the printers of leak groups share ------------------ */

struct cmg__tool_opts {
  size_t top; /* leak groups and composition lines; 0 = all */
  uint64_t min_bytes;
  bool all_frames;
  bool json;
  const struct cmg__tool_supp *supp;
};

/* Whether leak group l is listed given --top and --min-bytes, when
 * `listed` groups were listed before it; suppressed groups never are. */
bool cmg__tool_is_listed(const struct cmg__tool_leak *l,
                         const struct cmg__tool_opts *o, size_t listed);

/* Bytes and allocations still open that are not device memory (pinned host
 * memory, imports), without suppressed groups. */
void cmg__tool_other_live(const struct cmg__tool_view *v, uint64_t *bytes,
                          uint64_t *count);

/* Leaked bytes and allocations of a view, without suppressed groups. */
void cmg__tool_leaked(const struct cmg__tool_view *v, uint64_t *bytes,
                      uint64_t *count);

/* Prints the numbered frames of a stack, four spaces in. */
void cmg__tool_print_frames(FILE *f, const struct cmg__tool_index *ix,
                            uint32_t stack, bool all_frames);

/* "1 allocation" / "3 allocations". */
const char *cmg__tool_plural(uint64_t n, const char *one, const char *many);

/* ---- run.c: what every command does around its own printing ---------- */

/* One line on stderr, "cumemguard-report: " and the text, after whatever
 * stdout holds so far. */
void cmg__tool_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reads file into view v.  Returns 0, or a negative errno after saying
 * what is wrong with the file. */
int cmg__tool_load(struct cmg__tool_view *v, const char *file);

/* Sorts a loaded view and applies the suppressions afresh (their counts
 * start again from zero).  Returns 0, or -ENOMEM after saying so. */
int cmg__tool_finish(struct cmg__tool_view *v, struct cmg__tool_supp *supp);

/* cmg__tool_load() for each file in turn, stopping at the first problem,
 * then cmg__tool_finish(): the one view of folded, flame and check. */
int cmg__tool_load_all(struct cmg__tool_view *v, char *const *files,
                       int n_files, struct cmg__tool_supp *supp);

/* Prints a JSON document and a newline on stdout, and frees it (NULL is
 * taken as out of memory).  Returns 0, or -ENOMEM after saying so. */
int cmg__tool_print_json(struct cJSON *doc);

/* ---- summary.c, json.c: summary, merge, check ----------------------- */

/* Prints a view as text: sources, devices, leaks, suppressions, the peaks
 * and first denials, SUMMARY.  The check command prints the leaks section
 * only (leaks_only). */
void cmg__tool_summary_text(FILE *f, const struct cmg__tool_view *v,
                            const struct cmg__tool_opts *o, bool leaks_only);

/* The JSON object of one summary (see cumemguard-report(1)); NULL when out
 * of memory.  The cJSON item is returned as void * so that only the files
 * that print JSON include cJSON.h. */
void *cmg__tool_summary_json(const struct cmg__tool_view *v,
                             const struct cmg__tool_opts *o);

/* JSON array of frames of a stack (all of them, each marked "hidden"). */
void *cmg__tool_frames_json(const struct cmg__tool_index *ix, uint32_t stack);

/* The summary command (each file on its own) and merge (all of them as
 * one view, merged set): text, or with --json one document.  Return the
 * exit status: 0, or CMG__TOOL_EXIT_ERROR after saying why. */
int cmg__tool_summary_main(char *const *files, int n_files, bool merged,
                           struct cmg__tool_supp *supp,
                           const struct cmg__tool_opts *o);

/* ---- check.c: the leak allowance, for CI -------------------------------- */

/* The check command: the leaks of all files as one view, then whether more
 * than max_leak bytes of device memory leaked.  Returns the exit status:
 * 0, CMG__TOOL_EXIT_LEAK, or CMG__TOOL_EXIT_ERROR after saying why. */
int cmg__tool_check_main(char *const *files, int n_files,
                         struct cmg__tool_supp *supp,
                         const struct cmg__tool_opts *o, uint64_t max_leak);

/* ---- diff.c: what grew and what shrank ------------------- */

/* Prints the difference NEW - BASE of two views over one index. */
int cmg__tool_diff(FILE *f, const struct cmg__tool_view *base,
                   const struct cmg__tool_view *now,
                   const struct cmg__tool_opts *o);

/* The diff command: the two reports read into views over one index,
 * devices matched by ordinal, and their difference on stdout.  Returns the
 * exit status: 0, or CMG__TOOL_EXIT_ERROR after saying why. */
int cmg__tool_diff_main(const char *base_file, const char *new_file,
                        struct cmg__tool_supp *supp,
                        const struct cmg__tool_opts *o);

/* ---- flame.c: folded stacks and the SVG flame graph ------ */

enum cmg__tool_weight {
  CMG__TOOL_WEIGHT_LIVE,
  CMG__TOOL_WEIGHT_PEAK,
  CMG__TOOL_WEIGHT_DENIAL,
};

struct cmg__tool_flame_opts {
  enum cmg__tool_weight weight;
  bool all_frames;
  const char *title; /* NULL: a title from the weight */
  unsigned width;    /* pixels */
};

/* Writes "root;...;leaf BYTES" lines, sorted, one per distinct stack. */
int cmg__tool_folded(FILE *f, const struct cmg__tool_view *v,
                     const struct cmg__tool_flame_opts *o);

/* Writes a self-contained SVG flame graph. */
int cmg__tool_flame(FILE *f, const struct cmg__tool_view *v,
                    const struct cmg__tool_flame_opts *o);

/* The folded command: the folded stacks of all files as one view, on
 * stdout.  Returns the exit status: 0, or CMG__TOOL_EXIT_ERROR after saying
 * why. */
int cmg__tool_folded_main(char *const *files, int n_files,
                          struct cmg__tool_supp *supp,
                          const struct cmg__tool_flame_opts *o);

/* The flame command: the same view as an SVG, into output (NULL or "-":
 * stdout), which is created only after every file was read.  Returns the
 * exit status: 0, or CMG__TOOL_EXIT_ERROR after saying why. */
int cmg__tool_flame_main(char *const *files, int n_files,
                         struct cmg__tool_supp *supp,
                         const struct cmg__tool_flame_opts *o,
                         const char *output);

#endif /* CMG_REPORT_TOOL_H */
