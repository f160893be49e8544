/*
 * The core's shared state under many threads at once, called directly as
 * the wrappers call it: allocator threads reserve against the policy (and
 * sometimes wait for room, as on_exceed=wait does),
 * insert into the ledger, account to interned stacks and record peaks and
 * denials; they free, and sometimes put an entry back as after a failed
 * free; a reader takes statistics, lookups and stack views; a reporter
 * writes whole reports all along.  make check runs it as it is;
 * check-sanitize builds it with ThreadSanitizer (races, lock order) and with
 * AddressSanitizer + UBSan.
 *
 * At the end every account must balance: nothing live in the ledger, the
 * policy or the stacks; allocations, frees and denials counted exactly once;
 * every report written and the last one parseable with nothing live.
 *
 * STRESS_ITERS (operations per allocator thread, default 100000) and
 * STRESS_THREADS (default 8) scale it; STRESS_DIR is where reports go
 * (default: a new directory under TMPDIR, removed at the end);
 * STRESS_CAPTURE=0 leaves out real stack captures (libunwind), for
 * gcc 12's ThreadSanitizer, which crashes in libunwind's thread-exit
 * destructor.
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base.h"
#include "core/conf.h"
#include "runtime/ledger/history.h"
#include "runtime/ledger/ledger.h"
#include "runtime/limits/policy.h"
#include "runtime/report/report.h"
#include "runtime/stacks/stacks.h"
#include "../tap.h"

/* The options the report shows, as the library passes its own. */
static struct cmg__config cfg;

/* The library names its API labels; here every call is the same. */
static const char *
api_name(unsigned fn)
{
  return fn == 0 ? "unknown" : "cuMemAlloc_v2";
}

#define DEVICES 3
#define MAX_THREADS 32
#define HELD 32
/* Devices 0 and 1 fill only when threads hold memory together; device 2's
 * limit is below what one thread alone holds there (up to ~11 of its 32
 * allocations of 0.5 MiB on average), so denials happen under any
 * scheduling, valgrind's one-thread-at-a-time included. */
#define LIMIT (48ull << 20)
#define SMALL_LIMIT (4ull << 20)
#define LIMIT_OF(dev) ((dev) == DEVICES - 1 ? SMALL_LIMIT : LIMIT)

struct worker {
  pthread_t t;
  unsigned id;
  uint64_t allocs[DEVICES], frees[DEVICES], denials[DEVICES];
  int errors;
};

static unsigned iters = 100000, nthreads = 8;
static bool capture = true;
static _Atomic bool stop;
static _Atomic unsigned reports_ok, reports_failed, reads;
static char dir[4096];

static unsigned
next(unsigned *seed)
{
  *seed = *seed * 1103515245u + 12345u;
  return *seed >> 8;
}

/* One of 40 call chains shared by all threads, or one of the thread's own,
 * so that stacks are interned while others look them up. */
static uint32_t
stack_for(unsigned id, unsigned r)
{
  uintptr_t ips[6];
  unsigned pattern = r % 48;
  for (unsigned i = 0; i < 6; i++)
    ips[i] = 0x400000 + pattern * 0x1000 + i * 0x10 +
             (pattern >= 40 ? (uintptr_t)id << 20 : 0);
  return cmg__stacks_intern(ips, 1 + r % 6, false);
}

/* What a wrapper does once the driver freed an allocation it removed. */
static void
release(struct worker *w, const struct cmg__alloc *out)
{
  cmg__ledger_count_free(out);
  cmg__stacks_account(out->stack, out->device, -(int64_t)out->size, -1);
  cmg__policy_release(out->device, out->size);
  w->frees[out->device]++;
}

static void *
allocator(void *arg)
{
  struct worker *w = arg;
  struct cmg__alloc held[HELD];
  unsigned n = 0, seed = w->id * 7919u + 1;
  uint64_t serial = 0;
  for (unsigned it = 0; it < iters; it++) {
    unsigned r = next(&seed);
    bool do_alloc = n == 0 || (n < HELD && r % 10 < 6);
    if (do_alloc) {
      int dev = (int)(r % DEVICES);
      uint64_t size = 256 + (uint64_t)(next(&seed) % (1u << 20));
      uint32_t stack = capture && r % 97 == 0 ? cmg__stacks_capture()
                                              : stack_for(w->id, next(&seed));
      struct cmg__reservation res;
      uint64_t used;
      /* Now and then wait a little for room (on_exceed=wait), woken by the
       * other threads' frees; not on the small device, which is full so
       * often that the waits would be most of the run (under valgrind a
       * timed wait ends late). */
      int err = r % 31 == 0 && dev != DEVICES - 1
                    ? cmg__policy_wait(dev, size, 200000, &res, &used)
                    : cmg__policy_prepare(dev, size, &res, &used);
      if (err < 0) {
        struct cmg__event e = {
          .kind = CMG__EVENT_DENIAL, .time_ns = cmg__now_ns(),
          .requested_bytes = size, .live_bytes = cmg__ledger_live_bytes(dev),
          .limit_bytes = LIMIT_OF(dev), .stack = stack, .device = (int16_t)dev,
          .fn = 1,
        };
        cmg__ledger_count_denial(dev);
        cmg__history_event(&e);
        w->denials[dev]++;
        continue;
      }
      struct cmg__alloc a = {
        .addr = ((uint64_t)(w->id + 1) << 40) | (++serial << 9),
        .size = size, .seq = cmg__ledger_next_seq(),
        .time_ns = cmg__now_ns(), .stack = stack, .thread = w->id,
        .device = (int16_t)dev, .fn = 1, .kind = CMG__KIND_DEVICE,
      };
      struct cmg__alloc stale;
      if (cmg__ledger_insert(&a, &stale) != 0) {
        w->errors++;
        cmg__policy_release(dev, size);
        continue;
      }
      cmg__stacks_account(stack, dev, (int64_t)size, 1);
      cmg__history_peak(dev, cmg__ledger_live_bytes(dev));
      held[n++] = a;
      w->allocs[dev]++;
    } else {
      unsigned k = r % n;
      struct cmg__alloc out;
      if (cmg__ledger_remove(held[k].addr, CMG__KIND_DEVICE, &out) != 0 ||
          out.size != held[k].size) {
        w->errors++;
        continue;
      }
      /* Now and then the real free "fails" and the entry goes back. */
      if (r % 13 == 0) {
        if (cmg__ledger_restore(&out) != 0)
          w->errors++;
        continue;
      }
      release(w, &out);
      held[k] = held[--n];
    }
  }
  /* Free what is left. */
  while (n > 0) {
    struct cmg__alloc out;
    n--;
    if (cmg__ledger_remove(held[n].addr, CMG__KIND_DEVICE, &out) != 0) {
      w->errors++;
      continue;
    }
    release(w, &out);
  }
  return NULL;
}

static void *
reader(void *arg)
{
  while (!atomic_load(&stop)) {
    for (int d = 0; d < DEVICES; d++) {
      struct cmg_device_stats s;
      cmg__ledger_stats(d, &s);
      (void)cmg__policy_used(d);
    }
    uint32_t n = cmg__stacks_count();
    for (uint32_t id = 1; id <= n; id += 7) {
      struct cmg__stack_view v;
      cmg__stacks_get(id, &v);
    }
    struct cmg__alloc out;
    cmg__ledger_lookup(((uint64_t)1 << 40) | (1 << 9), CMG__KIND_DEVICE,
                       &out);
    struct cmg__event ev[8];
    uint64_t totals[4];
    cmg__history_events(ev, 8, totals);
    atomic_fetch_add(&reads, 1);
  }
  return arg;
}

static const char *const argv_[] = { "stress", NULL };

static int
write_report(const char *name)
{
  char path[4200];
  uint64_t n, bytes;
  struct cmg__process proc = {
    .pid = (long)getpid(), .ppid = (long)getppid(), .exe = "stress",
    .argv = argv_, .hostname = "stress", .options = NULL, .cfg = &cfg,
    .api_name = api_name, .reason = CMG__REASON_REQUEST,
  };
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  return cmg__report_write(path, &proc, &n, &bytes);
}

static void *
reporter(void *arg)
{
  unsigned i = 0;
  while (!atomic_load(&stop)) {
    char name[32];
    snprintf(name, sizeof(name), "during.%u.json", i++ % 2);
    if (write_report(name) == 0)
      atomic_fetch_add(&reports_ok, 1);
    else
      atomic_fetch_add(&reports_failed, 1);
  }
  return arg;
}

/* The report at `name` parsed, with nothing live in it: 1; else 0. */
static int
is_empty_report(const char *name)
{
  char path[4200];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return 0;
  static char buf[1 << 22];
  size_t len = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[len] = '\0';
  cJSON *root = cJSON_Parse(buf);
  cJSON *summary = cJSON_GetObjectItemCaseSensitive(root, "summary");
  cJSON *live = cJSON_GetObjectItemCaseSensitive(summary, "live_bytes");
  int ok = cJSON_IsNumber(live) && live->valuedouble == 0;
  cJSON_Delete(root);
  return ok;
}

int
main(void)
{
  const char *s;
  if ((s = getenv("STRESS_ITERS")) != NULL && atoi(s) > 0)
    iters = (unsigned)atoi(s);
  if ((s = getenv("STRESS_THREADS")) != NULL && atoi(s) > 0)
    nthreads = (unsigned)atoi(s) < MAX_THREADS ? (unsigned)atoi(s)
                                               : MAX_THREADS;
  if ((s = getenv("STRESS_CAPTURE")) != NULL && strcmp(s, "0") == 0)
    capture = false;
  bool own_dir = (s = getenv("STRESS_DIR")) == NULL || *s == '\0';
  if (own_dir) {
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/cmgstress.XXXXXX", t && *t ? t : "/tmp");
    if (mkdtemp(dir) == NULL) {
      perror("mkdtemp");
      return 99;
    }
  } else {
    snprintf(dir, sizeof(dir), "%s", s);
  }

  char err[256];
  cmg__config_parse(NULL, &cfg, err, sizeof(err));
  cmg__history_start();
  cmg__history_touch();
  cmg__stacks_configure(16);
  for (int d = 0; d < DEVICES; d++) {
    char name[32];
    snprintf(name, sizeof(name), "stress device %d", d);
    cmg__history_set_device(d, name, "");
    cmg__policy_set_device(d, LIMIT_OF(d), CMG__NO_LIMIT, 4 * LIMIT_OF(d));
  }

  struct worker w[MAX_THREADS];
  pthread_t rd, rp;
  memset(w, 0, sizeof(w));
  pthread_create(&rd, NULL, reader, NULL);
  pthread_create(&rp, NULL, reporter, NULL);
  for (unsigned i = 0; i < nthreads; i++) {
    w[i].id = i + 1;
    pthread_create(&w[i].t, NULL, allocator, &w[i]);
  }
  for (unsigned i = 0; i < nthreads; i++)
    pthread_join(w[i].t, NULL);
  /* At least one report taken while the allocators ran, or after. */
  while (atomic_load(&reports_ok) + atomic_load(&reports_failed) == 0)
    usleep(1000);
  atomic_store(&stop, true);
  pthread_join(rd, NULL);
  pthread_join(rp, NULL);

  uint64_t allocs = 0, frees = 0, denials = 0;
  int errors = 0;
  for (int d = 0; d < DEVICES; d++) {
    uint64_t a = 0, f = 0, dn = 0;
    for (unsigned i = 0; i < nthreads; i++) {
      a += w[i].allocs[d];
      f += w[i].frees[d];
      dn += w[i].denials[d];
    }
    struct cmg_device_stats st;
    cmg__ledger_stats(d, &st);
    is_u64(st.live_bytes, 0, "device %d: nothing live in the ledger", d);
    is_u64(st.live_allocations, 0, "device %d: no live allocation", d);
    is_u64(st.allocations, a, "device %d: %" PRIu64 " allocations counted once", d, a);
    is_u64(st.frees, f, "device %d: frees counted once", d);
    is_u64(st.denials, dn, "device %d: %" PRIu64 " denials counted once", d, dn);
    is_u64(cmg__policy_used(d), 0, "device %d: no bytes reserved", d);
    ok(st.peak_bytes <= LIMIT_OF(d), "device %d: the peak stayed under the limit", d);
    allocs += a;
    frees += f;
    denials += dn;
  }
  for (unsigned i = 0; i < nthreads; i++)
    errors += w[i].errors;
  is_int(errors, 0, "no thread saw an inconsistent ledger");
  ok(denials > 0, "the limit was contended (%" PRIu64 " denials)", denials);
  uint32_t n = cmg__stacks_count(), unbalanced = 0;
  for (uint32_t id = 1; id <= n; id++) {
    struct cmg__stack_view v;
    if (cmg__stacks_get(id, &v) != 0) {
      unbalanced++;
      continue;
    }
    for (int d = 0; d < CMG__STACK_DEVICES; d++)
      if (v.live_bytes[d] != 0 || v.live_count[d] != 0)
        unbalanced++;
  }
  ok(n > 40, "%u stacks interned", n);
  is_int(unbalanced, 0, "every stack's live accounts balance");
  is_int(atomic_load(&reports_failed), 0,
         "%u reports written while the threads ran, none failed",
         atomic_load(&reports_ok));
  is_int(write_report("final.json"), 0, "the final report is written");
  ok(is_empty_report("final.json"), "the final report parses, nothing live");
  ok(atomic_load(&reads) > 0, "the reader ran");

  if (own_dir) {
    char path[4200];
    const char *names[] = { "during.0.json", "during.1.json", "final.json" };
    for (size_t i = 0; i < 3; i++) {
      snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
      unlink(path);
    }
    rmdir(dir);
  }
  return done_testing();
}
