/*
 * The JSON report written from the runtime's own state, read back with
 * cJSON and held to docs/report-format.md and docs/report-schema.json: the
 * live allocations grouped into leaks (largest first, by seq within), the
 * summary and the totals handed back (graph memory is device memory but
 * never the program's), the devices and the host, the options, the peaks
 * and the first denial's composition, the other events, what teardowns
 * released, and the stack, frame and module tables holding exactly the
 * stacks referred to.  How the process ended, per reason.  A report to a
 * FIFO goes to the FIFO itself.  A report that cannot be written says why
 * and leaves the path as it was, with no temporary file beside it: that is
 * what a reader of the path relies on.
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "core/conf.h"
#include "core/pools.h"
#include "runtime/ledger/history.h"
#include "runtime/ledger/ledger.h"
#include "runtime/ledger/thread_names.h"
#include "runtime/ledger/timeline.h"
#include "runtime/limits/policy.h"
#include "runtime/report/report.h"
#include "runtime/stacks/stack_words.h"
#include "runtime/stacks/stacks.h"
#include "../tap.h"

#define KiB 1024ull
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)

#define OPTIONS                                                                \
  "limit=64M,stack_depth=16,on_exceed=warn,leak_exitcode=3,"                   \
  "max_alloc=1G,host_limit=16M"

static char dir[64], path[128];
static struct cmg__config cfg;
static struct cmg__pools pools;
static struct cmg__process proc;
static uint32_t tid;
static uint32_t stack_a, stack_b;
static uintptr_t ip_abort, ip_qsort;
static int reports_written;

static const char *
api(unsigned fn)
{
  static const char *const names[] = { NULL, "cudaMalloc", "cuMemAlloc_v2",
                                       "cudaMallocHost", "cudaGraphLaunch" };
  return fn < 5 ? names[fn] : NULL;
}

static cJSON *
at(const cJSON *o, const char *key)
{
  return cJSON_GetObjectItemCaseSensitive(o, key);
}

static double
num(const cJSON *o, const char *key)
{
  const cJSON *v = at(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char *
str(const cJSON *o, const char *key)
{
  const cJSON *v = at(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool
str_is(const cJSON *o, const char *key, const char *want)
{
  const char *v = str(o, key);
  return v != NULL && strcmp(v, want) == 0;
}

static bool
is_null(const cJSON *o, const char *key)
{
  return cJSON_IsNull(at(o, key));
}

static int
len(const cJSON *o, const char *key)
{
  const cJSON *v = at(o, key);
  return cJSON_IsArray(v) || cJSON_IsObject(v) ? cJSON_GetArraySize(v) : -1;
}

static cJSON *
nth(const cJSON *o, const char *key, int i)
{
  return cJSON_GetArrayItem(at(o, key), i);
}

static cJSON *
parse_fd(int fd)
{
  size_t n = 0, cap = 1 << 16;
  char *text = malloc(cap);
  ssize_t got;
  while ((got = read(fd, text + n, cap - n - 1)) > 0)
    if ((n += (size_t)got) == cap - 1)
      text = realloc(text, cap *= 2);
  text[n] = '\0';
  cJSON *doc = cJSON_Parse(text);
  free(text);
  return doc;
}

/* The names in dir, but . and .. */
static int
entries(const char *d)
{
  int n = 0;
  DIR *dd = opendir(d);
  struct dirent *e;
  while ((e = readdir(dd)) != NULL)
    n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(dd);
  return n;
}

/* A report written to path and read back; NULL when it failed. */
static cJSON *
report(enum cmg__reason reason, int status, uint64_t *n, uint64_t *bytes)
{
  uint64_t n_, bytes_;
  proc.reason = reason;
  proc.status = status;
  int err =
      cmg__report_write(path, &proc, n ? n : &n_, bytes ? bytes : &bytes_);
  reports_written++;
  int fd = err == 0 ? open(path, O_RDONLY) : -1;
  cJSON *doc = NULL;
  if (fd >= 0) {
    doc = parse_fd(fd);
    close(fd);
  }
  return doc;
}

/* Recorded and reserved as a wrapper does, so the policy's counter, which
 * devices[].peak_bytes reads, follows the ledger. */
static void
insert(uint64_t addr, uint64_t size, int dev, uint32_t stack, unsigned fn,
       unsigned kind)
{
  uint64_t seq = cmg__ledger_next_seq();
  /* addr, size, seq, time, stack, thread, device, api, kind, ctx, refs */
  struct cmg__alloc stale,
      a = { addr,         size,        seq,           1500000, stack, tid,
            (int16_t)dev, (uint8_t)fn, (uint8_t)kind, 0,       0 };
  cmg__ledger_insert(&a, &stale);
  struct cmg__reservation r;
  uint64_t used;
  if (cmg__kind_counts(kind) && cmg__policy_prepare(dev, size, &r, &used) == 0)
    cmg__policy_commit(dev);
}

static void
event(enum cmg__event_kind kind, int dev, uint32_t stack, unsigned fn)
{
  /* kind, time, requested, live, limit, waited, granted, stack, device,
   * api */
  struct cmg__event e = { kind,         2000000,    64 * MiB, 8 * MiB,
                          64 * MiB,     250000000,  true,     stack,
                          (int16_t)dev, (uint8_t)fn };
  cmg__history_event(&e);
  if (kind == CMG__EVENT_DENIAL)
    cmg__ledger_count_denial(dev);
}

static void
build_state(void)
{
  uintptr_t a[] = { ip_abort, ip_qsort, 0x10 };
  uintptr_t b[] = { ip_abort, cmg__cut_word(false, 25), 0x20 };
  uintptr_t c[] = { 0x30 }; /* interned, never referred to */
  stack_a = cmg__stacks_intern(a, 3, false);
  stack_b = cmg__stacks_intern(b, 3, true);
  cmg__stacks_intern(c, 1, false);

  cmg__history_set_device(0, "Test GPU 0",
                          "GPU-00000000-1111-2222-3333-444444444444");
  cmg__history_set_device(1, "Test GPU 1",
                          "GPU-11111111-1111-2222-3333-444444444444");
  cmg__policy_set_device(0, 64 * MiB, CMG__NO_LIMIT, 80 * GiB);
  cmg__policy_set_device(1, CMG__NO_LIMIT, CMG__NO_LIMIT, 40 * GiB);

  insert(0x7f0000100000, 2 * MiB, 0, stack_a, 1, CMG__KIND_DEVICE);
  insert(0x7f0000400000, 1 * MiB, 0, stack_a, 1, CMG__KIND_DEVICE);
  insert(0x7f0000800000, 4 * MiB, 0, stack_b, 2, CMG__KIND_DEVICE);
  insert(0x7f0000c00000, 2 * MiB, 0, stack_a, 1, CMG__KIND_DEVICE);
  insert(0x6a00000000000001, 1 * MiB, 0, stack_b, 4, CMG__KIND_GRAPH);
  insert(0x7f1000000000, 512 * KiB, 1, stack_a, 1, CMG__KIND_DEVICE);
  insert(0x7f1000100000, 256 * KiB, 1, stack_b, 1, CMG__KIND_DEVICE);
  insert(0x7f1000200000, 7, 1, stack_a, 9, CMG__KIND_IMPORT);
  insert(0x600000, 8 * KiB, CMG__HOST, CMG__STACK_NONE, 3, CMG__KIND_HOST);

  /* One freed after the peak, one released by a context teardown. */
  struct cmg__alloc out;
  cmg__ledger_remove(0x7f0000c00000, CMG__KIND_DEVICE, &out);
  cmg__ledger_count_free(&out);
  cmg__policy_release(0, 2 * MiB);
  cmg__ledger_remove(0x7f1000100000, CMG__KIND_DEVICE, &out);
  cmg__ledger_count_release(&out);
  cmg__policy_release(1, 256 * KiB);
  cmg__history_released(&out);

  cmg__stacks_account(stack_a, 0, 3 * MiB, 2);
  cmg__stacks_account(stack_b, 0, 5 * MiB, 2);
  cmg__stacks_account(stack_a, 1, 512 * KiB, 1);
  cmg__history_peak(0, 8 * MiB);
  cmg__history_peak(1, 512 * KiB);

  event(CMG__EVENT_DENIAL, 0, stack_a, 1);
  event(CMG__EVENT_DENIAL, 0, stack_b, 2);
  event(CMG__EVENT_WARN, 1, CMG__STACK_NONE, 2);
  event(CMG__EVENT_WAIT, 1, stack_a, 1);
  cmg__ledger_count_untracked_free();
  cmg__ledger_count_untracked_free();
}

static void
test_empty(void)
{
  uint64_t n = 99, bytes = 99;
  cJSON *r = report(CMG__REASON_REQUEST, 0, &n, &bytes);
  ok(r != NULL, "empty: a report that parses");
  is_u64(n, 0, "empty: no live allocations handed back");
  is_u64(bytes, 0, "empty: no live bytes handed back");
  is_str(str(r, "format"), "cumemguard-report", "empty: format");
  is_int(num(r, "version"), CMG_REPORT_VERSION, "empty: version");
  is_str(str(at(r, "tool"), "name"), "cumemguard", "empty: tool name");
  is_str(str(at(r, "tool"), "version"), CMG_VERSION_STRING,
         "empty: tool version");
  static const char *const required[] = {
    "format",  "version", "tool",     "process", "options", "devices",
    "summary", "leaks",   "peaks",    "denials", "stacks",  "frames",
    "modules", "host",    "released", "events",  "group",
  };
  int missing = 0;
  for (size_t i = 0; i < sizeof(required) / sizeof(*required); i++)
    missing += at(r, required[i]) == NULL;
  is_int(missing, 0, "empty: every member the schema requires");
  int empty = 0;
  static const char *const lists[] = { "devices", "leaks",  "peaks",
                                       "denials", "events", "released",
                                       "stacks",  "frames", "modules" };
  for (size_t i = 0; i < sizeof(lists) / sizeof(*lists); i++)
    empty += len(r, lists[i]) == 0;
  is_int(empty, 9, "empty: every list empty");
  ok(is_null(r, "group"), "empty: no group");
  ok(at(r, "python") == NULL, "empty: no python member without CPython");
  is_str(str(at(r, "process"), "reason"), "request", "empty: reason");
  ok(is_null(at(r, "process"), "end"), "empty: a request is not the end");
  is_int(entries(dir), 1, "empty: the report alone in its directory");
  cJSON_Delete(r);
}

static void
check_process(const cJSON *p)
{
  is_int(num(p, "pid"), 4242, "process: pid");
  is_int(num(p, "ppid"), 4000, "process: ppid");
  is_str(str(p, "exe"), "/opt/app/train", "process: exe");
  is_str(len(p, "argv") == 3 ? nth(p, "argv", 2)->valuestring : NULL, "a\\xffb",
         "process: argv, as text from the process");
  is_str(str(p, "hostname"), "node17", "process: hostname");
  /* Unix times are written to 15 digits, ten microseconds now. */
  ok(fabs(num(p, "start_time") - cmg__start_unix()) < 1e-4,
     "process: start_time");
  ok(num(p, "end_time") - num(p, "start_time") > -1e-4 &&
         num(p, "end_time") - num(p, "start_time") < 60,
     "process: end_time after it");
  is_str(str(at(p, "end"), "by"), "exit", "process: ended by exit");
  is_int(num(at(p, "end"), "status"), 3, "process: with its status");
}

static void
check_options(const cJSON *o)
{
  is_str(str(o, "string"), OPTIONS, "options: the string as given");
  is_u64(num(at(o, "limit"), "bytes"), 64 * MiB, "options: limit");
  ok(len(o, "limits") == 0 && len(o, "gpu_limits") == 0,
     "options: no per-device or per-GPU limits");
  is_str(str(o, "report"), "cumemguard.%p.json", "options: report pattern");
  ok(num(o, "stack_depth") == 16 && str_is(o, "stack_mode", "auto"),
     "options: stack_depth and stack_mode");
  is_str(str(o, "on_exceed"), "warn", "options: on_exceed");
  is_int(num(o, "leak_exitcode"), 3, "options: leak_exitcode");
  is_u64(num(o, "max_alloc"), 1 * GiB, "options: max_alloc");
  is_u64(num(o, "host_limit"), 16 * MiB, "options: host_limit");
  ok(is_null(o, "dump_signal") && is_null(o, "soft_limit"),
     "options: no dump signal, no soft limit");
  ok(cJSON_IsFalse(at(o, "failed_closed")) && cJSON_IsTrue(at(o, "timeline")),
     "options: not failed closed, timeline on");
  const cJSON *s0 = nth(o, "pool_switches", 0),
              *s1 = nth(o, "pool_switches", 1);
  is_int(len(o, "pool_switches"), CMG__POOLS_N, "options: every pool switch");
  is_str(str(s0, "name"), cmg__pools_switches[0].name, "options: its name");
  ok(str_is(s0, "value", "1") && str_is(s0, "set_by", "user"),
     "options: the user's value, set by the user");
  is_str(str(s1, "set_by"), "cumemguard", "options: or by cumemguard");
  ok(is_null(nth(o, "pool_switches", 2), "value") &&
         is_null(nth(o, "pool_switches", 2), "set_by"),
     "options: an unset switch is null");
}

static void
check_devices(const cJSON *r)
{
  const cJSON *d0 = nth(r, "devices", 0), *d1 = nth(r, "devices", 1);
  is_int(len(r, "devices"), 2, "devices: the two used");
  ok(num(d0, "ordinal") == 0 && str_is(d0, "name", "Test GPU 0"),
     "devices: ordinal and name");
  is_str(str(d0, "uuid"), "GPU-00000000-1111-2222-3333-444444444444",
         "devices: uuid");
  is_u64(num(d0, "physical_bytes"), 80 * GiB, "devices: physical_bytes");
  is_u64(num(d0, "limit_bytes"), 64 * MiB, "devices: limit_bytes");
  is_u64(num(d0, "live_bytes"), 8 * MiB, "devices: live_bytes");
  is_u64(num(d0, "peak_bytes"), 10 * MiB, "devices: peak_bytes");
  ok(num(d0, "allocations") == 5 && num(d0, "frees") == 1,
     "devices: allocations and frees");
  is_int(num(d0, "denied"), 2, "devices: denied");
  ok(is_null(d0, "graph_memory") && is_null(d0, "footprint"),
     "devices: no graph pool, no context seen");
  ok(is_null(d1, "limit_bytes"), "devices: no limit is null");
  is_u64(num(d1, "live_bytes"), 512 * KiB, "devices: imports never count");
  ok(num(d1, "released") == 1 && num(d1, "frees") == 0,
     "devices: released by a teardown, which is no free");

  const cJSON *h = at(r, "host");
  is_u64(num(h, "limit_bytes"), 16 * MiB, "host: limit_bytes");
  is_u64(num(h, "live_bytes"), 8 * KiB, "host: live_bytes");
  is_int(num(h, "allocations"), 1, "host: allocations");
}

static void
check_leaks(const cJSON *r)
{
  const cJSON *l = at(r, "leaks");
  is_int(len(r, "leaks"), 6, "leaks: one per (stack, api, device, kind)");
  const cJSON *b = cJSON_GetArrayItem(l, 0), *a = cJSON_GetArrayItem(l, 1);
  is_int(num(b, "stack"), stack_b, "leaks: the largest first, by its stack");
  is_str(str(b, "api"), "cuMemAlloc_v2", "leaks: its api");
  is_u64(num(b, "bytes"), 4 * MiB, "leaks: its bytes");
  is_int(num(a, "stack"), stack_a, "leaks: the next, by another stack");
  is_int(num(a, "count"), 2, "leaks: two allocations of one site grouped");
  is_u64(num(a, "bytes"), 3 * MiB, "leaks: their bytes summed");
  ok(str_is(a, "kind", "device") && num(a, "device") == 0,
     "leaks: kind and device");
  const cJSON *a0 = nth(a, "allocations", 0), *a1 = nth(a, "allocations", 1);
  is_str(str(a0, "address"), "0x7f0000100000", "leaks: address in hex");
  is_u64(num(a0, "bytes"), 2 * MiB, "leaks: an allocation's bytes");
  is_int(num(a0, "thread"), tid, "leaks: its thread");
  ok(num(a0, "seq") >= 1 && num(a0, "seq") < num(a1, "seq"),
     "leaks: allocations by seq");
  ok(num(a0, "time") == 0.0015, "leaks: time in seconds");
  ok(len(a, "threads") == 1 && num(nth(a, "threads", 0), "tid") == tid,
     "leaks: one thread, by tid");
  is_str(str(nth(a, "threads", 0), "name"), "reporter", "leaks: its name");
  const cJSON *g = cJSON_GetArrayItem(l, 2), *h = cJSON_GetArrayItem(l, 4);
  is_str(str(g, "kind"), "graph", "leaks: graph memory listed");
  is_str(str(g, "api"), "cudaGraphLaunch", "leaks: with its launch");
  is_int(num(cJSON_GetArrayItem(l, 3), "device"), 1,
         "leaks: another device is another leak");
  is_str(str(h, "kind"), "host", "leaks: host memory");
  ok(is_null(h, "device") && is_null(h, "stack"),
     "leaks: host memory on no device, without a stack");
  is_str(str(cJSON_GetArrayItem(l, 5), "api"), "unknown",
         "leaks: an unnamed api");

  const cJSON *s = at(r, "summary");
  is_int(num(s, "live_allocations"), 5, "summary: device allocations");
  is_u64(num(s, "live_bytes"), 8 * MiB + 512 * KiB, "summary: device bytes");
  is_u64(num(s, "host_live_bytes"), 8 * KiB, "summary: host bytes");
  is_int(num(s, "untracked_frees"), 2, "summary: untracked frees");
  is_int(num(s, "denials"), 2, "summary: denials");
  ok(num(at(s, "events"), "warn") == 1 && num(at(s, "events"), "wait") == 1 &&
         num(at(s, "events"), "soft_limit") == 0,
     "summary: the other events");
}

static void
check_history(const cJSON *r)
{
  const cJSON *p = nth(r, "peaks", 0);
  is_int(len(r, "peaks"), 2, "peaks: one per device");
  is_u64(num(p, "bytes"), 8 * MiB, "peaks: bytes");
  is_int(len(p, "by_stack"), 2, "peaks: the stacks live then");
  is_int(num(nth(p, "by_stack", 0), "stack"), stack_b, "peaks: largest first");
  is_u64(num(nth(p, "by_stack", 0), "bytes"), 5 * MiB, "peaks: its bytes");
  is_int(num(nth(p, "by_stack", 1), "count"), 2, "peaks: the other's count");
  is_int(num(nth(r, "peaks", 1), "device"), 1, "peaks: device 1");

  const cJSON *d = nth(r, "denials", 0);
  is_int(len(r, "denials"), 2, "denials: both");
  ok(num(d, "requested_bytes") == 64 * MiB && num(d, "live_bytes") == 8 * MiB &&
         num(d, "limit_bytes") == 64 * MiB,
     "denials: requested, live and limit");
  is_int(num(d, "stack"), stack_a, "denials: stack");
  ok(num(d, "time") == 0.002, "denials: time");
  is_int(len(d, "by_stack"), 2, "denials: the first has what was live");
  ok(at(nth(r, "denials", 1), "by_stack") == NULL,
     "denials: the second on the device has not");

  const cJSON *w = nth(r, "events", 0), *t = nth(r, "events", 1);
  is_int(len(r, "events"), 2, "events: the others");
  ok(str_is(w, "kind", "warn") && is_null(w, "stack"),
     "events: warn, without a stack");
  is_str(str(t, "kind"), "wait", "events: wait");
  ok(num(t, "waited") == 0.25 && cJSON_IsTrue(at(t, "granted")),
     "events: waited and granted");

  const cJSON *rl = nth(r, "released", 0);
  is_int(len(r, "released"), 1, "released: one group");
  ok(num(rl, "bytes") == 256 * KiB && num(rl, "stack") == stack_b &&
         num(rl, "count") == 1,
     "released: its bytes, stack and count");

  const cJSON *dumps = at(at(r, "timeline"), "dumps");
  is_int(num(at(r, "timeline"), "dumps_total"), reports_written,
         "timeline: every report counted");
  is_str(
      str(cJSON_GetArrayItem(dumps, cJSON_GetArraySize(dumps) - 1), "reason"),
      "exit", "timeline: this one last");
}

/* The frame a stack's i-th index points to. */
static const cJSON *
frame_of(const cJSON *r, const cJSON *stack, int i)
{
  const cJSON *idx = nth(stack, "frames", i);
  return cJSON_IsNumber(idx) ? nth(r, "frames", idx->valueint) : NULL;
}

static bool
frame_is(const cJSON *r, const cJSON *stack, int i, uintptr_t ip)
{
  const char *a = str(frame_of(r, stack, i), "address");
  return a != NULL && strncmp(a, "0x", 2) == 0 && strtoull(a, NULL, 16) == ip;
}

static void
check_tables(const cJSON *r)
{
  const cJSON *sa = nth(r, "stacks", 0), *sb = nth(r, "stacks", 1);
  is_int(len(r, "stacks"), 2, "stacks: only those referred to");
  is_int(num(sa, "id"), stack_a, "stacks: by id");
  ok(cJSON_IsFalse(at(sa, "truncated")), "stacks: complete");
  is_int(len(sa, "frames"), 3, "stacks: its frames");
  ok(frame_is(r, sa, 0, ip_abort) && frame_is(r, sa, 1, ip_qsort) &&
         frame_is(r, sa, 2, 0x10),
     "stacks: indexes to its addresses, in order");
  is_int(num(sb, "id"), stack_b, "stacks: the other");
  ok(cJSON_IsTrue(at(sb, "truncated")), "stacks: truncated");
  ok(len(sb, "frames") == 2 && frame_is(r, sb, 0, ip_abort) &&
         frame_is(r, sb, 1, 0x20),
     "stacks: a cut is no frame");
  const cJSON *cut = nth(sb, "cuts", 0);
  ok(num(cut, "at") == 1 && num(cut, "frames") == 25 &&
         str_is(cut, "lang", "native"),
     "stacks: where the cut is");
  is_int(len(r, "frames"), 4, "frames: each distinct address once");

  const cJSON *f0 = nth(r, "frames", 0), *lib = frame_of(r, sa, 0);
  is_str(str(f0, "address"), "0x10", "frames: sorted by address");
  ok(is_null(f0, "module") && is_null(f0, "function"),
     "frames: an unmapped address is unknown");
  const cJSON *m = lib ? nth(r, "modules", (int)num(lib, "module")) : NULL;
  ok(m != NULL && strstr(str(m, "path"), "libc") != NULL,
     "frames: libc's module");
  is_str(lib ? str(lib, "function") : NULL, "abort", "frames: its function");
  is_int(num(lib, "function_offset"), 16,
         "frames: the return address's offset in it");
  ok(m != NULL && strtoull(str(lib, "offset"), NULL, 16) ==
                      ip_abort - strtoull(str(m, "base"), NULL, 16),
     "frames: offset from the module's base");
}

static void
test_state(void)
{
  uint64_t n = 0, bytes = 0;
  build_state();
  cJSON *r = report(CMG__REASON_EXIT, 3, &n, &bytes);
  ok(r != NULL, "state: a report that parses");
  is_u64(n, 4, "state: live allocations handed back, graph memory not");
  is_u64(bytes, 7 * MiB + 512 * KiB, "state: and their bytes");
  check_process(at(r, "process"));
  check_options(at(r, "options"));
  check_devices(r);
  check_leaks(r);
  check_history(r);
  check_tables(r);
  cJSON_Delete(r);
}

static void
test_reasons(void)
{
  cJSON *r = report(CMG__REASON_KILLED, SIGTERM, NULL, NULL);
  const cJSON *end = at(at(r, "process"), "end");
  is_str(str(at(r, "process"), "reason"), "killed", "killed: reason");
  is_str(str(end, "by"), "signal", "killed: by a signal");
  is_int(num(end, "signal"), SIGTERM, "killed: its number");
  is_str(str(end, "name"), "SIGTERM", "killed: its name");
  cJSON_Delete(r);
  r = report(CMG__REASON_EXIT, -1, NULL, NULL);
  ok(is_null(at(at(r, "process"), "end"), "status"),
     "exit: an unknown status is null");
  cJSON_Delete(r);
  r = report(CMG__REASON_SNAPSHOT, 0, NULL, NULL);
  ok(is_null(at(r, "process"), "end"), "snapshot: the process runs on");
  cJSON_Delete(r);

  proc.api_name = NULL;
  r = report(CMG__REASON_REQUEST, 0, NULL, NULL);
  is_str(str(nth(r, "leaks", 0), "api"), "unknown",
         "without api names: unknown");
  cJSON_Delete(r);
  proc.api_name = api;

  cmg__timeline_on = false;
  r = report(CMG__REASON_REQUEST, 0, NULL, NULL);
  ok(r != NULL && at(r, "timeline") == NULL, "timeline=0: no timeline");
  cJSON_Delete(r);
  cmg__timeline_on = true;
}

/* A FIFO is written itself, never renamed over. */
static void
test_fifo(void)
{
  char fifo[160];
  struct stat st;
  uint64_t n, bytes;
  snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
  mkfifo(fifo, 0600);
  int rd = open(fifo, O_RDWR | O_NONBLOCK);
  fcntl(rd, F_SETPIPE_SZ, 1 << 20);
  is_int(cmg__report_write(fifo, &proc, &n, &bytes), 0, "fifo: written");
  cJSON *r = parse_fd(rd);
  is_int(len(r, "leaks"), 6, "fifo: the whole report through it");
  ok(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "fifo: still a FIFO");
  cJSON_Delete(r);
  close(rd);
  unlink(fifo);
  reports_written++;
}

static void
test_failure(void)
{
  char missing[160], text[64] = "";
  uint64_t n = 99, bytes = 99;
  snprintf(missing, sizeof(missing), "%s/missing/r.json", dir);
  is_int(cmg__report_write(missing, &proc, &n, &bytes), -ENOENT,
         "no directory: ENOENT");
  ok(n == 99 && bytes == 99, "no directory: the totals left alone");
  is_int(cmg__report_write(dir, &proc, &n, &bytes), -EISDIR,
         "a directory: EISDIR");

  /* A write cut short by the file size limit: the old report stays. */
  FILE *f = fopen(path, "w");
  fputs("previous\n", f);
  fclose(f);
  struct rlimit old, small;
  getrlimit(RLIMIT_FSIZE, &old);
  small = old;
  small.rlim_cur = 512;
  signal(SIGXFSZ, SIG_IGN);
  setrlimit(RLIMIT_FSIZE, &small);
  int err = cmg__report_write(path, &proc, &n, &bytes);
  setrlimit(RLIMIT_FSIZE, &old);
  is_int(err, -EFBIG, "cut short: EFBIG");
  ok(n == 99 && bytes == 99, "cut short: the totals left alone");
  f = fopen(path, "r");
  ok(f != NULL && fgets(text, sizeof(text), f) != NULL, "cut short: the path");
  if (f)
    fclose(f);
  is_str(text, "previous\n", "cut short: holds the previous report");
  is_int(entries(dir), 1, "cut short: no temporary file left");
}

int
main(void)
{
  char err[256];
  static const char *const argv[] = { "train", "--epochs", "a\377b", NULL };
  cmg__history_start();
  snprintf(dir, sizeof(dir), "/tmp/cmg-report-XXXXXX");
  if (mkdtemp(dir) == NULL ||
      cmg__config_parse(OPTIONS, &cfg, err, sizeof(err)) < 0)
    return 99;
  snprintf(path, sizeof(path), "%s/r.json", dir);
  pools.is_read = true;
  pools.seen[0] = (struct cmg__pools_seen){ .is_set = true, .value = "1" };
  pools.seen[1] = (struct cmg__pools_seen){ .is_set = true,
                                            .by_us = true,
                                            .value = "cuda_malloc_async" };
  proc = (struct cmg__process){ .pid = 4242,
                                .ppid = 4000,
                                .exe = "/opt/app/train",
                                .argv = argv,
                                .hostname = "node17",
                                .options = OPTIONS,
                                .cfg = &cfg,
                                .pools = &pools,
                                .api_name = api };
  cmg__policy_set_device(CMG__HOST, cfg.host_limit, CMG__NO_LIMIT, 0);
  tid = (uint32_t)gettid();
  pthread_setname_np(pthread_self(), "reporter");
  cmg__threads_note(tid);
  /* Return addresses inside libc's exported functions: the symbolizer
   * names them from the dynamic symbols. */
  ip_abort = (uintptr_t)abort + 16;
  ip_qsort = (uintptr_t)qsort + 16;

  test_empty();
  test_state();
  test_reasons();
  test_fifo();
  test_failure();
  unlink(path);
  rmdir(dir);
  return done_testing();
}
