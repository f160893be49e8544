/*
 * The CDI spec writer: the whole spec in cJSON_Print's layout (a runtime
 * reads it, so every key, nesting and mount option matters), the lowest
 * cdiVersion that has what it uses (0.5.0 only once a device name starts
 * with a digit, wherever that device is in the list), values escaped so
 * that an environment or a path cannot break the document, the mount of a
 * portable folder against a library installed alone, and the device names
 * runtimes refuse.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base.h"
#include "ops/cdi_spec.h"
#include "../tap.h"

#define KIND "cumemguard.io/limit"

static const char *const env_a[] = {
  "LD_PRELOAD=/usr/lib/cumemguard/libcumemguard.so",
  "CUMEMGUARD_OPTIONS=group=cdi-small,group_limit=1G",
};

/* Two devices, the library read-only and a report folder read-write. */
static const char whole_spec[] =
    "{\n"
    "\t\"cdiVersion\":\t\"0.3.0\",\n"
    "\t\"kind\":\t\"" KIND "\",\n"
    "\t\"devices\":\t[{\n"
    "\t\t\t\"name\":\t\"small\",\n"
    "\t\t\t\"containerEdits\":\t{\n"
    "\t\t\t\t\"env\":\t[\"LD_PRELOAD=/usr/lib/cumemguard/libcumemguard.so\", "
    "\"CUMEMGUARD_OPTIONS=group=cdi-small,group_limit=1G\"]\n"
    "\t\t\t}\n"
    "\t\t}, {\n"
    "\t\t\t\"name\":\t\"large\",\n"
    "\t\t\t\"containerEdits\":\t{\n"
    "\t\t\t\t\"env\":\t[]\n"
    "\t\t\t}\n"
    "\t\t}],\n"
    "\t\"containerEdits\":\t{\n"
    "\t\t\"mounts\":\t[{\n"
    "\t\t\t\t\"hostPath\":\t\"/opt/cmg/libcumemguard.so\",\n"
    "\t\t\t\t\"containerPath\":\t\"/usr/lib/cumemguard/libcumemguard.so\",\n"
    "\t\t\t\t\"options\":\t[\"ro\", \"nosuid\", \"nodev\", \"bind\"]\n"
    "\t\t\t}, {\n"
    "\t\t\t\t\"hostPath\":\t\"/var/reports\",\n"
    "\t\t\t\t\"containerPath\":\t\"/var/reports\",\n"
    "\t\t\t\t\"options\":\t[\"rw\", \"nosuid\", \"nodev\", \"bind\"]\n"
    "\t\t\t}]\n"
    "\t}\n"
    "}";

static void
test_whole_spec(void)
{
  struct cmg__cdi_device devs[] = { { "small", env_a, 2 },
                                    { "large", NULL, 0 } };
  struct cmg__cdi_mount mounts[] = {
    { "/opt/cmg/libcumemguard.so", CMG__CDI_DIR "/" CMG__LIBRARY_NAME, false },
    { "/var/reports", "/var/reports", true },
  };
  char *s = cmg__cdi_spec(KIND, devs, 2, mounts, 2);

  is_str(s, whole_spec,
         "spec: every key, device, env entry and mount, in cJSON's layout");
  free(s);
}

static void
test_empty_spec(void)
{
  char *s = cmg__cdi_spec("v/c", NULL, 0, NULL, 0);

  is_str(s,
         "{\n\t\"cdiVersion\":\t\"0.3.0\",\n\t\"kind\":\t\"v/c\",\n"
         "\t\"devices\":\t[],\n\t\"containerEdits\":\t{\n"
         "\t\t\"mounts\":\t[]\n\t}\n}",
         "spec: no device and no mount still give both lists, empty");
  free(s);
}

/* The cdiVersion of a spec whose devices have these names. */
static char *
version_of(const char *const *names, size_t n, char *buf, size_t len)
{
  struct cmg__cdi_device devs[4];
  char *s, *v;

  for (size_t i = 0; i < n; i++)
    devs[i] = (struct cmg__cdi_device){ names[i], NULL, 0 };
  s = cmg__cdi_spec(KIND, devs, n, NULL, 0);
  v = s != NULL ? strstr(s, "\"cdiVersion\":\t\"") : NULL;
  snprintf(buf, len, "%.5s",
           v != NULL ? v + strlen("\"cdiVersion\":\t\"") : "");
  free(s);
  return buf;
}

static void
test_version(void)
{
  const char *letters[] = { "small", "Large", "x1" };
  const char *first[] = { "24GiB", "small" };
  const char *last[] = { "small", "medium", "9pct" };
  const char *zero[] = { "0" };
  char v[8];

  is_str(version_of(letters, 3, v, sizeof(v)), "0.3.0",
         "version: names that start with a letter need no more than 0.3.0");
  is_str(version_of(first, 2, v, sizeof(v)), "0.5.0",
         "version: a name that starts with a digit needs 0.5.0");
  is_str(version_of(last, 3, v, sizeof(v)), "0.5.0",
         "version: so does one that is not the first device");
  is_str(version_of(zero, 1, v, sizeof(v)), "0.5.0",
         "version: '0' is a digit too");
  is_str(version_of(NULL, 0, v, sizeof(v)), "0.3.0",
         "version: no device, no digit");
}

static void
test_escaping(void)
{
  const char *env[] = { "Q=say \"hi\"\\now", "T=a\tb\nc" };
  struct cmg__cdi_device dev = { "d", env, 2 };
  struct cmg__cdi_mount m = { "/host/\"x\"", "/in\\c", false };
  char *s = cmg__cdi_spec("k/\"c\"", &dev, 1, &m, 1);

  ok(s != NULL && strstr(s, "[\"Q=say \\\"hi\\\"\\\\now\", "
                            "\"T=a\\tb\\nc\"]") != NULL,
     "escaping: quotes, backslashes and control characters of env entries");
  ok(s != NULL && strstr(s, "\"hostPath\":\t\"/host/\\\"x\\\"\",") != NULL &&
         strstr(s, "\"containerPath\":\t\"/in\\\\c\",") != NULL,
     "escaping: mount paths too");
  ok(s != NULL && strstr(s, "\"kind\":\t\"k/\\\"c\\\"\",") != NULL,
     "escaping: and the kind");
  free(s);
}

/* ---- cmg__cdi_library --------------------------------------------------- */

static char base[64];

/* Makes base/rel: a folder when rel ends in '/', else an empty file. */
static void
make(const char *rel)
{
  char path[256];
  size_t n = strlen(rel);

  snprintf(path, sizeof(path), "%s/%s", base, rel);
  if (rel[n - 1] == '/') {
    mkdir(path, 0755);
    return;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0)
    close(fd);
}

/* cmg__cdi_library for base/rel: 0 with host (relative to base when
 * under it) and container, or its error. */
static int
library_of(const char *rel, char *host, size_t len, const char **container)
{
  char lib[256], *h = NULL;
  size_t nb = strlen(base);

  snprintf(lib, sizeof(lib), "%s/%s", base, rel);
  int rc = cmg__cdi_library(lib, &h, container);
  if (rc == 0 && h != NULL)
    snprintf(host, len, "%s",
             strncmp(h, base, nb) == 0 ? (h[nb] ? h + nb + 1 : ".") : h);
  free(h);
  return rc;
}

static void
test_library(void)
{
  const char *c = NULL, *alone = CMG__CDI_DIR "/" CMG__LIBRARY_NAME;
  char host[256];

  snprintf(base, sizeof(base), "/tmp/test_cdi_spec.XXXXXX");
  if (mkdtemp(base) == NULL) {
    printf("# cannot make a folder in /tmp\n");
    return;
  }
  const char *tree[] = { "port/",          "port/lib/",      "port/PORTABLE",
                         "plain/",         "plain/lib/",     "fake/",
                         "fake/lib/",      "fake/PORTABLE/", "ab/",
                         "ab/PORTABLE",    "ab/xlib/",       "other/",
                         "other/PORTABLE", "other/lib/" };
  for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++)
    make(tree[i]);

  is_int(library_of("port/lib/" CMG__LIBRARY_NAME, host, sizeof(host), &c), 0,
         "library: found");
  is_str(host, "port", "library: a portable folder is mounted whole");
  is_str(c, CMG__CDI_DIR "/lib/" CMG__LIBRARY_NAME,
         "library: at " CMG__CDI_DIR ", the library in its lib/");
  library_of("plain/lib/" CMG__LIBRARY_NAME, host, sizeof(host), &c);
  is_str(host, "plain/lib/" CMG__LIBRARY_NAME,
         "library: without PORTABLE beside lib/, the library alone");
  is_str(c, alone, "library: as " CMG__CDI_DIR "/" CMG__LIBRARY_NAME);
  library_of("fake/lib/" CMG__LIBRARY_NAME, host, sizeof(host), &c);
  is_str(host, "fake/lib/" CMG__LIBRARY_NAME,
         "library: a folder named PORTABLE is no mark");
  library_of("ab/xlib/" CMG__LIBRARY_NAME, host, sizeof(host), &c);
  is_str(
      host, "ab/xlib/" CMG__LIBRARY_NAME,
      "library: a folder ending in 'lib' is not lib/ (ab/PORTABLE is there)");
  library_of("other/lib/libcumemguard.so.1", host, sizeof(host), &c);
  is_str(host, "other/lib/libcumemguard.so.1",
         "library: another file name is mounted alone, portable or not");
  is_str(c, alone, "library: under the library's own name");
  library_of("port/" CMG__LIBRARY_NAME, host, sizeof(host), &c);
  is_str(host, "port/" CMG__LIBRARY_NAME,
         "library: beside PORTABLE rather than in lib/, alone");

  char *h = NULL;
  is_int(cmg__cdi_library(CMG__LIBRARY_NAME, &h, &c), 0,
         "library: a bare file name");
  is_str(h, CMG__LIBRARY_NAME, "library: is mounted alone, as given");
  free(h);
  h = NULL;
  cmg__cdi_library("/lib/" CMG__LIBRARY_NAME, &h, &c);
  is_str(h, "/lib/" CMG__LIBRARY_NAME,
         "library: /lib/ at the root is never a portable folder");
  free(h);

  const char *rm[] = { "port/PORTABLE", "ab/PORTABLE", "other/PORTABLE" };
  for (size_t i = 0; i < sizeof(rm) / sizeof(rm[0]); i++) {
    snprintf(host, sizeof(host), "%s/%s", base, rm[i]);
    unlink(host);
  }
  for (size_t i = sizeof(tree) / sizeof(tree[0]); i-- > 0;) {
    snprintf(host, sizeof(host), "%s/%s", base, tree[i]);
    rmdir(host);
  }
  ok(rmdir(base) == 0, "library: nothing left behind");
}

/* ---- cmg__cdi_is_name --------------------------------------------------- */

static void
test_names(void)
{
  const char *good[] = { "24GiB", "1.5G", "50pct", "3000000",
                         "a",     "Z",    "0",     "x_y-z.w:v" };
  const char *bad[] = { "",    "-1G", ".5G", "_a",          ":a",  "50%", "a b",
                        "a/b", "a=b", "a,b", "caf\xc3\xa9", "a\n", "a-",  "1G.",
                        "a_",  "a:",  "-" };
  int n_good = 0, n_bad = 0;

  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
    n_good += cmg__cdi_is_name(good[i]);
    if (!cmg__cdi_is_name(good[i]))
      printf("# refused: '%s'\n", good[i]);
  }
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    n_bad += !cmg__cdi_is_name(bad[i]);
    if (cmg__cdi_is_name(bad[i]))
      printf("# taken: '%s'\n", bad[i]);
  }
  is_int(n_good, sizeof(good) / sizeof(good[0]),
         "names: letters, digits, '_', '-', '.', ':' from a letter or digit");
  is_int(n_bad, sizeof(bad) / sizeof(bad[0]),
         "names: empty, a leading or trailing '-' '.' '_' ':', and other "
         "bytes refused");
  ok(!cmg__cdi_is_name("50%") && cmg__cdi_is_name("50pct"),
     "names: a percentage needs another spelling");
  ok(!cmg__cdi_is_name("1G\xff"), "names: a byte above ASCII is refused");
}

int
main(void)
{
  test_whole_spec();
  test_empty_spec();
  test_version();
  test_escaping();
  test_library();
  test_names();
  return done_testing();
}
