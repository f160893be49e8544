/*
 * The script interpreter's parser (app.c runs what it gives): every
 * operation's name and argument letters, the words a script may use for
 * array formats and signals, and the check of a whole script before
 * anything runs, so that a malformed one (exit 64) never half-executes.
 */
#include "app_int.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_BAD_SCRIPT 64

/* Every operation: its name, its argument letters (app_int.h), whether
 * it takes an allocation index, what else it numbers. */
static const struct spec specs[] = {
  { "alloc", OP_ALLOC, "S", true, 0 },
  { "pitch", OP_PITCH, "SSe", true, 0 },
  { "managed", OP_MANAGED, "S", true, 0 },
  { "async", OP_ASYNC, "S", true, 0 },
  { "async_ptsz", OP_ASYNC_PTSZ, "S", true, 0 },
  { "free", OP_FREE, "I", false, 0 },
  { "free_async", OP_FREE_ASYNC, "I", false, 0 },
  { "free_async_ptsz", OP_FREE_ASYNC_PTSZ, "I", false, 0 },
  { "free_raw", OP_FREE_RAW, "X", false, 0 },
  { "free_thread", OP_FREE_THREAD, "I", false, 0 },
  { "info", OP_INFO, "", false, 0 },
  { "info_null", OP_INFO_NULL, "", false, 0 },
  { "total", OP_TOTAL, "N", false, 0 },
  { "device", OP_DEVICE, "N", false, 0 },
  { "threads", OP_THREADS, "NNS", false, 0 },
  { "reset", OP_RESET, "", false, 0 },
  { "fork", OP_FORK, "", false, 0 },
  { "endfork", OP_ENDFORK, "", false, 0 },
  { "stats", OP_STATS, "N", false, 0 },
  { "cmg", OP_CMG, "N", false, 0 },
  { "whatis", OP_WHATIS, "I", false, 0 },
  { "getproc", OP_GETPROC, "WNN", false, 0 },
  { "exit", OP_EXIT, "N", false, 0 },
  { "site", OP_SITE, "NS", true, 0 },
  { "deep", OP_DEEP, "NS", true, 0 },
  { "dump", OP_DUMP, "W", false, 0 },
  { "kill", OP_KILL, "G", false, 0 },
  { "sleep", OP_SLEEP, "N", false, 0 },
  { "tick", OP_TICK, "", false, 0 },
  { "crash", OP_CRASH, "W", false, 0 },
  { "handle", OP_HANDLE, "G", false, 0 },
  { "getsig", OP_GETSIG, "G", false, 0 },
  { "sigdfl", OP_SIGDFL, "G", false, 0 },
  { "toggle", OP_TOGGLE, "GN", false, 0 },
  { "closefds", OP_CLOSEFDS, "W", false, 0 },
  { "fdcheck", OP_FDCHECK, "", false, 0 },
  { "pid", OP_PID, "", false, 0 },
  { "await", OP_AWAIT, "W", false, 0 },
  { "clone", OP_CLONE, "W", false, 0 },
  { "many", OP_MANY, "NS", false, 0 },
  { "name", OP_NAME, "W", false, 0 },
  { "thread", OP_THREAD, "W", false, 0 },
  { "endthread", OP_ENDTHREAD, "", false, 0 },
  { "vmm", OP_VMM, "Se", true, 0 },
  { "vmm_host", OP_VMM_HOST, "S", true, 0 },
  { "vmm_free", OP_VMM_FREE, "I", false, 0 },
  { "vmm_retain", OP_VMM_RETAIN, "I", false, 0 },
  { "vmm_release", OP_VMM_RELEASE, "I", false, 0 },
  { "vmm_export", OP_VMM_EXPORT, "I", false, 0 },
  { "vmm_import", OP_VMM_IMPORT, "I", true, 0 },
  { "pool_create", OP_POOL_CREATE, "N", false, 'p' },
  { "pool_alloc", OP_POOL_ALLOC, "PS", true, 0 },
  { "pool_alloc_ptsz", OP_POOL_ALLOC_PTSZ, "PS", true, 0 },
  { "pool_destroy", OP_POOL_DESTROY, "P", false, 0 },
  { "pool_trim", OP_POOL_TRIM, "PS", false, 0 },
  { "pool_stats", OP_POOL_STATS, "P", false, 0 },
  { "array", OP_ARRAY, "NNfe", true, 0 },
  { "array3d", OP_ARRAY3D, "NNNfe", true, 0 },
  { "mipmap", OP_MIPMAP, "NNNfe", true, 0 },
  { "array_free", OP_ARRAY_FREE, "I", false, 0 },
  { "mipmap_free", OP_MIPMAP_FREE, "I", false, 0 },
  { "malloc_array", OP_MALLOC_ARRAY, "NN", true, 0 },
  { "malloc_3darray", OP_MALLOC_3DARRAY, "NNN", true, 0 },
  { "malloc3d", OP_MALLOC3D, "NNN", true, 0 },
  { "host", OP_HOST, "S", true, 0 },
  { "hostalloc", OP_HOSTALLOC, "Se", true, 0 },
  { "host_free", OP_HOST_FREE, "I", false, 0 },
  { "hoststats", OP_HOSTSTATS, "", false, 0 },
  { "ctxstats", OP_CTXSTATS, "N", false, 0 },
  { "ctx_create", OP_CTX_CREATE, "", false, 'c' },
  { "ctx_destroy", OP_CTX_DESTROY, "C", false, 0 },
  { "ctx_primary", OP_CTX_PRIMARY, "", false, 0 },
  { "retain", OP_RETAIN, "", false, 0 },
  { "release", OP_RELEASE, "", false, 0 },
  { "release_legacy", OP_RELEASE_LEGACY, "", false, 0 },
  { "reset_legacy", OP_RESET_LEGACY, "", false, 0 },
  { "reset_v2", OP_RESET_V2, "", false, 0 },
  { "ipc_open", OP_IPC_OPEN, "I", true, 0 },
  { "ipc_open_legacy", OP_IPC_OPEN_LEGACY, "I", true, 0 },
  { "ipc_close", OP_IPC_CLOSE, "I", false, 0 },
  { "ext_import", OP_EXT_IMPORT, "S", true, 0 },
  { "ext_destroy", OP_EXT_DESTROY, "I", false, 0 },
  { "nvml", OP_NVML, "N", false, 0 },
  { "nvml2", OP_NVML2, "N", false, 0 },
  { "nvml_uuid", OP_NVML_UUID, "N", false, 0 },
  { "nvml_count", OP_NVML_COUNT, "", false, 0 },
  { "nvml_procs", OP_NVML_PROCS, "Ne", false, 0 },
  { "uuid", OP_UUID, "N", false, 0 },
  { "count", OP_COUNT, "", false, 0 },
  { "entry", OP_ENTRY, "WNe", false, 0 },
  { "entry_ptsz", OP_ENTRY_PTSZ, "WNe", false, 0 },
  { "lib_alloc", OP_LIB_ALLOC, "S", true, 0 },
  { "lib_free", OP_LIB_FREE, "I", false, 0 },
};

/* The array formats, by the names scripts use; backends map them to
 * their API's formats. */
static const char *const array_formats[] = {
  "u8", "u16", "u32", "s8", "s16", "s32", "f16", "f32",
};


/* The signals `kill` can raise; names as kill(1) takes them, with or
 * without "SIG". */
static const struct {
  const char *name;
  int sig;
} signals[] = {
  { "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
  { "ILL", SIGILL }, { "TRAP", SIGTRAP }, { "ABRT", SIGABRT },
  { "BUS", SIGBUS }, { "FPE", SIGFPE }, { "KILL", SIGKILL },
  { "USR1", SIGUSR1 }, { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 },
  { "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM },
  { "CHLD", SIGCHLD }, { "CONT", SIGCONT }, { "STOP", SIGSTOP },
  { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
  { "URG", SIGURG }, { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ },
  { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF }, { "WINCH", SIGWINCH },
  { "IO", SIGIO }, { "PWR", SIGPWR }, { "SYS", SIGSYS },
};

static const char *prog;
static struct op *ops;
static int nops;

/* ---- parsing -------------------------------------------------------- */

static void
bad(int word, const char *text, const char *msg)
{
  fprintf(stderr, "%s: word %d ('%s'): %s\n", prog, word, text, msg);
  exit(EXIT_BAD_SCRIPT);
}

static bool
parse_u64(const char *s, bool suffix, uint64_t *out)
{
  if (*s < '0' || *s > '9')
    return false;
  uint64_t v = 0;
  for (; *s >= '0' && *s <= '9'; s++) {
    if (v > (UINT64_MAX - 9) / 10)
      return false;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  int shift = 0;
  if (suffix && *s != '\0' && s[1] == '\0') {
    const char *p = strchr("KkMmGgTt", *s);
    if (p == NULL)
      return false;
    shift = 10 * (int)(1 + (p - "KkMmGgTt") / 2);
    s++;
  }
  if (*s != '\0' || (shift && v > (UINT64_MAX >> shift)))
    return false;
  *out = v << shift;
  return true;
}

static bool
parse_hex(const char *s, uint64_t *out)
{
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    s += 2;
  if (*s == '\0')
    return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 16);
  if (errno != 0 || *end != '\0' || *s == '-' || *s == '+')
    return false;
  *out = v;
  return true;
}

struct op *
app_parse(const char *name, int argc, char **argv, int *count)
{
  prog = name;
  ops = calloc((size_t)argc, sizeof(*ops));
  /* The fork and thread blocks still open, innermost last. */
  int *blocks = calloc((size_t)argc, sizeof(*blocks));
  int nblocks = 0, nallocs = 0, npools = 0, nctxs = 0;
  if (ops == NULL || blocks == NULL) {
    perror(prog);
    exit(EXIT_BAD_SCRIPT);
  }

  for (int w = 1; w < argc;) {
    const struct spec *sp = NULL;
    for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++)
      if (strcmp(specs[k].name, argv[w]) == 0)
        sp = &specs[k];
    for (size_t k = 0; sp == NULL && k < app_graph_nspecs; k++)
      if (strcmp(app_graph_specs[k].name, argv[w]) == 0)
        sp = &app_graph_specs[k];
    if (sp == NULL)
      bad(w, argv[w], "unknown operation");
    if (sp->kind == OP_GETPROC && app_be->getproc == NULL)
      bad(w, argv[w], "not supported by this program");

    struct op *op = &ops[nops];
    op->spec = sp;
    op->index = -1;
    int opword = w++;
    for (int k = 0; sp->args[k] != '\0'; k++) {
      char a = sp->args[k];
      if (a == 'e' && (w >= argc || argv[w][0] < '0' || argv[w][0] > '9'))
        break;
      if (a == 'f') {
        bool known = false;
        for (size_t f = 0; w < argc && f < sizeof(array_formats) /
                                               sizeof(array_formats[0]);
             f++)
          known = known || strcmp(argv[w], array_formats[f]) == 0;
        if (!known)
          break;
      }
      if (w >= argc)
        bad(opword, argv[opword], "missing argument");
      const char *t = argv[w];
      uint64_t v = 0;
      bool ok = true;
      switch (a) {
      case 'S': ok = parse_u64(t, true, &v); break;
      case 'N': case 'e':
        ok = parse_u64(t, false, &v) && v <= INT_MAX;
        break;
      case 'I':
        ok = parse_u64(t, false, &v) && v < (uint64_t)nallocs;
        if (!ok)
          bad(w, t, "not the index of an earlier allocation");
        break;
      case 'X': ok = parse_hex(t, &v); break;
      case 'W': op->word = t; break;
      case 'f': op->format = t; break;
      case 'P':
        if (strcmp(t, "default") == 0) {
          v = POOL_DEFAULT;
          break;
        }
        ok = parse_u64(t, false, &v) && v < (uint64_t)npools;
        if (!ok)
          bad(w, t, "expected default or the number of an earlier pool");
        break;
      case 'C':
        ok = parse_u64(t, false, &v) && v < (uint64_t)nctxs;
        if (!ok)
          bad(w, t, "not the number of an earlier context");
        break;
      case 'G':
        op->word = strncmp(t, "SIG", 3) == 0 ? t + 3 : t;
        ok = false;
        for (size_t g = 0; g < sizeof(signals) / sizeof(signals[0]); g++) {
          if (strcmp(op->word, signals[g].name) == 0) {
            op->word = signals[g].name;
            v = (uint64_t)signals[g].sig;
            ok = true;
          }
        }
        if (!ok)
          bad(w, t, "expected a signal name such as USR1 or KILL");
        break;
      default: {
        const char *msg = app_graph_arg(a, t, &v);
        if (msg != NULL)
          bad(w, t, msg);
        break;
      }
      }
      if (!ok)
        bad(w, t, a == 'S' ? "expected a size (bytes, or with K/M/G/T)"
                  : a == 'X' ? "expected a hex address"
                  : "expected a non-negative integer");
      op->arg[k] = v;
      op->nargs = k + 1;
      w++;
    }
    if (sp->kind == OP_SITE && (op->arg[0] < 1 || op->arg[0] > APP_SITES))
      bad(opword + 1, argv[opword + 1], "expected a site from 1 to 3");
    if (sp->kind == OP_DEEP && (op->arg[0] < 1 || op->arg[0] > APP_DEEP_MAX))
      bad(opword + 1, argv[opword + 1], "expected a depth from 1 to 4096");
    if (sp->kind == OP_NVML_PROCS && op->nargs > 1 &&
        op->arg[1] > APP_NVML_PROCS_MAX)
      bad(opword + 2, argv[opword + 2], "expected room for 0 to 16 entries");
    /* The kernel keeps 15 bytes of a thread's name. */
    if ((sp->kind == OP_NAME || sp->kind == OP_THREAD) &&
        (op->word[0] == '\0' || strlen(op->word) > 15))
      bad(opword + 1, argv[opword + 1], "expected a name of 1 to 15 bytes");
    if (sp->allocates)
      op->index = nallocs++;
    if (sp->numbers == 'p')
      op->number = npools++;
    if (sp->numbers == 'c')
      op->number = nctxs++;
    app_graph_number(op);
    if (sp->kind == OP_PITCH && op->arg[2] == 0)
      op->arg[2] = 4;
    if (sp->kind == OP_FORK || sp->kind == OP_THREAD)
      blocks[nblocks++] = nops;
    if (sp->kind == OP_ENDFORK || sp->kind == OP_ENDTHREAD) {
      enum kind opens = sp->kind == OP_ENDFORK ? OP_FORK : OP_THREAD;
      if (nblocks == 0 || ops[blocks[nblocks - 1]].spec->kind != opens)
        bad(opword, argv[opword], sp->kind == OP_ENDFORK
                                      ? "endfork without fork"
                                      : "endthread without thread");
      ops[blocks[--nblocks]].match = nops;
    }
    nops++;
  }
  while (nblocks > 0)
    ops[blocks[--nblocks]].match = nops;
  free(blocks);
  app_ptrs = calloc((size_t)nallocs + 1, sizeof(*app_ptrs));
  app_slots = calloc((size_t)nallocs + 1, sizeof(*app_slots));
  app_pools = calloc((size_t)npools + 1, sizeof(*app_pools));
  app_ctxs = calloc((size_t)nctxs + 1, sizeof(*app_ctxs));
  for (int i = 0; app_slots != NULL && i < nallocs; i++)
    app_slots[i].fd = -1;
  if (app_ptrs == NULL || app_slots == NULL || app_pools == NULL ||
      app_ctxs == NULL || !app_graph_tables()) {
    perror(prog);
    exit(EXIT_BAD_SCRIPT);
  }
  *count = nops;
  return ops;
}
