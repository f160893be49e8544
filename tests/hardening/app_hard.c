/*
 * app_hard: races between the program's own threads and the interposer,
 * on the simulated driver (linked with -lcuda, so every call binds to the
 * interposer's exports when it is preloaded).
 *
 *   app_hard forkstorm THREADS FORKS [dump]
 *       THREADS threads allocate and free without pause while the main
 *       thread forks FORKS times; each child allocates, frees, allocates
 *       again and exit()s (so the child's own report is written).  With
 *       `dump` one more thread writes reports with cmg_dump() all along, so
 *       forks land in the middle of a report.  A child that has not ended
 *       after 20 s is killed and counted as hung, and ends the storm.  Prints
 *       "forkstorm forks=N ok=K hung=H failed=F".
 *   app_hard exitrace THREADS MS CODE [dump]
 *       THREADS threads allocate and free without pause (each keeps one
 *       allocation live); after MS milliseconds the main thread calls
 *       exit(CODE) while they are inside the wrappers.
 *
 * Threads allocate through call chains of different depths, so that new
 * stacks are interned while other threads read the table.  APP_HARD_YIELD
 * makes them yield after each pair (for valgrind); APP_HARD_DUMP_DIR is
 * where the dumping thread writes.  The program
 * never frees on exit on purpose: what is live is the report's to say.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static CUcontext ctx;
static _Atomic bool stop;
static _Atomic unsigned long pairs;
static _Atomic int started;
static char dump_path[4096];
static bool yield_often;

static void
die(const char *what, int rc)
{
  fprintf(stderr, "app_hard: %s: %d\n", what, rc);
  exit(70);
}

static void
start(void)
{
  CUdevice dev;
  CUresult rc = cuInit(0);
  if (rc == CUDA_SUCCESS)
    rc = cuDeviceGet(&dev, 0);
  if (rc == CUDA_SUCCESS)
    rc = cuDevicePrimaryCtxRetain(&ctx, dev);
  if (rc == CUDA_SUCCESS)
    rc = cuCtxSetCurrent(ctx);
  if (rc != CUDA_SUCCESS)
    die("cannot start CUDA", rc);
}

/* Allocates at the end of a chain of `depth` calls: a distinct stack per
 * depth.  noinline and the volatile use keep each level a frame. */
__attribute__((noinline)) static CUresult
alloc_at(int depth, CUdeviceptr *p, size_t size)
{
  volatile int keep = depth;
  if (depth > 0) {
    CUresult rc = alloc_at(depth - 1, p, size);
    return rc + (CUresult)(keep - depth);
  }
  return cuMemAlloc(p, size);
}

static void *
churn(void *arg)
{
  unsigned seed = (unsigned)(uintptr_t)arg;
  CUdeviceptr kept = 0;
  cuCtxSetCurrent(ctx);
  /* One allocation stays live while the thread runs. */
  alloc_at(0, &kept, 4096);
  atomic_fetch_add(&started, 1);
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    CUdeviceptr p;
    seed = seed * 1103515245u + 12345u;
    if (alloc_at((int)(seed >> 16) % 12, &p, 512 + (seed >> 20) % 65536) ==
        CUDA_SUCCESS)
      cuMemFree(p);
    atomic_fetch_add_explicit(&pairs, 1, memory_order_relaxed);
    /* Under valgrind, which runs one thread at a time, the main thread
     * would otherwise wait long for its turn. */
    if (yield_often)
      sched_yield();
  }
  return NULL;
}

static void *
dumper(void *arg)
{
  int (*dump)(const char *) =
      (int (*)(const char *))dlsym(RTLD_DEFAULT, "cmg_dump");
  if (dump == NULL)
    return arg;
  while (!atomic_load_explicit(&stop, memory_order_relaxed))
    dump(dump_path);
  return arg;
}

static void
start_threads(int n, bool with_dumper, pthread_t *t)
{
  for (int i = 0; i < n; i++)
    if (pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1)) != 0)
      die("pthread_create", errno);
  if (with_dumper && pthread_create(&t[n], NULL, dumper, NULL) != 0)
    die("pthread_create", errno);
  /* Let every thread get going before the race starts (under a tight
   * limit with on_exceed=wait they may all be parked at once). */
  while (atomic_load(&started) < n)
    sched_yield();
  for (int spin = 0; spin < 1000 && atomic_load(&pairs) < (unsigned long)n;
       spin++)
    usleep(100);
}

static double
now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The child of a fork: it owns the forking thread only, and must be able
 * to use the driver and the interposer at once. */
static void
child(void)
{
  CUdeviceptr p = 0, q = 0;
  cuCtxSetCurrent(ctx);
  if (alloc_at(3, &p, 1 << 20) != CUDA_SUCCESS || cuMemFree(p) != 0 ||
      alloc_at(5, &q, 2 << 20) != CUDA_SUCCESS)
    exit(3);
  exit(0);
}

/* Waits for pid up to `timeout` seconds; kills it after that.  Returns
 * 0 for a clean exit, 1 for any other end, 2 when it hung. */
static int
reap(pid_t pid, double timeout)
{
  double deadline = now() + timeout;
  int status;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
      return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
    if (w < 0 && errno != EINTR)
      return 1;
    if (now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return 2;
    }
    usleep(1000);
  }
}

static int
forkstorm(int threads, int forks, bool with_dumper)
{
  pthread_t t[65];
  int ok = 0, hung = 0, failed = 0;
  start_threads(threads, with_dumper, t);
  for (int i = 0; i < forks; i++) {
    pid_t pid = fork();
    if (pid < 0)
      die("fork", errno);
    if (pid == 0)
      child();
    switch (reap(pid, 20.0)) {
    case 0: ok++; break;
    case 1: failed++; break;
    default: hung++; break;
    }
    /* One hang is the answer; more would only cost time. */
    if (hung > 0) {
      forks = i + 1;
      break;
    }
  }
  atomic_store(&stop, true);
  for (int i = 0; i < threads + (with_dumper ? 1 : 0); i++)
    pthread_join(t[i], NULL);
  printf("forkstorm forks=%d ok=%d hung=%d failed=%d\n", forks, ok, hung,
         failed);
  return 0;
}

static int
exitrace(int threads, int ms, int code, bool with_dumper)
{
  pthread_t t[65];
  start_threads(threads, with_dumper, t);
  struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
  nanosleep(&ts, NULL);
  printf("exitrace threads=%d pairs>=%lu\n", threads, atomic_load(&pairs));
  fflush(stdout);
  exit(code);
}

int
main(int argc, char **argv)
{
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *dir = getenv("APP_HARD_DUMP_DIR");
  yield_often = getenv("APP_HARD_YIELD") != NULL;
  snprintf(dump_path, sizeof(dump_path), "%s/dump.%ld.json",
           dir ? dir : ".", (long)getpid());
  if (argc >= 4 && strcmp(argv[1], "forkstorm") == 0) {
    int threads = atoi(argv[2]);
    if (threads < 1 || threads > 64)
      die("threads", threads);
    start();
    return forkstorm(threads, atoi(argv[3]),
                     argc > 4 && strcmp(argv[4], "dump") == 0);
  }
  if (argc >= 5 && strcmp(argv[1], "exitrace") == 0) {
    int threads = atoi(argv[2]);
    if (threads < 1 || threads > 64)
      die("threads", threads);
    start();
    return exitrace(threads, atoi(argv[3]), atoi(argv[4]),
                    argc > 5 && strcmp(argv[5], "dump") == 0);
  }
  fprintf(stderr, "usage: app_hard forkstorm THREADS FORKS [dump] | "
                  "exitrace THREADS MS CODE [dump]\n");
  return 64;
}
