/*
 * `cumemguard status --json` of one group's segment, from copies built
 * here: every member of the group object and of each device and process,
 * in order (scripts read them by name, and the man page lists them); a cap
 * as bytes, as a share (bytes once the device's size is known, null
 * before) or null, with the GPU's own cap before the device's and the
 * group's; the devices shown (a cap of their own or any use, a member's
 * included); members alive, dead by their start time, or of another pid
 * namespace and so alive as far as the view can tell; command names cut
 * to printable ASCII; the registry, a container's and a Kubernetes
 * group's fields; and the object of a segment that cannot be read.
 */
#include "config.h"

#include <stdarg.h>

#include "core/jsonw.h"
#include "seg_copy.h"
#include "../tap.h"

#define UUID1 "GPU-11111111-1111-1111-1111-111111111111"

static unsigned uid;
static int pid;

static char *
json_of(const struct cmg__seg_entry *e, const struct seg *c, bool scaled)
{
  struct cmg__group_view v;
  struct cmg__jsonw w;

  cmg__group_view(e, c, scaled, &v);
  if (cmg__jsonw_open(&w, -1, false) < 0)
    abort();
  cmg__group_json(&w, &v);
  return cmg__jsonw_take(&w);
}

/* Appends the formatted text to want, and checks that json holds it. */
static void
part(const char *json, char *want, size_t len, const char *what,
     const char *fmt, ...)
{
  char piece[2048];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(piece, sizeof(piece), fmt, ap);
  va_end(ap);
  snprintf(want + strlen(want), len - strlen(want), "%s", piece);
  ok(json != NULL && strstr(json, piece) != NULL, "%s", what);
  if (json == NULL || strstr(json, piece) == NULL)
    printf("#   want: %s\n", piece);
}

/* A group of three members on five devices, every kind of cap. */
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
  copy_dev(c, 9, 0, 0, 16 * GiB); /* seen, never used: not shown */
  sl = copy_member(c, 0, pid, "python", self_start());
  copy_held(sl, 0, 4 * GiB, 6 * GiB, 518 * MiB);
  copy_held(sl, 5, 0, 1 * MiB, 0);
  sl->denials = 2;
  copy_member(c, 5, pid, "a\tb c\x80", self_start() + 1);
  sl = copy_member(c, 9, FAR_PID, "abcdefghijklmnopq", 0);
  sl->pidns = self_pidns() + 1;
  sl->busy = 0x5858585858585858ull; /* "XXXXXXXX" right after comm */
  copy_held(sl, 7, 1 * MiB, 1 * MiB, 0);
  return c;
}

static void
test_group(void)
{
  struct cmg__seg_entry e = entry_of("train", "", uid);
  struct seg *c = train();
  char *j = json_of(&e, c, false), want[4096] = "";

  part(j, want, sizeof(want), "group: name, owner, no container, no pod",
       "{\"name\":\"train\",\"uid\":%u,\"container\":null,"
       "\"kubernetes\":null,",
       uid);
  part(j, want, sizeof(want), "group: who set the limits, and when",
       "\"creator\":4242,\"created\":1767225600,");
  part(j, want, sizeof(want), "group: its cap in bytes, no percentage",
       "\"cap\":8589934592,\"cap_percent\":null,");
  part(j, want, sizeof(want), "group: three members, one dead",
       "\"members\":3,\"dead\":1,\"scaled\":false,");
  part(j, want, sizeof(want), "device 0: its GPU, whose cap beats the group's",
       "\"devices\":[{\"device\":0,\"uuid\":\"" UUID1 "\",\"cap\":6442450944,"
       "\"cap_percent\":null,\"physical\":17179869184,\"used\":6442450944,"
       "\"peak\":8589934592},");
  part(j, want, sizeof(want),
       "device 2: a share of a device of unknown size has no bytes yet",
       "{\"device\":2,\"uuid\":null,\"cap\":null,\"cap_percent\":50,"
       "\"physical\":null,\"used\":0,\"peak\":0},");
  part(j, want, sizeof(want), "device 3: a share of 16 GiB is 4 GiB",
       "{\"device\":3,\"uuid\":null,\"cap\":4294967296,\"cap_percent\":25,"
       "\"physical\":17179869184,\"used\":0,\"peak\":0},");
  part(j, want, sizeof(want),
       "device 5: shown for a member's peak, under the group's cap",
       "{\"device\":5,\"uuid\":null,\"cap\":8589934592,\"cap_percent\":null,"
       "\"physical\":null,\"used\":0,\"peak\":0},");
  part(j, want, sizeof(want), "device 7: a GPU without a UUID has none",
       "{\"device\":7,\"uuid\":null,\"cap\":8589934592,\"cap_percent\":null,"
       "\"physical\":null,\"used\":1048576,\"peak\":2097152}],");
  part(j, want, sizeof(want),
       "process: alive, its live bytes over devices, denials, each device",
       "\"processes\":[{\"pid\":%d,\"command\":\"python\",\"alive\":true,"
       "\"live\":4294967296,\"denials\":2,\"devices\":[{\"device\":0,"
       "\"live\":4294967296,\"peak\":6442450944,\"context\":543162368},"
       "{\"device\":5,\"live\":0,\"peak\":1048576,\"context\":0}]},",
       pid);
  part(j, want, sizeof(want),
       "process: dead by its start time, control and high bytes as '?'",
       "{\"pid\":%d,\"command\":\"a?b c?\",\"alive\":false,\"live\":0,"
       "\"denials\":0,\"devices\":[]},",
       pid);
  part(j, want, sizeof(want),
       "process: of another pid namespace, alive; a 16-byte command whole",
       "{\"pid\":4194305,\"command\":\"abcdefghijklmnop\",\"alive\":true,"
       "\"live\":1048576,\"denials\":0,\"devices\":[{\"device\":7,"
       "\"live\":1048576,\"peak\":1048576,\"context\":0}]}]}");
  is_str(j, want, "group: those members only, in that order");
  free(j);

  j = json_of(&e, c, true);
  ok(j != NULL && strstr(j, "\"dead\":1,\"scaled\":true,") != NULL,
     "group: scaled bytes are said");
  free(j);
  free(c);
}

static void
test_registry(void)
{
  struct cmg__seg_entry e = entry_of(REGISTRY_NAME, "", uid);
  struct seg *c = copy_new((struct seg_limit){ 0 });
  char *j;

  copy_dev(c, 0, 3 * MiB, 3 * MiB, 16 * GiB);
  copy_held(copy_member(c, 3, pid, "solo", 0), 0, 3 * MiB, 3 * MiB, 0);
  j = json_of(&e, c, false);
  ok(j != NULL && strncmp(j, "{\"name\":null,", 13) == 0,
     "registry: no group name");
  ok(j != NULL && strstr(j, "\"cap\":null,\"cap_percent\":null,"
                            "\"members\":1,\"dead\":0,") != NULL,
     "registry: no cap, its one process");
  ok(j != NULL && strstr(j, "\"devices\":[],\"processes\":[{") != NULL,
     "registry: no group counters, though its copy has some");
  char p[256];
  snprintf(p, sizeof(p),
           "{\"pid\":%d,\"command\":\"solo\",\"alive\":true,\"live\":3145728,"
           "\"denials\":0,\"devices\":[{\"device\":0,\"live\":3145728,",
           pid);
  ok(j != NULL && strstr(j, p) != NULL, "registry: its process's bytes");
  free(j);
  free(c);
}

static void
test_k8s(void)
{
  struct cmg__seg_entry e = entry_of("k8s-abc123", "pid 77", 1234);
  struct seg *c = copy_new(cap_percent(125000));
  char *j;

  k8s_start();
  k8s_label("k8s-abc123", "namespace=ml\npod=trainer-\"0\"\ncontainer=main\n");
  k8s_label("k8s-nopod", "namespace=ml\ncontainer=main\n");
  j = json_of(&e, c, false);
  ok(j != NULL &&
         strstr(j, "{\"name\":\"k8s-abc123\",\"uid\":1234,"
                   "\"container\":\"pid 77\",\"kubernetes\":{\"namespace\":"
                   "\"ml\",\"pod\":\"trainer-\\\"0\\\"\",\"container\":"
                   "\"main\"},") != NULL,
     "kubernetes: the container, the owner and the pod, escaped");
  ok(j != NULL && strstr(j, "\"cap\":null,\"cap_percent\":12.5,") != NULL,
     "kubernetes: a group's share has no bytes, its percentage does");
  ok(j != NULL && strstr(j, "\"members\":0,\"dead\":0,\"scaled\":false,"
                            "\"devices\":[],\"processes\":[]}") != NULL,
     "kubernetes: no member, no device");
  free(j);
  e = entry_of("k8s-nopod", "", uid);
  j = json_of(&e, c, false);
  ok(j != NULL && strstr(j, "\"kubernetes\":null,") != NULL,
     "kubernetes: labels that name no pod are none");
  free(j);
  e = entry_of("k8s-unknown", "", uid);
  j = json_of(&e, c, false);
  ok(j != NULL && strstr(j, "\"kubernetes\":null,") != NULL,
     "kubernetes: a group the plugin did not label has none");
  free(j);
  ok(k8s_cleanup() == 0, "kubernetes: labels removed");
  free(c);
}

static void
test_error(void)
{
  struct cmg__seg_entry e = entry_of("broken", "", 1000);
  struct cmg__jsonw w;
  char want[256];

  cmg__jsonw_open(&w, -1, false);
  cmg__group_json_error(&w, &e, "group 'broken': \"odd\"\\\n");
  char *j = cmg__jsonw_take(&w);
  snprintf(want, sizeof(want),
           "{\"name\":\"broken\",\"uid\":1000,\"error\":\"group 'broken': "
           "\\\"odd\\\"\\\\\\n\"}");
  is_str(j, want, "error: name, owner and why, escaped");
  free(j);
}

int
main(void)
{
  uid = (unsigned)geteuid();
  pid = (int)getpid();
  setvbuf(stdout, NULL, _IOLBF, 0);
  test_group();
  test_registry();
  test_k8s();
  test_error();
  return done_testing();
}
