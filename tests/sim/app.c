/*
 * Script interpreter for the simulated-CUDA test programs.
 *
 * The script is argv: words naming operations, each followed by its
 * arguments.  The whole script is parsed and checked before anything runs
 * (app_parse.c), so a malformed script (exit 64) never half-executes.  This
 * file runs it.  Each operation
 * prints one line of space-separated key=value pairs on stdout and flushes
 * it, so shell tests can grep the output and a fork child's lines never
 * interleave with its parent's.  Allocations are numbered in script order
 * (failed ones too), and later operations name them by that index.
 *
 * The interpreter calls CUDA only through the backend table.  The
 * operations that ask the simulated driver or the interposer what they
 * hold (stats, cmg, whatis, getproc, dump) are in app_inspect.c, the
 * optional operations (VMM, pools, arrays, host memory, contexts, IPC...)
 * in app_ops.c, NVML's in app_nvml.c, and streams, capture and graphs in
 * app_graph.c; this file hands them over.
 *
 * `site` and `deep` allocate through exported functions of known names
 * (cmgtest_*), so that report tests can look for them in stack traces: the
 * programs are linked -rdynamic, and the functions are kept out of inlining,
 * cloning and tail calls so that each one really is a frame of its own.
 */
/* For RTLD_DEFAULT and pthread_setname_np. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include "app_int.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


/* A frame that stays a frame: never inlined, and (GCC's noipa) never
 * cloned into a ".constprop" copy that has no dynamic symbol, nor merged
 * with a look-alike function. */
#if defined(__GNUC__) && !defined(__clang__)
#define FRAME __attribute__((noipa, used))
#else
#define FRAME __attribute__((noinline, used))
#endif

static const char *prog;
const struct app_backend *app_be;
static struct op *ops;
static int nops;
uint64_t *app_ptrs;
struct slot *app_slots;
uint64_t *app_pools;
uint64_t *app_ctxs;
int app_cur_dev;
static bool started;

/* ---- running -------------------------------------------------------- */

void
app_line(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
}

/* Lazily, so that a script (or a fork child) that makes no CUDA call
 * never touches CUDA at all. */
int
app_ensure_started(void)
{
  if (started)
    return 0;
  int rc = app_be->start != NULL ? app_be->start(app_cur_dev) : 0;
  if (rc == 0)
    started = true;
  return rc;
}

void *
app_find_symbol(const char *name)
{
  void *p = dlsym(RTLD_DEFAULT, name);
  if (p != NULL)
    return p;
  /* The runtime and the dlopen-ing backends load libcuda RTLD_LOCAL, so
   * its symbols are not in the global scope. */
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (h == NULL)
    h = dlopen("libcuda.so.1", RTLD_NOW);
  return h != NULL ? dlsym(h, name) : NULL;
}

static void
do_alloc(const struct op *op)
{
  const char *name = op->spec->name;
  uint64_t p = 0;
  size_t pitch = 0;
  int rc = app_ensure_started();
  if (rc == 0) {
    switch (op->spec->kind) {
    case OP_ALLOC: rc = app_be->alloc(&p, op->arg[0]); break;
    case OP_MANAGED: rc = app_be->alloc_managed(&p, op->arg[0]); break;
    case OP_ASYNC: rc = app_be->alloc_async(&p, op->arg[0], false); break;
    case OP_ASYNC_PTSZ: rc = app_be->alloc_async(&p, op->arg[0], true); break;
    default:
      rc = app_be->alloc_pitch(&p, &pitch, op->arg[0], op->arg[1],
                           (unsigned int)op->arg[2]);
      break;
    }
  }
  app_ptrs[op->index] = rc == 0 ? p : 0;
  if (op->spec->kind == OP_PITCH) {
    if (rc == 0)
      app_line("pitch i=%d width=%llu height=%llu elem=%llu rc=0 ptr=0x%llx "
           "pitch=%zu", op->index, (unsigned long long)op->arg[0],
           (unsigned long long)op->arg[1], (unsigned long long)op->arg[2],
           (unsigned long long)p, pitch);
    else
      app_line("pitch i=%d width=%llu height=%llu elem=%llu rc=%d", op->index,
           (unsigned long long)op->arg[0], (unsigned long long)op->arg[1],
           (unsigned long long)op->arg[2], rc);
  } else if (rc == 0) {
    app_line("%s i=%d size=%llu rc=0 ptr=0x%llx", name, op->index,
         (unsigned long long)op->arg[0], (unsigned long long)p);
  } else {
    app_line("%s i=%d size=%llu rc=%d", name, op->index,
         (unsigned long long)op->arg[0], rc);
  }
}

/* Keeps the calls below out of tail position: with a store after it, a
 * call cannot become a jump that would take its caller's frame away. */
static volatile int frame_sink;

/* The innermost of the known frames: every `site` and `deep` allocation
 * is made here. */
FRAME int
cmgtest_alloc_leaf(uint64_t *ptr, size_t size)
{
  int rc = app_be->alloc(ptr, size);
  frame_sink += rc;
  return rc;
}

/* Three call sites, distinct in code (each stores its own number) so that
 * no linker or compiler may fold them into one. */
FRAME int
cmgtest_site_1(uint64_t *ptr, size_t size)
{
  int rc = cmgtest_alloc_leaf(ptr, size);
  frame_sink += 1;
  return rc;
}

FRAME int
cmgtest_site_2(uint64_t *ptr, size_t size)
{
  int rc = cmgtest_alloc_leaf(ptr, size);
  frame_sink += 2;
  return rc;
}

FRAME int
cmgtest_site_3(uint64_t *ptr, size_t size)
{
  int rc = cmgtest_alloc_leaf(ptr, size);
  frame_sink += 3;
  return rc;
}

FRAME int
cmgtest_deep(int depth, uint64_t *ptr, size_t size)
{
  int rc = depth > 1 ? cmgtest_deep(depth - 1, ptr, size)
                     : cmgtest_alloc_leaf(ptr, size);
  frame_sink += depth;
  return rc;
}

static void
do_site(const struct op *op)
{
  static int (*const sites[APP_SITES])(uint64_t *, size_t) = {
    cmgtest_site_1, cmgtest_site_2, cmgtest_site_3,
  };
  const char *key = op->spec->kind == OP_SITE ? "n" : "depth";
  int n = (int)op->arg[0];
  uint64_t p = 0;
  int rc = app_ensure_started();
  if (rc == 0)
    rc = op->spec->kind == OP_SITE ? sites[n - 1](&p, op->arg[1])
                                   : cmgtest_deep(n, &p, op->arg[1]);
  app_ptrs[op->index] = rc == 0 ? p : 0;
  if (rc == 0)
    app_line("%s i=%d %s=%d size=%llu rc=0 ptr=0x%llx", op->spec->name,
         op->index, key, n, (unsigned long long)op->arg[1],
         (unsigned long long)p);
  else
    app_line("%s i=%d %s=%d size=%llu rc=%d", op->spec->name, op->index, key, n,
         (unsigned long long)op->arg[1], rc);
}

static void
do_free(const struct op *op)
{
  int i = (int)op->arg[0];
  int rc = app_ensure_started();
  if (rc == 0) {
    switch (op->spec->kind) {
    case OP_FREE: rc = app_be->free(app_ptrs[i]); break;
    case OP_FREE_ASYNC: rc = app_be->free_async(app_ptrs[i], false); break;
    default: rc = app_be->free_async(app_ptrs[i], true); break;
    }
  }
  app_line("%s i=%d rc=%d", op->spec->name, i, rc);
}

struct freer {
  int dev;
  uint64_t ptr;
  int rc;
};

static void *
freer_main(void *arg)
{
  struct freer *f = arg;
  f->rc = app_be->set_device(f->dev);
  if (f->rc == 0)
    f->rc = app_be->free(f->ptr);
  return NULL;
}

/* free_thread: the free from a thread of its own, not the allocating one. */
static void
do_free_thread(const struct op *op)
{
  int i = (int)op->arg[0];
  struct freer f = { .dev = app_cur_dev, .ptr = app_ptrs[i] };
  pthread_t t;
  f.rc = app_ensure_started();
  if (f.rc == 0 && pthread_create(&t, NULL, freer_main, &f) != 0) {
    perror(prog);
    exit(1);
  }
  if (f.rc == 0)
    pthread_join(t, NULL);
  app_line("free_thread i=%d rc=%d", i, f.rc);
}

struct worker {
  pthread_t tid;
  int index;
  int dev;
  uint64_t pairs;
  size_t size;
  uint64_t ok;
  uint64_t failed;
  int first_rc;
  pthread_barrier_t *start;
};

static void *
worker_main(void *arg)
{
  struct worker *w = arg;
  char name[16];
  snprintf(name, sizeof(name), "cmgtest-w%d", w->index);
  pthread_setname_np(pthread_self(), name);
  int rc = app_be->set_device(w->dev);
  if (rc != 0) {
    w->failed = w->pairs;
    w->first_rc = rc;
    pthread_barrier_wait(w->start);
    return NULL;
  }
  /* No thread starts its pairs before every thread is there to contend:
   * a scheduler that runs one thread at a time (valgrind's) could
   * otherwise finish the first before the second is created. */
  pthread_barrier_wait(w->start);
  for (uint64_t k = 0; k < w->pairs; k++) {
    uint64_t p = 0;
    rc = app_be->alloc(&p, w->size);
    if (rc == 0)
      rc = app_be->free(p);
    if (rc == 0) {
      w->ok++;
    } else {
      w->failed++;
      if (w->first_rc == 0)
        w->first_rc = rc;
    }
  }
  return NULL;
}

static void
do_threads(const struct op *op)
{
  int n = (int)op->arg[0];
  uint64_t ok = 0, failed = 0;
  int first_rc = app_ensure_started();
  if (first_rc != 0) {
    failed = (uint64_t)n * op->arg[1];
  } else {
    struct worker *ws = calloc((size_t)n + 1, sizeof(*ws));
    pthread_barrier_t start;
    if (ws == NULL || pthread_barrier_init(&start, NULL, (unsigned)n) != 0) {
      perror(prog);
      exit(1);
    }
    for (int k = 0; k < n; k++) {
      ws[k].start = &start;
      ws[k].index = k;
      ws[k].dev = app_cur_dev;
      ws[k].pairs = op->arg[1];
      ws[k].size = op->arg[2];
      if (pthread_create(&ws[k].tid, NULL, worker_main, &ws[k]) != 0) {
        perror(prog);
        exit(1);
      }
    }
    for (int k = 0; k < n; k++) {
      pthread_join(ws[k].tid, NULL);
      ok += ws[k].ok;
      failed += ws[k].failed;
      if (first_rc == 0)
        first_rc = ws[k].first_rc;
    }
    pthread_barrier_destroy(&start);
    free(ws);
  }
  if (failed == 0)
    app_line("threads ok=%llu failed=0", (unsigned long long)ok);
  else
    app_line("threads ok=%llu failed=%llu rc=%d", (unsigned long long)ok,
         (unsigned long long)failed, first_rc);
}

/* The line goes out before the signal, which may end the process. */
static void
do_kill(const struct op *op)
{
  app_line("kill sig=%s", op->word);
  fflush(stderr);
  if (raise((int)op->arg[0]) != 0) {
    perror(prog);
    exit(1);
  }
}

/* Sleeps the whole time even when signals (a dump request) interrupt. */
/* N live allocations of SIZE that the script never frees: a large ledger
 * for report tests.  Not indexable by later ops. */
static void
do_many(uint64_t n, uint64_t size)
{
  uint64_t ok = 0, p;
  int rc = app_ensure_started();
  for (uint64_t i = 0; rc == 0 && i < n; i++)
    if (app_be->alloc(&p, size) == 0)
      ok++;
  app_line("many n=%llu size=%llu ok=%llu", (unsigned long long)n,
       (unsigned long long)size, (unsigned long long)ok);
}

static void
do_sleep(uint64_t ms)
{
  struct timespec left = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };
  while (nanosleep(&left, &left) != 0 && errno == EINTR)
    ;
  app_line("sleep ms=%llu", (unsigned long long)ms);
}

/* The coarse clock that stamps allocations, in ns. */
static uint64_t
coarse_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Until that clock has moved on: a tick is 1 to 10 ms as the kernel is
 * built, and a sleep of a fixed time may end in the tick it began in. */
static void
do_tick(void)
{
  uint64_t from = coarse_ns();
  struct timespec nap = { 0, 250000 };
  while (coarse_ns() == from)
    nanosleep(&nap, NULL);
  app_line("tick");
}

static void run(int from, int to);

/* The child runs up to the matching endfork (or the end) and exits; the
 * parent waits, reports, and carries on after the endfork. */
static int
do_fork(int at)
{
  int end = ops[at].match;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    perror(prog);
    exit(1);
  }
  if (pid == 0) {
    run(at + 1, end);
    exit(0);
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      perror(prog);
      exit(1);
    }
  }
  if (WIFEXITED(status))
    app_line("fork status=%d", WEXITSTATUS(status));
  else
    app_line("fork signal=%d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return end + 1;
}

static void
run(int from, int to)
{
  for (int i = from; i < to;) {
    const struct op *op = &ops[i];
    int dev = (int)op->arg[0];
    int rc;
    size_t a, b;
    switch (op->spec->kind) {
    case OP_ALLOC: case OP_PITCH: case OP_MANAGED: case OP_ASYNC:
    case OP_ASYNC_PTSZ:
      do_alloc(op);
      break;
    case OP_FREE: case OP_FREE_ASYNC: case OP_FREE_ASYNC_PTSZ:
      do_free(op);
      break;
    case OP_FREE_THREAD:
      do_free_thread(op);
      break;
    case OP_FREE_RAW:
      rc = app_ensure_started();
      if (rc == 0)
        rc = app_be->free(op->arg[0]);
      app_line("free_raw addr=0x%llx rc=%d", (unsigned long long)op->arg[0],
               rc);
      break;
    case OP_INFO:
      rc = app_ensure_started();
      if (rc == 0)
        rc = app_be->meminfo(&a, &b);
      if (rc == 0)
        app_line("info rc=0 free=%zu total=%zu", a, b);
      else
        app_line("info rc=%d", rc);
      break;
    case OP_INFO_NULL:
      /* Each argument NULL in turn: the interposer must give the driver's
       * verdict, never crash. */
      rc = app_ensure_started();
      if (rc == 0) {
        a = b = 7;
        int rc_free = app_be->meminfo(&a, NULL);
        int rc_total = app_be->meminfo(NULL, &b);
        app_line("info_null rc_free=%d free=%zu rc_total=%d total=%zu", rc_free,
             a, rc_total, b);
      } else
        app_line("info_null rc=%d", rc);
      break;
    case OP_TOTAL:
      rc = app_ensure_started();
      if (rc == 0)
        rc = app_be->totalmem(dev, &a);
      if (rc == 0)
        app_line("total dev=%d rc=0 bytes=%zu", dev, a);
      else
        app_line("total dev=%d rc=%d", dev, rc);
      break;
    case OP_DEVICE:
      if (!started && app_be->start != NULL) {
        rc = app_be->start(dev);
        started = rc == 0;
      } else {
        rc = app_be->set_device(dev);
      }
      if (rc == 0)
        app_cur_dev = dev;
      app_line("device dev=%d rc=%d", dev, rc);
      break;
    case OP_RESET:
      rc = app_ensure_started();
      if (rc == 0)
        rc = app_be->reset(app_cur_dev);
      app_line("reset dev=%d rc=%d", app_cur_dev, rc);
      break;
    case OP_THREADS:
      do_threads(op);
      break;
    case OP_FORK:
      i = do_fork(i);
      continue;
    case OP_THREAD:
      i = app_do_thread(op, i);
      continue;
    case OP_ENDFORK: case OP_ENDTHREAD:
      break;
    case OP_STATS: case OP_CMG: case OP_WHATIS: case OP_GETPROC: case OP_DUMP:
      app_run_inspect(op);
      break;
    case OP_EXIT:
      fflush(stdout);
      exit(dev);
    case OP_SITE: case OP_DEEP:
      do_site(op);
      break;
    case OP_KILL:
      do_kill(op);
      break;
    case OP_SLEEP:
      do_sleep(op->arg[0]);
      break;
    case OP_TICK:
      do_tick();
      break;
    case OP_MANY:
      do_many(op->arg[0], op->arg[1]);
      break;
    default:
      app_run_more(op);
      break;
    }
    i++;
  }
}

void
app_run(int from, int to)
{
  run(from, to);
}

int
app_main(const struct app_backend *b, int argc, char **argv)
{
  const char *slash = strrchr(argv[0], '/');
  prog = slash ? slash + 1 : argv[0];
  app_be = b;
  ops = app_parse(prog, argc, argv, &nops);
  run(0, nops);
  return 0;
}
