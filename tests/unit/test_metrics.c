/*
 * `cumemguard status --prometheus` from copies built here.  node_exporter
 * and Prometheus drop a whole scrape for one bad line, so the text is held
 * to the exposition format's rules by a checker of its own (proved to
 * refuse what breaks them): each family once, HELP then TYPE before its
 * samples, counters ending in _total, label values escaped, ASCII only,
 * one sample per series and no timestamps.  Then the values the families
 * promise (docs/monitoring.md): the caps (a GPU's own first, a share in
 * bytes once the device's size is known, none without), the devices a
 * group used or has a cap on, the labels of a group, a Slurm job, a
 * container and a Kubernetes pod, the registry without a group label,
 * dead members counted in the group but not shown, one denials sample per
 * process, and segments that cannot be read counted, not shown.
 */
#include "config.h"

#include <stdarg.h>

#include "ops/metrics.h"
#include "seg_copy.h"
#include "../tap.h"

#define UUID1 "GPU-11111111-1111-1111-1111-111111111111"

static unsigned uid;
static int pid;

/* ---- the format's rules ------------------------------------------------- */

static bool
is_name(const char *s, size_t n, bool colon)
{
  if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
          (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
          (colon && s[i] == ':')))
      return false;
  return true;
}

/* What the checker knows of the text so far. */
static struct {
  char family[128], families[32][128], series[128][512];
  int n_families, n_series;
  int state; /* 1: after a HELP, 2: after its TYPE */
  int problems;
} x;

#define PROBLEM(...) (printf("#   " __VA_ARGS__), printf("\n"), x.problems++)

/* The labels at *p ("{...}"), moved past. */
static void
labels(const char **p)
{
  char seen[16][64];
  int n = 0;
  const char *s = *p + 1;

  for (*p = s + strlen(s); *s != '}';) {
    size_t len = strcspn(s, "=");
    if (!is_name(s, len, false) || strncmp(s, "__", 2) == 0 || s[len] != '=' ||
        s[len + 1] != '"') {
      PROBLEM("bad label at '%.20s'", s);
      return;
    }
    for (int i = 0; i < n; i++)
      if (strlen(seen[i]) == len && strncmp(seen[i], s, len) == 0)
        PROBLEM("label '%.*s' twice", (int)len, s);
    if (n < 16)
      snprintf(seen[n++], sizeof(seen[0]), "%.*s", (int)len, s);
    for (s += len + 2; *s != '"'; s++) {
      if (*s == '\0') {
        PROBLEM("unterminated label value");
        return;
      }
      if (*s == '\\' && s[1] != '\\' && s[1] != '"' && s[1] != 'n')
        PROBLEM("bad escape '\\%c'", s[1]);
      s += *s == '\\';
    }
    s++;
    if (*s != ',' && *s != '}') {
      PROBLEM("no ',' or '}' after a label");
      return;
    }
    s += *s == ',';
  }
  *p = s + 1;
}

static void
help_line(const char *line)
{
  char name[128] = "";

  sscanf(line + 7, "%127s", name);
  for (int i = 0; i < x.n_families; i++)
    if (strcmp(x.families[i], name) == 0)
      PROBLEM("family %s twice", name);
  if (!is_name(name, strlen(name), true) || line[7 + strlen(name)] != ' ')
    PROBLEM("bad HELP line: %s", line);
  for (const char *h = line + 8 + strlen(name); *h; h++)
    if (*h == '\\' && h[1] != '\\' && h[1] != 'n')
      PROBLEM("bad escape in HELP: %s", line);
  snprintf(x.family, sizeof(x.family), "%s", name);
  if (x.n_families < 32)
    snprintf(x.families[x.n_families++], sizeof(x.families[0]), "%s", name);
  x.state = 1;
}

static void
type_line(const char *line)
{
  char name[128] = "", type[32] = "";

  sscanf(line + 7, "%127s %31s", name, type);
  if (x.state != 1 || strcmp(name, x.family) != 0)
    PROBLEM("TYPE of %s not right after its HELP", name);
  if (strcmp(type, "gauge") != 0 && strcmp(type, "counter") != 0)
    PROBLEM("type '%s' of %s", type, name);
  size_t nl = strlen(name);
  if (strcmp(type, "counter") == 0 &&
      (nl < 6 || strcmp(name + nl - 6, "_total") != 0))
    PROBLEM("counter %s does not end in _total", name);
  x.state = 2;
}

static void
sample_line(const char *line)
{
  size_t nl = strcspn(line, "{ ");
  const char *p = line + nl;

  if (x.state != 2 || strlen(x.family) != nl ||
      strncmp(line, x.family, nl) != 0)
    PROBLEM("sample outside its family: %s", line);
  if (*p == '{')
    labels(&p);
  if (*p != ' ' || p[1] == '\0' || strspn(p + 1, "0123456789") != strlen(p + 1))
    PROBLEM("not one integer value, no timestamp: %s", line);
  size_t key = (size_t)(p - line);
  for (int i = 0; i < x.n_series; i++)
    if (strlen(x.series[i]) == key && strncmp(x.series[i], line, key) == 0)
      PROBLEM("series twice: %.*s", (int)key, line);
  if (x.n_series < 128)
    snprintf(x.series[x.n_series++], sizeof(x.series[0]), "%.*s", (int)key,
             line);
}

/* The problems of text as Prometheus's text format 0.0.4, each printed. */
static int
exposition_problems(const char *text)
{
  char line[1024];

  memset(&x, 0, sizeof(x));
  for (const char *c = text; *c; c++)
    if ((*c < 0x20 || *c > 0x7e) && *c != '\n')
      PROBLEM("byte 0x%02x outside printable ASCII", (unsigned char)*c);
  if (text[0] != '\0' && text[strlen(text) - 1] != '\n')
    PROBLEM("no newline at the end");
  for (const char *l = text; *l; l += strcspn(l, "\n"), l += *l == '\n') {
    snprintf(line, sizeof(line), "%.*s", (int)strcspn(l, "\n"), l);
    if (strncmp(line, "# HELP ", 7) == 0)
      help_line(line);
    else if (strncmp(line, "# TYPE ", 7) == 0)
      type_line(line);
    else if (line[0] == '#')
      PROBLEM("a comment that is neither HELP nor TYPE: %s", line);
    else
      sample_line(line);
  }
  return x.problems;
}

static void
test_checker(void)
{
  const char *head = "# HELP a_total A.\n# TYPE a_total counter\n";
  char t[512];

  snprintf(t, sizeof(t), "%sa_total{x=\"1\"} 2\n", head);
  is_int(exposition_problems(t), 0, "checker: takes a good family");
  snprintf(t, sizeof(t), "%sa_total{x=\"1\"} 2\na_total{x=\"1\"} 3\n", head);
  ok(exposition_problems(t) > 0, "checker: refuses a series twice");
  snprintf(t, sizeof(t), "%sa_total{x=\"a\\tb\"} 2\n", head);
  ok(exposition_problems(t) > 0, "checker: refuses a bad escape");
  snprintf(t, sizeof(t), "%sa_total 2 1767225600000\n", head);
  ok(exposition_problems(t) > 0, "checker: refuses a timestamp");
  ok(exposition_problems("# HELP b B.\nb 1\n") > 0,
     "checker: refuses a sample before its TYPE");
  snprintf(t, sizeof(t), "%s%s", head, head);
  ok(exposition_problems(t) > 0, "checker: refuses a family twice");
  ok(exposition_problems("# HELP c C.\n# TYPE c counter\nc 1\n") > 0,
     "checker: refuses a counter without _total");
}

/* ---- the metrics -------------------------------------------------------- */

static char *
metrics_of(const struct cmg__seg_entry *e, const struct seg *const *copies,
           size_t n)
{
  char(*errors)[256] = calloc(n + 1, sizeof(*errors));
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);

  if (f == NULL || errors == NULL)
    abort();
  cmg__metrics_print(f, e, copies, (const char(*)[256])errors, n);
  fclose(f);
  free(errors);
  return text;
}

/* The value of the sample whose name and labels are the formatted text,
 * or -1 when there is none. */
static long long
value_of(const char *text, const char *fmt, ...)
{
  char want[512];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(want, sizeof(want), fmt, ap);
  va_end(ap);
  for (const char *l = text; l != NULL && *l;
       l = strchr(l, '\n'), l = l ? l + 1 : l)
    if (strncmp(l, want, strlen(want)) == 0 && l[strlen(want)] == ' ')
      return strtoll(l + strlen(want) + 1, NULL, 10);
  printf("#   no sample %s\n", want);
  return -1;
}

/* The samples of one family. */
static int
samples_of(const char *text, const char *family)
{
  int n = 0;
  size_t len = strlen(family);

  for (const char *l = text; l != NULL && *l;
       l = strchr(l, '\n'), l = l ? l + 1 : l)
    n += strncmp(l, family, len) == 0 && (l[len] == '{' || l[len] == ' ');
  return n;
}

static void
test_empty(void)
{
  char *t = metrics_of(NULL, NULL, 0);

  is_int(exposition_problems(t), 0, "empty: a valid exposition");
  char types[1024] = "";
  for (const char *p = t; (p = strstr(p, "# TYPE ")) != NULL; p++)
    snprintf(types + strlen(types), sizeof(types) - strlen(types), "%.*s;",
             (int)strcspn(p + 7, "\n"), p + 7);
  is_str(types,
         "cumemguard_group_limit_bytes gauge;cumemguard_group_used_bytes gauge;"
         "cumemguard_group_peak_bytes gauge;cumemguard_group_members gauge;"
         "cumemguard_process_used_bytes gauge;"
         "cumemguard_process_peak_bytes gauge;"
         "cumemguard_process_context_bytes gauge;"
         "cumemguard_process_denials_total counter;"
         "cumemguard_segments_unreadable gauge;",
         "empty: the families of docs/monitoring.md, each with its type");
  int samples = 0;
  for (const char *p = t; *p; p += strcspn(p, "\n"), p += *p == '\n')
    samples += *p != '#';
  is_int(samples, 1, "empty: no sample but the count of unreadable ones");
  size_t n = strlen(t);
  ok(n > 36 && strcmp(t + n - 34, "\ncumemguard_segments_unreadable 0\n") == 0,
     "empty: none unreadable, last");
  free(t);
}

/* A group on five devices with every kind of cap, and four members: one
 * alive, one dead by its start time, one of another pid namespace, one
 * whose pid is gone. */
static struct seg *
train(void)
{
  struct seg *c = copy_new(cap_bytes(8 * GiB));
  struct seg_slot *sl;

  copy_gpu_cap(c, 0x11, cap_bytes(6 * GiB));
  copy_gpu(c, 0, 0x11);
  copy_dev(c, 0, 6 * GiB, 8 * GiB, 16 * GiB);
  c->h.limit_dev[2] = cap_percent(500000);
  c->h.limit_dev[3] = cap_percent(250000);
  copy_dev(c, 3, 0, 0, 16 * GiB);
  copy_gpu(c, 7, 0xff);
  copy_dev(c, 7, 1 * MiB, 2 * MiB, 0);
  sl = copy_member(c, 0, pid, "python", self_start());
  copy_held(sl, 0, 4 * GiB, 6 * GiB, 518 * MiB);
  copy_held(sl, 5, 0, 1 * MiB, 0);
  sl->denials = 2;
  sl = copy_member(c, 5, pid, "dead", self_start() + 1);
  copy_held(sl, 0, 1 * MiB, 1 * MiB, 0);
  sl->denials = 5;
  sl = copy_member(c, 9, FAR_PID, "q\"b\\c\nd\xc3\xa9\t", 0);
  sl->pidns = self_pidns() + 1;
  copy_held(sl, 7, 1 * MiB, 1 * MiB, 0);
  sl = copy_member(c, 11, FAR_PID, "gone", 0);
  sl->pidns = self_pidns();
  copy_held(sl, 7, 1 * MiB, 1 * MiB, 0);
  return c;
}

/* One alive member holding bytes on device d, with denials. */
static struct seg *
one(struct seg_limit cap, int d, uint64_t bytes, const char *comm,
    unsigned denials)
{
  struct seg *c = copy_new(cap);

  copy_dev(c, d, bytes, bytes, 16 * GiB);
  struct seg_slot *sl = copy_member(c, 0, pid, comm, 0);
  copy_held(sl, d, bytes, bytes, 0);
  sl->denials = denials;
  return c;
}

/* The labels of train's series, of the job's, the box's and the
 * registry's. */
static char tr[64], job[64], box[64], reg[32];

static void
check_caps(const char *t)
{
  is_int(value_of(t,
                  "cumemguard_group_limit_bytes{%s,device=\"0\",uuid=\"" UUID1
                  "\"}",
                  tr),
         6 * GiB, "limit: the GPU's own cap, with its UUID");
  is_int(value_of(t, "cumemguard_group_limit_bytes{%s,device=\"3\"}", tr),
         4 * GiB, "limit: a share of a device of 16 GiB, in bytes");
  is_int(value_of(t, "cumemguard_group_limit_bytes{%s,device=\"7\"}", tr),
         8 * GiB, "limit: the group's elsewhere; no UUID label without one");
  is_int(value_of(t, "cumemguard_group_limit_bytes{%s,device=\"0\"}", job),
         2 * GiB, "limit: the job's");
  is_int(samples_of(t, "cumemguard_group_limit_bytes"), 4,
         "limit: none for a share of a device of unknown size (train's 2), "
         "nor without a cap (the box)");
}

static void
check_group_bytes(const char *t)
{
  is_int(value_of(t, "cumemguard_group_used_bytes{%s,device=\"2\"}", tr), 0,
         "used: a device with a cap of its own, used or not");
  is_int(value_of(t,
                  "cumemguard_group_peak_bytes{%s,device=\"0\",uuid=\"" UUID1
                  "\"}",
                  tr),
         8 * GiB, "peak: the group's");
  is_int(value_of(t, "cumemguard_group_used_bytes{%s,device=\"7\"}", tr),
         1 * MiB, "used: the group's, not its members' sum");
  is_int(value_of(t, "cumemguard_group_used_bytes{%s,device=\"1\"}", box),
         300 * MiB, "used: a container's group, its label escaped");
  is_int(value_of(t, "cumemguard_group_used_bytes{%s,device=\"0\"}", job),
         1 * MiB, "used: a Slurm job's group, with the job");
  is_int(samples_of(t, "cumemguard_group_used_bytes"), 6,
         "used: train's 0, 2, 3 and 7, the job's and the box's; no other");
  is_int(samples_of(t, "cumemguard_group_peak_bytes"), 6,
         "peak: as many as used");
}

static void
check_members(const char *t)
{
  is_int(value_of(t, "cumemguard_group_members{%s}", tr), 4,
         "members: the dead ones not yet reclaimed count");
  is_int(value_of(t,
                  "cumemguard_group_members{group=\"k8s-abc\","
                  "namespace=\"ml\",pod=\"trainer-\\\"0\\\"\","
                  "pod_container=\"main\",uid=\"%u\"}",
                  uid),
         0, "members: a pod's group, its labels escaped, no member");
  is_int(samples_of(t, "cumemguard_group_members"), 4,
         "members: one per group, none for the registry");
}

static void
check_processes(const char *t)
{
  const char *py = "pid=\"%d\",command=\"python\"";
  char l[128];

  snprintf(l, sizeof(l), py, pid);
  is_int(value_of(t,
                  "cumemguard_process_used_bytes{%s,%s,device=\"0\","
                  "uuid=\"" UUID1 "\"}",
                  tr, l),
         4 * GiB, "process: its bytes on a device, with the GPU's UUID");
  is_int(
      value_of(t, "cumemguard_process_peak_bytes{%s,%s,device=\"5\"}", tr, l),
      1 * MiB, "process: a device it only peaked on");
  is_int(value_of(t,
                  "cumemguard_process_context_bytes{%s,%s,device=\"0\","
                  "uuid=\"" UUID1 "\"}",
                  tr, l),
         518 * MiB, "process: its contexts' bytes");
  is_int(value_of(t, "cumemguard_process_denials_total{%s,%s}", tr, l), 2,
         "process: its denials, one sample without a device");
  is_int(value_of(t,
                  "cumemguard_process_used_bytes{%s,pid=\"%d\","
                  "command=\"q\\\"b\\\\c\\nd???\",device=\"7\"}",
                  tr, FAR_PID),
         1 * MiB,
         "process: of another pid namespace, shown; its command escaped, "
         "bytes outside printable ASCII as '?'");
  is_int(value_of(t,
                  "cumemguard_process_used_bytes{%s,pid=\"%d\","
                  "command=\"solo\",device=\"0\"}",
                  reg, pid),
         60 * MiB, "process: in no group, without a group label");
  is_int(value_of(t,
                  "cumemguard_process_denials_total{%s,pid=\"%d\","
                  "command=\"boxed\"}",
                  box, pid),
         3, "process: a container's, with its label");
  ok(strstr(t, "command=\"dead\"") == NULL && strstr(t, "\"gone\"") == NULL,
     "process: the dead are not shown, nor is a segment not read");
  is_int(samples_of(t, "cumemguard_process_used_bytes"), 6,
         "process: used for each device each live member used");
  is_int(samples_of(t, "cumemguard_process_context_bytes"), 6,
         "process: contexts for the same");
  is_int(samples_of(t, "cumemguard_process_denials_total"), 5,
         "process: denials once per live member");
  is_int(value_of(t, "cumemguard_segments_unreadable"), 1,
         "unreadable: the segment not read is counted");
}

static void
test_groups(void)
{
  struct cmg__seg_entry e[] = {
    entry_of("train", "", uid),        entry_of("slurm.77", "", uid),
    entry_of("box", "pid \"9\"", uid), entry_of("k8s-abc", "", uid),
    entry_of(REGISTRY_NAME, "", uid),  entry_of("gone", "", uid),
  };
  const struct seg *c[] = {
    train(),
    one(cap_bytes(2 * GiB), 0, 1 * MiB, "app", 0),
    one((struct seg_limit){ 0 }, 1, 300 * MiB, "boxed", 3),
    copy_new(cap_bytes(1 * GiB)),
    one((struct seg_limit){ 0 }, 0, 60 * MiB, "solo", 1),
    NULL,
  };

  snprintf(tr, sizeof(tr), "group=\"train\",uid=\"%u\"", uid);
  snprintf(job, sizeof(job), "group=\"slurm.77\",job=\"77\",uid=\"%u\"", uid);
  snprintf(box, sizeof(box),
           "group=\"box\",container=\"pid \\\"9\\\"\","
           "uid=\"%u\"",
           uid);
  snprintf(reg, sizeof(reg), "uid=\"%u\"", uid);
  k8s_start();
  k8s_label("k8s-abc", "namespace=ml\npod=trainer-\"0\"\ncontainer=main\n");
  char *t = metrics_of(e, c, 6);
  ok(k8s_cleanup() == 0, "labels of the pod removed");
  is_int(exposition_problems(t), 0, "groups: a valid exposition");
  check_caps(t);
  check_group_bytes(t);
  check_members(t);
  check_processes(t);
  free(t);
  for (size_t i = 0; i < 6; i++)
    free((void *)c[i]);
}

int
main(void)
{
  uid = (unsigned)geteuid();
  pid = (int)getpid();
  setvbuf(stdout, NULL, _IOLBF, 0);
  test_checker();
  test_empty();
  test_groups();
  return done_testing();
}
