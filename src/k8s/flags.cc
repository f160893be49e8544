// The plugin's flags, each checked before anything is served or written:
// a bad one is one line naming the value and what was expected, and exit
// status 2.  The folders default to where the kubelet, CDI runtimes and
// the DaemonSet of deploy/kubernetes/ put them.
#include "config.h"

#include "k8s/flags.h"

#include <cstdio>
#include <cstring>
#include <sys/stat.h>

extern "C" {
#include "core/args.h"
#include "core/log.h"
#include "core/size.h"
}

namespace k8s {

namespace {

const struct cmg__opt opts[] = {
  { "plugin-dir", "DIR" },    { "cdi-dir", "DIR" },
  { "report-dir", "DIR" },    { "unit", "SIZE" },
  { "reserve", "SIZE" },      { "resource", "NAME" },
  { "strategy", "cdi|envs" }, { "gpu-cdi-kind", "KIND" },
  { "gpu-env", "NAME" },      { "library", "PATH" },
  { "endpoint", "NAME" },     { "help", nullptr },
  { "version", nullptr },     { "pod-resources", "SOCKET" },
  { "labels-dir", "DIR" },    { "cdi-keep", "DURATION" },
};

void
help()
{
  printf(
      "usage: cumemguard-device-plugin [--unit SIZE] [--reserve SIZE]\n"
      "         [--resource NAME] [--strategy cdi|envs] [--plugin-dir DIR]\n"
      "         [--cdi-dir DIR] [--report-dir DIR] [--gpu-cdi-kind KIND]\n"
      "         [--gpu-env NAME] [--library PATH] [--endpoint NAME]\n"
      "         [--pod-resources SOCKET] [--labels-dir DIR]\n"
      "         [--cdi-keep DURATION]\n"
      "\n"
      "A kubelet device plugin that hands out GPU memory: each device is one\n"
      "unit of memory on one GPU, and the units a container is given are one\n"
      "cap on each of their GPUs, shared by all the container's processes.\n"
      "\n"
      "  --unit SIZE          the memory of one device (default 1GiB)\n"
      "  --reserve SIZE       memory of each GPU not handed out (default 0)\n"
      "  --resource NAME      the resource advertised (default "
      "cumemguard.io/gpu-memory)\n"
      "  --strategy cdi|envs  cdi: CDI device names (default); envs:\n"
      "                       environment and mounts, for runtimes without "
      "CDI\n"
      "  --plugin-dir DIR     the kubelet's device-plugins folder (default\n"
      "                       /var/lib/kubelet/device-plugins)\n"
      "  --cdi-dir DIR        where the containers' CDI specs go (default\n"
      "                       /var/run/cdi)\n"
      "  --report-dir DIR     reports, mounted read-write in each container "
      "at\n"
      "                       the same path, named GROUP.HOST.PID.json "
      "(default\n"
      "                       none: reports stay in the container)\n"
      "  --gpu-cdi-kind KIND  the GPUs' CDI kind (default nvidia.com/gpu)\n"
      "  --gpu-env NAME       with envs: the GPUs' visibility variable\n"
      "                       (default NVIDIA_VISIBLE_DEVICES)\n"
      "  --library PATH       libcumemguard.so on the node, best in a "
      "portable\n"
      "                       folder (default "
      "/opt/cumemguard/lib/libcumemguard.so)\n"
      "  --endpoint NAME      the plugin's socket in DIR (default "
      "cumemguard.sock)\n"
      "  --pod-resources SOCKET  the kubelet's PodResources API (default\n"
      "                       /var/lib/kubelet/pod-resources/kubelet.sock)\n"
      "  --labels-dir DIR     where each group's pod, namespace and container\n"
      "                       go for cumemguard status (default\n"
      "                       /var/run/cumemguard/k8s; '' for none)\n"
      "  --cdi-keep DURATION  how long a container's CDI spec stays once no\n"
      "                       container holds its units (default 10m)\n");
}

// A size above 0 in bytes (no percentage): false after one line.
bool
size_flag(const char *flag, const char *value, bool zero, uint64_t *out)
{
  struct cmg__limit l;
  if (cmg__size_parse(value, strlen(value), false, &l) != 0 ||
      (!zero && l.bytes == 0)) {
    cmg__log("bad value '%s' for --%s: expected a size%s such as 1GiB, "
             "512MiB or 1.5GB",
             value, flag, zero ? "" : " above 0");
    return false;
  }
  *out = l.bytes;
  return true;
}

// A folder that exists, or "" (empty allowed): false after one line.
bool
dir_flag(const char *flag, const std::string &dir, bool empty_ok)
{
  struct stat st;
  if (dir.empty() && empty_ok)
    return true;
  if (dir.empty() || dir[0] != '/' || dir.find(',') != std::string::npos) {
    cmg__log("bad value '%s' for --%s: expected an absolute path without ','",
             dir.c_str(), flag);
    return false;
  }
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    cmg__log("bad value '%s' for --%s: expected an existing directory",
             dir.c_str(), flag);
    return false;
  }
  return true;
}

// A name of the form vendor/class: DNS-like letters, digits, '-', '.',
// one '/' between two non-empty parts.
bool
is_qualified(const std::string &s)
{
  size_t slash = s.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == s.size() ||
      s.find('/', slash + 1) != std::string::npos)
    return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '.' || c == '/' || c == '_'))
      return false;
  return true;
}

bool
name_flag(const char *flag, const std::string &v, const char *example)
{
  if (is_qualified(v))
    return true;
  cmg__log("bad value '%s' for --%s: expected DOMAIN/NAME in lower case, "
           "such as %s",
           v.c_str(), flag, example);
  return false;
}

// The labels' folder, made (with the folders above it) if it is not
// there: the kubelet's files are the node's, ours need a place.
const std::string &
made(const std::string &dir)
{
  for (size_t at = 1; !dir.empty() && dir[0] == '/' && at != std::string::npos;
       at = dir.find('/', at + 1))
    mkdir(dir.substr(0, at).c_str(), 0755);
  if (!dir.empty() && dir[0] == '/')
    mkdir(dir.c_str(), 0755);
  return dir;
}

bool
check(Flags *f)
{
  struct stat st;
  const Layout &l = f->layout;
  if (!dir_flag("plugin-dir", f->plugin_dir, false) ||
      (l.cdi && !dir_flag("cdi-dir", l.cdi_dir, false)) ||
      !dir_flag("report-dir", l.report_dir, true) ||
      !dir_flag("labels-dir", made(f->labels_dir), true) ||
      !name_flag("resource", f->resource, "cumemguard.io/gpu-memory") ||
      !name_flag("gpu-cdi-kind", l.gpu_kind, "nvidia.com/gpu"))
    return false;
  if (f->endpoint.empty() || f->endpoint.find('/') != std::string::npos) {
    cmg__log("bad value '%s' for --endpoint: expected a file name",
             f->endpoint.c_str());
    return false;
  }
  if (stat(l.library.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    cmg__log("bad value '%s' for --library: expected libcumemguard.so, "
             "best in a portable folder (make portable)",
             l.library.c_str());
    return false;
  }
  return true;
}

} // namespace

int
read_flags(int argc, char **argv, Flags *f)
{
  f->layout.cdi_dir = "/var/run/cdi";
  f->layout.gpu_kind = "nvidia.com/gpu";
  f->layout.gpu_env = "NVIDIA_VISIBLE_DEVICES";
  f->layout.library = "/opt/cumemguard/lib/libcumemguard.so";
  struct cmg__args a = {};
  a.argc = argc;
  a.argv = argv;
  a.command = "cumemguard-device-plugin";
  a.opts = opts;
  a.n_opts = sizeof(opts) / sizeof(opts[0]);
  a.next = 1;
  enum cmg__args_read r;
  while ((r = cmg__args_next(&a)) == CMG__ARGS_OPTION) {
    std::string v = a.value ? a.value : "";
    if (cmg__args_is(&a, "help")) {
      help();
      return 0;
    } else if (cmg__args_is(&a, "version")) {
      printf("cumemguard-device-plugin " PACKAGE_VERSION "\n");
      return 0;
    } else if (cmg__args_is(&a, "unit")) {
      if (!size_flag("unit", a.value, false, &f->unit))
        return 2;
    } else if (cmg__args_is(&a, "reserve")) {
      if (!size_flag("reserve", a.value, true, &f->reserve))
        return 2;
    } else if (cmg__args_is(&a, "strategy")) {
      if (v != "cdi" && v != "envs") {
        cmg__log("bad value '%s' for --strategy: expected cdi or envs",
                 v.c_str());
        return 2;
      }
      f->layout.cdi = v == "cdi";
    } else if (cmg__args_is(&a, "plugin-dir")) {
      f->plugin_dir = v;
    } else if (cmg__args_is(&a, "cdi-dir")) {
      f->layout.cdi_dir = v;
    } else if (cmg__args_is(&a, "report-dir")) {
      f->layout.report_dir = v;
    } else if (cmg__args_is(&a, "resource")) {
      f->resource = v;
    } else if (cmg__args_is(&a, "gpu-cdi-kind")) {
      f->layout.gpu_kind = v;
    } else if (cmg__args_is(&a, "gpu-env")) {
      f->layout.gpu_env = v;
    } else if (cmg__args_is(&a, "library")) {
      f->layout.library = v;
    } else if (cmg__args_is(&a, "endpoint")) {
      f->endpoint = v;
    } else if (cmg__args_is(&a, "pod-resources")) {
      f->pod_resources = v;
    } else if (cmg__args_is(&a, "labels-dir")) {
      f->labels_dir = v;
    } else if (cmg__args_is(&a, "cdi-keep")) {
      if (cmg__duration_parse(v.c_str(), v.size(), &f->cdi_keep_ns) != 0) {
        cmg__log("bad value '%s' for --cdi-keep: expected a duration from "
                 "1ms to 24h, such as 10m, 90s or 1h",
                 v.c_str());
        return 2;
      }
    }
  }
  if (r == CMG__ARGS_BAD)
    return 2;
  if (r == CMG__ARGS_OPERAND || a.next < argc) {
    cmg__log("unexpected argument '%s': the plugin takes options only; try "
             "'cumemguard-device-plugin --help'",
             r == CMG__ARGS_OPERAND ? a.value : argv[a.next]);
    return 2;
  }
  return check(f) ? -1 : 2;
}

std::string
check_units(const Flags &f, const std::vector<Gpu> &gpus)
{
  for (const Gpu &g : gpus) {
    uint64_t room = g.total > f.reserve ? g.total - f.reserve : 0;
    if (room >= f.unit)
      continue;
    char unit[32], total[32], reserve[32];
    cmg__format_size(f.unit, unit, sizeof(unit));
    cmg__format_size(g.total, total, sizeof(total));
    cmg__format_size(f.reserve, reserve, sizeof(reserve));
    return "--unit " + std::string(unit) + " is larger than " + g.uuid +
           " can hand out: " + total + ", less --reserve " + reserve;
  }
  return "";
}

} // namespace k8s
