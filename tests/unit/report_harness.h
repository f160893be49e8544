/*
 * What the tests of the reader's loading and running stages share
 * (test_jsonfile, test_read, test_read_devices, test_read_series,
 * test_read_stacks, test_run): a folder of their own for the files they
 * write, the fixtures of tests/reader found through $srcdir (automake's
 * driver sets it; CI builds out of tree), a small report that reads, and
 * the changes the tests make to it one member at a time, each of which
 * the loader must read or refuse in one line.
 */
#ifndef CMG_TEST_REPORT_HARNESS_H
#define CMG_TEST_REPORT_HARNESS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "../tap.h"

/*
 * A report that reads: two modules, three frames (one without a module),
 * two stacks (one with a cut), two devices (one with graph memory and a
 * footprint), three leak groups (one on host memory, one without a stack),
 * a released group, a peak, a denial and a timeline.  The tests change it
 * with report_set() rather than spell a report out for each case.
 */
static const char report_base[] =
    "{\"format\": \"cumemguard-report\", \"version\": 1,\n"
    " \"process\": {\"pid\": 4242, \"exe\": \"/nonexistent/app\",\n"
    "  \"argv\": [\"/nonexistent/app\", \"--epochs\", \"3\"],\n"
    "  \"hostname\": \"node7\", \"reason\": \"exit\",\n"
    "  \"end\": {\"by\": \"exit\", \"status\": 3},\n"
    "  \"start_time\": 100.25, \"end_time\": 142.75},\n"
    " \"options\": {\"no_pools\": false, \"soft_limit\": null,\n"
    "  \"soft_limits\": {}, \"gpu_limits\": {}, \"pool_switches\": []},\n"
    " \"summary\": {\"live_allocations\": 6, \"live_bytes\": 7340032,\n"
    "  \"untracked_frees\": 1, \"denials\": 1,\n"
    "  \"events\": {\"warn\": 2, \"wait\": 3, \"soft_limit\": 4}},\n"
    " \"modules\": [{\"path\": \"/nonexistent/app\", \"build_id\": \"ab12\"},\n"
    "  {\"path\": \"/nonexistent/libm.so\", \"build_id\": \"cd34\"}],\n"
    " \"frames\": [\n"
    "  {\"address\": \"0x401a2b\", \"module\": 0, \"offset\": \"0x1a2b\",\n"
    "   \"function\": \"alloc_weights\", \"function_offset\": 18},\n"
    "  {\"address\": \"0x7f00dead\", \"module\": 1, \"offset\": \"0x8d10\",\n"
    "   \"function\": null, \"function_offset\": null},\n"
    "  {\"address\": \"0x55550700dead\", \"module\": null, \"offset\": null,\n"
    "   \"function\": null, \"function_offset\": null}],\n"
    " \"stacks\": [{\"id\": 13, \"truncated\": false, \"frames\": [0, 1]},\n"
    "  {\"id\": 7, \"truncated\": true, \"frames\": [2, 0],\n"
    "   \"cuts\": [{\"at\": 1, \"frames\": 5, \"lang\": \"native\"}]}],\n"
    " \"devices\": [\n"
    "  {\"ordinal\": 0, \"name\": \"GPU zero\", \"uuid\": \"GPU-0000\",\n"
    "   \"physical_bytes\": 85899345920, \"limit_bytes\": 17179869184,\n"
    "   \"live_bytes\": 5242880, \"peak_bytes\": 6291456,\n"
    "   \"allocations\": 9, \"frees\": 3, \"denied\": 1,\n"
    "   \"graph_memory\": {\"reserved_bytes\": 10, \"reserved_high_bytes\": "
    "20,\n"
    "    \"used_bytes\": 5, \"used_high_bytes\": 15, \"launches\": 4,\n"
    "    \"uploads\": 1, \"trims\": 2, \"denied\": 0, \"source\": "
    "\"driver\"},\n"
    "   \"footprint\": {\"contexts\": 2, \"context_bytes\": 1000,\n"
    "    \"source\": \"nvml\", \"why\": null, \"allocated_bytes\": 5242880,\n"
    "    \"process_bytes\": 5243980, \"unexplained_bytes\": 100,\n"
    "    \"counted\": true, \"cross_check\": {\"contexts\": 1,\n"
    "     \"nvml_bytes\": 500, \"driver_bytes\": 520}}},\n"
    "  {\"ordinal\": 3, \"name\": \"GPU three\", \"uuid\": \"GPU-3333\",\n"
    "   \"physical_bytes\": 1073741824, \"limit_bytes\": null,\n"
    "   \"live_bytes\": 1048576, \"peak_bytes\": 1048576,\n"
    "   \"allocations\": 1, \"frees\": 0, \"denied\": 0}],\n"
    " \"leaks\": [\n"
    "  {\"stack\": 13, \"api\": \"cudaMalloc\", \"kind\": \"device\",\n"
    "   \"device\": 0, \"count\": 2, \"bytes\": 4194304,\n"
    "   \"threads\": [{\"tid\": 4242, \"name\": \"main\"},\n"
    "    {\"tid\": 4243, \"name\": null}],\n"
    "   \"allocations\": [{\"bytes\": 1048576, \"time\": 0.5},\n"
    "    {\"bytes\": 3145728, \"time\": 0.25}]},\n"
    "  {\"stack\": 7, \"api\": \"cudaMallocHost\", \"kind\": \"host\",\n"
    "   \"device\": null, \"count\": 3, \"bytes\": 2097152,\n"
    "   \"allocations\": [{\"bytes\": 2097152, \"time\": 1.5}]},\n"
    "  {\"stack\": null, \"api\": \"cuMemAlloc_v2\",\n"
    "   \"device\": 3, \"count\": 1, \"bytes\": 1048576}],\n"
    " \"released\": [{\"stack\": 7, \"api\": \"cudaMalloc\",\n"
    "   \"kind\": \"device\", \"device\": 0, \"count\": 1, \"bytes\": 512}],\n"
    " \"host\": {\"limit_bytes\": null, \"live_bytes\": 2097152,\n"
    "  \"peak_bytes\": 4194304, \"allocations\": 4, \"frees\": 1,\n"
    "  \"denied\": 0},\n"
    " \"peaks\": [{\"device\": 0, \"bytes\": 6291456, \"time\": 12.5,\n"
    "   \"by_stack\": [{\"stack\": 13, \"bytes\": 6291456, \"count\": 3}]}],\n"
    " \"denials\": [{\"time\": 20.5, \"api\": \"cudaMalloc\", \"device\": 0,\n"
    "   \"requested_bytes\": 13958643712, \"live_bytes\": 5242880,\n"
    "   \"limit_bytes\": 17179869184, \"stack\": 13,\n"
    "   \"by_stack\": [{\"stack\": 13, \"bytes\": 4194304, \"count\": 2},\n"
    "    {\"stack\": null, \"bytes\": 1048576, \"count\": 1}]}],\n"
    " \"timeline\": {\"devices\": [{\"device\": 0, \"resolution\": 0.001,\n"
    "   \"peak_bytes\": 6291456, \"peak_time\": 12.5,\n"
    "   \"points\": [[0, 0, 0, 0], [12.5, 6291456, 1048576, 6291456],\n"
    "    [40, 5242880, 5242880, 5242880]]}],\n"
    "  \"dumps\": [{\"time\": 30, \"reason\": \"signal\"}],\n"
    "  \"dumps_total\": 1,\n"
    "  \"freed\": [{\"bytes\": 8388608, \"device\": 0, \"api\": "
    "\"cudaFree\",\n"
    "   \"stack\": 13, \"time\": 2.5, \"free_time\": 3.5}]}}\n";

static char report_dir[256];
static char report_names[64][64];
static size_t report_n_names;

/* A folder of the test's own under $TMPDIR; false after saying why. */
static inline bool
report_dir_make(const char *tag)
{
  const char *t = getenv("TMPDIR");

  snprintf(report_dir, sizeof(report_dir), "%s/%s.XXXXXX",
           t != NULL && *t != '\0' ? t : "/tmp", tag);
  if (mkdtemp(report_dir) == NULL) {
    perror("mkdtemp");
    return false;
  }
  return true;
}

/* Removes what report_write_file wrote, and the folder. */
static inline void
report_dir_remove(void)
{
  char path[sizeof(report_dir) + sizeof(report_names[0]) + 1];

  for (size_t i = 0; i < report_n_names; i++) {
    snprintf(path, sizeof(path), "%s/%.63s", report_dir, report_names[i]);
    unlink(path);
  }
  report_n_names = 0;
  rmdir(report_dir);
}

/* len bytes of text in the test's folder under name; its path, which the
 * next call overwrites. */
static inline const char *
report_write_file(const char *name, const char *text, size_t len)
{
  static char path[sizeof(report_dir) + sizeof(report_names[0]) + 1];
  size_t i;
  FILE *f;

  for (i = 0; i < report_n_names; i++)
    if (strcmp(report_names[i], name) == 0)
      break;
  if (i == report_n_names && report_n_names < 64)
    snprintf(report_names[report_n_names++], sizeof(report_names[0]), "%s",
             name);
  snprintf(path, sizeof(path), "%s/%.63s", report_dir, name);
  f = fopen(path, "w");
  if (f == NULL || fwrite(text, 1, len, f) != len)
    printf("# cannot write %s\n", path);
  if (f != NULL)
    fclose(f);
  return path;
}

/* A fixture of tests/reader ("data/job-a.json"), found through $srcdir. */
static inline const char *
report_fixture(const char *rel)
{
  static char path[1024];
  const char *s = getenv("srcdir");

  snprintf(path, sizeof(path), "%s/tests/reader/%s",
           s != NULL && *s != '\0' ? s : ".", rel);
  return path;
}

/* The member at path ("devices[0].footprint.why", "stacks[1]"), or NULL.
 * *parent and *key are where it is, or would be added. */
static inline cJSON *
report_find(cJSON *root, const char *path, cJSON **parent, char *key,
            size_t keylen)
{
  cJSON *o = root;
  const char *p = path;

  *parent = NULL;
  key[0] = '\0';
  while (o != NULL && *p != '\0') {
    *parent = o;
    if (*p == '[') {
      long i = strtol(p + 1, (char **)&p, 10);

      p += *p == ']';
      snprintf(key, keylen, "[%ld]", i);
      o = cJSON_GetArrayItem(o, (int)i);
    } else {
      size_t n = strcspn(p, ".[");

      snprintf(key, keylen, "%.*s", (int)n, p);
      o = cJSON_GetObjectItemCaseSensitive(o, key);
      p += n;
    }
    p += *p == '.';
  }
  if (*p != '\0')
    *parent = NULL; /* a member on the way is missing */
  return o;
}

/*
 * Sets the member at path to the JSON text value, adding it to its object
 * when it is not there; NULL removes it.  An element of an array is
 * replaced, or removed, in place; one just past its end is appended.
 * False, and a failed TAP point, when the path or the value is wrong: a
 * test that changes nothing proves nothing.
 */
static inline bool
report_set(cJSON *root, const char *path, const char *value)
{
  char key[128];
  cJSON *parent, *old = report_find(root, path, &parent, key, sizeof(key));
  cJSON *v = value != NULL ? cJSON_Parse(value) : NULL;
  bool append = old == NULL && cJSON_IsArray(parent) &&
                strtol(key + 1, NULL, 10) == cJSON_GetArraySize(parent);
  bool ok_ =
      parent != NULL && (value == NULL || v != NULL) &&
      (old != NULL || (value != NULL && (cJSON_IsObject(parent) || append)));

  if (ok_ && value == NULL)
    cJSON_Delete(cJSON_DetachItemViaPointer(parent, old));
  else if (ok_ && old != NULL && cJSON_IsObject(parent))
    ok_ = cJSON_ReplaceItemInObjectCaseSensitive(parent, key, v);
  else if (ok_ && old != NULL)
    ok_ = cJSON_ReplaceItemViaPointer(parent, old, v);
  else if (ok_ && append)
    ok_ = cJSON_AddItemToArray(parent, v);
  else if (ok_)
    ok_ = cJSON_AddItemToObject(parent, key, v);
  if (!ok_) {
    tap_report(0, "the test sets %s to %s", path, value ? value : "nothing");
    cJSON_Delete(v);
  }
  return ok_;
}

/* The base report as a tree, to be changed and freed by the caller. */
static inline cJSON *
report_tree(void)
{
  cJSON *root = cJSON_Parse(report_base);

  if (root == NULL)
    printf("# the base report does not parse\n");
  return root;
}

/* The tree as a file of the test's folder; its path. */
static inline const char *
report_write_tree(const char *name, const cJSON *root)
{
  char *text = cJSON_Print(root);
  const char *path = report_write_file(name, text != NULL ? text : "",
                                       text ? strlen(text) : 0);

  free(text);
  return path;
}

/* The base report with one member set (report_set), written as name. */
static inline const char *
report_write_with(const char *name, const char *path, const char *value)
{
  cJSON *root = report_tree();
  const char *file;

  report_set(root, path, value);
  file = report_write_tree(name, root);
  cJSON_Delete(root);
  return file;
}

#endif /* CMG_TEST_REPORT_HARNESS_H */
