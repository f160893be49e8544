/*
 * Unit tests of run.c, the stages every command runs before it prints:
 * reports loaded (their frames named: a module not on this machine gets
 * its note) and folded into a view, the view finished (sorted, the
 * suppressions applied afresh, so a second finish counts nothing twice),
 * a pair read into two views over one index, and the reports as written
 * for the commands that draw time.  The commands stop at the first bad
 * report, since a summary that skipped one would be a wrong answer, so
 * each stage must stop there and say one line on stderr naming the file
 * and the loader's reason, and nothing when all is well.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "reader/load/model.h"
#include "reader/load/read.h"
#include "reader/model/index.h"
#include "reader/model/supp.h"
#include "reader/model/symbolize.h"
#include "reader/model/view.h"
#include "reader/run/run.h"
#include "reader/tool.h"
#include "../tap.h"
#include "report_harness.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define TOOL CMG__TOOL_NAME ": "

static char base[320], bigger[320], bad[320], untimed[320], missing[320];
static char said[4096];
static int saved_stderr = -1;

/* Standard error into a file of the test's folder until said_end(). */
static void
said_begin(void)
{
  const char *path = report_write_file("said.txt", "", 0);
  int fd = open(path, O_WRONLY | O_TRUNC);

  fflush(stderr);
  saved_stderr = dup(STDERR_FILENO);
  dup2(fd, STDERR_FILENO);
  close(fd);
}

/* What was said since said_begin(). */
static const char *
said_end(void)
{
  char path[512];
  FILE *f;
  size_t n = 0;

  fflush(stderr);
  dup2(saved_stderr, STDERR_FILENO);
  close(saved_stderr);
  snprintf(path, sizeof(path), "%s/said.txt", report_dir);
  if ((f = fopen(path, "r")) != NULL) {
    n = fread(said, 1, sizeof(said) - 1, f);
    fclose(f);
  }
  said[n] = '\0';
  return said;
}

/* "cumemguard-report: FILE: WHAT\n" */
static const char *
line_for(const char *file, const char *what)
{
  static char buf[1024];

  snprintf(buf, sizeof(buf), TOOL "%s: %s\n", file, what);
  return buf;
}

static void
make_files(void)
{
  snprintf(
      base, sizeof(base), "%s",
      report_write_file("base.json", report_base, sizeof(report_base) - 1));
  /* The stackless group grows past the others, to be sorted first. */
  snprintf(bigger, sizeof(bigger), "%s",
           report_write_with("bigger.json", "leaks[2].bytes", "9999999"));
  snprintf(bad, sizeof(bad), "%s",
           report_write_with("bad.json", "process", NULL));
  snprintf(untimed, sizeof(untimed), "%s",
           report_write_with("untimed.json", "timeline", NULL));
  snprintf(missing, sizeof(missing), "%s/none.json", report_dir);
}

static void
test_load(void)
{
  struct cmg__index ix;
  struct cmg__view v;

  cmg__index_init(&ix);
  cmg__view_init(&v, &ix, false);
  said_begin();
  int rc = cmg__run_load(&v, base);
  is_str(said_end(), "", "load: nothing said of a good report");
  is_int(rc, 0, "load: a good report");
  ok(v.n_sources == 1 && strcmp(v.sources[0].file, base) == 0 &&
         v.sources[0].pid == 4242,
     "load: the report is a source of the view");
  ok(v.n_leaks == 3 && v.n_devices == 2, "load: its groups and devices");
  ok(ix.n_modules == 2 && ix.modules[0].note != NULL &&
         strcmp(ix.modules[0].note, "not found here") == 0,
     "load: its frames named, a module not here noted");

  said_begin();
  rc = cmg__run_load(&v, bad);
  is_str(said_end(), line_for(bad, "process: missing"),
         "load: a bad report said in one line, with its file");
  is_int(rc, -EINVAL, "load: a bad report is refused");
  is_int(v.n_sources, 1, "load: and adds nothing to the view");

  said_begin();
  rc = cmg__run_load(&v, missing);
  is_str(said_end(),
         line_for(missing, "cannot open: No such file or directory"),
         "load: a missing file said");
  is_int(rc, -EINVAL, "load: a missing file is refused");

  cmg__run_load(&v, base);
  ok(v.n_sources == 2 && v.n_leaks == 3 && v.leaks[0].bytes == 2 * 4194304,
     "load: the same groups of a second report are one");
  cmg__view_free(&v);
  cmg__index_free(&ix);
}

/* The index of the view's group of API api, or -1. */
static int
group_of(const struct cmg__view *v, const char *api)
{
  for (size_t i = 0; i < v->n_leaks; i++)
    if (strcmp(v->leaks[i].api, api) == 0)
      return (int)i;
  return -1;
}

static void
test_load_all(void)
{
  struct cmg__index ix;
  struct cmg__view v;
  struct cmg__supp supp;
  char err[CMG__TOOL_ERR_MAX] = "";
  const char *rules = report_write_file("host.supp", "leak:cudaMallocHost\n",
                                        strlen("leak:cudaMallocHost\n"));

  memset(&supp, 0, sizeof(supp));
  if (cmg__supp_load(&supp, rules, err, sizeof(err)) != 0)
    printf("# %s\n", err);
  char *stops[] = { base, bad, bigger };
  cmg__index_init(&ix);
  cmg__view_init(&v, &ix, false);
  said_begin();
  int rc = cmg__run_load_all(&v, stops, N(stops), &supp);
  is_str(said_end(), line_for(bad, "process: missing"),
         "load_all: one line, for the bad report");
  is_int(rc, -EINVAL, "load_all: stops at a bad report");
  is_int(v.n_sources, 1, "load_all: nothing after it is read");
  is_u64(supp.rules[0].count, 0, "load_all: nor finished");
  cmg__view_free(&v);

  char *files[] = { base, bigger };
  cmg__view_init(&v, &ix, false);
  is_int(cmg__run_load_all(&v, files, N(files), &supp), 0,
         "load_all: two reports");
  ok(v.n_sources == 2 && v.n_leaks == 3, "load_all: both in one view");
  ok(v.n_leaks == 3 && strcmp(v.leaks[0].api, "cuMemAlloc_v2") == 0 &&
         v.leaks[0].bytes == 1048576 + 9999999 &&
         v.leaks[1].bytes == 2 * 4194304 && v.leaks[2].bytes == 2 * 2097152,
     "load_all: finished, the groups largest first");
  int host = group_of(&v, "cudaMallocHost");
  ok(host >= 0 && v.leaks[host].rule == 0 &&
         v.leaks[group_of(&v, "cudaMalloc")].rule == CMG__TOOL_NONE,
     "load_all: the suppression hides the group it matches, only it");
  ok(supp.rules[0].count == 6 && supp.rules[0].bytes == 2 * 2097152,
     "load_all: the rule counts what it hid");
  cmg__view_free(&v);
  cmg__index_free(&ix);
  cmg__supp_free(&supp);
}

struct pair_seen {
  int calls, rc;
  size_t base_sources, new_sources;
  bool one_index, by_ordinal;
  uint64_t base_bytes, new_bytes;
};

static int
pair_done(const struct cmg__view *b, const struct cmg__view *n, void *arg)
{
  struct pair_seen *s = arg;

  s->calls++;
  s->base_sources = b->n_sources;
  s->new_sources = n->n_sources;
  s->one_index = b->ix == n->ix && b->ix != NULL;
  s->by_ordinal = !b->by_uuid && !n->by_uuid;
  s->base_bytes = b->n_leaks > 0 ? b->leaks[0].bytes : 0;
  s->new_bytes = n->n_leaks > 0 ? n->leaks[0].bytes : 0;
  return s->rc;
}

static void
test_pair(void)
{
  struct cmg__supp supp;
  struct pair_seen s;
  char err[CMG__TOOL_ERR_MAX] = "";
  const char *rules = report_write_file("api.supp", "leak:^cuMemAlloc_v2$\n",
                                        strlen("leak:^cuMemAlloc_v2$\n"));

  memset(&supp, 0, sizeof(supp));
  if (cmg__supp_load(&supp, rules, err, sizeof(err)) != 0)
    printf("# %s\n", err);
  memset(&s, 0, sizeof(s));
  said_begin();
  int rc = cmg__run_pair(base, bigger, &supp, pair_done, &s);
  is_str(said_end(), "", "pair: nothing said");
  is_int(rc, 0, "pair: done's return");
  ok(s.calls == 1 && s.base_sources == 1 && s.new_sources == 1,
     "pair: done called once, with a view of each report");
  ok(s.one_index && s.by_ordinal,
     "pair: the views share one index, devices by ordinal");
  ok(s.base_bytes == 4194304 && s.new_bytes == 9999999,
     "pair: each view finished, sorted");
  ok(supp.rules[0].count == 1 && supp.rules[0].bytes == 9999999,
     "pair: the rule counts afresh for each view, so NEW's alone remain");
  cmg__supp_free(&supp);

  memset(&s, 0, sizeof(s));
  s.rc = -ENOMEM;
  said_begin();
  rc = cmg__run_pair(base, base, &supp, pair_done, &s);
  is_str(said_end(), TOOL "out of memory\n", "pair: done's failure said");
  is_int(rc, -ENOMEM, "pair: ... and returned");

  memset(&s, 0, sizeof(s));
  said_begin();
  rc = cmg__run_pair(base, bad, &supp, pair_done, &s);
  is_str(said_end(), line_for(bad, "process: missing"),
         "pair: a bad NEW said in one line");
  ok(rc == -1 && s.calls == 0, "pair: -1, done never called");
  said_begin();
  rc = cmg__run_pair(missing, base, &supp, pair_done, &s);
  is_str(said_end(),
         line_for(missing, "cannot open: No such file or directory"),
         "pair: a missing BASE said in one line");
  ok(rc == -1 && s.calls == 0, "pair: -1, done never called");
}

static void
test_raw(void)
{
  struct cmg__model_report *out = NULL;
  char *files[] = { base, untimed };

  said_begin();
  int rc = cmg__run_raw_read(files, 2, CMG__READ_LARGEST, &out);
  is_str(said_end(), "", "raw: nothing said of good reports");
  is_int(rc, 0, "raw: two reports read");
  ok(out != NULL && strcmp(out[0].file, base) == 0 &&
         strcmp(out[1].file, untimed) == 0,
     "raw: each as written, in order");
  ok(out != NULL && out[0].n_largest == 3 && out[1].n_largest == 3,
     "raw: with what was asked for");
  ok(out != NULL && out[0].modules[1].note != NULL &&
         strcmp(out[0].modules[1].note, "not found here") == 0,
     "raw: their frames named");

  said_begin();
  rc = cmg__run_need_timeline(out, 1);
  is_str(said_end(), "", "need_timeline: nothing said when all have one");
  is_int(rc, 0, "need_timeline: the first has one");
  said_begin();
  rc = cmg__run_need_timeline(out, 2);
  is_str(said_end(),
         line_for(untimed, "no \"timeline\" in this report (written with "
                           "timeline=0, or by an older cumemguard): expected "
                           "a report with memory over time"),
         "need_timeline: the one without said");
  is_int(rc, -1, "need_timeline: -1");

  ok(cmg__run_limit(&out[0], 0) == 17179869184ull &&
         cmg__run_limit(&out[0], 3) == 0 && cmg__run_limit(&out[0], 5) == 0,
     "limit: a device's, none where null or not listed");

  struct cmg__run_stacks st;
  is_int(cmg__run_stacks_init(&st, &out[0]), 0, "stacks: interned");
  char *line = cmg__run_stacks_line(&st, 0);
  is_str(line, "alloc_weights < libm.so+0x8d10",
         "stacks: a stack in one line, as the views name it");
  free(line);
  line = cmg__run_stacks_line(&st, CMG__TOOL_NONE);
  is_str(line, "(no stack)", "stacks: none");
  free(line);
  cmg__run_stacks_free(&st);
  ok(st.ids == NULL, "stacks: freed");
  cmg__run_raw_free(out, 2);

  char *stops[] = { base, bad, untimed };
  out = (struct cmg__model_report *)1;
  said_begin();
  rc = cmg__run_raw_read(stops, N(stops), 0, &out);
  is_str(said_end(), line_for(bad, "process: missing"),
         "raw: a bad report said in one line");
  ok(rc == -1 && out == NULL, "raw: -1, nothing kept");
}

int
main(void)
{
  if (!report_dir_make("cmgrun"))
    return 99;
  make_files();
  test_load();
  test_load_all();
  test_pair();
  test_raw();
  cmg__symbolize_end();
  report_dir_remove();
  return done_testing();
}
