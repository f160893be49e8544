/*
 * What the tests of the report's members share (test_report_refs,
 * test_report_devices, test_report_options, test_report_timeline): one
 * member written alone through a writer into memory, as report.c writes
 * it into the whole report, and read back with cJSON, with the look-ups
 * that return a value no member has when what they look for is missing.
 */
#ifndef CMG_TEST_REPORT_MEMBER_H
#define CMG_TEST_REPORT_MEMBER_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"

/* The text last written, kept for the checks of its exact form. */
static char *member_text;

static inline struct cmg__jsonw *
member_open(struct cmg__jsonw *w)
{
  if (cmg__jsonw_open(w, -1, false) != 0)
    abort();
  return w;
}

/* Closes the writer and parses what it wrote; NULL when it failed or
 * wrote no JSON. */
static inline cJSON *
member_parse(struct cmg__jsonw *w)
{
  free(member_text);
  member_text = cmg__jsonw_take(w);
  return member_text != NULL ? cJSON_Parse(member_text) : NULL;
}

static inline void
member_done(cJSON *doc)
{
  cJSON_Delete(doc);
  free(member_text);
  member_text = NULL;
}

static inline cJSON *
at(const cJSON *o, const char *key)
{
  return cJSON_GetObjectItemCaseSensitive(o, key);
}

static inline double
num(const cJSON *o, const char *key)
{
  const cJSON *v = at(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static inline const char *
str(const cJSON *o, const char *key)
{
  const cJSON *v = at(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static inline bool
str_is(const cJSON *o, const char *key, const char *want)
{
  const char *v = str(o, key);
  return v != NULL && strcmp(v, want) == 0;
}

static inline bool
is_null(const cJSON *o, const char *key)
{
  return cJSON_IsNull(at(o, key));
}

/* The items of an array or members of an object; -1 for anything else. */
static inline int
len(const cJSON *o, const char *key)
{
  const cJSON *v = key ? at(o, key) : o;
  return cJSON_IsArray(v) || cJSON_IsObject(v) ? cJSON_GetArraySize(v) : -1;
}

static inline cJSON *
nth(const cJSON *o, const char *key, int i)
{
  return cJSON_GetArrayItem(key ? at(o, key) : o, i);
}

/* A number of an array by its place; -1 when it is none. */
static inline double
nth_num(const cJSON *a, int i)
{
  const cJSON *v = cJSON_GetArrayItem(a, i);
  return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* The "0x..." string at key as a number; 0 when it is no such string. */
static inline uint64_t
hex(const cJSON *o, const char *key)
{
  const char *s = str(o, key);
  return s != NULL && strncmp(s, "0x", 2) == 0 ? strtoull(s, NULL, 16) : 0;
}

#endif /* CMG_TEST_REPORT_MEMBER_H */
