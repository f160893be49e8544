/*
 * The option string, CUMEMGUARD_OPTIONS="limit=4GiB,limit.1=50%", parsed
 * into a struct cmg__config.  The string is a comma-separated list of
 * key=value items in the style of jemalloc's MALLOC_CONF; empty items are
 * skipped so that strings glued together by scripts still parse.  Keys come
 * from one table, `options`: an entry names a key, says whether it takes a
 * device index (limit.N), and points at the handler that stores its value.
 * Adding an option means adding a row and a handler, nothing else.
 *
 * The string is walked in place, with spans into it: nothing is allocated
 * and nothing is copied, because this runs in the first hook of a program
 * that may not have a working malloc yet.  The only output besides *cfg is
 * the error line the caller supplies a buffer for; conf.c itself never
 * prints, never reads the environment and never calls CUDA, so the launcher
 * can validate a string with exactly the parser the library will use.
 *
 * Sizes and durations are parsed by size.c.
 *
 * The report options are checked here too (with conf_report.c), so that a
 * bad report pattern or signal name is refused before the program starts
 * rather than at its exit, when nothing can be done about it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/base.h"
#include "core/conf.h"
#include "core/conf_report.h"
#include "core/conf_gpu.h"
#include "core/size.h"

/* How much of a bad item an error message quotes. */
#define QUOTE_MAX 64

#define STR_(x) #x
#define STR(x) STR_(x)

static bool
is_digit(char c)
{
  return c >= '0' && c <= '9';
}

/* ---- the option table --------------------------------------------------- */

/*
 * Stores the value of one item.  index is -1 for a plain key and the device
 * ordinal for key.N.  Returns 0, or -EINVAL or -ERANGE for a bad value.  A
 * key given twice is refused by the parser before its handler runs, since
 * a handler cannot tell a default from a value given earlier.
 */
typedef int (*option_handler)(struct cmg__config *cfg, int index,
                              const char *value, size_t len);

struct option {
  const char *key;
  bool indexed; /* written key.N, N a device ordinal */
  option_handler handle;
  const char *dflt;     /* the value set_defaults gives, as a user writes it */
  const char *expected; /* what a well-formed value looks like */
  const char *range;    /* what an in-range value looks like */
};

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
 * test_conf_table holds every row's default to set_defaults. */
#define NONE CMG__DEFAULT_NONE

static const struct option options[] = {
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

const char *
cmg__config_key(size_t i, bool *indexed)
{
  if (i >= N_OPTIONS)
    return NULL;
  if (indexed != NULL)
    *indexed = options[i].indexed;
  return options[i].key;
}

bool
cmg__config_doc(size_t i, struct cmg__option_doc *doc)
{
  if (i >= N_OPTIONS)
    return false;
  *doc = (struct cmg__option_doc){ options[i].key, options[i].indexed,
                                   options[i].dflt, options[i].range };
  return true;
}

/* ---- tokenizing --------------------------------------------------------- */

/* One item of the string: all of it, its key, and its value if any. */
struct item {
  const char *text;
  size_t len;
  size_t key_len;
  const char *value; /* NULL when the item has no '=' */
  size_t value_len;
};

/*
 * Finds the next non-empty item at *pos and advances *pos past it; false at
 * the end of the string.
 */
static bool
next_item(const char **pos, struct item *it)
{
  const char *p = *pos;

  while (*p == ',')
    p++;
  if (*p == '\0') {
    *pos = p;
    return false;
  }

  it->text = p;
  while (*p != '\0' && *p != ',')
    p++;
  it->len = (size_t)(p - it->text);
  *pos = p;

  const char *eq = memchr(it->text, '=', it->len);
  if (eq == NULL) {
    it->key_len = it->len;
    it->value = NULL;
    it->value_len = 0;
  } else {
    it->key_len = (size_t)(eq - it->text);
    it->value = eq + 1;
    it->value_len = it->len - it->key_len - 1;
  }
  return true;
}

/*
 * Parses the device after "key." into *index: a GPU's UUID, or an ordinal
 * in decimal digits only, so that "limit.-1", "limit.+1", "limit.0x1" and
 * "limit." are refused.
 */
static bool
parse_index(struct cmg__config *cfg, const char *s, size_t len, int *index)
{
  int n = 0;

  if (cmg__uuid_is_key(s, len))
    return cmg__config_gpu_index(cfg, s, len, index);
  if (len == 0)
    return false;
  for (size_t i = 0; i < len; i++) {
    if (!is_digit(s[i]))
      return false;
    n = n * 10 + (s[i] - '0');
    if (n >= CMG__MAX_DEVICES)
      return false;
  }
  *index = n;
  return true;
}

/* ---- errors ------------------------------------------------------------- */

/*
 * Copies the item for quoting in a message: at most QUOTE_MAX bytes, cut
 * with "...", control characters shown as '?' so the message stays one
 * line.
 */
static void
quote(char dst[static QUOTE_MAX + 4], const char *s, size_t len)
{
  size_t n = len > QUOTE_MAX ? QUOTE_MAX : len;

  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    dst[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
  }
  if (n < len) {
    memcpy(dst + n, "...", 3);
    n += 3;
  }
  dst[n] = '\0';
}

/* Writes "expected one of limit, limit.N" and so on, from the table. */
static void
format_unknown(char *err, size_t errlen, const char *shown)
{
  int n = snprintf(err, errlen, "unknown option '%s': expected one of", shown);
  for (size_t i = 0; i < N_OPTIONS && n >= 0; i++) {
    size_t used = (size_t)n;
    if (used >= errlen)
      return;
    n += snprintf(err + used, errlen - used, "%s %s%s", i == 0 ? "" : ",",
                  options[i].key, options[i].indexed ? ".N" : "");
  }
}

/* ---- the parser --------------------------------------------------------- */

/*
 * The table entry for the key of it, with *index set for key.N entries.
 * Returns 0, -ENOENT for an unknown key, or -EDOM for a known indexed key
 * with a bad index; *opt then names the entry.
 */
static int
find_option(struct cmg__config *cfg, const struct item *it,
            const struct option **opt, int *index)
{
  for (size_t i = 0; i < N_OPTIONS; i++) {
    const struct option *o = &options[i];
    size_t klen = strlen(o->key);

    if (it->key_len < klen || memcmp(it->text, o->key, klen) != 0)
      continue;
    if (!o->indexed && it->key_len == klen) {
      *opt = o;
      *index = -1;
      return 0;
    }
    if (o->indexed && it->key_len > klen && it->text[klen] == '.') {
      *opt = o;
      if (!parse_index(cfg, it->text + klen + 1, it->key_len - klen - 1, index))
        return -EDOM;
      return 0;
    }
  }
  return -ENOENT;
}

/*
 * A group cap without a group would cap nothing, silently: refused like a
 * typo, so that the job does not run believing it shares a cap.
 */
static int
check_group(const struct cmg__config *cfg, char *err, size_t errlen)
{
  bool capped = cfg->group_limit.kind != CMG__LIMIT_NONE;

  for (int d = 0; d < CMG__MAX_DEVICES; d++)
    capped = capped || cfg->group_limit_dev[d].kind != CMG__LIMIT_NONE;
  for (unsigned k = 0; k < cfg->n_gpu; k++)
    capped = capped || cfg->gpu[k].group_limit.kind != CMG__LIMIT_NONE;
  if (!capped || cfg->group[0] != '\0')
    return 0;
  if (errlen > 0)
    snprintf(err, errlen,
             "group_limit without group: expected group=NAME "
             "with it, naming the processes that share the cap");
  return -EINVAL;
}

/* The values of options not given, which the table's dflt texts say. */
static void
set_defaults(struct cmg__config *cfg)
{
  memset(cfg, 0, sizeof(*cfg));
  memcpy(cfg->report, CMG__REPORT_DEFAULT, sizeof(CMG__REPORT_DEFAULT));
  cfg->stack_depth = CMG__STACK_DEPTH_DEFAULT;
  cfg->timeline = true;
  cfg->python_frames = true;
  cfg->signal_report = true;
  cfg->count_context = true;
  cfg->max_alloc = CMG__NO_LIMIT;
  cfg->host_limit = CMG__NO_LIMIT;
  cfg->wait_timeout_ns = CMG__WAIT_TIMEOUT_DEFAULT_NS;
}

/* Parses one key=value item into *cfg, seen[] holding the keys given so
 * far (two words a key: bit 0 for a plain key, bit N for key.N; bit k of
 * the second for the k-th GPU): 0, or -EINVAL with err said (errlen 0:
 * not). */
static int
parse_item(struct cmg__config *cfg, const struct item *it, uint64_t *seen,
           char *err, size_t errlen)
{
  char shown[QUOTE_MAX + 4];
  const struct option *opt = NULL;
  int index = -1;

  quote(shown, it->text, it->len);
  if (it->value == NULL || it->key_len == 0) {
    if (errlen > 0)
      snprintf(err, errlen, "bad option '%s': expected key=value", shown);
    return -EINVAL;
  }

  int rc = find_option(cfg, it, &opt, &index);
  if (rc == -ENOENT) {
    if (errlen > 0)
      format_unknown(err, errlen, shown);
    return -EINVAL;
  }
  if (rc == -EDOM) {
    if (errlen > 0)
      snprintf(err, errlen,
               "bad device index in '%s': expected %s.N with N from 0 "
               "to %d, or %s.GPU-<uuid> (GPU-xxxxxxxx-xxxx-xxxx-xxxx-"
               "xxxxxxxxxxxx, at most %d GPUs)",
               shown, opt->key, CMG__MAX_DEVICES - 1, opt->key, CMG__GPU_KEYS);
    return -EINVAL;
  }

  /* Ordinals in the first word, GPUs in the second. */
  uint64_t *word = &seen[2 * (opt - options) + (index >= CMG__MAX_DEVICES)];
  uint64_t bit = 1ull << (index < 0 ? 0 : index % CMG__MAX_DEVICES);
  if (*word & bit) {
    if (errlen > 0)
      snprintf(err, errlen,
               "duplicate option '%s': expected each key at most once", shown);
    return -EINVAL;
  }
  *word |= bit;

  rc = opt->handle(cfg, index, it->value, it->value_len);
  if (rc != 0) {
    if (errlen > 0)
      snprintf(err, errlen, "bad value '%s': expected %s", shown,
               rc == -ERANGE ? opt->range : opt->expected);
    return -EINVAL;
  }
  return 0;
}

/* Parses the whole string into *cfg; see conf.h for the contract. */
int
cmg__config_parse(const char *opts, struct cmg__config *cfg, char *err,
                  size_t errlen)
{
  const char *pos = opts;
  struct item it;
  uint64_t seen[2 * N_OPTIONS] = { 0 };
  _Static_assert(CMG__MAX_DEVICES <= 64, "seen[] has a bit per device");

  set_defaults(cfg);
  if (err == NULL)
    errlen = 0;
  if (errlen > 0)
    err[0] = '\0';
  if (opts == NULL)
    return 0;
  while (next_item(&pos, &it))
    if (parse_item(cfg, &it, seen, err, errlen) != 0)
      return -EINVAL;
  return check_group(cfg, err, errlen);
}
