/*
 * The report's "options" member, written alone and read back with cJSON
 * against docs/report-format.md: every option as the process applied it,
 * so that a reader can tell what ran without the option string.  Checked:
 * the defaults (an unset limit or size is null, never 0; empty objects for
 * no per-device or per-GPU limit; the string null when none was given); a
 * limit in bytes or as a percentage with its fraction kept; limits keyed
 * by ordinal and by GPU UUID in lower case whatever case the option gave,
 * in the order the options named them; every enum by its name; durations
 * in seconds; text from the user (the string, the pattern, a switch's
 * value) made UTF-8 as all report text is; the pool switches, none when
 * they were not read, else each with its value and who set it; and
 * failed_closed once the policy failed closed.  A size written by
 * cmg__report_bytes is null only for no limit.
 */
#include "config.h"

#include "core/base.h"
#include "core/conf.h"
#include "core/pools.h"
#include "runtime/limits/policy.h"
#include "runtime/report/report.h"
#include "runtime/report/report_options.h"
#include "report_member.h"
#include "../tap.h"

#define KiB 1024ull
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)

#define GPU_A "GPU-AAAAAAAA-0000-1111-2222-BBBBBBBBBBBB"
#define GPU_B "GPU-01234567-89ab-cdef-0123-456789abcdef"
#define GPU_A_KEY "GPU-aaaaaaaa-0000-1111-2222-bbbbbbbbbbbb"

/* Every option away from its default, the GPU B first named. */
#define FULL                                                                   \
  "group=train,group_limit." GPU_B "=25%,limit=50%,limit.1=2G,limit.3=12.5%,"  \
  "limit." GPU_A "=1G,soft_limit." GPU_A "=512M,soft_limit=30G,"               \
  "soft_limit.2=1G,max_alloc=256M,host_limit=16M,on_exceed=wait,"              \
  "wait_timeout=2500ms,snapshot=90s,stack_depth=8,stack_mode=dwarf,"           \
  "python_frames=0,signal_report=0,count_context=0,dump_signal=USR2,"          \
  "leak_exitcode=7,no_pools=1,timeline=0,report=/tmp/r\xff.%p.json"

static cJSON *
options(const char *string, const struct cmg__config *cfg,
        const struct cmg__pools *pools)
{
  struct cmg__jsonw w;
  struct cmg__process p = { .options = string, .cfg = cfg, .pools = pools };
  cmg__report_options(member_open(&w), &p);
  return member_parse(&w);
}

static bool
parse(const char *opts, struct cmg__config *cfg)
{
  char err[256];
  if (cmg__config_parse(opts, cfg, err, sizeof(err)) == 0)
    return true;
  printf("# options '%s': %s\n", opts, err);
  return false;
}

static bool
is_bool(const cJSON *o, const char *key, bool want)
{
  const cJSON *v = at(o, key);
  return want ? cJSON_IsTrue(v) : cJSON_IsFalse(v);
}

static void
test_bytes(void)
{
  struct cmg__jsonw w;
  cmg__jsonw_array(member_open(&w));
  cmg__report_bytes(&w, 0);
  cmg__report_bytes(&w, 4096);
  cmg__report_bytes(&w, CMG__NO_LIMIT - 1);
  cmg__report_bytes(&w, CMG__NO_LIMIT);
  cmg__jsonw_array_end(&w);
  cJSON *d = member_parse(&w);
  is_str(member_text, "[0,4096,1.8446744073709552e+19,null]",
         "a size: 0 and one short of no limit are sizes, no limit is null");
  ok(cJSON_IsNumber(nth(d, NULL, 2)) && cJSON_IsNull(nth(d, NULL, 3)),
     "and read back as such");
  member_done(d);
}

static void
test_defaults(void)
{
  static const char *const sizes[] = { "limit",       "soft_limit",
                                       "max_alloc",   "host_limit",
                                       "dump_signal", "leak_exitcode" };
  struct cmg__config cfg;
  if (!parse("", &cfg))
    return;
  cJSON *o = options(NULL, &cfg, NULL);
  ok(o != NULL, "defaults: JSON");
  is_int(len(o, NULL), 23, "defaults: the 23 members");
  ok(is_null(o, "string"), "defaults: no string given is null");
  int nulls = 0;
  for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++)
    nulls += is_null(o, sizes[i]);
  is_int(nulls, 6, "defaults: limits, sizes, signal and exit code null");
  ok(len(o, "limits") == 0 && len(o, "soft_limits") == 0 &&
         len(o, "gpu_limits") == 0,
     "defaults: no per-device or per-GPU limit, empty objects");
  is_str(str(o, "report"), "cumemguard.%p.json", "defaults: report pattern");
  ok(num(o, "stack_depth") == 32 && str_is(o, "stack_mode", "auto"),
     "defaults: stack_depth 32, stack_mode auto");
  ok(is_bool(o, "python_frames", true) && is_bool(o, "signal_report", true) &&
         is_bool(o, "count_context", true) && is_bool(o, "timeline", true),
     "defaults: python_frames, signal_report, count_context, timeline on");
  ok(num(o, "snapshot") == 0 && num(o, "wait_timeout") == 30,
     "defaults: no snapshot, a 30 s wait");
  is_str(str(o, "on_exceed"), "fail", "defaults: on_exceed fail");
  ok(is_bool(o, "no_pools", false) && is_bool(o, "failed_closed", false),
     "defaults: pools left on, not failed closed");
  is_int(len(o, "pool_switches"), 0, "defaults: no switches without pools");
  member_done(o);

  struct cmg__pools unread = { .is_read = false };
  o = options(NULL, &cfg, &unread);
  is_int(len(o, "pool_switches"), 0, "switches not read: none listed");
  member_done(o);
}

static void
check_limits(const cJSON *o)
{
  is_int(num(at(o, "limit"), "percent"), 50, "full: limit=50%% as a percent");
  ok(at(at(o, "limit"), "bytes") == NULL, "full: and no bytes beside it");
  is_int(len(o, "limits"), 2, "full: two per-device limits");
  is_u64(num(at(at(o, "limits"), "1"), "bytes"), 2 * GiB,
         "full: limits.1 in bytes");
  ok(num(at(at(o, "limits"), "3"), "percent") == 12.5,
     "full: limits.3 as 12.5, its fraction kept");
  is_u64(num(at(o, "soft_limit"), "bytes"), 30 * GiB, "full: soft_limit");
  ok(len(o, "soft_limits") == 1 &&
         num(at(at(o, "soft_limits"), "2"), "bytes") == 1 * GiB,
     "full: soft_limits by ordinal");
  is_u64(num(o, "max_alloc"), 256 * MiB, "full: max_alloc");
  is_u64(num(o, "host_limit"), 16 * MiB, "full: host_limit");

  const cJSON *g = at(o, "gpu_limits");
  const cJSON *a = at(g, GPU_A_KEY), *b = at(g, GPU_B);
  is_int(len(g, NULL), 2, "full: two GPUs named");
  ok(g && g->child && strcmp(g->child->string, GPU_B) == 0,
     "full: in the order the options named them");
  ok(a != NULL, "full: a UUID key in lower case, as given in upper case");
  is_u64(num(at(a, "limit"), "bytes"), 1 * GiB, "full: a GPU's limit");
  is_u64(num(at(a, "soft_limit"), "bytes"), 512 * MiB, "full: its soft limit");
  ok(is_null(a, "group_limit"), "full: a group limit it has not is null");
  ok(is_null(b, "limit") && is_null(b, "soft_limit") &&
         num(at(b, "group_limit"), "percent") == 25,
     "full: the other GPU's group limit alone");
}

static void
test_full(void)
{
  struct cmg__config cfg;
  if (!parse(FULL, &cfg)) {
    ok(0, "full: the options parse");
    return;
  }
  cJSON *o = options("limit=50%,\xfe", &cfg, NULL);
  ok(o != NULL, "full: JSON");
  is_str(str(o, "string"), "limit=50%,\\xfe",
         "full: the string as given, made UTF-8");
  check_limits(o);
  is_str(str(o, "report"), "/tmp/r\\xff.%p.json",
         "full: the pattern, made UTF-8");
  ok(num(o, "stack_depth") == 8 && str_is(o, "stack_mode", "dwarf"),
     "full: stack_depth and stack_mode");
  ok(is_bool(o, "python_frames", false) && is_bool(o, "signal_report", false) &&
         is_bool(o, "count_context", false) && is_bool(o, "timeline", false),
     "full: the switches off");
  ok(num(o, "snapshot") == 90 && num(o, "wait_timeout") == 2.5,
     "full: durations in seconds");
  is_str(str(o, "dump_signal"), "USR2", "full: the signal by its name");
  is_int(num(o, "leak_exitcode"), 7, "full: leak_exitcode");
  is_str(str(o, "on_exceed"), "wait", "full: on_exceed");
  ok(is_bool(o, "no_pools", true), "full: no_pools");
  member_done(o);

  parse("on_exceed=warn,stack_mode=fp", &cfg);
  o = options("", &cfg, NULL);
  ok(str_is(o, "on_exceed", "warn") && str_is(o, "stack_mode", "fp"),
     "warn and fp by their names");
  is_str(str(o, "string"), "", "an empty string is a string");
  member_done(o);
}

static void
test_switches(void)
{
  struct cmg__config cfg;
  struct cmg__pools pools = { .is_read = true };
  parse("", &cfg);
  pools.seen[0] = (struct cmg__pools_seen){ .is_set = true, .value = "1" };
  pools.seen[1] = (struct cmg__pools_seen){ .is_set = true,
                                            .by_us = true,
                                            .value = "cuda_malloc_async" };
  pools.seen[3] = (struct cmg__pools_seen){ .is_set = true, .value = "x\xff" };
  cJSON *o = options(NULL, &cfg, &pools);
  const cJSON *s = at(o, "pool_switches");
  is_int(len(s, NULL), CMG__POOLS_N, "switches: every one listed");
  int names = 0;
  for (int i = 0; i < CMG__POOLS_N; i++)
    names += str_is(nth(s, NULL, i), "name", cmg__pools_switches[i].name);
  is_int(names, CMG__POOLS_N, "switches: by name, in the table's order");
  ok(str_is(nth(s, NULL, 0), "value", "1") &&
         str_is(nth(s, NULL, 0), "set_by", "user"),
     "switches: the user's value, set by the user");
  ok(str_is(nth(s, NULL, 1), "value", "cuda_malloc_async") &&
         str_is(nth(s, NULL, 1), "set_by", "cumemguard"),
     "switches: or set by cumemguard");
  ok(is_null(nth(s, NULL, 2), "value") && is_null(nth(s, NULL, 2), "set_by"),
     "switches: an unset one null");
  is_str(str(nth(s, NULL, 3), "value"), "x\\xff",
         "switches: a value made UTF-8");
  member_done(o);

  cmg__policy_fail_closed("limit=x: not a size");
  o = options(NULL, &cfg, NULL);
  ok(is_bool(o, "failed_closed", true), "failed closed: said so");
  member_done(o);
}

int
main(void)
{
  test_bytes();
  test_defaults();
  test_full();
  test_switches();
  return done_testing();
}
