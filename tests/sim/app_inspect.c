/*
 * The script operations that ask what the simulated driver and the
 * interposer hold: stats (the driver's own accounting, cmgsim_stats), cmg
 * (the interposer's, cmg_device_stats), whatis (cmg_allocation_info of an
 * allocation), getproc (what a cuGetProcAddress lookup returns, named by
 * its symbol and its file) and dump (a report now, cmg_dump).  The
 * driver's and the interposer's functions are looked up with dlsym,
 * because neither is linked in.  See README.md for each output line.
 */
/* For dladdr, to name what a cuGetProcAddress lookup returned. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include "app_int.h"

#include <cumemguard.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void
do_stats(int dev)
{
  int (*stats)(int, unsigned long long *, unsigned long long *,
               unsigned long long *, unsigned long long *) =
      (int (*)(int, unsigned long long *, unsigned long long *,
               unsigned long long *, unsigned long long *))
          app_find_symbol("cmgsim_stats");
  if (stats == NULL) {
    app_line("stats absent");
    return;
  }
  unsigned long long used, peak, allocs, frees;
  int rc = stats(dev, &used, &peak, &allocs, &frees);
  if (rc != 0)
    app_line("stats dev=%d rc=%d", dev, rc);
  else
    app_line("stats dev=%d used=%llu peak=%llu allocs=%llu frees=%llu", dev,
         used, peak, allocs, frees);
}

static void
do_cmg(int dev)
{
  __typeof__(cmg_device_stats) *fn =
      (__typeof__(cmg_device_stats) *)dlsym(RTLD_DEFAULT,
                                            "cmg_device_stats");
  if (fn == NULL) {
    app_line("cmg absent");
    return;
  }
  struct cmg_device_stats s;
  memset(&s, 0, sizeof(s));
  int rc = fn(dev, &s, sizeof(s));
  if (rc != 0) {
    app_line("cmg dev=%d rc=%d", dev, rc);
    return;
  }
  char limit[32];
  if (s.limit_bytes == UINT64_MAX)
    snprintf(limit, sizeof(limit), "none");
  else
    snprintf(limit, sizeof(limit), "%llu", (unsigned long long)s.limit_bytes);
  app_line("cmg dev=%d limit=%s physical=%llu live=%llu peak=%llu "
       "live_allocs=%llu allocs=%llu frees=%llu denials=%llu", dev, limit,
       (unsigned long long)s.physical_bytes,
       (unsigned long long)s.live_bytes, (unsigned long long)s.peak_bytes,
       (unsigned long long)s.live_allocations,
       (unsigned long long)s.allocations, (unsigned long long)s.frees,
       (unsigned long long)s.denials);
}

static void
do_whatis(int i)
{
  __typeof__(cmg_allocation_info) *fn =
      (__typeof__(cmg_allocation_info) *)dlsym(RTLD_DEFAULT,
                                               "cmg_allocation_info");
  if (fn == NULL) {
    app_line("whatis absent");
    return;
  }
  struct cmg_allocation_info info;
  memset(&info, 0, sizeof(info));
  int rc = fn(app_ptrs[i], &info, sizeof(info));
  if (rc != 0) {
    app_line("whatis i=%d rc=%d", i, rc);
    return;
  }
  info.api[sizeof(info.api) - 1] = '\0';
  app_line("whatis i=%d api=%s bytes=%llu device=%d", i, info.api,
       (unsigned long long)info.bytes, (int)info.device);
}

void
app_name_pointer(void *fn, char *name, size_t len, const char **lib)
{
  Dl_info di;
  snprintf(name, len, "null");
  *lib = "-";
  if (fn == NULL)
    return;
  /* A static function (a trampoline) has no dynamic symbol: dladdr
   * then names whatever export precedes it, so say "?" instead. */
  if (dladdr(fn, &di) != 0 && di.dli_sname != NULL && di.dli_saddr == fn)
    snprintf(name, len, "%s", di.dli_sname);
  else
    snprintf(name, len, "?");
  if (dladdr(fn, &di) != 0 && di.dli_fname != NULL) {
    const char *slash = strrchr(di.dli_fname, '/');
    *lib = slash ? slash + 1 : di.dli_fname;
  }
}

static void
do_getproc(const struct op *op)
{
  void *fn = NULL;
  int status = -1;
  int rc = app_be->getproc(op->word, (int)op->arg[1], op->arg[2], &fn, &status);
  char name[128];
  const char *lib;
  app_name_pointer(fn, name, sizeof(name), &lib);
  app_line("getproc name=%s version=%llu flags=%llu rc=%d status=%d fn=%s "
       "lib=%s addr=0x%llx", op->word, (unsigned long long)op->arg[1],
       (unsigned long long)op->arg[2], rc, status, name, lib,
       (unsigned long long)(uintptr_t)fn);
}

/* The prototype include/cumemguard.h gives cmg_dump, declared here so that
 * this file still builds against a header that does not have it yet. */
typedef int cmg_dump_fn(const char *path);

static void
do_dump(const char *word)
{
  cmg_dump_fn *fn = (cmg_dump_fn *)dlsym(RTLD_DEFAULT, "cmg_dump");
  if (fn == NULL) {
    app_line("dump absent");
    return;
  }
  app_line("dump rc=%d", fn(strcmp(word, "-") == 0 ? NULL : word));
}

/* Runs stats, cmg, whatis, getproc or dump. */
void
app_run_inspect(const struct op *op)
{
  int arg = (int)op->arg[0];
  switch (op->spec->kind) {
  case OP_STATS: do_stats(arg); break;
  case OP_CMG: do_cmg(arg); break;
  case OP_WHATIS: do_whatis(arg); break;
  case OP_GETPROC: do_getproc(op); break;
  default: do_dump(op->word); break;
  }
}
