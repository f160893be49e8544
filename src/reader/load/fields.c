/*
 * Checked access to the members of a cJSON tree, for the files that read a
 * report (read.c, read_stacks.c, read_devices.c, read_series.c).
 * Each getter looks up `key` in object o, checks its type and range, and on
 * a problem writes one line into the reader's buffer, naming the member by
 * its path ("leaks[3].bytes: expected an integer from 0 to 2^53, got a
 * string"), and returns -EINVAL; at is the path of o ("" at the top).
 * Numbers are integers a double holds exactly (up to 2^53): every byte count
 * of a real device is, and JSON readers in other languages agree on them.
 * Strings are copied through cmg__utf8_clean(), so no later output,
 * whether a terminal, an SVG or folded stacks, sees a control byte or
 * invalid UTF-8 from a report.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/base.h"
#include "reader/load/fields.h"
#include "reader/load/utf8_text.h"
#include "reader/tool.h"

int
cmg__fields_fail(struct cmg__fields_reader *rd, const char *fmt, ...)
{
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(rd->err, rd->errlen, fmt, ap);
  va_end(ap);
  return -EINVAL;
}

void *
cmg__fields_table(size_t n, size_t size)
{
  return calloc(n > 0 ? n : 1, size);
}

/* ---- typed access to members ------------------------------------------ */

const char *
cmg__fields_kind(const cJSON *item)
{
  if (item == NULL)
    return "nothing";
  if (cJSON_IsNull(item))
    return "null";
  if (cJSON_IsBool(item))
    return "a boolean";
  if (cJSON_IsNumber(item))
    return "a number";
  if (cJSON_IsString(item))
    return "a string";
  if (cJSON_IsArray(item))
    return "an array";
  return "an object";
}

/* The member `key` of o; fails naming at.key when it is missing. */
int
cmg__fields_member(struct cmg__fields_reader *rd, const cJSON *o,
                   const char *at, const char *key, const cJSON **out)
{
  *out = cJSON_GetObjectItemCaseSensitive(o, key);
  if (*out == NULL)
    return cmg__fields_fail(rd, "%s%s%s: missing", at, at[0] ? "." : "", key);
  return 0;
}

/* "AT: expected WANT, got WHAT" for an array element. */
/* What was found instead: a number or a short string itself, else its
 * kind, so that the line names the bad value. */
static void
describe(const cJSON *got, char *buf, size_t len)
{
  enum { SHOWN = 40 };

  if (cJSON_IsNumber(got)) {
    snprintf(buf, len, "%.17g", got->valuedouble);
    return;
  }
  char *clean = cJSON_IsString(got) && strlen(got->valuestring) <= SHOWN
                    ? cmg__utf8_clean(got->valuestring)
                    : NULL;
  if (clean != NULL)
    snprintf(buf, len, "\"%s\"", clean);
  else
    snprintf(buf, len, "%s", cmg__fields_kind(got));
  free(clean);
}

int
cmg__fields_fail_item(struct cmg__fields_reader *rd, const char *at,
                      const char *want, const cJSON *got)
{
  char what[96];

  describe(got, what, sizeof(what));
  return cmg__fields_fail(rd, "%s: expected %s, got %s", at, want, what);
}

int
cmg__fields_wrong(struct cmg__fields_reader *rd, const char *at,
                  const char *key, const char *want, const cJSON *got)
{
  char what[96];

  describe(got, what, sizeof(what));
  return cmg__fields_fail(rd, "%s%s%s: expected %s, got %s", at,
                          at[0] ? "." : "", key, want, what);
}

/* An integer in [min, max]; a null is allowed (and *has cleared) when has
 * is not NULL. */
int
cmg__fields_int(struct cmg__fields_reader *rd, const cJSON *o, const char *at,
                const char *key, double min, double max, bool *has, double *out)
{
  const cJSON *v;
  int rc = cmg__fields_member(rd, o, at, key, &v);

  if (rc != 0)
    return rc;
  if (has != NULL) {
    *has = !cJSON_IsNull(v);
    if (!*has) {
      *out = 0;
      return 0;
    }
  }
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
      v->valuedouble != floor(v->valuedouble) || v->valuedouble < min ||
      v->valuedouble > max) {
    char want[96];

    if (max >= CMG__FIELDS_EXACT_MAX)
      snprintf(want, sizeof(want), "an integer from %.0f to 2^53%s", min,
               has != NULL ? " or null" : "");
    else
      snprintf(want, sizeof(want), "an integer from %.0f to %.0f%s", min, max,
               has != NULL ? " or null" : "");
    return cmg__fields_wrong(rd, at, key, want, v);
  }
  *out = v->valuedouble;
  return 0;
}

/* A byte count or another count: an integer from 0 to 2^53. */
int
cmg__fields_count(struct cmg__fields_reader *rd, const cJSON *o, const char *at,
                  const char *key, bool *has, uint64_t *out)
{
  double d = 0; /* left as it is when the member is refused */
  int rc = cmg__fields_int(rd, o, at, key, 0, CMG__FIELDS_EXACT_MAX, has, &d);

  *out = (uint64_t)d;
  return rc;
}

int
cmg__fields_number(struct cmg__fields_reader *rd, const cJSON *o,
                   const char *at, const char *key, double *out)
{
  const cJSON *v;
  int rc = cmg__fields_member(rd, o, at, key, &v);

  if (rc != 0)
    return rc;
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
    return cmg__fields_wrong(rd, at, key, "a number", v);
  *out = v->valuedouble;
  return 0;
}

/* A string, copied and cleaned into *out; null gives NULL when nullable. */
int
cmg__fields_string(struct cmg__fields_reader *rd, const cJSON *o,
                   const char *at, const char *key, bool nullable, char **out)
{
  const cJSON *v;
  int rc = cmg__fields_member(rd, o, at, key, &v);

  *out = NULL;
  if (rc != 0)
    return rc;
  if (nullable && cJSON_IsNull(v))
    return 0;
  if (!cJSON_IsString(v) || v->valuestring == NULL)
    return cmg__fields_wrong(rd, at, key,
                             nullable ? "a string or null" : "a string", v);
  *out = cmg__utf8_clean(v->valuestring);
  return *out != NULL ? 0 : -ENOMEM;
}

int
cmg__fields_name(struct cmg__fields_reader *rd, const cJSON *o, const char *at,
                 const char *key, bool nullable, char **out)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  size_t n =
      cJSON_IsString(v) && v->valuestring != NULL ? strlen(v->valuestring) : 0;

  if (n > CMG__TOOL_NAME_MAX) {
    *out = NULL;
    return cmg__fields_fail(rd,
                            "%s%s%s: %zu bytes long, more than the %u this "
                            "tool reads of a name",
                            at, at[0] ? "." : "", key, n, CMG__TOOL_NAME_MAX);
  }
  return cmg__fields_string(rd, o, at, key, nullable, out);
}

/* "0x..." in lower-case hex, at most 64 bits; null clears *has. */
int
cmg__fields_hex(struct cmg__fields_reader *rd, const cJSON *o, const char *at,
                const char *key, bool *has, uint64_t *out)
{
  const cJSON *v;
  int rc = cmg__fields_member(rd, o, at, key, &v);

  *out = 0;
  if (rc != 0)
    return rc;
  if (has != NULL) {
    *has = !cJSON_IsNull(v);
    if (!*has)
      return 0;
  }
  const char *s = cJSON_IsString(v) ? v->valuestring : NULL;
  size_t n = s != NULL ? strlen(s) : 0;
  if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x')
    return cmg__fields_wrong(rd, at, key,
                             "a \"0x...\" string of at most 16 hex digits", v);
  for (size_t i = 2; i < n; i++) {
    unsigned d;

    if (s[i] >= '0' && s[i] <= '9')
      d = (unsigned)(s[i] - '0');
    else if (s[i] >= 'a' && s[i] <= 'f')
      d = (unsigned)(s[i] - 'a' + 10);
    else
      return cmg__fields_wrong(rd, at, key,
                               "lower-case hex digits after \"0x\"", v);
    *out = *out << 4 | d;
  }
  return 0;
}

/* An array member; *n is its length. */
int
cmg__fields_array(struct cmg__fields_reader *rd, const cJSON *o, const char *at,
                  const char *key, const cJSON **out, size_t *n)
{
  int rc = cmg__fields_member(rd, o, at, key, out);

  if (rc != 0)
    return rc;
  if (!cJSON_IsArray(*out))
    return cmg__fields_wrong(rd, at, key, "an array", *out);
  *n = (size_t)cJSON_GetArraySize(*out);
  return 0;
}

int
cmg__fields_object(struct cmg__fields_reader *rd, const cJSON *o,
                   const char *at, const char *key, const cJSON **out)
{
  int rc = cmg__fields_member(rd, o, at, key, out);

  if (rc != 0)
    return rc;
  if (!cJSON_IsObject(*out))
    return cmg__fields_wrong(rd, at, key, "an object", *out);
  return 0;
}

int
cmg__fields_optional_object(struct cmg__fields_reader *rd, const cJSON *o,
                            const char *at, const char *key, const cJSON **out)
{
  *out = cJSON_GetObjectItemCaseSensitive(o, key);
  if (*out == NULL || cJSON_IsNull(*out)) {
    *out = NULL;
    return 0;
  }
  if (!cJSON_IsObject(*out))
    return cmg__fields_wrong(rd, at, key, "an object or null", *out);
  return 0;
}

/* Checks that element i of an array is an object; names it in at. */
int
cmg__fields_element(struct cmg__fields_reader *rd, const cJSON *item,
                    const char *array, size_t i, char *at, size_t atlen)
{
  snprintf(at, atlen, "%s[%zu]", array, i);
  if (!cJSON_IsObject(item))
    return cmg__fields_fail(rd, "%s: expected an object, got %s", at,
                            cmg__fields_kind(item));
  return 0;
}

int
cmg__fields_device(struct cmg__fields_reader *rd, const cJSON *o,
                   const char *at, const char *key, bool host_ok, int *out)
{
  bool has = true;
  double d;
  int rc = cmg__fields_int(rd, o, at, key, 0, CMG__MAX_DEVICES - 1,
                           host_ok ? &has : NULL, &d);

  if (rc == 0)
    *out = has ? (int)d : -1;
  return rc;
}
