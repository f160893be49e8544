/*
 * What the files of the benchmark share.  The benchmark is one program,
 * bench/cmgbench: run plainly it is the harness (main.c), which starts
 * itself again as child processes under LD_PRELOAD (work.c) and prints what
 * they measured.  Each child measures the program's calls with and without
 * the interposer itself, interleaved, so every ratio it reports comes from
 * one process on one simulated GPU.
 */
#ifndef CMGBENCH_H
#define CMGBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Frames of real, distinct functions between main and the timed calls. */
#define CMGB_CALL_DEPTH 40
/* Most frames cmgb_at_depth can add: the deep-stack rows (deep.c) reach
 * 254 frames on the stack with it. */
#define CMGB_MAX_DEPTH 256
/* Levels of cmgb_at_tree: 2^14 distinct stacks at most. */
#define CMGB_TREE_LEVELS 14

/* ---- frames.c: call depth, distinct stacks, the floor ------------------ */

typedef void (*cmgb_fn)(void *arg);

/* Calls fn(arg) from `depth` frames deeper (at most CMGB_MAX_DEPTH), each
 * a different function, none of them inlined or tail-called, so that an
 * unwinder walks as many frames as in a program with that call depth. */
void cmgb_at_depth(unsigned depth, cmgb_fn fn, void *arg);

/* The same from functions built without frame pointers (frames_nofp.c);
 * everything else in the benchmark keeps them. */
void cmgb_at_depth_nofp(unsigned depth, cmgb_fn fn, void *arg);

/* Calls fn(arg) through CMGB_TREE_LEVELS frames that the bits of `which`
 * choose among two functions per level: each value below 2^14 gives a
 * distinct stack. */
void cmgb_at_tree(unsigned which, cmgb_fn fn, void *arg);

/* The floor: an allocation and a free with the driver's signatures that do
 * nothing. */
int cmgb_empty_alloc(unsigned long long *dptr, size_t bytes);
int cmgb_empty_free(unsigned long long dptr);

/* ---- paths.c: the ways a program reaches the driver -------------------- */

enum cmgb_path {
  CMGB_FLOOR,   /* the empty pair */
  CMGB_DIRECT,  /* linked with -lcuda, called by name */
  CMGB_DLSYM,   /* dlopen + dlsym("cuMemAlloc_v2") */
  CMGB_GETPROC, /* dlsym("cuGetProcAddress_v2"), then ("cuMemAlloc", 3020) */
  CMGB_RUNTIME, /* cudaMalloc/cudaFree of the shared libcudart.so.13 */
  CMGB_NPATHS
};

extern const char *const cmgb_path_names[CMGB_NPATHS];

/* Finds every path's functions twice: as the program sees them under the
 * interposer ("with"), and the driver's and the runtime's own ("bare"),
 * bypassing the interposer.  The bare runtime is a copy of libcudart.so.13
 * made in tmpdir and loaded with RTLD_DEEPBIND, so that its dlsym is libc's
 * and it talks to the same simulated driver without hooks.  Returns 0, or
 * -1 after a message on stderr (also when the interposer is not loaded). */
int cmgb_paths_init(const char *tmpdir);

/* After cmgb_paths_init: the driver's own function `name` (runtime false)
 * or the bare runtime's (true), around the interposer; NULL when there is
 * none. */
void *cmgb_bare_sym(bool runtime, const char *name);

/* Whether fn is the interposer's. */
bool cmgb_is_interposer(const void *fn);

/* Makes device `dev`'s primary context current on the calling thread (the
 * driver paths need one; the runtime binds its own). */
int cmgb_use_device(int dev);

/* n allocation + free pairs of `bytes` through a path.  Returns 0, or -1
 * after a message when a call failed. */
int cmgb_pairs(enum cmgb_path path, bool with, long n, size_t bytes);

/* One allocation or free through a path (to hold live allocations). */
int cmgb_alloc(enum cmgb_path path, bool with, uint64_t *dptr, size_t bytes);
int cmgb_free(enum cmgb_path path, bool with, uint64_t dptr);

/* The interposer's public API, found with dlsym; NULL without it. */
struct cmg_device_stats;
int cmgb_stats(int dev, struct cmg_device_stats *out);
int cmgb_dump(const char *path);

/* ---- sample.c: timed blocks and the figures a child prints ---------- */

#define CMGB_MAX_ROUNDS 64

/* n iterations of something timed: 0, or -1 after a message when a call
 * failed. */
typedef int (*cmgb_loop)(void *arg, bool with, long n);

/* ns per iteration of one block of n; NAN when the loop failed. */
double cmgb_time(cmgb_loop loop, void *arg, bool with, long n);

/* Iterations per block so that the slower of bare and with takes about
 * block_ms; -1 when the loop failed. */
long cmgb_calibrate(cmgb_loop loop, void *arg, double block_ms);

/* Prints "a.b v"; the median and minimum of n samples as
 * "prefix.name_med" and "prefix.name_min"; and of bare and interposed
 * samples of one measurement, both of those and the added cost: the
 * median of the per-round differences (each round's two blocks ran back
 * to back) and the difference of the minima. */
void cmgb_put2(const char *a, const char *b, double v);
void cmgb_put_stats(const char *prefix, const char *name, double *v, int n);
void cmgb_put_pair(const char *prefix, double *bare, double *with, int n);

/* ---- util.c ------------------------------------------------------------ */

uint64_t cmgb_now_ns(void);

/* Median (sorts v in place) and minimum of n values; 0 when n is 0. */
double cmgb_median(double *v, size_t n);
double cmgb_min(const double *v, size_t n);

/* Anonymous resident memory of this process in bytes (RssAnon), or -1. */
long long cmgb_rss_anon(void);

/* Bytes malloc holds for the program (in use plus mmapped chunks). */
long long cmgb_malloc_bytes(void);

/* Runs argv[0] with argv, its output discarded, runs + 1 times; the first
 * run warms the page cache and is not counted.  Returns 0 with the median
 * and the minimum of the others in seconds, or the exit status of the run
 * that failed (128 when a signal ended it). */
int cmgb_time_run(char *const argv[], int runs, double *med, double *min);

/* Prints one result line "key value" on stdout for the harness. */
void cmgb_put(const char *key, double value);

/* ---- results.c: what the harness collected, and its settings ----------- */

/* What a run does: the full run, or the smoke run's tiny counts. */
struct cmgb_plan {
  const char *mode;
  int rounds;
  const char *block_ms, *thread_ms, *scale_ms; /* as the children take them */
  const char *scale_live;                      /* "1000,100000,1000000" */
  long mem_live[2], mem_stacks;
  long report_live, report_stacks;
  int report_reps;
  int repeats, repeat_rounds; /* stacks-off "calls" in more processes */
  const char *repeat_ms;
};

struct cmgb_machine {
  char cpu[128];
  char kernel[256];
  char clocksource[32];
  long cores;
  double load_start, load_end; /* 1-minute load average */
};

#define CMGB_NDEPTHS 4
extern const struct cmgb_plan *cmgb_plan;
extern const int cmgb_depths[CMGB_NDEPTHS]; /* stack depths of "calls" */
extern const int cmgb_thread_depths[2];     /* of "threads" and "scale" */
extern const char *const cmgb_layouts[2];   /* "each", "same" device */
extern struct cmgb_machine cmgb_machine;
extern const char *cmgb_lib; /* the interposer */
/* make bench-compare OPTIONS=: what both builds' children run with beyond
 * the harness's own options, or NULL. */
extern const char *cmgb_options;
extern const char *cmgb_tool_state; /* "ok", or why there is no read time */
extern int cmgb_broken;             /* 1 when the harness itself failed */

/* Keeps a figure under its key, replacing one of the same key. */
void cmgb_store(const char *key, double value);

/* A figure the children printed, by its key ("calls.32.direct.added_med");
 * NAN when there is none. */
double cmgb_get(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- compare.c: two builds in one run (make bench-compare) ------------ */

/* Prints the "calls" rows of the base library and of cmgb_lib from the
 * figures stored as cmp.{base,new}.ALTERNATION.DEPTH.PATH.* */
void cmgb_print_compare(const char *base_lib, int alternations);

/* The framework-shaped pair of both builds, alternated with bare ones
 * (a line saying why when it cannot run); stores fwcmp.* figures.  Then
 * its rows. */
void cmgb_run_compare_framework(const char *base_lib, const char *sim,
                                const char *chain, const char *tmpdir);
void cmgb_print_compare_framework(void);

/* ---- modes.c: stack modes, with and without frame pointers ------------ */

#define CMGB_NMODES 3
#define CMGB_NMODE_DEPTHS 3
extern const char *const cmgb_modes[CMGB_NMODES];     /* auto fp dwarf */
extern const int cmgb_mode_depths[CMGB_NMODE_DEPTHS]; /* 16 32 64 */
extern const char *const cmgb_chains[2];              /* fp, nofp */

/* Section 1b of the table, its figures' check, its JSON member. */
void cmgb_modes_require(void);
void cmgb_modes_print(void);
void cmgb_modes_json(FILE *f);
/* Added ns per pair at 32 frames: auto with frame pointers; and auto minus
 * dwarf without them (what auto costs where it must hand over). */
double cmgb_modes_fp32(void);
double cmgb_modes_nofp32_extra(void);

/* ---- table.c: the output ----------------------------------------------- */

/* Sets cmgb_broken, with a message, when a figure of the table is missing. */
void cmgb_check_complete(void);

/* The table, with PASS or MISS for each target, on stdout. */
void cmgb_print_table(void);

/* The same figures as JSON; 0 or a negative errno. */
int cmgb_write_json(const char *path);

/* ---- python.c: the Python frames row ---------------------------------- */

/* Runs the Python children (each CPython found); stores python.* figures. */
void cmgb_run_python(const char *lib, const char *sim, const char *tmpdir);
/* Its section of the table, and its member of the JSON. */
void cmgb_print_python(void);
void cmgb_python_json(FILE *f);

/* ---- framework.c: the framework-shaped row ---------------------------- */

/* Python frames on the stack at the allocation: the driver's recursion
 * and the module's. */
#define CMGB_FW_PY_FRAMES 31

/* "ok", or why the row was left out (or failed). */
extern const char *cmgb_framework_state;

/* The Python driver: python3.11 -c SCRIPT CHAIN DEPTH N runs 7 blocks of
 * N pairs under DEPTH + 1 Python frames; cmgbench --framework-script
 * prints it, for scripts/bench-instructions. */
extern const char cmgb_framework_script[];

/* Whether Debian's python3.11 and the chain library are there; if not,
 * says which is absent on stderr and in cmgb_framework_state. */
bool cmgb_framework_can_run(const char *chain);

/* One process of the row, with the interposer's options (NULL: without
 * it, else a prefix ending in a comma or empty): its ns per pair, NAN
 * when it failed; its native frames in *frames. */
double cmgb_framework_once(const char *options, const char *lib,
                           const char *sim, const char *chain,
                           const char *tmpdir, long pairs, double *frames);

/* The end of a framework-shaped section begun at t0: its time on stderr,
 * and the row's state, failed (and the run broken) unless good. */
void cmgb_framework_end(uint64_t t0, bool good);

/* Runs Debian's python3.11 over libcmgbchain.so (chain, a path; may be
 * NULL) in each configuration; stores framework.* figures.  Leaves the row
 * out with a line when either is absent. */
void cmgb_run_framework(const char *lib, const char *sim, const char *chain,
                        const char *tmpdir);
/* Added ns per pair at the default options (its target); NAN without. */
double cmgb_framework_added(void);
/* Its section of the table, and its member of the JSON. */
void cmgb_print_framework(void);
void cmgb_framework_json(FILE *f);

/* ---- deep.c: deep C stacks at stack_depth 8 and 32 -------------------- */

#define CMGB_NDEEP 3
extern const int cmgb_deep_depths[2];          /* 8 32: a child each */
extern const int cmgb_deep_frames[CMGB_NDEEP]; /* 32 104 254 */

/* `cmgbench --child deep`: the direct pair and the floor's walk at each
 * count of frames; 0, or 1 when a call failed. */
int cmgb_deep_child(int rounds, double block_ms);
/* Sets cmgb_broken when a figure is missing. */
void cmgb_deep_require(void);
/* At stack_depth=8, added ns at 254 frames over added ns at 32 (its
 * target), and the line under the targets that gives the floor beside it. */
double cmgb_deep_ratio(void);
void cmgb_deep_print_floor(void);
/* Its section of the table, and its member of the JSON. */
void cmgb_print_deep(void);
void cmgb_deep_json(FILE *f);

/* ---- vmm.c: the VMM and stream-ordered pool paths --------------------- */

extern const int cmgb_vmm_depths[2]; /* 32 (the default), 0: a child each */

/* `cmgbench --child vmm`: each path bare and interposed; 0, or 1 when a
 * call failed or the functions could not be told apart. */
int cmgb_vmm_child(int rounds, double block_ms);
/* Sets cmgb_broken when a figure is missing. */
void cmgb_vmm_require(void);
/* Its section of the table, and its member of the JSON. */
void cmgb_print_vmm(void);
void cmgb_vmm_json(FILE *f);

/* ---- chain.c: libcmgbchain.so, loaded by framework.c's Python --------- */

/* Descends 50 frames and times n pairs of alloc(&p, 4096) and release(p)
 * there, the runtime's cudaMalloc and cudaFree: the best of 7 blocks, in
 * ns per pair, or -1 when a call failed.  *frames gets the frames on the
 * stack at the bottom, by backtrace(3). */
__attribute__((visibility("default"))) double
cmgb_chain_run(void *alloc, void *release, long n, int *frames);

/* ---- snapshot.c: what snapshot=TIME costs a running program ----------- */

struct cmgb_snapshot_plan {
  long live;           /* allocations held */
  const char *seconds; /* how long the pairs run, as the child takes it */
  const char *every;   /* the snapshot option's value */
};

const struct cmgb_snapshot_plan *cmgb_snapshot_plan(void);
/* Sets cmgb_broken when a figure is missing. */
void cmgb_snapshot_require(void);
/* Its section of the table, and its member of the JSON. */
void cmgb_print_snapshot(void);
void cmgb_snapshot_json(FILE *f);

/* ---- page.c: the report's page in a browser ---------------------------- */

/* Times `tool html -o TMPDIR/page.html REPORT` (html.write.s_*) and keeps
 * the page's size (html.bytes), then has `node SCRIPT PAGE RUNS`
 * (bench/page-load.js) time the page in headless Chromium until it is
 * ready (html.ready.ms_*).  A missing tool, node, puppeteer-core or
 * Chromium leaves the figures unset and says why in the rows; it never
 * counts as the harness breaking.  script may be NULL. */
void cmgb_run_page(const char *tool, const char *report, const char *tmpdir,
                   const char *script);
/* Its rows of the table's section 4, and its members of the JSON's
 * "report" object (each written with a leading ", "). */
void cmgb_print_page(void);
void cmgb_page_json(FILE *f);

/* ---- emit.c: results.json's values ------------------------------------- */

/* A number, null for none; "name": {"median": , "min": }; a string. */
void cmgb_jnum(FILE *f, double v);
void cmgb_jstat(FILE *f, const char *name, double med, double min);
void cmgb_jstr(FILE *f, const char *s);

/* ---- work.c: the child modes ------------------------------------------- */

/* Runs `cmgbench --child MODE ...`; returns the exit status. */
int cmgb_child(int argc, char **argv);

#endif /* CMGBENCH_H */
