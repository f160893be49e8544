/*
 * cumemguard cdi: writes a Container Device Interface spec (kind
 * cumemguard.io/limit) with one device per --limit, named as the limit was
 * written, so that `podman run --device cumemguard.io/limit=24GiB` caps
 * the container; one line per device on stderr says the name to pass.  A
 * device's edits set LD_PRELOAD to the library, mounted read-only from the
 * host, and CUMEMGUARD_OPTIONS to a group of a fixed name per limit,
 * cdi-24GiB with group_limit=24GiB.  The group's segment lives in
 * /dev/shm, which podman, docker and CRI-O give each container (each
 * Kubernetes pod) privately, so a fixed name is one cap per container
 * (per pod and user), with nothing to allocate or clean up on the host.
 *
 * The library is found as the launcher finds it.  One in a portable
 * folder (scripts/portable: PORTABLE beside bin/ and lib/) is mounted with
 * the whole folder, read-only, at /usr/lib/cumemguard: its dependencies
 * are in lib/deps, found through its run path, and it needs nothing of the
 * image but a C library.  One of an ordinary install is mounted alone, as
 * /usr/lib/cumemguard/libcumemguard.so, and then needs the libraries it
 * was linked with, and a C library as new as the build machine's, in the
 * image.
 *
 * The spec is JSON (a valid CDI spec; YAML is not needed), written by the
 * report's writer (core/jsonw.c) in cJSON_Print's layout.  Its cdiVersion is the lowest that has what it uses: device
 * names that start with a digit need 0.5.0 (requiresV050 in the reference
 * library's version.go); a name starting with a letter would do with 0.3.0,
 * the first version runtimes still accept with mounts and env as used here.
 *
 * Every size is read with cmg__size_parse and the resulting option string
 * with cmg__config_parse, the parsers the library runs, so a spec that
 * would make the library fail closed in every container is refused here:
 * one line, exit 2, nothing written.  --output writes through a temporary
 * file in the same directory and a rename, because runtimes watch
 * /etc/cdi and /var/run/cdi and must never read half a spec.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cumemguard.h"
#include "core/conf.h"
#include "core/jsonw.h"
#include "core/log.h"
#include "core/size.h"
#include "core/args.h"
#include "launcher/cdi.h"
#include "ops/cdi_spec.h"
#include "ops/files.h"
#include "launcher/library.h"
#include "ops/preload_env.h"

#define CDI_KIND "cumemguard.io/limit"
#define MAX_LIMITS 64
#define NAME_MAX_LEN 48

struct device {
  char name[NAME_MAX_LEN]; /* "24GiB", "1.5G", "50pct" */
  char options[512];       /* CUMEMGUARD_OPTIONS */
  const char *value;       /* as given to --limit */
  struct cmg__limit limit;
};

static void
usage(FILE *f)
{
  fprintf(f, "usage: cumemguard cdi --limit SIZE [--limit SIZE ...] "
             "[--report-dir DIR]\n"
             "                      [--snapshot TIME] [--preload PATHS] "
             "[--output FILE]\n");
}

static void
help(void)
{
  usage(stdout);
  printf("\nWrites a CDI spec (kind " CDI_KIND ") with one device per "
         "--limit: a\ncontainer started with --device " CDI_KIND "=24GiB "
         "gets the library\npreloaded, and all its processes share one "
         "24GiB cap per GPU.\n\n"
         "  --limit SIZE        a device capping at SIZE (4GiB, 1.5GB, "
         "50%%); repeat\n"
         "  --report-dir DIR    write reports to DIR/cumemguard.%%h.%%p.json,"
         "\n                      DIR mounted read-write at the same path\n"
         "  --snapshot TIME     with --report-dir: rewrite each report every "
         "TIME\n                      (30s, 10m), so that a container "
         "killed outright\n                      leaves its last one\n"
         "  --preload PATHS     keep these LD_PRELOAD entries (':' between "
         "them) after\n                      the library (a sanitizer "
         "runtime leading them stays\n                      first): a "
         "container runtime replaces an image's own\n"
         "                      LD_PRELOAD with the spec's\n"
         "  --output FILE       write FILE (*.json) atomically instead of "
         "standard\n                      output: /etc/cdi or /var/run/cdi\n");
}

/* The device's name for a limit: as the user wrote it ("4GB", "24GiB",
 * "512M"), which is what they will pass to --device; a percentage, whose
 * '%' no CDI name may hold, as "50pct" (at most 4 decimals, none
 * trailing).  CDI device names take letters, digits, '_', '-', '.' and
 * ':' only; a size that has other characters (a blank) is written as its
 * bytes. */
static void
device_name(const char *value, const struct cmg__limit *l, char *out,
            size_t len)
{
  if (l->kind == CMG__LIMIT_PERCENT) {
    /* ppm / 10^4 is the percentage. */
    char num[32];
    snprintf(num, sizeof(num), "%u.%04u", l->ppm / 10000, l->ppm % 10000);
    size_t n = strlen(num);
    while (num[n - 1] == '0')
      num[--n] = '\0';
    if (num[n - 1] == '.')
      num[--n] = '\0';
    snprintf(out, len, "%spct", num);
    return;
  }
  if (strlen(value) < len && cmg__cdi_is_name(value)) {
    snprintf(out, len, "%s", value);
    return;
  }
  snprintf(out, len, "%lluB", (unsigned long long)l->bytes);
}

static bool
is_same_limit(const struct cmg__limit *a, const struct cmg__limit *b)
{
  return a->kind == b->kind &&
         (a->kind == CMG__LIMIT_PERCENT ? a->ppm == b->ppm
                                        : a->bytes == b->bytes);
}

/* The line that says what to pass to --device for a device. */
static void
say_device(const char *value, const struct cmg__limit *l, const char *name)
{
  char size[32];
  if (l->kind == CMG__LIMIT_PERCENT)
    cmg__log("cdi: --device " CDI_KIND "=%s: a cap of %s of each GPU, "
             "shared by the container's processes ('%%' is not allowed in a "
             "CDI name)",
             name, value);
  else
    cmg__log("cdi: --device " CDI_KIND "=%s: a cap of %s (%llu bytes) on "
             "each GPU, shared by the container's processes",
             name, cmg__format_size(l->bytes, size, sizeof(size)),
             (unsigned long long)l->bytes);
}

/* Fills dev for one --limit value: 0, or CMG_EXIT_USAGE after one line. */
static int
make_device(const char *value, const char *report_dir, const char *snapshot,
            struct device *dev)
{
  struct cmg__limit l;
  struct cmg__config cfg;
  char err[512];
  int rc = cmg__size_parse(value, strlen(value), true, &l);

  if (rc != 0 || l.kind == CMG__LIMIT_NONE ||
      (l.kind == CMG__LIMIT_BYTES && l.bytes == 0)) {
    cmg__log("bad value '%s' for --limit: expected a size above 0 (4GiB, "
             "1.5GB, 512M) or a share of the device (50%%)",
             value);
    return CMG_EXIT_USAGE;
  }
  device_name(value, &l, dev->name, sizeof(dev->name));
  dev->value = value;
  dev->limit = l;
  /* The group is named after the device, so each limit is its own cap. */
  snprintf(dev->options, sizeof(dev->options), "group=cdi-%s,group_limit=%s",
           dev->name, value);
  if (report_dir != NULL) {
    size_t n = strlen(dev->options);
    snprintf(dev->options + n, sizeof(dev->options) - n,
             ",report=%s/cumemguard.%%h.%%p.json", report_dir);
  }
  if (snapshot != NULL) {
    size_t n = strlen(dev->options);
    snprintf(dev->options + n, sizeof(dev->options) - n, ",snapshot=%s",
             snapshot);
  }
  if (cmg__config_parse(dev->options, &cfg, err, sizeof(err)) != 0) {
    cmg__log("--limit %s makes the options '%s', which the library "
             "refuses: %s",
             value, dev->options, err);
    return CMG_EXIT_USAGE;
  }
  return 0;
}

/* The spec as text, or NULL when out of memory; preload is the devices'
 * LD_PRELOAD=... entry, host and container the library's mount. */
static char *
build_spec(const struct device *devs, int n, const char *host,
           const char *container, const char *report_dir, const char *preload)
{
  struct cmg__cdi_device d[MAX_LIMITS];
  const char *env[MAX_LIMITS][2];
  char opts[MAX_LIMITS][600];
  struct cmg__cdi_mount m[2];
  bool folder = strcmp(container, CMG__CDI_DIR "/" CMG__LIBRARY_NAME) != 0;
  size_t nm = 0;

  for (int i = 0; i < n; i++) {
    snprintf(opts[i], sizeof(opts[i]), "CUMEMGUARD_OPTIONS=%s",
             devs[i].options);
    env[i][0] = preload;
    env[i][1] = opts[i];
    d[i] = (struct cmg__cdi_device){ devs[i].name, env[i], 2 };
  }
  m[nm++] =
      (struct cmg__cdi_mount){ host, folder ? CMG__CDI_DIR : container, false };
  if (report_dir != NULL)
    m[nm++] = (struct cmg__cdi_mount){ report_dir, report_dir, true };
  return cmg__cdi_spec(CDI_KIND, d, (size_t)n, m, nm);
}

/* The devices' LD_PRELOAD=... entry: the library as the container sees
 * it, put among the --preload entries (also; NULL for none) as the
 * launcher puts it among a program's.  NULL after one line. */
static char *
preload_entry(const char *also, const char *library)
{
  char err[256], *value, *entry;
  int rc = cmg__preload_add(also, library, &value, err, sizeof(err));

  if (rc == 0 && asprintf(&entry, "LD_PRELOAD=%s", value) < 0)
    rc = -ENOMEM;
  free(value);
  if (rc == 0)
    return entry;
  cmg__log("%s", rc == -EINVAL ? err : "out of memory");
  return NULL;
}

/* Checks --report-dir: an absolute directory that the option string can
 * hold (no ',', which separates options).  0, or 2 after one line. */
static int
check_report_dir(const char *dir)
{
  struct stat st;

  errno = 0;
  if (dir[0] != '/' || strchr(dir, ',') != NULL) {
    cmg__log("bad value '%s' for --report-dir: expected an absolute path "
             "without ','",
             dir);
    return CMG_EXIT_USAGE;
  }
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    const char *why = errno == 0 ? "not a directory" : strerror(errno);
    cmg__log("bad value '%s' for --report-dir: expected an existing "
             "directory (%s)",
             dir, why);
    return CMG_EXIT_USAGE;
  }
  return 0;
}

/* The command line, as parse_options reads it. */
struct cdi_options {
  const char *limits[MAX_LIMITS];
  const char *report_dir, *output, *snapshot, *preload_also;
  int n;
};

/* Reads the command line into *o: true to go on, else false with the exit
 * status in *status (after --help, or one line saying what is wrong). */
static bool
parse_options(int argc, char **argv, struct cdi_options *o, int *status)
{
  static const struct cmg__opt opts[] = {
    { "limit", "SIZE" },    { "report-dir", "DIR" }, { "snapshot", "TIME" },
    { "preload", "PATHS" }, { "output", "FILE" },    { "help", NULL },
  };
  struct cmg__args a = { .argc = argc,
                         .argv = argv,
                         .command = "cumemguard cdi",
                         .opts = opts,
                         .n_opts = sizeof(opts) / sizeof(opts[0]),
                         .next = 1 };
  enum cmg__args_read r;

  *status = CMG_EXIT_USAGE;
  while ((r = cmg__args_next(&a)) == CMG__ARGS_OPTION) {
    if (cmg__args_is(&a, "help")) {
      help();
      *status = fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
      return false;
    } else if (cmg__args_is(&a, "report-dir")) {
      o->report_dir = a.value;
    } else if (cmg__args_is(&a, "snapshot")) {
      o->snapshot = a.value;
    } else if (cmg__args_is(&a, "preload")) {
      o->preload_also = a.value;
    } else if (cmg__args_is(&a, "output")) {
      o->output = a.value;
    } else if (o->n < MAX_LIMITS) {
      o->limits[o->n++] = a.value;
    } else {
      cmg__log("too many --limit: at most %d devices", MAX_LIMITS);
      return false;
    }
  }
  if (r == CMG__ARGS_BAD)
    return false;
  if (r == CMG__ARGS_OPERAND || a.next < argc) {
    cmg__log("unexpected argument '%s': cdi takes options only; try "
             "'cumemguard cdi --help'",
             r == CMG__ARGS_OPERAND ? a.value : argv[a.next]);
    return false;
  }
  return true;
}

/* Checks the options together: 0, or CMG_EXIT_USAGE after one line. */
static int
check_options(const struct cdi_options *o)
{
  if (o->n == 0) {
    cmg__log("cdi needs at least one --limit SIZE");
    return CMG_EXIT_USAGE;
  }
  if (o->output != NULL && !cmg__file_has_ext(o->output, ".json")) {
    cmg__log("bad value '%s' for --output: expected a file name ending in "
             ".json, the files CDI runtimes read",
             o->output);
    return CMG_EXIT_USAGE;
  }
  if (o->report_dir != NULL && check_report_dir(o->report_dir) != 0)
    return CMG_EXIT_USAGE;
  if (o->snapshot != NULL && o->report_dir == NULL) {
    cmg__log("--snapshot %s needs --report-dir: a snapshot is a report",
             o->snapshot);
    return CMG_EXIT_USAGE;
  }
  return 0;
}

/* Writes the spec (NULL: out of memory) to output, or standard output
 * when NULL: the exit status, after one line when not 0. */
static int
write_spec(const char *text, const char *output)
{
  int rc;

  if (text == NULL) {
    cmg__log("out of memory");
    return EXIT_FAILURE;
  }
  if (output != NULL) {
    char *line = NULL;
    rc = asprintf(&line, "%s\n", text) < 0
             ? -ENOMEM
             : cmg__write_atomic(output, line, strlen(line));
    if (rc == -ENOMEM && line == NULL)
      cmg__log("out of memory");
    free(line);
    return rc == 0 ? 0 : EXIT_FAILURE;
  }
  puts(text);
  rc = fflush(stdout) == 0 && !ferror(stdout) ? 0 : EXIT_FAILURE;
  if (rc != 0)
    cmg__log("cannot write to standard output: %s", strerror(errno));
  return rc;
}

/* Builds the spec of devs for the library found at `library` and writes
 * it: the exit status. */
static int
emit_spec(const struct cdi_options *o, const struct device *devs,
          const char *library)
{
  char *host = NULL, *preload, *text;
  const char *container;
  int rc;

  if (cmg__cdi_library(library, &host, &container) != 0) {
    cmg__log("out of memory");
    return EXIT_FAILURE;
  }
  preload = preload_entry(o->preload_also, container);
  if (preload == NULL) {
    free(host);
    return EXIT_FAILURE;
  }
  text = build_spec(devs, o->n, host, container, o->report_dir, preload);
  rc = write_spec(text, o->output);
  free(text);
  free(preload);
  free(host);
  return rc;
}

int
cmg__cdi_main(int argc, char **argv)
{
  struct cdi_options o = { .n = 0 };
  struct device devs[MAX_LIMITS];
  char *library;
  int rc;

  if (!parse_options(argc, argv, &o, &rc))
    return rc;
  if (check_options(&o) != 0)
    return CMG_EXIT_USAGE;
  for (int i = 0; i < o.n; i++) {
    if (make_device(o.limits[i], o.report_dir, o.snapshot, &devs[i]) != 0)
      return CMG_EXIT_USAGE;
    for (int j = 0; j < i; j++)
      if (strcmp(devs[i].name, devs[j].name) == 0 ||
          is_same_limit(&devs[i].limit, &devs[j].limit)) {
        cmg__log("--limit %s and --limit %s are the same cap: expected "
                 "each cap once",
                 o.limits[j], o.limits[i]);
        return CMG_EXIT_USAGE;
      }
  }
  library = cmg__find_library();
  if (library == NULL)
    return CMG_EXIT_USAGE;
  rc = emit_spec(&o, devs, library);
  free(library);
  for (int i = 0; rc == 0 && i < o.n; i++)
    say_device(devs[i].value, &devs[i].limit, devs[i].name);
  return rc;
}
