/*
 * `cumemguard status` as text for one group's segment, from copies built
 * here, line by line (people read the columns, and tests/integration/
 * t-metrics.sh greps them): the heading for a group, another user's, a
 * container's, a Slurm job's, a Kubernetes pod's and the registry, with
 * its members and dead ones; the table of the devices shown, a share
 * given in bytes once the device's size is known, the GPU each counts; one
 * line per device a process used, or one "-" line, with its contexts, its
 * denials once and "dead" on each; the note for scaled bytes; and command
 * names cut to printable ASCII.
 */
#include "config.h"

#include "seg_copy.h"
#include "../tap.h"

#define UUID1 "GPU-11111111-1111-1111-1111-111111111111"
#define UUID2 "GPU-22222222-2222-2222-2222-222222222222"
#define UUID3 "GPU-33333333-3333-3333-3333-333333333333"

static unsigned uid;
static int pid;
static char out[8192];

/* The text view of e's copy c into out; returns out. */
static const char *
text_of(const struct cmg__seg_entry *e, const struct seg *c, bool scaled)
{
  struct cmg__group_view v;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);

  if (f == NULL)
    abort();
  cmg__group_view(e, c, scaled, &v);
  cmg__group_print_text(f, &v);
  fclose(f);
  snprintf(out, sizeof(out), "%s", text);
  free(text);
  return out;
}

/* Line n (from 0) of text, without its newline. */
static const char *
line_of(const char *text, int n, char *buf, size_t len)
{
  for (; n > 0 && text != NULL; n--)
    text = (text = strchr(text, '\n')) != NULL ? text + 1 : NULL;
  snprintf(buf, len, "%.*s", text ? (int)strcspn(text, "\n") : 0,
           text ? text : "");
  return buf;
}

/* The first line of e's copy c. */
static const char *
heading_of(const struct cmg__seg_entry *e, const struct seg *c)
{
  static char buf[512];
  return line_of(text_of(e, c, false), 0, buf, sizeof(buf));
}

/* A member's line: its pid in its column, then the rest. */
static const char *
member_line(char *buf, size_t len, int p, const char *rest)
{
  snprintf(buf, len, "  %8d  %s", p, rest);
  return buf;
}

/* A group on four devices with caps by GPU, and three members. */
static struct seg *
train(void)
{
  struct seg *c = copy_new(cap_bytes(8 * GiB));
  struct seg_slot *sl;

  copy_gpu_cap(c, 0x11, cap_bytes(6 * GiB));
  copy_gpu_cap(c, 0x22, cap_percent(500000));
  copy_gpu_cap(c, 0x33, cap_percent(250000));
  copy_gpu(c, 0, 0x11);
  copy_dev(c, 0, 6 * GiB, 8 * GiB, 16 * GiB);
  copy_gpu(c, 2, 0x22);
  copy_dev(c, 2, 0, 1 * MiB, 0);
  copy_gpu(c, 3, 0x33);
  copy_dev(c, 3, 2 * GiB, 3 * GiB, 16 * GiB);
  copy_dev(c, 9, 0, 0, 16 * GiB); /* seen, never used: not shown */
  sl = copy_member(c, 0, pid, "python", self_start());
  copy_held(sl, 0, 4 * GiB, 6 * GiB, 518 * MiB);
  copy_held(sl, 5, 0, 1 * MiB, 0);
  sl->denials = 2;
  sl = copy_member(c, 5, pid, "a\tb\x80", self_start() + 1);
  copy_held(sl, 0, 1 * MiB, 1 * MiB, 0);
  copy_held(sl, 3, 0, 2 * MiB, 0);
  sl->denials = 1;
  sl = copy_member(c, 9, FAR_PID, "abcdefghijklmnopq", 0);
  sl->pidns = self_pidns() + 1;
  sl->busy = 0x5858585858585858ull; /* "XXXXXXXX" right after comm */
  return c;
}

static void
test_group(void)
{
  struct cmg__seg_entry e = entry_of("train", "", uid);
  struct seg *c = train();
  char m[16][160], got[512];
  const char *want[] = {
    "group train: cap 8.0 GiB (" UUID1 ": 6.0 GiB, " UUID2 ": 50%, " UUID3
    ": 25%) per device, 3 members (1 dead, not yet reclaimed)",
    "  device                  cap         used         peak  gpu",
    "       0              6.0 GiB      6.0 GiB      8.0 GiB  " UUID1,
    "       2                  50%          0 B      1.0 MiB  " UUID2,
    "       3        4.0 GiB (25%)      2.0 GiB      3.0 GiB  " UUID3,
    "       5              8.0 GiB          0 B          0 B  -",
    "       pid  command          device         live         peak",
    member_line(m[0], sizeof(m[0]), pid,
                "python                0      4.0 GiB      6.0 GiB"
                "  contexts 518.0 MiB  2 denied"),
    member_line(m[1], sizeof(m[1]), pid,
                "python                5          0 B      1.0 MiB"),
    member_line(m[2], sizeof(m[2]), pid,
                "a?b?                  0      1.0 MiB      1.0 MiB"
                "  1 denied  dead"),
    member_line(m[3], sizeof(m[3]), pid,
                "a?b?                  3          0 B      2.0 MiB  dead"),
    member_line(m[4], sizeof(m[4]), FAR_PID,
                "abcdefghijklmnop      -          0 B          0 B"),
    "",
  };
  const char *what[] = {
    "heading: the cap, the GPUs' own caps, members and the dead",
    "devices: the header",
    "devices: a GPU's cap before the group's, its UUID",
    "devices: a share of a device of unknown size, as a share",
    "devices: a share of 16 GiB, in bytes and as a share",
    "devices: shown for a member's peak; no UUID is '-'",
    "processes: the header",
    "processes: a line per device, contexts, denials on the first",
    "processes: the second device, no denials again",
    "processes: a dead member, '?' for bytes outside printable ASCII",
    "processes: 'dead' on each of its lines",
    "processes: no device is one '-' line; 16 bytes of command, no more",
    "nothing else: an unused device and no member are not shown",
  };

  text_of(&e, c, false);
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
    is_str(line_of(out, (int)i, got, sizeof(got)), want[i], "%s", what[i]);
  ok(out[strlen(out) - 1] == '\n', "every line ends with a newline");

  text_of(&e, c, true);
  is_str(line_of(out, 6, got, sizeof(got)),
         "  (read while its members changed it: their bytes below are "
         "scaled to the",
         "scaled: said after the devices");
  is_str(line_of(out, 7, got, sizeof(got)), "  group's)",
         "scaled: on two lines, before the processes");
  free(c);
}

static void
test_headings(void)
{
  struct seg *c = copy_new(cap_bytes(1 * GiB));
  struct cmg__seg_entry e;
  char want[512];

  copy_member(c, 0, pid, "a", 0);
  e = entry_of("g", "", uid + 1);
  snprintf(want, sizeof(want),
           "group g (uid %u): cap 1.0 GiB per device, 1 member", uid + 1);
  is_str(heading_of(&e, c), want,
         "heading: another user's group says whose; one member");
  e = entry_of("g", "pid 77", uid);
  snprintf(want, sizeof(want),
           "container pid 77, group g (uid %u): cap 1.0 GiB per device, "
           "1 member",
           uid);
  is_str(heading_of(&e, c), want,
         "heading: a container's, with its owner even when it is us");
  e = entry_of("slurm.4321", "", uid);
  is_str(heading_of(&e, c), "Slurm job 4321: cap 1.0 GiB per device, 1 member",
         "heading: a Slurm job's group is the job");
  e = entry_of("slurm.43a", "", uid);
  is_str(heading_of(&e, c), "group slurm.43a: cap 1.0 GiB per device, 1 member",
         "heading: slurm. and other than digits is a group");

  k8s_start();
  k8s_label("k8s-abc", "namespace=ml\npod=trainer-0\ncontainer=main\n");
  e = entry_of("k8s-abc", "", uid);
  is_str(heading_of(&e, c),
         "pod ml/trainer-0, container main (group k8s-abc): cap 1.0 GiB "
         "per device, 1 member",
         "heading: a Kubernetes group is its pod and container");
  ok(k8s_cleanup() == 0, "heading: labels removed");

  c->h.limit = cap_percent(500000);
  copy_member(c, 1, FAR_PID, "b", 0);
  c->slot[1].pidns = self_pidns();
  copy_member(c, 2, pid, "c", 0);
  e = entry_of("g", "", uid);
  is_str(heading_of(&e, c),
         "group g: cap 50% per device, 3 members (1 dead, not yet reclaimed)",
         "heading: a share; a pid gone in our namespace is dead");
  c->h.limit = cap_bytes(8 * GiB);
  c->h.limit_dev[2] = cap_percent(500000);
  c->h.limit_dev[3] = cap_bytes(2 * GiB);
  is_str(heading_of(&e, c),
         "group g: cap 8.0 GiB (device 2: 50%, device 3: 2.0 GiB) per device, "
         "3 members (1 dead, not yet reclaimed)",
         "heading: a device's own caps, listed after the cap");
  c->h.limit_dev[2] = c->h.limit_dev[3] = (struct seg_limit){ 0 };
  memset(c->slot, 0, sizeof(c->slot));
  c->h.limit = (struct seg_limit){ 0 };
  is_str(heading_of(&e, c), "group g: cap none per device, 0 members",
         "heading: no cap, no member");
  free(c);
}

static void
test_no_cap(void)
{
  struct cmg__seg_entry e = entry_of("free", "", uid);
  struct seg *c = copy_new((struct seg_limit){ 0 });
  char got[256];

  copy_dev(c, 0, 1 * MiB, 1 * MiB, 0);
  text_of(&e, c, false);
  is_str(line_of(out, 2, got, sizeof(got)),
         "       0                 none      1.0 MiB      1.0 MiB  -",
         "devices: no cap is 'none'");
  free(c);
}

static void
test_registry(void)
{
  struct cmg__seg_entry e = entry_of(REGISTRY_NAME, "", uid);
  struct seg *c = copy_new((struct seg_limit){ 0 });
  char got[256], m[160];

  copy_dev(c, 0, 3 * MiB, 3 * MiB, 16 * GiB);
  copy_held(copy_member(c, 3, pid, "solo", 0), 0, 3 * MiB, 3 * MiB, 0);
  text_of(&e, c, false);
  is_str(line_of(out, 0, got, sizeof(got)), "not in a group: 1 process",
         "registry: not a group, its one process");
  is_str(line_of(out, 1, got, sizeof(got)),
         "       pid  command          device         live         peak",
         "registry: no device table, the processes at once");
  is_str(line_of(out, 2, got, sizeof(got)),
         member_line(m, sizeof(m), pid,
                     "solo                  0      3.0 MiB      3.0 MiB"),
         "registry: its process's bytes");
  copy_member(c, 4, pid, "two", 0);
  e = entry_of(REGISTRY_NAME, "", uid + 1);
  snprintf(m, sizeof(m), "not in a group (uid %u): 2 processes", uid + 1);
  is_str(heading_of(&e, c), m, "registry: another user's, two processes");
  memset(c->slot, 0, sizeof(c->slot));
  e = entry_of(REGISTRY_NAME, "", uid);
  is_str(heading_of(&e, c), "not in a group: 0 processes",
         "registry: every process gone");
  free(c);
}

int
main(void)
{
  uid = (unsigned)geteuid();
  pid = (int)getpid();
  setvbuf(stdout, NULL, _IOLBF, 0);
  test_group();
  test_headings();
  test_no_cap();
  test_registry();
  return done_testing();
}
