/*
 * Unit tests of read.c, the loader's entry: a report file, checked, into
 * the data model.  A report is data from another program, so what reads
 * must read exactly (each member where the model puts it, the defaults of
 * older reports for what they lack: no kind is device memory, no end is
 * status -1, no options are pools on and no limits; keys a newer writer
 * adds are ignored), and what does not must give one line naming the
 * member, the format and version before anything else.  Every file of
 * tests/reader/broken gives the line expected.txt lists for it, found
 * through $srcdir; a refused report leaves nothing behind once freed
 * (valgrind checks each path).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reader/load/model.h"
#include "reader/load/read.h"
#include "reader/tool.h"
#include "../tap.h"
#include "report_harness.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char err[CMG__TOOL_ERR_MAX];
static struct cmg__model_report r;

/* Reads file with what into r, freed first; the return. */
static int
read_file(const char *file, unsigned what)
{
  cmg__read_report_free(&r);
  err[0] = '\0';
  return cmg__read_report_with(file, what, &r, err, sizeof(err));
}

/* The base report with up to two members set, read. */
static int
read_with(const char *p1, const char *v1, const char *p2, const char *v2)
{
  cJSON *root = report_tree();

  if (p1 != NULL)
    report_set(root, p1, v1);
  if (p2 != NULL)
    report_set(root, p2, v2);
  const char *path = report_write_tree("r.json", root);
  cJSON_Delete(root);
  return read_file(path, 0);
}

static void
test_base(void)
{
  const char *path =
      report_write_file("base.json", report_base, sizeof(report_base) - 1);

  is_int(read_file(path, 0), 0, "the base report reads");
  is_str(err, "", "without a line");
  is_str(r.file, path, "its file");
  ok(r.pid == 4242 && strcmp(r.exe, "/nonexistent/app") == 0 &&
         strcmp(r.hostname, "node7") == 0 && strcmp(r.reason, "exit") == 0,
     "pid, exe, hostname, reason");
  is_str(r.command, "/nonexistent/app --epochs 3", "argv joined by spaces");
  ok(r.exit_status == 3 && r.killed_by == NULL, "the exit status");
  ok(r.start_time == 100.25 && r.end_time == 142.75, "start and end times");
  ok(r.live_allocations == 6 && r.live_bytes == 7340032 &&
         r.untracked_frees == 1 && r.denials == 1,
     "the summary");
  ok(r.events[0] == 2 && r.events[1] == 3 && r.events[2] == 4,
     "the events: warn, wait, soft_limit");
  ok(r.n_modules == 2 && r.n_frames == 4 && r.n_stacks == 2,
     "the stack tables, a cut's frame among the frames");
  is_int(r.n_devices, 2, "the devices");
  is_int(r.n_leaks, 3, "the leak groups");
  const struct cmg__model_leak *l = r.leaks;
  ok(l[0].stack == 0 && strcmp(l[0].api, "cudaMalloc") == 0 &&
         strcmp(l[0].kind, "device") == 0 && l[0].device == 0 &&
         l[0].count == 2 && l[0].bytes == 4194304,
     "a group: stack by index, API, kind, device, count, bytes");
  ok(l[1].stack == 1 && l[1].device == -1 && strcmp(l[1].kind, "host") == 0,
     "host memory is device -1");
  ok(l[2].stack == CMG__TOOL_NONE && strcmp(l[2].kind, "device") == 0,
     "no stack; no kind is device memory, as older reports meant");
  ok(l[0].threads.n == 2 && l[0].threads.list[0].tid == 4242 &&
         strcmp(l[0].threads.list[0].name, "main") == 0 &&
         l[0].threads.list[1].name == NULL && l[0].threads.list[0].source == 0,
     "a group's threads, a name null where it had none");
  ok(l[1].threads.n == 0 && l[1].threads.list == NULL,
     "no threads where a group lists none");
  ok(r.n_released == 1 && r.released[0].stack == 1 &&
         r.released[0].bytes == 512,
     "the released groups");
  ok(r.has_host && !r.host.has_limit && r.host.live_bytes == 2097152 &&
         r.host.peak_bytes == 4194304 && r.host.allocations == 4,
     "host memory");
  ok(r.n_peaks == 1 && r.peaks[0].device == 0 &&
         r.peaks[0].comp.bytes == 6291456 && r.peaks[0].comp.time == 12.5 &&
         r.peaks[0].comp.n == 1 && r.peaks[0].comp.items[0].count == 3,
     "a peak and its composition");
  const struct cmg__model_denial *d = r.denials_list;
  ok(r.n_denials == 1 && d->device == 0 &&
         d->requested_bytes == 13958643712ull && d->has_limit &&
         d->limit_bytes == 17179869184ull && d->stack == 0,
     "a denial");
  ok(d->has_comp && d->comp.bytes == d->live_bytes && d->comp.time == 20.5 &&
         d->comp.n == 2 && d->comp.items[1].stack == CMG__TOOL_NONE,
     "its composition, at its live bytes and time");
  ok(r.timeline.present && r.timeline.n_series == 1, "the timeline");
  ok(r.n_largest == 0 && r.largest == NULL, "no allocations unless asked for");
  ok(!r.no_pools && r.n_gpu_soft == 0 && r.soft_limit.bytes == 0 &&
         r.pool_values[0] == NULL && r.python_note == NULL,
     "pools on, no soft limits, no switches, no Python note");

  is_int(read_file(path, CMG__READ_LARGEST), 0, "read for its allocations");
  ok(r.n_largest == 3 && r.largest[0].bytes == 3145728 &&
         r.largest[1].leak == 1,
     "the largest, largest first");
  cmg__read_report_free(&r);
  ok(r.file == NULL && r.n_leaks == 0 && r.leaks == NULL,
     "freed, the report is empty");
  cmg__read_report_free(&r);
}

static void
test_older_and_newer(void)
{
  is_int(read_with("options", NULL, "summary.events", NULL), 0,
         "no options and no events, as older reports");
  ok(!r.no_pools && r.events[1] == 0 && r.pool_values[1] == NULL,
     "... pools on, no events");
  is_int(read_with("process.end", NULL, "released", NULL), 0,
         "no end and no released groups");
  ok(r.exit_status == -1 && r.n_released == 0 && r.released == NULL,
     "... status -1, none released");
  is_int(read_with("host", NULL, "leaks[0].threads", NULL), 0,
         "no host memory and no threads");
  ok(!r.has_host && r.leaks[0].threads.n == 0, "... none of either");
  is_int(read_with("timeline", NULL, "denials[0].by_stack", NULL), 0,
         "no timeline and a denial without its composition");
  ok(!r.timeline.present && !r.denials_list[0].has_comp, "... absent");
  is_int(read_with("process.future", "{\"x\": [1]}", "next_thing", "7"), 0,
         "keys a newer writer adds are ignored");
  is_int(read_with("version", "1.0", NULL, NULL), 0, "version 1.0 is 1");
  is_int(read_with("leaks[0].allocations", "{}", NULL, NULL), 0,
         "allocations unread when not asked for");
  is_int(read_with("released[0].threads", "{}", NULL, NULL), 0,
         "threads of a released group are not read");
}

static void
test_process(void)
{
  read_with("process.end", "{\"by\": \"signal\", \"name\": \"SIGTERM\"}", NULL,
            NULL);
  ok(r.exit_status == -1 && r.killed_by != NULL &&
         strcmp(r.killed_by, "SIGTERM") == 0,
     "killed by a signal");
  read_with("process.end", "null", NULL, NULL);
  is_int(r.exit_status, -1, "a null end: status -1");
  read_with("process.end.status", "null", NULL, NULL);
  ok(r.exit_status == -1 && r.killed_by == NULL, "an exit of unknown status");
  read_with("process.end.status", "255", NULL, NULL);
  is_int(r.exit_status, 255, "status 255");
  is_int(read_with("process.argv", "[]", NULL, NULL), 0, "no argv");
  is_str(r.command, "", "... an empty command");
  read_with("process.argv[1]", "\"--x\\u001b[2J\"", NULL, NULL);
  is_str(r.command, "/nonexistent/app --x?[2J 3", "argv cleaned");
  read_with("python", "{\"note\": \"off: no libpython\"}", NULL, NULL);
  is_str(r.python_note, "off: no libpython", "the Python note");
}

static void
test_options(void)
{
  cJSON *root = report_tree();

  report_set(root, "options.no_pools", "true");
  report_set(root, "options.soft_limit", "{\"percent\": 80}");
  report_set(root, "options.soft_limits",
             "{\"2\": {\"bytes\": 1000000000}, \"15\": null}");
  report_set(root, "options.gpu_limits",
             "{\"GPU-aa\": {\"soft_limit\": {\"bytes\": 5}},"
             " \"GPU-bb\": {}}");
  report_set(root, "options.pool_switches",
             "[{\"name\": \"TF_GPU_ALLOCATOR\", \"value\": \"cuda_malloc\"},"
             " {\"name\": \"TF_GPU_ALLOCATOR\", \"value\": \"second\"},"
             " {\"name\": \"SOME_FUTURE_SWITCH\", \"value\": \"x\"},"
             " {\"name\": \"PYTORCH_NO_CUDA_MEMORY_CACHING\", \"value\": "
             "null}]");
  is_int(read_file(report_write_tree("r.json", root), 0), 0,
         "options with every limit and switch");
  cJSON_Delete(root);
  ok(r.no_pools, "no_pools");
  ok(r.soft_limit.percent == 80 && r.soft_limit.bytes == 0,
     "a soft limit in percent");
  ok(r.soft_limits[2].bytes == 1e9 && r.soft_limits[15].bytes == 0 &&
         r.soft_limits[0].bytes == 0,
     "soft limits by ordinal, up to 15");
  ok(r.n_gpu_soft == 2 && strcmp(r.gpu_soft[0].uuid, "GPU-aa") == 0 &&
         r.gpu_soft[0].soft.bytes == 5 && r.gpu_soft[1].soft.bytes == 0,
     "soft limits by GPU UUID, in order");
  is_str(r.pool_values[1], "cuda_malloc",
         "a switch's value, the first one given");
  ok(r.pool_values[0] == NULL && r.pool_values[2] == NULL,
     "unset switches; unknown ones skipped");

  char gpus[2048] = "{", uuid[64];
  for (int i = 0; i < 17; i++) {
    snprintf(uuid, sizeof(uuid), "GPU-%02d", i);
    snprintf(gpus + strlen(gpus), sizeof(gpus) - strlen(gpus), "%s\"%s\": {}",
             i ? ", " : "", uuid);
  }
  strcat(gpus, "}");
  is_int(read_with("options.gpu_limits", gpus, NULL, NULL), -EINVAL,
         "17 GPUs' limits are more than the library keys");
  is_str(err,
         "options.gpu_limits: \"GPU-16\" is not one of at most 16 GPUs, "
         "each an object of limits",
         "... naming the one past");
  memset(uuid, 'u', 47);
  uuid[47] = '\0';
  snprintf(gpus, sizeof(gpus), "{\"%s\": {}}", uuid);
  is_int(read_with("options.gpu_limits", gpus, NULL, NULL), 0,
         "a UUID of 47 bytes fits");
  snprintf(gpus, sizeof(gpus), "{\"%su\": {}}", uuid);
  is_int(read_with("options.gpu_limits", gpus, NULL, NULL), -EINVAL,
         "one of 48 does not");
}

static const struct {
  const char *p1, *v1, *p2, *v2, *want;
} refused[] = {
  { "format", NULL, 0, 0, "not a cumemguard report (no \"format\" key)" },
  { "format", "\"other\"", 0, 0,
    "not a cumemguard report (format is not \"cumemguard-report\")" },
  { "format", "1", "version", "2",
    "not a cumemguard report (format is not \"cumemguard-report\")" },
  { "version", "2", "process", NULL,
    "report version 2 is newer than this cumemguard-report reads (version "
    "1); use a newer cumemguard-report" },
  { "version", "0", 0, 0, "unknown report version 0" },
  { "version", "\"1\"", 0, 0, "version: expected an integer, got \"1\"" },
  { "version", NULL, 0, 0, "version: expected an integer, got nothing" },
  { "version", "1.5", 0, 0, "version: expected an integer, got 1.5" },
  { "process", NULL, 0, 0, "process: missing" },
  { "process.pid", "0", 0, 0,
    "process.pid: expected an integer from 1 to 2^53, got 0" },
  { "process.exe", "null", 0, 0, "process.exe: expected a string, got null" },
  { "process.end", "1", 0, 0,
    "process.end: expected an object or null, got 1" },
  { "process.end.by", "\"kill\"", 0, 0,
    "process.end.by: expected \"exit\" or \"signal\", got \"kill\"" },
  { "process.end.by", NULL, 0, 0, "process.end.by: missing" },
  { "process.end.status", "256", 0, 0,
    "process.end.status: expected an integer from 0 to 255 or null, got 256" },
  { "process.end", "{\"by\": \"signal\"}", 0, 0, "process.end.name: missing" },
  { "process.start_time", "\"now\"", 0, 0,
    "process.start_time: expected a number, got \"now\"" },
  { "process.argv[1]", "3", 0, 0,
    "process.argv[1]: expected a string, got a number" },
  { "process.argv", "\"app\"", 0, 0,
    "process.argv: expected an array, got \"app\"" },
  { "summary", NULL, 0, 0, "summary: missing" },
  { "summary.denials", "-1", 0, 0,
    "summary.denials: expected an integer from 0 to 2^53, got -1" },
  { "summary.events", "[]", 0, 0,
    "summary.events: expected an object, got an array" },
  { "summary.events.wait", NULL, 0, 0, "summary.events.wait: missing" },
  { "options", "[]", 0, 0, "options: expected an object, got an array" },
  { "options.no_pools", "1", 0, 0,
    "options.no_pools: expected true or false, got 1" },
  { "options.soft_limit", "\"700M\"", 0, 0,
    "options.soft_limit: expected null or {\"bytes\": N} or {\"percent\": "
    "P}, got \"700M\"" },
  { "options.soft_limit", "{}", 0, 0, "options.soft_limit.percent: missing" },
  { "options.soft_limits", "[]", 0, 0,
    "options.soft_limits: expected an object, got an array" },
  { "options.soft_limits", "{\"gpu0\": null}", 0, 0,
    "options.soft_limits: \"gpu0\" is no device ordinal from 0 to 15" },
  { "options.soft_limits", "{\"16\": null}", 0, 0,
    "options.soft_limits: \"16\" is no device ordinal from 0 to 15" },
  { "options.soft_limits", "{\"-1\": null}", 0, 0,
    "options.soft_limits: \"-1\" is no device ordinal from 0 to 15" },
  { "options.soft_limits", "{\"0\": {\"bytes\": \"5\"}}", 0, 0,
    "options.soft_limits.0.bytes: expected a number, got \"5\"" },
  { "options.gpu_limits", "[]", 0, 0,
    "options.gpu_limits: expected an object, got an array" },
  { "options.gpu_limits", "{\"GPU-a\": 1}", 0, 0,
    "options.gpu_limits: \"GPU-a\" is not one of at most 16 GPUs, each an "
    "object of limits" },
  { "options.gpu_limits", "{\"GPU-a\": {\"soft_limit\": {\"bytes\": \"5\"}}}",
    0, 0,
    "options.gpu_limits.GPU-a.soft_limit.bytes: expected a number, got "
    "\"5\"" },
  { "options.pool_switches", "{}", 0, 0,
    "options.pool_switches: expected an array, got an object" },
  { "options.pool_switches", "[1]", 0, 0,
    "options.pool_switches: expected objects, got 1" },
  { "options.pool_switches", "[{\"value\": \"1\"}]", 0, 0,
    "options.pool_switches[].name: missing" },
  { "options.pool_switches", "[{\"name\": \"X\", \"value\": 1}]", 0, 0,
    "options.pool_switches[].value: expected a string or null, got 1" },
  { "python", "1", 0, 0, "python: expected an object, got 1" },
  { "python", "{}", 0, 0, "python.note: missing" },
  { "stacks[0].id", "0", 0, 0,
    "stacks[0].id: expected an integer from 1 to 2^53, got 0" },
  { "devices[0].ordinal", "64", 0, 0,
    "devices[0].ordinal: expected an integer from 0 to 63, got 64" },
  { "leaks", NULL, 0, 0, "leaks: missing" },
  { "leaks[0]", "[]", 0, 0, "leaks[0]: expected an object, got an array" },
  { "leaks[0].stack", "9999", 0, 0,
    "leaks[0].stack: 9999 is not the id of a stack in stacks[]" },
  { "leaks[0].api", NULL, 0, 0, "leaks[0].api: missing" },
  { "leaks[0].kind", "1", 0, 0, "leaks[0].kind: expected a string, got 1" },
  { "leaks[0].device", "64", 0, 0,
    "leaks[0].device: expected an integer from 0 to 63 or null, got 64" },
  { "leaks[1].count", "\"2\"", 0, 0,
    "leaks[1].count: expected an integer from 0 to 2^53, got \"2\"" },
  { "leaks[0].threads", "{}", 0, 0,
    "leaks[0].threads: expected an array, got an object" },
  { "leaks[0].threads[0].tid", "0", 0, 0,
    "leaks[0].threads[0].tid: expected an integer from 1 to 4294967295, got "
    "0" },
  { "leaks[0].threads[1].name", "5", 0, 0,
    "leaks[0].threads[1].name: expected a string or null, got 5" },
  { "leaks[0].threads[1]", "5", 0, 0,
    "leaks[0].threads[1]: expected an object, got a number" },
  { "released[0].stack", "424242", 0, 0,
    "released[0].stack: 424242 is not the id of a stack in stacks[]" },
  { "host", "1", 0, 0, "host: expected an object, got 1" },
  { "host.live_bytes", "null", 0, 0,
    "host.live_bytes: expected an integer from 0 to 2^53, got null" },
  { "peaks[0].by_stack", "null", 0, 0,
    "peaks[0].by_stack: expected an array, got null" },
  { "peaks[0].device", "null", 0, 0,
    "peaks[0].device: expected an integer from 0 to 63, got null" },
  { "peaks[0].by_stack[0].stack", "1", 0, 0,
    "peaks[0].by_stack[0].stack: 1 is not the id of a stack in stacks[]" },
  { "denials", "{}", 0, 0, "denials: expected an array, got an object" },
  { "denials[0].time", "\"x\"", 0, 0,
    "denials[0].time: expected a number, got \"x\"" },
  { "denials[0].by_stack[1].count", NULL, 0, 0,
    "denials[0].by_stack[1].count: missing" },
  { "timeline.dumps_total", NULL, 0, 0, "timeline.dumps_total: missing" },
};

static void
test_refused(void)
{
  for (size_t i = 0; i < N(refused); i++) {
    is_int(
        read_with(refused[i].p1, refused[i].v1, refused[i].p2, refused[i].v2),
        -EINVAL, "refused: %s = %s", refused[i].p1,
        refused[i].v1 ? refused[i].v1 : "(removed)");
    is_str(err, refused[i].want, "... in one line");
  }

  static const struct {
    const char *text, *want;
  } tops[] = {
    { "[1]", "not a cumemguard report (the JSON is an array, not an object)" },
    { "\"x\"",
      "not a cumemguard report (the JSON is a string, not an object)" },
    { "3", "not a cumemguard report (the JSON is a number, not an object)" },
  };
  for (size_t i = 0; i < N(tops); i++) {
    const char *path =
        report_write_file("top.json", tops[i].text, strlen(tops[i].text));
    is_int(read_file(path, 0), -EINVAL, "refused: the JSON %s", tops[i].text);
    is_str(err, tops[i].want, "... in one line");
    is_str(r.file, path, "... its file kept all the same");
  }

  const char *path = report_write_with("r.json", "leaks[0].allocations", "{}");
  is_int(read_file(path, CMG__READ_LARGEST), -EINVAL,
         "refused: bad allocations, when asked for");
  is_str(err, "leaks[0].allocations: expected an array, got an object",
         "... in one line");
}

/* Each file of tests/reader/broken, with the piece of its line listed in
 * expected.txt. */
static void
test_broken_corpus(void)
{
  FILE *f = fopen(report_fixture("broken/expected.txt"), "r");
  char line[512];
  int files = 0;

  if (f == NULL) {
    ok(0, "tests/reader/broken/expected.txt through $srcdir");
    return;
  }
  while (fgets(line, sizeof(line), f) != NULL) {
    char *tab = strchr(line, '\t'), rel[sizeof(line) + 8];

    if (line[0] == '#' || tab == NULL)
      continue;
    *tab++ = '\0';
    tab[strcspn(tab, "\n")] = '\0';
    snprintf(rel, sizeof(rel), "broken/%s", line);
    int rc = read_file(report_fixture(rel), 0);
    bool one = rc == -EINVAL && strstr(err, tab) != NULL &&
               strchr(err, '\n') == NULL && strstr(err, line) == NULL;
    ok(one, "%s: refused in one line without the file name", line);
    if (!one)
      printf("#   rc %d: %s\n", rc, err);
    files++;
  }
  fclose(f);
  ok(files > 80, "the corpus: %d files", files);
}

static void
test_fixture(void)
{
  is_int(read_file(report_fixture("data/job-a.json"), 0), 0,
         "data/job-a.json reads");
  ok(r.pid == 4242 &&
         strcmp(r.command, "/opt/trainer/bin/trainer --epochs 3") == 0 &&
         strcmp(r.hostname, "node17") == 0 && r.end_time - r.start_time == 42.5,
     "its process, as the golden summary has it");
  ok(r.n_devices == 2 && r.devices[1].peak_bytes == 553652224 &&
         r.live_bytes == 4581232640ull && r.live_allocations == 10,
     "its devices and summary");
  ok(r.n_leaks == 7 && r.n_released == 1 && r.released[0].bytes == 33554432,
     "its groups and the one released");
  ok(r.has_host && r.host.peak_bytes == 100663296 && r.n_denials == 3 &&
         r.events[1] == 1 && !r.timeline.present,
     "its host memory, denials and events; no timeline");
  is_int(read_file(report_fixture("data/job-a.json"), CMG__READ_LARGEST), 0,
         "... read for its allocations");
  ok(r.n_largest == 11 && r.largest[0].bytes == 1610612736 &&
         r.largest[10].bytes == 4096,
     "... all eleven it lists, the largest first");
}

int
main(void)
{
  if (!report_dir_make("cmgread"))
    return 99;
  test_base();
  test_older_and_newer();
  test_process();
  test_options();
  test_refused();
  test_broken_corpus();
  test_fixture();
  cmg__read_report_free(&r);
  report_dir_remove();
  return done_testing();
}
