/*
 * Shared by the files of the script interpreter: app_parse.c (the
 * operations' names and the check of a script), app.c (the run loop and
 * the operations every program has), app_inspect.c (what the driver and
 * the interposer say they hold), app_ops.c (the optional
 * operations: VMM, pools, arrays, host memory, contexts, IPC, external
 * memory, entry points), app_nvml.c (NVML), app_lib.c (a library's own
 * allocations) and app_graph.c (streams, capture and graphs).  Not for the backends, which see
 * app.h only.  Names are prefixed and hidden: the programs are linked
 * -rdynamic, and none of this should be exported.
 */
#ifndef CMGSIM_APP_INT_H
#define CMGSIM_APP_INT_H

#include "app.h"

#define APP_HIDDEN __attribute__((visibility("hidden")))

/* The functions `site N` allocates from: N is 1 to APP_SITES. */
#define APP_SITES 3
/* `deep D`: deep enough to pass any stack_depth (at most 256), shallow
 * enough for any thread's stack. */
#define APP_DEEP_MAX 4096

enum kind {
  OP_ALLOC, OP_PITCH, OP_MANAGED, OP_ASYNC, OP_ASYNC_PTSZ,
  OP_FREE, OP_FREE_ASYNC, OP_FREE_ASYNC_PTSZ, OP_FREE_RAW, OP_FREE_THREAD,
  OP_INFO, OP_INFO_NULL, OP_TOTAL, OP_DEVICE, OP_THREADS, OP_FORK, OP_ENDFORK,
  OP_RESET, OP_STATS, OP_CMG, OP_WHATIS, OP_GETPROC, OP_EXIT,
  OP_SITE, OP_DEEP, OP_DUMP, OP_KILL, OP_SLEEP, OP_TICK, OP_MANY,
  OP_NAME, OP_THREAD, OP_ENDTHREAD,
  OP_VMM, OP_VMM_HOST, OP_VMM_FREE, OP_VMM_RETAIN, OP_VMM_RELEASE,
  OP_VMM_EXPORT, OP_VMM_IMPORT,
  OP_POOL_CREATE, OP_POOL_ALLOC, OP_POOL_ALLOC_PTSZ, OP_POOL_DESTROY,
  OP_POOL_TRIM, OP_POOL_STATS,
  OP_ARRAY, OP_ARRAY3D, OP_MIPMAP, OP_ARRAY_FREE, OP_MIPMAP_FREE,
  OP_MALLOC_ARRAY, OP_MALLOC_3DARRAY, OP_MALLOC3D,
  OP_HOST, OP_HOSTALLOC, OP_HOST_FREE, OP_HOSTSTATS, OP_CTXSTATS,
  OP_CTX_CREATE, OP_CTX_DESTROY, OP_CTX_PRIMARY, OP_RETAIN, OP_RELEASE,
  OP_RELEASE_LEGACY, OP_RESET_LEGACY, OP_RESET_V2,
  OP_IPC_OPEN, OP_IPC_OPEN_LEGACY, OP_IPC_CLOSE, OP_EXT_IMPORT,
  OP_EXT_DESTROY,
  OP_NVML, OP_NVML2, OP_NVML_UUID, OP_NVML_COUNT, OP_NVML_PROCS, OP_UUID,
  OP_COUNT,
  OP_ENTRY, OP_ENTRY_PTSZ, OP_LIB_ALLOC, OP_LIB_FREE,
  OP_CRASH, OP_HANDLE, OP_GETSIG, OP_SIGDFL, OP_TOGGLE, OP_CLOSEFDS, OP_FDCHECK, OP_PID,
  OP_AWAIT, OP_CLONE,
  OP_STREAM, OP_STREAM_DESTROY, OP_SYNC, OP_CAPTURE, OP_CAPTURE_END,
  OP_CAPTURING, OP_ASYNC_ON, OP_FREE_ASYNC_ON, OP_ASYNC_THREAD,
  OP_GRAPH, OP_GRAPH_ALLOC, OP_GRAPH_FREE, OP_GRAPH_DESTROY, OP_GRAPH_NODES,
  OP_INSTANTIATE, OP_INSTANTIATE_PARAMS, OP_UPLOAD, OP_LAUNCH,
  OP_EXEC_DESTROY, OP_GRAPH_TRIM, OP_GRAPH_MEM, OP_GRAPH_MEM_RESET,
};

/* Argument letters: S size (K/M/G/T suffixes), N non-negative integer,
 * I allocation index, X hex address, W any word, e optional integer,
 * G signal name, P pool number or "default", C context number, f optional
 * array format name; and for app_graph.c's operations T stream (a number,
 * 0 or null, legacy, per_thread), H graph number, R executable number, M
 * capture mode, F instantiation flags.  `numbers` says what else than an
 * allocation the operation numbers: 'p' a pool, 'c' a context, 's' a
 * stream, 'g' a graph, 'e' an executable graph. */
struct spec {
  const char *name;
  enum kind kind;
  const char *args;
  bool allocates;
  char numbers;
};

struct op {
  const struct spec *spec;
  uint64_t arg[5];
  int nargs;          /* how many arguments were given */
  const char *word;   /* the W argument */
  const char *format; /* the f argument */
  int index;          /* allocation index, for allocating operations */
  int number;         /* pool or context number, for those that make one */
  int match;          /* fork, thread: its end, or the script's end */
};

/* What the optional operations remember of an allocation index besides
 * its address (app_ptrs). */
struct slot {
  uint64_t handle;    /* VMM handle, array, external memory */
  uint64_t size;
  int fd;             /* vmm_export's descriptor, or -1 */
};

/* What a pool argument holds for "default". */
#define POOL_DEFAULT UINT64_MAX

/* The most entries nvml_procs gives NVML room for. */
#define APP_NVML_PROCS_MAX 16

APP_HIDDEN extern const struct app_backend *app_be;
APP_HIDDEN extern uint64_t *app_ptrs;    /* by allocation index; 0: failed */
APP_HIDDEN extern struct slot *app_slots; /* by allocation index */
APP_HIDDEN extern uint64_t *app_pools;   /* by pool number */
APP_HIDDEN extern uint64_t *app_ctxs;    /* by context number */
APP_HIDDEN extern int app_cur_dev;       /* the `device` operation's */

/* Prints one line of output and flushes it. */
/* The signal operations (app_signals.c). */
APP_HIDDEN void app_run_signals(const struct op *op);

APP_HIDDEN void app_line(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Starts the backend on first use; 0 or the API's error. */
APP_HIDDEN int app_ensure_started(void);

/* A symbol of the process or of libcuda.so.1, or NULL. */
APP_HIDDEN void *app_find_symbol(const char *name);

/* Names what a lookup returned: the dynamic symbol at `fn` ("?" for none,
 * "null" for no pointer) and the file that holds it ("-" for none)
 * (app_inspect.c). */
APP_HIDDEN void app_name_pointer(void *fn, char *name, size_t len,
                                 const char **lib);

/* The streams, capture and graph operations (app_graph.c): their specs;
 * the parsing of their argument letters (NULL, or what is wrong with
 * word `t`); the numbering of what they make (streams from 1, 0 being
 * the NULL stream); the tables of what they made, allocated once the
 * script is parsed (false when out of memory); and running them. */
APP_HIDDEN extern const struct spec app_graph_specs[];
APP_HIDDEN extern const size_t app_graph_nspecs;
APP_HIDDEN const char *app_graph_arg(char a, const char *t, uint64_t *v);
APP_HIDDEN void app_graph_number(struct op *op);
APP_HIDDEN bool app_graph_tables(void);

/* The script argv[1..argc) checked and parsed (app_parse.c): its *count
 * operations, with the tables that number allocations, pools and contexts
 * made.  A bad script is one line on stderr, naming the program name, and
 * exit 64. */
APP_HIDDEN struct op *app_parse(const char *name, int argc, char **argv,
                                int *count);
APP_HIDDEN void app_run_graph(const struct op *op);

/* Runs one of the optional operations (app_ops.c). */
APP_HIDDEN void app_run_more(const struct op *op);

/* Runs lib_alloc or lib_free (app_lib.c). */
APP_HIDDEN void app_run_lib(const struct op *op);

/* Runs stats, cmg, whatis, getproc or dump (app_inspect.c). */
APP_HIDDEN void app_run_inspect(const struct op *op);

/* Runs one of the NVML operations (app_nvml.c). */
APP_HIDDEN void app_run_nvml(const struct op *op);

/* Runs the operations from index `from` up to `to` (app.c). */
APP_HIDDEN void app_run(int from, int to);

/* `thread`, the operation at index `at`: runs its block on a new thread
 * and waits for it; returns the index after the block (app_ops.c). */
APP_HIDDEN int app_do_thread(const struct op *op, int at);

#endif /* CMGSIM_APP_INT_H */
