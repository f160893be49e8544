/*
 * Unit tests of read_stacks.c: a report's modules[], frames[] and
 * stacks[], and the stack ids the rest of it names stacks by.  Every
 * index is checked against the table read before (a frame's module, a
 * stack's frames, which may name only the frames the report recorded,
 * never a cut's frame added by an earlier stack), since a command would
 * follow it.  A stack's cuts become frames of their own at their places,
 * in the order written, named for what was left out; the limits of
 * tool.h (1024 frames and cuts a stack) hold at the edge; an id given to
 * two stacks is refused, since a reference to it would name either.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reader/load/fields.h"
#include "reader/load/model.h"
#include "reader/load/read.h"
#include "reader/load/read_stacks.h"
#include "reader/tool.h"
#include "../tap.h"
#include "report_harness.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char err[CMG__TOOL_ERR_MAX];
static struct cmg__fields_reader rd = { err, sizeof(err) };
static struct cmg__model_report r;
static struct cmg__read_stacks_id *ids;

/* The three readers over root in read.c's order, into r and ids. */
static int
read_all(const cJSON *root)
{
  int rc;

  cmg__read_report_free(&r);
  free(ids);
  ids = NULL;
  err[0] = '\0';
  rc = cmg__read_stacks_modules(&rd, root, &r.modules, &r.n_modules);
  if (rc == 0)
    rc =
        cmg__read_stacks_frames(&rd, root, r.n_modules, &r.frames, &r.n_frames);
  if (rc == 0)
    rc = cmg__read_stacks_list(&rd, root, &r.frames, &r.n_frames, &r.stacks,
                               &r.n_stacks, &ids);
  return rc;
}

/* The base report with up to two members set; read_all's return. */
static int
read_with(const char *p1, const char *v1, const char *p2, const char *v2)
{
  cJSON *root = report_tree();
  int rc;

  if (p1 != NULL)
    report_set(root, p1, v1);
  if (p2 != NULL)
    report_set(root, p2, v2);
  rc = read_all(root);
  cJSON_Delete(root);
  return rc;
}

/* Stack s's frames as a list of indexes, "2 3 0". */
static const char *
frames_of(uint32_t s)
{
  static char buf[256];
  size_t n = 0;

  buf[0] = '\0';
  for (uint32_t i = 0; s < r.n_stacks && i < r.stacks[s].n; i++)
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%u", i ? " " : "",
                          r.stacks[s].frames[i]);
  return buf;
}

static void
test_base(void)
{
  is_int(read_with(NULL, NULL, NULL, NULL), 0, "the base tables read");
  is_int(r.n_modules, 2, "two modules");
  is_str(r.modules[1].path, "/nonexistent/libm.so", "a module's path");
  is_str(r.modules[1].build_id, "cd34", "its build-id");
  is_int(r.n_frames, 4, "three frames, and one more for the cut");
  const struct cmg__model_frame *f = &r.frames[0];
  ok(f->address == 0x401a2b && f->module == 0 && f->has_offset &&
         f->offset == 0x1a2b,
     "frame 0: address, module, offset");
  ok(f->function != NULL && strcmp(f->function, "alloc_weights") == 0 &&
         f->name == NULL && f->has_function_offset &&
         f->function_offset == 18 && !f->python && f->cut == 0,
     "frame 0: function and its offset, native");
  f = &r.frames[2];
  ok(f->module == CMG__TOOL_NONE && !f->has_offset && f->function == NULL &&
         !f->has_function_offset,
     "frame 2: no module, offset or function");
  is_int(r.n_stacks, 2, "two stacks");
  ok(!r.stacks[0].truncated && r.stacks[1].truncated, "truncated as written");
  is_str(frames_of(0), "0 1", "stack 0: its frames, innermost first");
  is_str(frames_of(1), "2 3 0", "stack 1: the cut's frame at its place");
  f = &r.frames[r.n_frames > 3 ? 3 : 0];
  ok(f->cut == 5 && f->module == CMG__TOOL_NONE && f->function != NULL &&
         strcmp(f->function, "[5 native frames not recorded]") == 0,
     "the cut's frame: how many, named for them");
  ok(ids[0].id == 7 && ids[0].index == 1 && ids[1].id == 13 &&
         ids[1].index == 0,
     "the ids, sorted by id, with their stacks");
}

static void
test_python_frame(void)
{
  is_int(read_with("frames[1].lang", "\"python\"", "frames[1].file",
                   "\"/srv/train.py\""),
         -EINVAL, "a Python frame needs its line");
  is_str(err, "frames[1].line: missing", "... which it says");
  cJSON *root = report_tree();
  report_set(root, "frames[1].lang", "\"python\"");
  report_set(root, "frames[1].file", "\"/srv/\\u001btrain.py\"");
  report_set(root, "frames[1].line", "42");
  report_set(root, "frames[2].lang", "\"python\"");
  report_set(root, "frames[2].file", "\"<string>\"");
  report_set(root, "frames[2].line", "null");
  is_int(read_all(root), 0, "Python frames read");
  cJSON_Delete(root);
  ok(r.frames[1].python && r.frames[1].line == 42 && r.frames[1].file &&
         strcmp(r.frames[1].file, "/srv/?train.py") == 0,
     "a Python frame: its file, cleaned, and line");
  ok(r.frames[2].python && r.frames[2].line == 0, "a null line reads as 0");
  ok(!r.frames[0].python && r.frames[0].file == NULL,
     "a frame without lang is native");
}

static void
test_cuts(void)
{
  static const struct {
    const char *cuts, *want, *name, *what;
  } cases[] = {
    { "[{\"at\": 0, \"frames\": 1, \"lang\": \"native\"}]", "3 2 0",
      "[1 native frame not recorded]", "a cut of one frame, before all" },
    { "[{\"at\": 2, \"frames\": null, \"lang\": \"python\"}]", "2 0 3",
      "[more Python frames not recorded]",
      "a cut of unknown size, at the end" },
    { "[{\"at\": 1, \"frames\": 2, \"lang\": \"native\"},"
      " {\"at\": 1, \"frames\": 3, \"lang\": \"python\"}]",
      "2 3 4 0", "[2 native frames not recorded]",
      "two cuts at one place, in the order written" },
    { "[{\"at\": 0, \"frames\": 2, \"lang\": \"native\"},"
      " {\"at\": 2, \"frames\": 3, \"lang\": \"python\"}]",
      "3 2 0 4", "[2 native frames not recorded]", "two cuts at two places" },
    { "[]", "2 0", NULL, "no cuts" },
  };

  for (size_t i = 0; i < N(cases); i++) {
    is_int(read_with("stacks[1].cuts", cases[i].cuts, NULL, NULL), 0,
           "cuts: %s", cases[i].what);
    is_str(frames_of(1), cases[i].want, "... their frames' places");
    if (cases[i].name != NULL)
      is_str(r.n_frames > 3 ? r.frames[3].function : NULL, cases[i].name,
             "... the first one's name");
  }
  read_with("stacks[1].cuts[0].frames", "null", NULL, NULL);
  is_u64(r.n_frames > 3 ? r.frames[3].cut : 0, CMG__MODEL_CUT_UNKNOWN,
         "cuts: an unknown count is CMG__MODEL_CUT_UNKNOWN");
  read_with("stacks[1].cuts", NULL, NULL, NULL);
  is_int(r.n_frames, 3, "cuts: a stack without them adds no frame");
}

/* A stack of n frames (all frame 0) and, when cut, one cut at its end. */
static int
read_long(unsigned n, bool cut)
{
  char *list = malloc(n * 2 + 64), *p = list;
  int rc;

  *p++ = '[';
  for (unsigned i = 0; i < n; i++)
    p += sprintf(p, "%s0", i ? "," : "");
  strcpy(p, "]");
  rc = read_with("stacks[0].frames", list, "stacks[0].cuts",
                 cut ? "[{\"at\": 0, \"frames\": 1, \"lang\": \"native\"}]"
                     : "[]");
  free(list);
  return rc;
}

static void
test_limits(void)
{
  is_int(read_long(CMG__TOOL_STACK_MAX, false), 0,
         "a stack of CMG__TOOL_STACK_MAX frames reads");
  is_int(r.stacks[0].n, CMG__TOOL_STACK_MAX, "all of them");
  is_int(read_long(CMG__TOOL_STACK_MAX + 1, false), -EINVAL,
         "one frame more is refused");
  is_str(err,
         "stacks[0].frames: 1025 frames, more than the 1024 this tool reads "
         "of a stack",
         "... in one line");
  is_int(read_long(CMG__TOOL_STACK_MAX - 1, true), 0,
         "frames and a cut up to the limit read");
  is_int(r.stacks[0].n, CMG__TOOL_STACK_MAX, "the cut counted in the stack");
  is_int(read_long(CMG__TOOL_STACK_MAX, true), -EINVAL,
         "a cut past the limit is refused");
  is_str(err,
         "stacks[0].cuts: 1 cuts after 1024 frames, more than the 1024 "
         "frames and cuts this tool reads of a stack",
         "... in one line");
}

static void
test_refused(void)
{
  static const struct {
    const char *p1, *v1, *p2, *v2, *want;
  } cases[] = {
    { "modules", "{}", 0, 0, "modules: expected an array, got an object" },
    { "modules[0]", "3", 0, 0, "modules[0]: expected an object, got a number" },
    { "modules[0].path", "null", 0, 0,
      "modules[0].path: expected a string, got null" },
    { "modules[1].build_id", NULL, 0, 0, "modules[1].build_id: missing" },
    { "frames", NULL, 0, 0, "frames: missing" },
    { "frames[0].module", "2", 0, 0,
      "frames[0].module: 2 is out of range (2 modules)" },
    { "frames[0].module", "-1", 0, 0,
      "frames[0].module: expected an integer from 0 to 2^53 or null, got -1" },
    { "frames[1].address", "\"0x12345678901234567\"", 0, 0,
      "frames[1].address: expected a \"0x...\" string of at most 16 hex "
      "digits, got \"0x12345678901234567\"" },
    { "frames[1].address", "null", 0, 0,
      "frames[1].address: expected a \"0x...\" string of at most 16 hex "
      "digits, got null" },
    { "frames[2].offset", "4096", 0, 0,
      "frames[2].offset: expected a \"0x...\" string of at most 16 hex "
      "digits, got 4096" },
    { "frames[0].function", "7", 0, 0,
      "frames[0].function: expected a string or null, got 7" },
    { "frames[0].function_offset", "-3", 0, 0,
      "frames[0].function_offset: expected an integer from 0 to 2^53 or "
      "null, got -3" },
    { "frames[0].lang", "\"rust\"", 0, 0,
      "frames[0].lang: expected \"python\", got \"rust\"" },
    { "frames[0].lang", "\"python\"", 0, 0, "frames[0].file: missing" },
    { "stacks", "null", 0, 0, "stacks: expected an array, got null" },
    { "stacks[1]", "[]", 0, 0, "stacks[1]: expected an object, got an array" },
    { "stacks[0].id", "0", 0, 0,
      "stacks[0].id: expected an integer from 1 to 2^53, got 0" },
    { "stacks[0].truncated", "\"no\"", 0, 0,
      "stacks[0].truncated: expected a boolean, got \"no\"" },
    { "stacks[0].truncated", NULL, 0, 0, "stacks[0].truncated: missing" },
    { "stacks[0].frames[1]", "3", 0, 0,
      "stacks[0].frames[1]: expected an index into frames[] (3 frames), got "
      "3" },
    { "stacks[1].frames[0]", "\"x\"", 0, 0,
      "stacks[1].frames[0]: expected an index into frames[] (3 frames), got "
      "\"x\"" },
    { "stacks[0].frames[0]", "0.5", 0, 0,
      "stacks[0].frames[0]: expected an index into frames[] (3 frames), got "
      "0.5" },
    { "stacks[0].frames[0]", "-1", 0, 0,
      "stacks[0].frames[0]: expected an index into frames[] (3 frames), got "
      "-1" },
    /* The first stack's cut made frame 3; the second may not name it. */
    { "stacks[0].cuts", "[{\"at\": 0, \"frames\": 1, \"lang\": \"native\"}]",
      "stacks[1].frames", "[3]",
      "stacks[1].frames[0]: expected an index into frames[] (3 frames), got "
      "3" },
    { "stacks[1].cuts", "{}", 0, 0,
      "stacks[1].cuts: expected an array, got an object" },
    { "stacks[1].cuts[0]", "1", 0, 0,
      "stacks[1].cuts[0]: expected an object, got a number" },
    { "stacks[1].cuts[0].at", "3", 0, 0,
      "stacks[1].cuts[0].at: expected an integer from 0 to 2, got 3" },
    { "stacks[1].cuts[0].at", "-1", 0, 0,
      "stacks[1].cuts[0].at: expected an integer from 0 to 2, got -1" },
    { "stacks[1].cuts[0].frames", "0", 0, 0,
      "stacks[1].cuts[0].frames: expected an integer from 1 to 4294967294 or "
      "null, got 0" },
    { "stacks[1].cuts[0].lang", "\"rust\"", 0, 0,
      "stacks[1].cuts[0].lang: expected \"native\" or \"python\", got "
      "\"rust\"" },
    { "stacks[1].cuts[0].lang", NULL, 0, 0, "stacks[1].cuts[0].lang: missing" },
    { "stacks[1].cuts",
      "[{\"at\": 2, \"frames\": 1, \"lang\": \"native\"},"
      " {\"at\": 1, \"frames\": 1, \"lang\": \"native\"}]",
      0, 0, "stacks[1].cuts[1].at: 1 comes before the cut listed before" },
  };

  for (size_t i = 0; i < N(cases); i++) {
    is_int(read_with(cases[i].p1, cases[i].v1, cases[i].p2, cases[i].v2),
           -EINVAL, "refused: %s = %s", cases[i].p1,
           cases[i].v1 ? cases[i].v1 : "(removed)");
    is_str(err, cases[i].want, "... in one line");
  }

  is_int(read_with("stacks[1].id", "13", NULL, NULL), -EINVAL,
         "refused: an id given to two stacks");
  ok(strncmp(err, "stacks[", 7) == 0 &&
         strstr(err, "].id: 13 is the id of two stacks") != NULL,
     "... naming a stack and the id");
  if (strstr(err, "two stacks") == NULL)
    printf("#   got: %s\n", err);
}

static void
test_ref(void)
{
  cJSON *o = cJSON_Parse("[{\"stack\": 13}, {\"stack\": 7}, {\"stack\": null},"
                         " {\"stack\": 99}, {}, {\"stack\": 0}]");
  uint32_t s = 42;

  read_with(NULL, NULL, NULL, NULL);
  is_int(cmg__read_stacks_ref(&rd, cJSON_GetArrayItem(o, 0), "a", ids,
                              r.n_stacks, &s),
         0, "ref: an id");
  is_int(s, 0, "ref: id 13 is stack 0");
  cmg__read_stacks_ref(&rd, cJSON_GetArrayItem(o, 1), "a", ids, r.n_stacks, &s);
  is_int(s, 1, "ref: id 7 is stack 1");
  is_int(cmg__read_stacks_ref(&rd, cJSON_GetArrayItem(o, 2), "a", ids,
                              r.n_stacks, &s),
         0, "ref: null");
  is_u64(s, CMG__TOOL_NONE, "ref: null is no stack");
  is_int(cmg__read_stacks_ref(&rd, cJSON_GetArrayItem(o, 3), "leaks[3]", ids,
                              r.n_stacks, &s),
         -EINVAL, "ref: an id no stack has");
  is_str(err, "leaks[3].stack: 99 is not the id of a stack in stacks[]",
         "ref: ... in one line");
  is_int(cmg__read_stacks_ref(&rd, cJSON_GetArrayItem(o, 4), "x", ids,
                              r.n_stacks, &s),
         -EINVAL, "ref: a missing stack");
  is_str(err, "x.stack: missing", "ref: ... in one line");
  is_int(cmg__read_stacks_ref(&rd, cJSON_GetArrayItem(o, 5), "x", ids,
                              r.n_stacks, &s),
         -EINVAL, "ref: id 0, which no stack may have");
  is_str(err, "x.stack: expected an integer from 1 to 2^53 or null, got 0",
         "ref: ... in one line");
  is_int(cmg__read_stacks_ref(&rd, cJSON_GetArrayItem(o, 0), "x", NULL, 0, &s),
         -EINVAL, "ref: no stacks at all");
  cJSON_Delete(o);
}

int
main(void)
{
  test_base();
  test_python_frame();
  test_cuts();
  test_limits();
  test_refused();
  test_ref();
  cmg__read_report_free(&r);
  free(ids);
  return done_testing();
}
