/*
 * Unit tests of fields.c, the checked getters every part of the loader
 * reads a report's members with.  A report comes from another program, a
 * crash or a full disk, so each getter must take exactly what its comment
 * allows (integers a double holds exactly, up to 2^53; devices 0 to 63,
 * null for host memory where it may be meant; "0x" and at most 16
 * lower-case hex digits; names up to CMG__TOOL_NAME_MAX bytes) and refuse
 * the rest with one line that names the member by its path and shows the
 * bad value, since that line is all the user sees of the problem.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reader/load/fields.h"
#include "reader/tool.h"
#include "../tap.h"

static char err[CMG__TOOL_ERR_MAX];
static struct cmg__fields_reader rd = { err, sizeof(err) };

static cJSON *
parse(const char *text)
{
  cJSON *o = cJSON_Parse(text);

  if (o == NULL)
    printf("# does not parse: %s\n", text);
  err[0] = '\0';
  return o;
}

static void
test_fail_and_kind(void)
{
  char small[8];
  struct cmg__fields_reader tiny = { small, sizeof(small) };

  is_int(cmg__fields_fail(&rd, "%s: %d", "x", 7), -EINVAL,
         "fail: returns -EINVAL");
  is_str(err, "x: 7", "fail: writes the line");
  cmg__fields_fail(&tiny, "%s", "a long line");
  is_str(small, "a long ", "fail: cut to the buffer, still a string");

  cJSON *o = parse("[null, true, 1, \"s\", [], {}]");
  static const char *const kinds[] = { "null",     "a boolean", "a number",
                                       "a string", "an array",  "an object" };
  for (int i = 0; i < 6; i++)
    is_str(cmg__fields_kind(cJSON_GetArrayItem(o, i)), kinds[i], "kind: %s",
           kinds[i]);
  is_str(cmg__fields_kind(NULL), "nothing", "kind: a missing member");
  cJSON_Delete(o);
}

static void
test_messages(void)
{
  cJSON *o = parse("{\"n\": 3, \"s\": \"short\", \"l\": "
                   "\"a string of more than forty bytes, not shown\", "
                   "\"c\": \"a\\u0007b\"}");
  const cJSON *got;

  is_int(cmg__fields_member(&rd, o, "", "n", &got), 0, "member: found");
  ok(got == cJSON_GetObjectItem(o, "n"), "member: the one asked for");
  is_int(cmg__fields_member(&rd, o, "", "nope", &got), -EINVAL,
         "member: a missing one is refused");
  is_str(err, "nope: missing", "member: at the top, the key alone");
  cmg__fields_member(&rd, o, "devices[2]", "nope", &got);
  is_str(err, "devices[2].nope: missing", "member: below, by its path");

  cmg__fields_wrong(&rd, "a", "n", "W", cJSON_GetObjectItem(o, "n"));
  is_str(err, "a.n: expected W, got 3", "wrong: a number is shown");
  cmg__fields_wrong(&rd, "", "s", "W", cJSON_GetObjectItem(o, "s"));
  is_str(err, "s: expected W, got \"short\"", "wrong: a short string too");
  cmg__fields_wrong(&rd, "", "l", "W", cJSON_GetObjectItem(o, "l"));
  is_str(err, "l: expected W, got a string",
         "wrong: a long string by its kind");
  cmg__fields_wrong(&rd, "", "c", "W", cJSON_GetObjectItem(o, "c"));
  is_str(err, "c: expected W, got \"a?b\"",
         "wrong: a string shown is cleaned of controls");
  is_int(cmg__fields_fail_item(&rd, "x[2]", "W", o), -EINVAL,
         "fail_item: returns -EINVAL");
  is_str(err, "x[2]: expected W, got an object", "fail_item: the element");
  cJSON_Delete(o);
}

/* cmg__fields_int on member "v" of text: its return, with *out in *d. */
static int
int_of(const char *text, double min, double max, bool *has, double *d)
{
  cJSON *o = parse(text);
  int rc;

  *d = -42;
  rc = cmg__fields_int(&rd, o, "at", "v", min, max, has, d);
  cJSON_Delete(o);
  return rc;
}

static void
test_int(void)
{
  bool has = false;
  double d;

  is_int(int_of("{\"v\": 1}", 1, 5, NULL, &d), 0, "int: the least");
  is_int(d, 1, "int: its value");
  is_int(int_of("{\"v\": 5}", 1, 5, NULL, &d), 0, "int: the most");
  is_int(int_of("{\"v\": 5.0}", 1, 5, NULL, &d), 0, "int: 5.0 is an integer");
  is_int(int_of("{\"v\": 6}", 1, 5, NULL, &d), -EINVAL, "int: past the most");
  is_str(err, "at.v: expected an integer from 1 to 5, got 6",
         "int: the range and the value");
  ok(d == -42, "int: *out untouched when refused");
  is_int(int_of("{\"v\": 0}", 1, 5, NULL, &d), -EINVAL, "int: below the least");
  is_int(int_of("{\"v\": 2.5}", 1, 5, NULL, &d), -EINVAL, "int: a fraction");
  is_str(err, "at.v: expected an integer from 1 to 5, got 2.5",
         "int: the fraction shown");
  is_int(int_of("{\"v\": \"3\"}", 1, 5, NULL, &d), -EINVAL, "int: a string");
  is_str(err, "at.v: expected an integer from 1 to 5, got \"3\"",
         "int: the string shown");
  is_int(int_of("{\"v\": 1e999}", 0, 5, NULL, &d), -EINVAL, "int: an infinity");
  is_int(int_of("{\"v\": null}", 1, 5, NULL, &d), -EINVAL,
         "int: null, where none is allowed");
  is_str(err, "at.v: expected an integer from 1 to 5, got null",
         "int: null shown");
  is_int(int_of("{\"v\": null}", 1, 5, &has, &d), 0,
         "int: null, where it is allowed");
  ok(!has && d == 0, "int: null clears has and the value");
  is_int(int_of("{\"v\": 4}", 1, 5, &has, &d), 0, "int: a value, null allowed");
  ok(has && d == 4, "int: sets has and the value");
  is_int(int_of("{\"v\": 9}", 1, 5, &has, &d), -EINVAL,
         "int: refused, null allowed");
  is_str(err, "at.v: expected an integer from 1 to 5 or null, got 9",
         "int: the line says null would do");
  int_of("{\"v\": -1}", 0, CMG__FIELDS_EXACT_MAX, NULL, &d);
  is_str(err, "at.v: expected an integer from 0 to 2^53, got -1",
         "int: a range to 2^53 says so");
  int_of("{}", 0, 5, NULL, &d);
  is_str(err, "at.v: missing", "int: a missing member");
}

static void
test_count_and_device(void)
{
  cJSON *o = parse("{\"max\": 9007199254740992, \"past\": 9007199254740994, "
                   "\"neg\": -1, \"frac\": 1.5, \"z\": 0, \"null\": null, "
                   "\"d0\": 0, \"d63\": 63, \"d64\": 64, \"dneg\": -1}");
  uint64_t u = 7;
  bool has = true;
  int dev = 7;

  is_int(cmg__fields_count(&rd, o, "", "max", NULL, &u), 0, "count: 2^53");
  is_u64(u, 9007199254740992ull, "count: 2^53 exactly");
  is_int(cmg__fields_count(&rd, o, "", "past", NULL, &u), -EINVAL,
         "count: past 2^53 is refused");
  is_u64(u, 0, "count: a refused count reads as 0");
  is_int(cmg__fields_count(&rd, o, "", "neg", NULL, &u), -EINVAL,
         "count: negative");
  is_str(err, "neg: expected an integer from 0 to 2^53, got -1",
         "count: the line");
  is_int(cmg__fields_count(&rd, o, "", "frac", NULL, &u), -EINVAL,
         "count: a fraction");
  is_int(cmg__fields_count(&rd, o, "", "z", NULL, &u), 0, "count: zero");
  is_int(cmg__fields_count(&rd, o, "", "null", &has, &u), 0,
         "count: null where allowed");
  ok(!has && u == 0, "count: null clears has");

  is_int(cmg__fields_device(&rd, o, "", "d0", false, &dev), 0, "device: 0");
  is_int(dev, 0, "device: 0 read");
  is_int(cmg__fields_device(&rd, o, "", "d63", false, &dev), 0, "device: 63");
  is_int(dev, 63, "device: 63 read");
  dev = 7;
  is_int(cmg__fields_device(&rd, o, "", "d64", true, &dev), -EINVAL,
         "device: 64 is past the library's devices");
  is_str(err, "d64: expected an integer from 0 to 63 or null, got 64",
         "device: the line, null allowed");
  is_int(dev, 7, "device: *out untouched when refused");
  is_int(cmg__fields_device(&rd, o, "", "dneg", false, &dev), -EINVAL,
         "device: negative");
  is_str(err, "dneg: expected an integer from 0 to 63, got -1",
         "device: the line, null not allowed");
  is_int(cmg__fields_device(&rd, o, "", "null", true, &dev), 0,
         "device: null, host memory allowed");
  is_int(dev, -1, "device: null reads as -1");
  is_int(cmg__fields_device(&rd, o, "", "null", false, &dev), -EINVAL,
         "device: null where a device must be");
  cJSON_Delete(o);
}

static void
test_number_and_string(void)
{
  cJSON *o = parse("{\"f\": -2.5, \"s\": \"one\\ttwo\", \"n\": null, "
                   "\"three\": 3, \"e\": \"\"}");
  double d = 0;
  char *s = (char *)"untouched";

  is_int(cmg__fields_number(&rd, o, "", "f", &d), 0, "number: a fraction");
  ok(d == -2.5, "number: its value");
  is_int(cmg__fields_number(&rd, o, "p", "s", &d), -EINVAL,
         "number: a string is refused");
  is_str(err, "p.s: expected a number, got \"one?two\"", "number: the line");
  is_int(cmg__fields_number(&rd, o, "", "n", &d), -EINVAL,
         "number: null is refused");

  is_int(cmg__fields_string(&rd, o, "", "s", false, &s), 0, "string: read");
  is_str(s, "one?two", "string: copied, cleaned");
  free(s);
  is_int(cmg__fields_string(&rd, o, "", "e", false, &s), 0, "string: empty");
  is_str(s, "", "string: empty read as empty");
  free(s);
  is_int(cmg__fields_string(&rd, o, "", "n", true, &s), 0,
         "string: null where nullable");
  ok(s == NULL, "string: null reads as NULL");
  is_int(cmg__fields_string(&rd, o, "", "n", false, &s), -EINVAL,
         "string: null where not nullable");
  is_str(err, "n: expected a string, got null", "string: the line");
  is_int(cmg__fields_string(&rd, o, "x", "three", true, &s), -EINVAL,
         "string: a number");
  is_str(err, "x.three: expected a string or null, got 3",
         "string: the line says null would do");
  ok(s == NULL, "string: NULL when refused");
  is_int(cmg__fields_string(&rd, o, "", "gone", true, &s), -EINVAL,
         "string: missing, even where nullable");
  cJSON_Delete(o);
}

static void
test_name(void)
{
  char *text = malloc(CMG__TOOL_NAME_MAX + 2);
  cJSON *o = cJSON_CreateObject();
  char *s = NULL;

  memset(text, 'a', CMG__TOOL_NAME_MAX + 1);
  text[CMG__TOOL_NAME_MAX + 1] = '\0';
  cJSON_AddStringToObject(o, "long", text);
  text[CMG__TOOL_NAME_MAX] = '\0';
  cJSON_AddStringToObject(o, "most", text);
  cJSON_AddNullToObject(o, "null");
  free(text);

  is_int(cmg__fields_name(&rd, o, "", "most", false, &s), 0,
         "name: CMG__TOOL_NAME_MAX bytes are read");
  is_u64(s != NULL ? strlen(s) : 0, CMG__TOOL_NAME_MAX, "name: all of them");
  free(s);
  is_int(cmg__fields_name(&rd, o, "modules[1]", "long", false, &s), -EINVAL,
         "name: one byte more is refused");
  is_str(err,
         "modules[1].long: 65537 bytes long, more than the 65536 this tool "
         "reads of a name",
         "name: the line gives the length and the limit");
  ok(s == NULL, "name: NULL when refused");
  is_int(cmg__fields_name(&rd, o, "", "null", true, &s), 0,
         "name: null where nullable");
  is_int(cmg__fields_name(&rd, o, "", "null", false, &s), -EINVAL,
         "name: null where not");
  is_str(err, "null: expected a string, got null", "name: as a string says");
  cJSON_Delete(o);
}

static void
test_hex(void)
{
  static const struct {
    const char *json;
    uint64_t want;
    const char *error; /* NULL: read */
  } cases[] = {
    { "\"0x0\"", 0, NULL },
    { "\"0x7f00dead\"", 0x7f00deadull, NULL },
    { "\"0xffffffffffffffff\"", UINT64_MAX, NULL },
    { "\"0x0000000000000001\"", 1, NULL },
    { "\"0x10000000000000000\"", 0,
      "a \"0x...\" string of at most 16 hex digits, got "
      "\"0x10000000000000000\"" },
    { "\"0x\"", 0, "a \"0x...\" string of at most 16 hex digits, got \"0x\"" },
    { "\"1234\"", 0,
      "a \"0x...\" string of at most 16 hex digits, got \"1234\"" },
    { "\"0X12\"", 0,
      "a \"0x...\" string of at most 16 hex digits, got \"0X12\"" },
    { "4096", 0, "a \"0x...\" string of at most 16 hex digits, got 4096" },
    { "\"0xAB\"", 0, "lower-case hex digits after \"0x\", got \"0xAB\"" },
    { "\"0x12g\"", 0, "lower-case hex digits after \"0x\", got \"0x12g\"" },
    { "null", 0, "a \"0x...\" string of at most 16 hex digits, got null" },
  };

  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char text[128], want[256];
    uint64_t u = 99;

    snprintf(text, sizeof(text), "{\"a\": %s}", cases[i].json);
    cJSON *o = parse(text);
    int rc = cmg__fields_hex(&rd, o, "f", "a", NULL, &u);
    if (cases[i].error == NULL) {
      ok(rc == 0 && u == cases[i].want, "hex: %s reads as %#llx", cases[i].json,
         (unsigned long long)cases[i].want);
    } else {
      snprintf(want, sizeof(want), "f.a: expected %s", cases[i].error);
      ok(rc == -EINVAL, "hex: %s is refused", cases[i].json);
      is_str(err, want, "hex: %s: the line", cases[i].json);
    }
    cJSON_Delete(o);
  }

  cJSON *o = parse("{\"a\": null, \"b\": \"0x1f\"}");
  bool has = true;
  uint64_t u = 5;
  is_int(cmg__fields_hex(&rd, o, "", "a", &has, &u), 0,
         "hex: null where allowed");
  ok(!has && u == 0, "hex: null clears has and the value");
  is_int(cmg__fields_hex(&rd, o, "", "b", &has, &u), 0,
         "hex: a value, null allowed");
  ok(has && u == 0x1f, "hex: sets has and the value");
  cJSON_Delete(o);
}

static void
test_containers(void)
{
  cJSON *o = parse("{\"arr\": [1, {}, 3], \"obj\": {\"k\": 1}, \"nul\": null, "
                   "\"num\": 1}");
  const cJSON *got = NULL;
  size_t n = 0;
  char at[32];

  is_int(cmg__fields_array(&rd, o, "", "arr", &got, &n), 0, "array: read");
  ok(cJSON_IsArray(got) && n == 3, "array: its length");
  is_int(cmg__fields_array(&rd, o, "", "obj", &got, &n), -EINVAL,
         "array: an object is refused");
  is_str(err, "obj: expected an array, got an object", "array: the line");
  is_int(cmg__fields_array(&rd, o, "", "nul", &got, &n), -EINVAL,
         "array: null is refused");

  is_int(cmg__fields_object(&rd, o, "", "obj", &got), 0, "object: read");
  ok(cJSON_IsObject(got), "object: the member");
  is_int(cmg__fields_object(&rd, o, "top", "arr", &got), -EINVAL,
         "object: an array is refused");
  is_str(err, "top.arr: expected an object, got an array", "object: the line");
  is_int(cmg__fields_object(&rd, o, "", "gone", &got), -EINVAL,
         "object: missing is refused");

  is_int(cmg__fields_optional_object(&rd, o, "", "obj", &got), 0,
         "optional object: an object");
  ok(cJSON_IsObject(got), "optional object: the member");
  got = o;
  is_int(cmg__fields_optional_object(&rd, o, "", "nul", &got), 0,
         "optional object: null");
  ok(got == NULL, "optional object: null reads as NULL");
  got = o;
  is_int(cmg__fields_optional_object(&rd, o, "", "gone", &got), 0,
         "optional object: absent");
  ok(got == NULL, "optional object: absent reads as NULL");
  is_int(cmg__fields_optional_object(&rd, o, "d[0]", "num", &got), -EINVAL,
         "optional object: a number is refused");
  is_str(err, "d[0].num: expected an object or null, got 1",
         "optional object: the line");

  const cJSON *arr = cJSON_GetObjectItem(o, "arr");
  is_int(cmg__fields_element(&rd, cJSON_GetArrayItem(arr, 1), "leaks", 1, at,
                             sizeof(at)),
         0, "element: an object");
  is_str(at, "leaks[1]", "element: its path");
  is_int(cmg__fields_element(&rd, cJSON_GetArrayItem(arr, 2), "leaks", 2, at,
                             sizeof(at)),
         -EINVAL, "element: a number is refused");
  is_str(err, "leaks[2]: expected an object, got a number",
         "element: the line");
  cJSON_Delete(o);
}

static void
test_table(void)
{
  uint64_t *t = cmg__fields_table(4, sizeof(*t));

  ok(t != NULL && t[0] == 0 && t[3] == 0, "table: zeroed elements");
  free(t);
  t = cmg__fields_table(0, sizeof(*t));
  ok(t != NULL, "table: not NULL for an empty array");
  free(t);
}

int
main(void)
{
  test_fail_and_kind();
  test_messages();
  test_int();
  test_count_and_device();
  test_number_and_string();
  test_name();
  test_hex();
  test_containers();
  test_table();
  return done_testing();
}
