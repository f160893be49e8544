/*
 * The option table: each key of the option string, with the handler that
 * stores its value, its default as a user writes it, and what a good value
 * looks like.  Adding an option means adding a row and a handler, nothing
 * else: the parser (conf.c) walks the rows, the launcher lists them, and
 * the tests hold the manual and the parser's defaults to them.
 *
 * Handlers parse sizes and durations with size.c and check report patterns
 * and signal names with conf_report.c, so that a bad value is refused
 * before the program starts rather than at its exit.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/base.h"
#include "core/conf.h"
#include "core/conf_report.h"
#include "core/conf_table.h"
#include "core/size.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static bool
is_digit(char c)
{
  return c >= '0' && c <= '9';
}

/* The GPU entry a handler's index names, or NULL for a plain or ordinal
 * key. */
static struct cmg__gpu_limits *
gpu_of(struct cmg__config *cfg, int index)
{
  return index >= CMG__MAX_DEVICES ? &cfg->gpu[index - CMG__MAX_DEVICES] : NULL;
}

static int
handle_limit(struct cmg__config *cfg, int index, const char *value, size_t len)
{
  struct cmg__gpu_limits *g = gpu_of(cfg, index);
  struct cmg__limit *slot = g           ? &g->limit
                            : index < 0 ? &cfg->limit
                                        : &cfg->limit_dev[index];
  struct cmg__limit l;
  int rc = cmg__size_parse(value, len, true, &l);
  if (rc != 0)
    return rc;
  *slot = l;
  return 0;
}

/*
 * Parses the decimal integer s[0..len) into *out.  Digits only: a sign, a
 * space or "0x" is -EINVAL; a value above max is -ERANGE.
 */
static int
parse_uint(const char *s, size_t len, unsigned max, unsigned *out)
{
  uint64_t n = 0;

  if (len == 0)
    return -EINVAL;
  for (size_t i = 0; i < len; i++) {
    if (!is_digit(s[i]))
      return -EINVAL;
    /* Stop counting past max but keep reading: "9999x" is still -EINVAL. */
    if (n <= max)
      n = n * 10 + (uint64_t)(s[i] - '0');
  }
  if (n > max)
    return -ERANGE;
  *out = (unsigned)n;
  return 0;
}

static int
handle_report(struct cmg__config *cfg, int index, const char *value, size_t len)
{
  if (len == 0)
    return -EINVAL;
  int rc = cmg__config_check_pattern(value, len);
  if (rc != 0)
    return rc;
  if (len >= sizeof(cfg->report))
    return -ERANGE;
  memcpy(cfg->report, value, len);
  cfg->report[len] = '\0';
  return 0;
}

static int
handle_stack_depth(struct cmg__config *cfg, int index, const char *value,
                   size_t len)
{
  return parse_uint(value, len, CMG__STACK_DEPTH_MAX, &cfg->stack_depth);
}

static int
handle_leak_exitcode(struct cmg__config *cfg, int index, const char *value,
                     size_t len)
{
  unsigned code;
  int rc = parse_uint(value, len, 255, &code);
  if (rc != 0)
    return rc;
  /* 0 would be indistinguishable from a clean exit, so it is not a choice. */
  if (code == 0)
    return -ERANGE;
  cfg->leak_exitcode = (int)code;
  return 0;
}

static int
handle_dump_signal(struct cmg__config *cfg, int index, const char *value,
                   size_t len)
{
  return cmg__config_dump_signal(value, len, &cfg->dump_signal);
}

static int
handle_soft_limit(struct cmg__config *cfg, int index, const char *value,
                  size_t len)
{
  struct cmg__gpu_limits *g = gpu_of(cfg, index);
  struct cmg__limit *slot = g           ? &g->soft_limit
                            : index < 0 ? &cfg->soft_limit
                                        : &cfg->soft_limit_dev[index];
  return cmg__size_parse(value, len, true, slot);
}

/* A size in bytes; a percentage means nothing for these keys. */
static int
parse_bytes(const char *value, size_t len, uint64_t *out)
{
  struct cmg__limit l;
  int rc = cmg__size_parse(value, len, false, &l);
  if (rc == 0)
    *out = l.bytes;
  return rc;
}

static int
handle_max_alloc(struct cmg__config *cfg, int index, const char *value,
                 size_t len)
{
  return parse_bytes(value, len, &cfg->max_alloc);
}

static int
handle_host_limit(struct cmg__config *cfg, int index, const char *value,
                  size_t len)
{
  return parse_bytes(value, len, &cfg->host_limit);
}

static int
handle_on_exceed(struct cmg__config *cfg, int index, const char *value,
                 size_t len)
{
  static const char *const names[] = { "fail", "warn", "wait" };
  for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
    if (cmg__equals_nocase(value, len, names[i])) {
      cfg->on_exceed = (enum cmg__on_exceed)i;
      return 0;
    }
  return -EINVAL;
}

static int
handle_stack_mode(struct cmg__config *cfg, int index, const char *value,
                  size_t len)
{
  static const char *const names[] = { "auto", "fp", "dwarf" };
  for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
    if (cmg__equals_nocase(value, len, names[i])) {
      cfg->stack_mode = (enum cmg__stack_mode)i;
      return 0;
    }
  return -EINVAL;
}

/* wait_timeout=TIME, from 1 ms to 24 h. */
static int
handle_wait_timeout(struct cmg__config *cfg, int index, const char *value,
                    size_t len)
{
  return cmg__duration_parse(value, len, &cfg->wait_timeout_ns);
}

/* snapshot=TIME rewrites the report every TIME, so that a process killed
 * outright leaves the last one; 0 (the default) writes none. */
static int
handle_snapshot(struct cmg__config *cfg, int index, const char *value,
                size_t len)
{
  cfg->snapshot_ns = 0;
  if (len == 1 && value[0] == '0')
    return 0;
  int rc = cmg__duration_parse(value, len, &cfg->snapshot_ns);
  if (rc == 0 && cfg->snapshot_ns < 1000000000ull)
    rc = -ERANGE;
  if (rc != 0)
    cfg->snapshot_ns = 0;
  return rc;
}

/* group=NAME: it becomes part of a file name in /dev/shm, so only these
 * characters, and never a '/'. */
static int
handle_group(struct cmg__config *cfg, int index, const char *value, size_t len)
{
  for (size_t i = 0; i < len; i++) {
    char c = value[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) ||
          c == '-' || c == '_' || c == '.'))
      return -EINVAL;
  }
  if (len == 0 || len >= sizeof(cfg->group))
    return -ERANGE;
  memcpy(cfg->group, value, len);
  cfg->group[len] = '\0';
  return 0;
}

static int
handle_group_limit(struct cmg__config *cfg, int index, const char *value,
                   size_t len)
{
  struct cmg__gpu_limits *g = gpu_of(cfg, index);
  struct cmg__limit *slot = g           ? &g->group_limit
                            : index < 0 ? &cfg->group_limit
                                        : &cfg->group_limit_dev[index];
  return cmg__size_parse(value, len, true, slot);
}

/* A switch: 0 or 1; a bad value leaves the default (fallback). */
static int
parse_switch(const char *value, size_t len, bool fallback, bool *out)
{
  unsigned on;
  int rc = parse_uint(value, len, 1, &on);

  *out = rc != 0 ? fallback : on == 1;
  return rc == -ERANGE ? -EINVAL : rc;
}

/* no_pools=1 asks the frameworks for one driver allocation per tensor
 * (pools.c sets their switches); 0 is the default, spelled out. */
static int
handle_no_pools(struct cmg__config *cfg, int index, const char *value,
                size_t len)
{
  return parse_switch(value, len, false, &cfg->no_pools);
}

/* timeline=0 keeps no memory-over-time series: the report has no
 * "timeline" member, and allocations and frees skip its few loads. */
static int
handle_timeline(struct cmg__config *cfg, int index, const char *value,
                size_t len)
{
  return parse_switch(value, len, true, &cfg->timeline);
}

/* python_frames=0 keeps Python processes' stacks native only. */
static int
handle_python_frames(struct cmg__config *cfg, int index, const char *value,
                     size_t len)
{
  return parse_switch(value, len, true, &cfg->python_frames);
}

/* count_context=0 counts allocations only, leaving contexts and modules
 * outside the caps. */
static int
handle_count_context(struct cmg__config *cfg, int index, const char *value,
                     size_t len)
{
  return parse_switch(value, len, true, &cfg->count_context);
}

/* signal_report=0 leaves the deadly signals' default actions alone. */
static int
handle_signal_report(struct cmg__config *cfg, int index, const char *value,
                     size_t len)
{
  return parse_switch(value, len, true, &cfg->signal_report);
}

static const char size_expected[] =
    "a size such as 4GiB, 512MiB, 1.5GB, 1073741824 or 50% of the device";
static const char size_range[] =
    "a size below 16 EiB, or a percentage above 0% and at most 100%";
static const char report_expected[] =
    "a file name pattern; %p, %h, %t and %% are the only escapes";
static const char report_range[] = "a file name pattern of at most 1023 bytes";
_Static_assert(CMG__REPORT_MAX == 1024, "report_range names the limit");
static const char stack_depth_expected[] =
    "a number of frames from 0 to " STR(CMG__STACK_DEPTH_MAX);
static const char stack_mode_expected[] = "one of auto, fp, dwarf";
static const char dump_signal_expected[] =
    "one of USR1, USR2, HUP, WINCH, URG, PWR";
static const char leak_exitcode_expected[] = "an exit status from 1 to 255";
static const char bytes_expected[] =
    "a size such as 4GiB, 512MiB, 1.5GB or 1073741824";
static const char bytes_range[] = "a size below 16 EiB";
static const char on_exceed_expected[] = "one of fail, warn, wait";
static const char wait_timeout_expected[] =
    "a duration such as 30s, 500ms, 2m or 1h";
static const char wait_timeout_range[] = "a duration from 1ms to 24h";
static const char snapshot_expected[] =
    "a duration such as 30s, 10m or 1h, or 0 for none";
static const char snapshot_range[] = "a duration from 1s to 24h, or 0";
static const char group_expected[] =
    "a group name of letters, digits, '-', '_' and '.'";
static const char group_range[] = "a group name of 1 to 63 characters";
static const char zero_or_one[] = "0 or 1";
_Static_assert(sizeof(((struct cmg__config *)0)->group) == 64,
               "group_range names the limit");

/* The default of a key that no value gives: no limit, no signal, no group.
 * test_conf_table holds every row's default to conf.c's set_defaults. */
#define NONE CMG__DEFAULT_NONE

static const struct cmg__conf_row options[] = {
  { "limit", false, handle_limit, NONE, size_expected, size_range },
  { "limit", true, handle_limit, NONE, size_expected, size_range },
  { "report", false, handle_report, CMG__REPORT_DEFAULT, report_expected,
    report_range },
  { "stack_depth", false, handle_stack_depth, STR(CMG__STACK_DEPTH_DEFAULT),
    stack_depth_expected, stack_depth_expected },
  { "stack_mode", false, handle_stack_mode, "auto", stack_mode_expected,
    stack_mode_expected },
  { "dump_signal", false, handle_dump_signal, NONE, dump_signal_expected,
    dump_signal_expected },
  { "leak_exitcode", false, handle_leak_exitcode, NONE, leak_exitcode_expected,
    leak_exitcode_expected },
  { "on_exceed", false, handle_on_exceed, "fail", on_exceed_expected,
    on_exceed_expected },
  { "wait_timeout", false, handle_wait_timeout, "30s", wait_timeout_expected,
    wait_timeout_range },
  { "soft_limit", false, handle_soft_limit, NONE, size_expected, size_range },
  { "soft_limit", true, handle_soft_limit, NONE, size_expected, size_range },
  { "max_alloc", false, handle_max_alloc, NONE, bytes_expected, bytes_range },
  { "host_limit", false, handle_host_limit, NONE, bytes_expected, bytes_range },
  { "group", false, handle_group, NONE, group_expected, group_range },
  { "group_limit", false, handle_group_limit, NONE, size_expected, size_range },
  { "group_limit", true, handle_group_limit, NONE, size_expected, size_range },
  { "no_pools", false, handle_no_pools, "0", zero_or_one, zero_or_one },
  { "timeline", false, handle_timeline, "1", zero_or_one, zero_or_one },
  { "python_frames", false, handle_python_frames, "1", zero_or_one,
    zero_or_one },
  { "signal_report", false, handle_signal_report, "1", zero_or_one,
    zero_or_one },
  { "snapshot", false, handle_snapshot, "0", snapshot_expected,
    snapshot_range },
  { "count_context", false, handle_count_context, "1", zero_or_one,
    zero_or_one },
};

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))
_Static_assert(N_OPTIONS == CMG__CONF_ROWS, "conf_table.h counts the rows");

const struct cmg__conf_row *
cmg__conf_table_row(size_t i)
{
  return i < N_OPTIONS ? &options[i] : NULL;
}

const char *
cmg__conf_table_key(size_t i, bool *indexed)
{
  if (i >= N_OPTIONS)
    return NULL;
  if (indexed != NULL)
    *indexed = options[i].indexed;
  return options[i].key;
}

bool
cmg__conf_table_doc(size_t i, struct cmg__option_doc *doc)
{
  if (i >= N_OPTIONS)
    return false;
  *doc = (struct cmg__option_doc){ options[i].key, options[i].indexed,
                                   options[i].dflt, options[i].range };
  return true;
}
