/*
 * The child processes of the benchmark: `cmgbench --child MODE ...`, run by
 * the harness under LD_PRELOAD=libcumemguard.so with the options of one
 * configuration (stack depth) in CUMEMGUARD_OPTIONS.
 *
 * Every mode measures the bare path and the interposed path itself, in the
 * same process, alternating their order from round to round, and prints
 * "key value" lines that the harness collects.  Timed calls are made from
 * CMGB_CALL_DEPTH frames deep (frames.c).  A mode ends with "ok 1"; a
 * failed call makes it exit 1 without it.  Children leave with _exit, so
 * the interposer's exit report (of whatever they still hold) is not
 * written.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cumemguard.h"
#include "cmgbench.h"

#define MAX_ROUNDS CMGB_MAX_ROUNDS
#define MAX_LEVELS 8

struct opts {
  const char *mode;
  const char *tmp;
  const char *out;
  double block_ms; /* aim of one timed block */
  int rounds;
  size_t bytes;          /* size of the timed allocations */
  size_t held_bytes;     /* size of the allocations held live */
  long live[MAX_LEVELS]; /* scale: levels; mem, report: [0] */
  int nlive;
  long stacks;      /* report: distinct stacks */
  bool with;        /* mem: through the interposer */
  bool distinct;    /* mem: each allocation its own stack */
  bool each_device; /* threads: one device per thread */
  const char *via;  /* loop: the path's name */
  bool direct_only; /* calls: the direct path (and the floor) only */
  bool nofp;        /* calls: from frames without frame pointers */
  double seconds;   /* hold: how long the pairs run */
};

static struct opts o = {
  .block_ms = 20,
  .rounds = 11,
  .bytes = 1 << 20,
  .held_bytes = 256,
  .stacks = 10000,
};
static int status;

/* Nanoseconds per pair of one timed block.  Timed here rather than
 * through cmgb_time, so the calls rows keep the frames they always had. */
static double
block(enum cmgb_path p, bool with, long n)
{
  uint64_t t0 = cmgb_now_ns();
  if (cmgb_pairs(p, with, n, o.bytes) != 0)
    status = 1;
  return (double)(cmgb_now_ns() - t0) / (double)n;
}

/* Pairs per block so that the slower variant takes about block_ms. */
static long
calibrate(enum cmgb_path p)
{
  block(p, false, 200);
  double ns = block(p, true, 1000);
  double b = block(p, false, 1000);
  if (b > ns)
    ns = b;
  long n = (long)(o.block_ms * 1e6 / (ns > 1 ? ns : 1));
  return n < 100 ? 100 : n;
}

/* ---- calls: every path, bare and interposed --------------------------- */

struct calls {
  long n[CMGB_NPATHS];
  double s[CMGB_NPATHS][2][MAX_ROUNDS];
  double least[MAX_ROUNDS];
  long with_allocs;
};

/* The least an interposed pair can add on this machine, whatever the
 * code: the four locked read-modify-writes its guarantees take (the
 * limit's reservation and release, which no two threads may pass
 * together; the ledger's insert and remove, which a free from any thread
 * must find) and its two coarse clock reads (the allocation's time, the
 * free's in the timeline), on lines of their own, nothing else. */
static _Atomic uint64_t least_words[2][16] __attribute__((aligned(128)));

static double
least_block(long n)
{
  struct timespec ts;
  uint64_t t0 = cmgb_now_ns(), sum = 0;
  for (long i = 0; i < n; i++) {
    atomic_fetch_add_explicit(&least_words[0][0], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&least_words[1][0], 1, memory_order_acquire);
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    sum += (uint64_t)ts.tv_nsec;
    atomic_fetch_sub_explicit(&least_words[1][0], 1, memory_order_acquire);
    atomic_fetch_sub_explicit(&least_words[0][0], 1, memory_order_relaxed);
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    sum += (uint64_t)ts.tv_nsec;
  }
  __asm__ volatile("" : : "r"(sum) : "memory");
  return (double)(cmgb_now_ns() - t0) / (double)n;
}

static int
npaths(void)
{
  return o.direct_only ? CMGB_DIRECT + 1 : CMGB_NPATHS;
}

static void
calls_body(void *arg)
{
  struct calls *c = arg;
  for (int p = 0; p < npaths(); p++) {
    c->n[p] = calibrate(p);
    c->with_allocs += p == CMGB_FLOOR ? 0 : 1000;
    /* Warm-up: a block of each, unrecorded. */
    block(p, false, c->n[p] / 4 + 1);
    block(p, true, c->n[p] / 4 + 1);
    c->with_allocs += p == CMGB_FLOOR ? 0 : c->n[p] / 4 + 1;
  }
  for (int r = 0; r < o.rounds && status == 0; r++)
    for (int p = 0; p < npaths(); p++)
      for (int k = 0; k < 2; k++) {
        bool with = k ^ ((r + p) & 1);
        if (p == CMGB_FLOOR && with)
          continue;
        c->s[p][with][r] = block(p, with, c->n[p]);
        c->with_allocs += with ? c->n[p] : 0;
        if (p == CMGB_FLOOR)
          c->least[r] = least_block(c->n[CMGB_DIRECT]);
      }
}

static int
mode_calls(void)
{
  static struct calls c;
  struct cmg_device_stats before, after;
  if (cmgb_use_device(0) != 0 || cmgb_stats(0, &before) != 0)
    return 1;
  (o.nofp ? cmgb_at_depth_nofp : cmgb_at_depth)(CMGB_CALL_DEPTH, calls_body,
                                                &c);
  if (status != 0 || cmgb_stats(0, &after) != 0)
    return 1;
  /* The interposer must have counted every interposed allocation, and no
   * bare one. */
  long counted = (long)(after.allocations - before.allocations);
  if (counted != c.with_allocs) {
    fprintf(stderr,
            "cmgbench: the interposer counted %ld allocations, "
            "%ld went through it\n",
            counted, c.with_allocs);
    return 1;
  }
  cmgb_put_stats("floor", "ns", c.s[CMGB_FLOOR][0], o.rounds);
  cmgb_put_stats("least", "ns", c.least, o.rounds);
  for (int p = CMGB_DIRECT; p < npaths(); p++) {
    cmgb_put_pair(cmgb_path_names[p], c.s[p][0], c.s[p][1], o.rounds);
    cmgb_put2(cmgb_path_names[p], "pairs", (double)c.n[p]);
  }
  return 0;
}

/* ---- threads: throughput at 1 and 2 threads --------------------------- */

struct worker {
  pthread_t thread;
  atomic_int *go; /* threads ready; all spin until all are */
  int nthreads;
  enum cmgb_path path;
  int device;
  bool with;
  long n;
  uint64_t t0, t1;
  double cpu_ns; /* this thread's CPU time for the n pairs */
};

static uint64_t
thread_cpu_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
worker_body(void *arg)
{
  struct worker *w = arg;
  if (w->path != CMGB_FLOOR && cmgb_use_device(w->device) != 0)
    status = 1;
  if (cmgb_pairs(w->path, w->with, w->n / 10 + 1, o.bytes) != 0)
    status = 1;
  atomic_fetch_add(w->go, 1);
  while (atomic_load(w->go) < w->nthreads)
    ;
  uint64_t c0 = thread_cpu_ns();
  w->t0 = cmgb_now_ns();
  if (cmgb_pairs(w->path, w->with, w->n, o.bytes) != 0)
    status = 1;
  w->t1 = cmgb_now_ns();
  w->cpu_ns = (double)(thread_cpu_ns() - c0);
}

static void *
worker_main(void *arg)
{
  cmgb_at_depth(CMGB_CALL_DEPTH, worker_body, arg);
  return NULL;
}

/* Pairs per second of `nthreads` threads doing n pairs each, from the
 * first thread's start to the last one's end; *cpu gets the CPU time per
 * pair of the threads, which two threads sharing nothing keep at the
 * one-thread figure even when the machine runs them on one core. */
static double
throughput(int nthreads, enum cmgb_path path, bool with, long n, double *cpu)
{
  atomic_int go = 0;
  struct worker w[2];
  for (int i = 0; i < nthreads; i++) {
    w[i] = (struct worker){ .go = &go,
                            .nthreads = nthreads,
                            .path = path,
                            .device = o.each_device ? i : 0,
                            .with = with,
                            .n = n };
    if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0)
      status = 1;
  }
  uint64_t t0 = UINT64_MAX, t1 = 0;
  *cpu = 0;
  for (int i = 0; i < nthreads; i++) {
    pthread_join(w[i].thread, NULL);
    t0 = w[i].t0 < t0 ? w[i].t0 : t0;
    t1 = w[i].t1 > t1 ? w[i].t1 : t1;
    *cpu += w[i].cpu_ns / (double)n / nthreads;
  }
  return (double)n * nthreads / ((double)(t1 - t0) / 1e9);
}

/* Three variants, in a different order each round: the empty pair (what
 * this machine's two cores give to work that shares nothing), the bare
 * driver, and the driver under the interposer. */
static int
mode_threads(void)
{
  static const char *const names[3] = { "floor", "bare", "with" };
  double s[3][2][MAX_ROUNDS], ratio[3][MAX_ROUNDS], cpu[3][2][MAX_ROUNDS];
  long n[3];
  if (cmgb_use_device(0) != 0)
    return 1;
  n[0] = calibrate(CMGB_FLOOR);
  n[1] = n[2] = calibrate(CMGB_DIRECT);
  for (int r = 0; r < o.rounds && status == 0; r++)
    for (int k = 0; k < 3; k++) {
      int v = (k + r) % 3;
      enum cmgb_path path = v == 0 ? CMGB_FLOOR : CMGB_DIRECT;
      for (int j = 0; j < 2; j++) {
        int t = (j ^ (r & 1)) + 1;
        s[v][t - 1][r] = throughput(t, path, v == 2, n[v], &cpu[v][t - 1][r]);
      }
      ratio[v][r] = s[v][1][r] / s[v][0][r];
    }
  if (status != 0)
    return 1;
  for (int v = 0; v < 3; v++) {
    cmgb_put_stats(names[v], "t1", s[v][0], o.rounds);
    cmgb_put_stats(names[v], "t2", s[v][1], o.rounds);
    cmgb_put_stats(names[v], "ratio", ratio[v], o.rounds);
    cmgb_put_stats(names[v], "cpu1", cpu[v][0], o.rounds);
    cmgb_put_stats(names[v], "cpu2", cpu[v][1], o.rounds);
  }
  cmgb_put("pairs_per_thread", (double)n[1]);
  return 0;
}

/* ---- scale: cost with many live allocations held ---------------------- */

struct scale {
  uint64_t *held[2];
  long count[2];
};

static uint64_t
next_random(uint64_t *x)
{
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* Nanoseconds per free of a random held allocation and a new one in its
 * place, which touches the ledger at random rather than one hot slot. */
static double
churn(struct scale *s, bool with, long n, uint64_t seed)
{
  uint64_t *held = s->held[with];
  uint64_t t0 = cmgb_now_ns();
  for (long i = 0; i < n && status == 0; i++) {
    uint64_t j = next_random(&seed) % (uint64_t)s->count[with];
    if (cmgb_free(CMGB_DIRECT, with, held[j]) != 0 ||
        cmgb_alloc(CMGB_DIRECT, with, &held[j], o.held_bytes) != 0)
      status = 1;
  }
  return (double)(cmgb_now_ns() - t0) / (double)n;
}

static void
scale_body(void *arg)
{
  struct scale *s = arg;
  double pair[2][MAX_ROUNDS], ch[2][MAX_ROUNDS];
  long n = calibrate(CMGB_DIRECT);
  for (int l = 0; l < o.nlive && status == 0; l++) {
    for (int with = 0; with < 2; with++)
      for (; s->count[with] < o.live[l] && status == 0; s->count[with]++)
        if (cmgb_alloc(CMGB_DIRECT, with, &s->held[with][s->count[with]],
                       o.held_bytes) != 0)
          status = 1;
    block(CMGB_DIRECT, false, n / 4 + 1);
    block(CMGB_DIRECT, true, n / 4 + 1);
    for (int r = 0; r < o.rounds && status == 0; r++)
      for (int k = 0; k < 2; k++) {
        bool with = k ^ (r & 1);
        pair[with][r] = block(CMGB_DIRECT, with, n);
        ch[with][r] = churn(s, with, n, 0x9e3779b97f4a7c15ull + (uint64_t)r);
      }
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "%ld.pair", o.live[l]);
    cmgb_put_pair(prefix, pair[0], pair[1], o.rounds);
    snprintf(prefix, sizeof(prefix), "%ld.churn", o.live[l]);
    cmgb_put_pair(prefix, ch[0], ch[1], o.rounds);
  }
}

static int
mode_scale(void)
{
  static struct scale s;
  long most = o.live[o.nlive - 1];
  for (int with = 0; with < 2; with++)
    if ((s.held[with] = calloc((size_t)most, sizeof(uint64_t))) == NULL)
      return 1;
  if (cmgb_use_device(0) != 0)
    return 1;
  cmgb_at_depth(CMGB_CALL_DEPTH, scale_body, &s);
  return status;
}

/* ---- mem: resident memory per live allocation and per stack ----------- */

struct fill {
  uint64_t *held;
  long i;
  bool with;
};

static void
alloc_one(void *arg)
{
  struct fill *f = arg;
  if (cmgb_alloc(CMGB_DIRECT, f->with, &f->held[f->i], o.held_bytes) != 0)
    status = 1;
}

static void
mem_body(void *arg)
{
  struct fill *f = arg;
  long n = o.live[0];
  /* One allocation and free first, so that what the first call sets up
   * (a context, a shard's first table, a thread's unwind cache) is not
   * counted as the price of the first allocation. */
  uint64_t p;
  cmgb_alloc(CMGB_DIRECT, f->with, &p, o.held_bytes);
  cmgb_free(CMGB_DIRECT, f->with, p);
  long long rss0 = cmgb_rss_anon(), m0 = cmgb_malloc_bytes();
  for (f->i = 0; f->i < n && status == 0; f->i++)
    cmgb_at_tree(o.distinct ? (unsigned)f->i : 0, alloc_one, f);
  long long rss1 = cmgb_rss_anon(), m1 = cmgb_malloc_bytes();
  cmgb_put("rss_delta", (double)(rss1 - rss0));
  cmgb_put("malloc_delta", (double)(m1 - m0));
}

static int
mode_mem(void)
{
  struct fill f = { .with = o.with };
  long n = o.live[0];
  if (o.distinct && n > (1l << CMGB_TREE_LEVELS)) {
    fprintf(stderr, "cmgbench: at most %ld distinct stacks\n",
            1l << CMGB_TREE_LEVELS);
    return 1;
  }
  /* Touched now, so the array is not part of the difference. */
  if ((f.held = malloc((size_t)n * sizeof(uint64_t))) == NULL)
    return 1;
  memset(f.held, 0xff, (size_t)n * sizeof(uint64_t));
  if (cmgb_use_device(0) != 0)
    return 1;
  cmgb_at_depth(CMGB_CALL_DEPTH - CMGB_TREE_LEVELS - 2, mem_body, &f);
  return status;
}

/* ---- report: cmg_dump with many live allocations ---------------------- */

static void
report_body(void *arg)
{
  struct fill *f = arg;
  long n = o.live[0];
  uint64_t t0 = cmgb_now_ns();
  for (f->i = 0; f->i < n && status == 0; f->i++)
    cmgb_at_tree((unsigned)(f->i % o.stacks), alloc_one, f);
  cmgb_put("fill_ns_per_alloc", (double)(cmgb_now_ns() - t0) / (double)n);
}

static int
mode_report(void)
{
  double s[MAX_ROUNDS];
  struct fill f = { .with = true };
  long n = o.live[0];
  if (o.out == NULL || o.stacks < 1 || o.stacks > (1l << CMGB_TREE_LEVELS))
    return 1;
  if ((f.held = malloc((size_t)n * sizeof(uint64_t))) == NULL ||
      cmgb_use_device(0) != 0)
    return 1;
  cmgb_at_depth(CMGB_CALL_DEPTH - CMGB_TREE_LEVELS - 2, report_body, &f);
  if (status != 0)
    return 1;
  /* The interposer names each report on stderr; not here. */
  int saved = dup(2), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  for (int r = 0; r < o.rounds; r++) {
    if (null >= 0)
      dup2(null, 2);
    uint64_t t0 = cmgb_now_ns();
    int err = cmgb_dump(o.out);
    s[r] = (double)(cmgb_now_ns() - t0) / 1e9;
    if (saved >= 0)
      dup2(saved, 2);
    if (err != 0) {
      fprintf(stderr, "cmgbench: cmg_dump(%s): %s\n", o.out, strerror(-err));
      return 1;
    }
  }
  struct stat st;
  if (stat(o.out, &st) != 0)
    return 1;
  cmgb_put_stats("write", "s", s, o.rounds);
  cmgb_put("bytes", (double)st.st_size);
  return 0;
}

/* ---- loop: one path only, for perf and callgrind ----------------------- */

struct loop {
  enum cmgb_path path;
  long n;
};

static void
loop_body(void *arg)
{
  struct loop *l = arg;
  if (cmgb_pairs(l->path, o.with, l->n, o.bytes) != 0)
    status = 1;
}

/* `cmgbench --child loop --path with --via runtime --live N` runs N pairs,
 * nothing else, so that a profile shows only them. */
static int
mode_loop(void)
{
  struct loop l = { .path = CMGB_NPATHS, .n = o.live[0] };
  for (int p = 0; p < CMGB_NPATHS; p++)
    if (o.via != NULL && strcmp(o.via, cmgb_path_names[p]) == 0)
      l.path = p;
  if (l.path == CMGB_NPATHS || cmgb_use_device(0) != 0)
    return 1;
  (o.nofp ? cmgb_at_depth_nofp : cmgb_at_depth)(CMGB_CALL_DEPTH, loop_body, &l);
  return status;
}

/* ---- hold: pairs over live memory, for as long as a snapshot period ---- */

/* `cmgbench --child hold --live N --seconds S`: N allocations held through
 * the interposer, then interposed alloc+free pairs for S seconds in blocks
 * of --block-ms: the mean ns per pair over the whole run (what a program
 * sees on average, snapshots and all) and the slowest block's (a stall
 * while one is written). */
static void
hold_body(void *arg)
{
  uint64_t *held = arg;
  for (long i = 0; i < o.live[0] && status == 0; i++)
    if (cmgb_alloc(CMGB_DIRECT, true, &held[i], o.held_bytes) != 0)
      status = 1;
  long n = calibrate(CMGB_DIRECT), pairs = 0;
  double worst = 0;
  uint64_t t0 = cmgb_now_ns(), end = t0 + (uint64_t)(o.seconds * 1e9);
  while (status == 0 && cmgb_now_ns() < end) {
    double ns = block(CMGB_DIRECT, true, n);
    worst = ns > worst ? ns : worst;
    pairs += n;
  }
  cmgb_put("pair_ns", (double)(cmgb_now_ns() - t0) / (double)pairs);
  cmgb_put("worst_block_ns", worst);
}

static int
mode_hold(void)
{
  uint64_t *held = calloc((size_t)o.live[0], sizeof(*held));
  if (held == NULL || o.seconds <= 0 || cmgb_use_device(0) != 0)
    return 1;
  cmgb_at_depth(CMGB_CALL_DEPTH, hold_body, held);
  return status;
}

/* ---- options ---------------------------------------------------------- */

static int
parse_live(const char *s)
{
  o.nlive = 0;
  while (*s != '\0' && o.nlive < MAX_LEVELS) {
    char *end;
    o.live[o.nlive++] = (long)strtod(s, &end);
    if (end == s || o.live[o.nlive - 1] < 1)
      return -1;
    s = *end == ',' ? end + 1 : end;
  }
  return o.nlive > 0 ? 0 : -1;
}

static int
parse(int argc, char **argv)
{
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (strcmp(k, "--child") == 0)
      o.mode = v;
    else if (strcmp(k, "--tmp") == 0)
      o.tmp = v;
    else if (strcmp(k, "--out") == 0)
      o.out = v;
    else if (strcmp(k, "--block-ms") == 0)
      o.block_ms = atof(v);
    else if (strcmp(k, "--rounds") == 0)
      o.rounds = atoi(v);
    else if (strcmp(k, "--live") == 0) {
      if (parse_live(v) != 0)
        return -1;
    } else if (strcmp(k, "--stacks") == 0)
      o.stacks = (long)atof(v);
    else if (strcmp(k, "--path") == 0)
      o.with = strcmp(v, "with") == 0;
    else if (strcmp(k, "--stack-mix") == 0)
      o.distinct = strcmp(v, "distinct") == 0;
    else if (strcmp(k, "--via") == 0)
      o.via = v;
    else if (strcmp(k, "--devices") == 0)
      o.each_device = strcmp(v, "each") == 0;
    else if (strcmp(k, "--paths") == 0)
      o.direct_only = strcmp(v, "direct") == 0;
    else if (strcmp(k, "--frames") == 0)
      o.nofp = strcmp(v, "nofp") == 0;
    else if (strcmp(k, "--seconds") == 0)
      o.seconds = atof(v);
    else
      return -1;
  }
  if (o.rounds < 1 || o.rounds > MAX_ROUNDS || o.block_ms <= 0)
    return -1;
  return 0;
}

int
cmgb_child(int argc, char **argv)
{
  if (argc % 2 != 1 || parse(argc, argv) != 0 || o.mode == NULL ||
      o.tmp == NULL) {
    fprintf(stderr, "cmgbench: bad child arguments\n");
    return 2;
  }
  if (cmgb_paths_init(o.tmp) != 0)
    return 1;
  int rc = 1;
  if (strcmp(o.mode, "calls") == 0)
    rc = mode_calls();
  else if (strcmp(o.mode, "threads") == 0)
    rc = mode_threads();
  else if (strcmp(o.mode, "scale") == 0 && o.nlive > 0)
    rc = mode_scale();
  else if (strcmp(o.mode, "mem") == 0 && o.nlive > 0)
    rc = mode_mem();
  else if (strcmp(o.mode, "report") == 0 && o.nlive > 0)
    rc = mode_report();
  else if (strcmp(o.mode, "loop") == 0 && o.nlive > 0)
    rc = mode_loop();
  else if (strcmp(o.mode, "hold") == 0 && o.nlive > 0)
    rc = mode_hold();
  else if (strcmp(o.mode, "deep") == 0)
    rc = cmgb_deep_child(o.rounds, o.block_ms);
  else if (strcmp(o.mode, "vmm") == 0)
    rc = cmgb_vmm_child(o.rounds, o.block_ms);
  else
    fprintf(stderr, "cmgbench: unknown child mode %s\n", o.mode);
  if (rc == 0)
    cmgb_put("ok", 1);
  return rc;
}
