/*
 * Clocks, statistics and memory readings for the benchmark.  CLOCK_MONOTONIC
 * through the vDSO costs some 20 ns, which is why it is read around blocks
 * of many calls and never around one.
 */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmgbench.h"

uint64_t
cmgb_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
by_value(const void *x, const void *y)
{
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

double
cmgb_median(double *v, size_t n)
{
  if (n == 0)
    return 0;
  qsort(v, n, sizeof(*v), by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double
cmgb_min(const double *v, size_t n)
{
  double m = n ? v[0] : 0;
  for (size_t i = 1; i < n; i++)
    if (v[i] < m)
      m = v[i];
  return m;
}

long long
cmgb_rss_anon(void)
{
  FILE *f = fopen("/proc/self/status", "re");
  char line[256];
  long long kb = -1;
  while (f != NULL && fgets(line, sizeof(line), f) != NULL)
    if (sscanf(line, "RssAnon: %lld kB", &kb) == 1)
      break;
  if (f != NULL)
    fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

long long
cmgb_malloc_bytes(void)
{
  struct mallinfo2 mi = mallinfo2();
  return (long long)(mi.uordblks + mi.hblkhd);
}

int
cmgb_time_run(char *const argv[], int runs, double *med, double *min)
{
  double s[64];
  size_t n = 0;
  for (int r = 0; r < runs + 1 && n < 64; r++) {
    uint64_t t0 = cmgb_now_ns();
    pid_t pid = fork();
    if (pid < 0)
      return 127;
    if (pid == 0) {
      freopen("/dev/null", "w", stdout);
      freopen("/dev/null", "w", stderr);
      execv(argv[0], argv);
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    double t = (double)(cmgb_now_ns() - t0) / 1e9;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    if (r > 0) /* the first run warms the page cache */
      s[n++] = t;
  }
  *min = cmgb_min(s, n);
  *med = cmgb_median(s, n);
  return 0;
}

void
cmgb_put(const char *key, double value)
{
  printf("%s %.10g\n", key, value);
  fflush(stdout);
}
