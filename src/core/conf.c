/*
 * The option string, CUMEMGUARD_OPTIONS="limit=4GiB,limit.1=50%", parsed
 * into a struct cmg__config.  The string is a comma-separated list of
 * key=value items in the style of jemalloc's MALLOC_CONF; empty items are
 * skipped so that strings glued together by scripts still parse.  Keys come
 * from one table (conf_table.c): a row names a key, says whether it takes a
 * device index (limit.N), and points at the handler that stores its value.
 *
 * The string is walked in place, with spans into it: nothing is allocated
 * and nothing is copied, because this runs in the first hook of a program
 * that may not have a working malloc yet.  The only output besides *cfg is
 * the error line the caller supplies a buffer for; conf.c itself never
 * prints, never reads the environment and never calls CUDA, so the launcher
 * can validate a string with exactly the parser the library will use.
 *
 * The table's handlers check each value; this file checks what no single
 * value can show (a key given twice, a group cap without a group).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/base.h"
#include "core/conf.h"
#include "core/conf_gpu.h"
#include "core/conf_table.h"

/* How much of a bad item an error message quotes. */
#define QUOTE_MAX 64

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
    if (s[i] < '0' || s[i] > '9')
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
  const struct cmg__conf_row *o;
  for (size_t i = 0; (o = cmg__conf_table_row(i)) != NULL && n >= 0; i++) {
    size_t used = (size_t)n;
    if (used >= errlen)
      return;
    n += snprintf(err + used, errlen - used, "%s %s%s", i == 0 ? "" : ",",
                  o->key, o->indexed ? ".N" : "");
  }
}

/* ---- the parser --------------------------------------------------------- */

/*
 * The table's row for the key of it, *row its number, with *index set for
 * key.N rows.  Returns 0, -ENOENT for an unknown key, or -EDOM for a known
 * indexed key with a bad index; *opt then names the row.
 */
static int
find_option(struct cmg__config *cfg, const struct item *it,
            const struct cmg__conf_row **opt, size_t *row, int *index)
{
  const struct cmg__conf_row *o;
  for (size_t i = 0; (o = cmg__conf_table_row(i)) != NULL; i++) {
    size_t klen = strlen(o->key);
    *row = i;

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
  const struct cmg__conf_row *opt = NULL;
  size_t row = 0;
  int index = -1;

  quote(shown, it->text, it->len);
  if (it->value == NULL || it->key_len == 0) {
    if (errlen > 0)
      snprintf(err, errlen, "bad option '%s': expected key=value", shown);
    return -EINVAL;
  }

  int rc = find_option(cfg, it, &opt, &row, &index);
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
  uint64_t *word = &seen[2 * row + (index >= CMG__MAX_DEVICES)];
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
  uint64_t seen[2 * CMG__CONF_ROWS] = { 0 };
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
