/*
 * The cap decision, one table run against both caps: the process's limit
 * and a group's cap, each 10 MiB on device 0, which count apart.  Each row fills
 * the cap, asks, and checks the verdict, what it counted, and the line it
 * would say; a wait is woken by another thread's free, or times out.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "core/conf.h"
#include "runtime/limits/cap.h"
#include "runtime/group/group.h"
#include "runtime/group/group_join.h"
#include "runtime/limits/policy.h"
#include "../tap.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define CAP (10 * MiB)

struct row {
  const char *what;
  enum cmg__on_exceed on_exceed;
  uint64_t held, bytes;
  enum cmg__verdict_kind kind;
  int err;
  bool say;
  uint64_t counted; /* what the cap counts after the verdict */
  /* The line, with %s for the cap's own words: "" or "group 'G' has ",
   * then "limit" or "group limit" (a denial), or "the limit" or "the
   * group's cap" then the holder and "limit" or "group limit" (a
   * warning); %d the device. */
  const char *line;
};

static const struct row rows[] = {
  { "fits exactly", CMG__ON_EXCEED_FAIL, 6 * MiB, 4 * MiB, CMG__GRANT, 0, false,
    10 * MiB, "" },
  { "fail: one byte past is refused", CMG__ON_EXCEED_FAIL, 6 * MiB, 4 * MiB + 1,
    CMG__DENY, -ENOMEM, false, 6 * MiB,
    "denied cuMemAlloc_v2 of 4.0 MiB (4194305 bytes) on device %d: %s6.0 MiB "
    "in use, %s 10.0 MiB" },
  { "warn: counted past the cap, said the first time", CMG__ON_EXCEED_WARN,
    6 * MiB, 5 * MiB, CMG__WARN, -ENOMEM, true, 11 * MiB,
    "allowed cuMemAlloc_v2 of 5.0 MiB on device %d over %s: %s6.0 MiB in use, "
    "%s 10.0 MiB (on_exceed=warn; later ones are only in the report)" },
  { "warn: and only then", CMG__ON_EXCEED_WARN, 8 * MiB, 5 * MiB, CMG__WARN,
    -ENOMEM, false, 13 * MiB,
    "allowed cuMemAlloc_v2 of 5.0 MiB on device %d over %s: %s8.0 MiB in use, "
    "%s 10.0 MiB (on_exceed=warn; later ones are only in the report)" },
  { "wait: told to wait", CMG__ON_EXCEED_WAIT, 6 * MiB, 5 * MiB, CMG__WAIT,
    -ENOMEM, false, 6 * MiB, "" },
  { "wait: room within the cap is granted at once", CMG__ON_EXCEED_WAIT,
    2 * MiB, 5 * MiB, CMG__GRANT, 0, false, 7 * MiB, "" },
};

/* The device each cap is tried on: one for both, so that what one cap
 * remembers of a device cannot pass for the other's. */
static int
device_of(enum cmg__cap cap)
{
  (void)cap;
  return 0;
}

static void
expected_line(enum cmg__cap cap, const char *fmt, char *buf, size_t len)
{
  char holder[128];
  bool group = cap == CMG__CAP_GROUP;
  snprintf(holder, sizeof(holder), "group '%s' has ", cmg__group_name());
  if (strncmp(fmt, "allowed", 7) == 0)
    snprintf(buf, len, fmt, device_of(cap),
             group ? "the group's cap" : "the limit", group ? holder : "",
             group ? "group limit" : "limit");
  else
    snprintf(buf, len, fmt, device_of(cap), group ? holder : "",
             group ? "group limit" : "limit");
}

static uint64_t
counted(enum cmg__cap cap)
{
  struct cmg__group_usage u;
  if (cap == CMG__CAP_PROCESS)
    return cmg__policy_used(0);
  return cmg__group_usage(0, &u) == 0 ? u.used : UINT64_MAX;
}

/* Counts `bytes` within the cap, as an allocation before this one did. */
static void
hold(enum cmg__cap cap, uint64_t bytes)
{
  struct cmg__reservation r;
  struct cmg__ask a = { .device = device_of(cap), .bytes = bytes, .r = &r };
  struct cmg__verdict v;
  cmg__cap_decide(cap, &a, &v);
  if (v.kind != CMG__GRANT)
    printf("# could not hold %llu bytes\n", (unsigned long long)bytes);
}

static void
run_row(enum cmg__cap cap, const struct row *w)
{
  const char *name = cap == CMG__CAP_PROCESS ? "process" : "group";
  struct cmg__reservation r = { 0, 0 };
  struct cmg__ask a = { .device = device_of(cap),
                        .bytes = w->bytes,
                        .on_exceed = (uint8_t)w->on_exceed,
                        .r = &r };
  struct cmg__verdict v;
  char want[256], got[1024];

  hold(cap, w->held);
  cmg__cap_decide(cap, &a, &v);
  cmg__cap_line(&v, "cuMemAlloc_v2", a.device, a.bytes, got, sizeof(got));
  expected_line(cap, w->line, want, sizeof(want));
  ok(v.kind == w->kind && v.err == w->err && v.say == w->say && v.cap == cap,
     "%s cap, %s: verdict %d, err %d, say %d", name, w->what, v.kind, v.err,
     v.say);
  is_u64(counted(cap), w->counted, "%s cap, %s: counts what it should", name,
         w->what);
  is_str(got, want, "%s cap, %s: its line", name, w->what);
  cmg__cap_release(cap, a.device, counted(cap));
}

struct freer {
  enum cmg__cap cap;
  uint64_t bytes;
};

static void *
free_later(void *arg)
{
  const struct freer *f = arg;
  nanosleep(&(struct timespec){ 0, 50 * 1000000 }, NULL);
  cmg__cap_release(f->cap, device_of(f->cap), f->bytes);
  return NULL;
}

/* A wait that another thread's free ends, then one that nothing ends. */
static void
waits(enum cmg__cap cap)
{
  const char *name = cap == CMG__CAP_PROCESS ? "process" : "group";
  struct cmg__reservation r;
  struct cmg__ask a = { .device = device_of(cap),
                        .bytes = 5 * MiB,
                        .on_exceed = CMG__ON_EXCEED_WAIT,
                        .r = &r };
  struct cmg__verdict v;
  struct freer f = { cap, 6 * MiB };
  char want[256], got[1024];
  pthread_t t;

  hold(cap, 6 * MiB);
  cmg__cap_decide(cap, &a, &v);
  pthread_create(&t, NULL, free_later, &f);
  cmg__cap_wait(cap, &a, 5000000000ull, &v);
  pthread_join(t, NULL);
  ok(v.kind == CMG__GRANT && v.waited,
     "%s cap: a wait ends with another thread's free", name);
  is_u64(counted(cap), 5 * MiB, "%s cap: and the waiter holds its bytes", name);

  hold(cap, 3 * MiB);
  cmg__cap_decide(cap, &a, &v);
  cmg__cap_wait(cap, &a, 20 * 1000000, &v);
  cmg__cap_line(&v, "cuMemAlloc_v2", a.device, a.bytes, got, sizeof(got));
  expected_line(cap,
                "denied cuMemAlloc_v2 of 5.0 MiB (5242880 bytes) on device "
                "%d: %s8.0 MiB in use, %s 10.0 MiB (waited wait_timeout for "
                "frees)",
                want, sizeof(want));
  ok(v.kind == CMG__DENY && v.err == -ETIMEDOUT && v.waited,
     "%s cap: a wait that nothing ends is refused", name);
  is_str(got, want, "%s cap: its line says it waited", name);
  cmg__cap_release(cap, a.device, counted(cap));
}

/* What only one cap can refuse for. */
static void
reasons(void)
{
  struct cmg__reservation r;
  struct cmg__ask a = { .device = CMG__HOST,
                        .bytes = 2 * GiB,
                        .on_exceed = CMG__ON_EXCEED_WARN,
                        .r = &r };
  struct cmg__verdict v;
  char got[1024];

  cmg__cap_decide(CMG__CAP_PROCESS, &a, &v);
  cmg__cap_line(&v, "cuMemHostAlloc", a.device, a.bytes, got, sizeof(got));
  ok(v.kind == CMG__DENY && v.err == -ENOMEM,
     "host memory: past its limit, refused whatever on_exceed says");
  is_str(got,
         "denied cuMemHostAlloc of 2.0 GiB (2147483648 bytes) on host memory: "
         "0 B in use, limit 1.0 GiB",
         "host memory: its line");

  a = (struct cmg__ask){ .device = 0, .bytes = 3 * MiB, .r = &r };
  cmg__policy_set_max_alloc(2 * MiB);
  cmg__cap_decide(CMG__CAP_PROCESS, &a, &v);
  cmg__cap_line(&v, "cuMemAlloc_v2", 0, a.bytes, got, sizeof(got));
  cmg__policy_set_max_alloc(CMG__NO_LIMIT);
  is_str(got,
         "denied cuMemAlloc_v2 of 3.0 MiB (3145728 bytes) on device 0: larger "
         "than max_alloc=2.0 MiB",
         "max_alloc: the process's limit refuses, and says why");

  v = (struct cmg__verdict){ .kind = CMG__DENY,
                             .cap = CMG__CAP_GROUP,
                             .err = -EPERM };
  cmg__cap_line(&v, "cuMemAlloc_v2", 0, MiB, got, sizeof(got));
  ok(strstr(got, "on device 0: group '") != NULL &&
         strstr(got, "' failed closed, as its line said") != NULL,
     "a broken group: %s", got);
  v.err = -EAGAIN;
  cmg__cap_line(&v, "cuMemAlloc_v2", 0, MiB, got, sizeof(got));
  ok(strstr(got, "' is not joined yet: ") != NULL &&
         strstr(got, "; the next allocation tries again") != NULL,
     "a group not joined yet: %s", got);
  v.err = -EBUSY;
  cmg__cap_line(&v, "cuMemAlloc_v2", 0, MiB, got, sizeof(got));
  ok(strstr(got, "' cannot count on this device yet: ") != NULL &&
         strstr(got, " in use") == NULL,
     "a GPU the group cannot count on yet: %s", got);

  cmg__policy_fail_closed("limit=x: not a size");
  a = (struct cmg__ask){ .device = 0, .bytes = MiB, .r = &r };
  cmg__cap_decide(CMG__CAP_PROCESS, &a, &v);
  cmg__cap_line(&v, "cuMemAlloc_v2", 0, a.bytes, got, sizeof(got));
  is_str(got,
         "denied cuMemAlloc_v2 of 1.0 MiB on device 0: limit=x: not a size; "
         "no device allocation will succeed",
         "failed closed: the first denial says why");
  cmg__cap_line(&v, "cuMemAlloc_v2", 0, a.bytes, got, sizeof(got));
  is_str(got,
         "denied cuMemAlloc_v2 of 1.0 MiB on device 0: no device allocation "
         "succeeds (failed closed, as the first denial said)",
         "and later ones point to it");
}

int
main(void)
{
  struct cmg__config cfg;
  char opts[128], err[256];

  snprintf(opts, sizeof(opts), "group=tcap%d,group_limit.0=10M", (int)getpid());
  if (cmg__config_parse(opts, &cfg, err, sizeof(err)) != 0 ||
      cmg__group_join(&cfg, err, sizeof(err)) != 0) {
    printf("Bail out! cannot join a group: %s\n", err);
    return 1;
  }
  cmg__policy_set_device(0, CAP, CMG__NO_LIMIT, 16 * GiB);
  cmg__policy_set_device(CMG__HOST, GiB, CMG__NO_LIMIT, 64 * GiB);
  ok(!cmg__cap_group_applies(CMG__HOST) && cmg__cap_group_applies(0),
     "the group counts on devices, not host memory");
  for (enum cmg__cap cap = CMG__CAP_PROCESS; cap <= CMG__CAP_GROUP; cap++) {
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
      run_row(cap, &rows[i]);
    waits(cap);
  }
  reasons();
  cmg__group_leave();
  return done_testing();
}
