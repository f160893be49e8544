// A container's spec must outlive its start: the runtime reads it again
// each time the container is made anew (a restart after a crash), and the
// kubelet's PodResources may list a pod late, or not at all for a while
// after the kubelet itself restarts.  So a spec goes only after no
// container has held its group for `keep` (--cdi-keep, 10 minutes by
// default), counted from when the plugin last saw it held or first saw
// the file.  Only files named as spec_path names them are ours; the rest
// of the CDI folder (the GPU vendor's specs) is never touched.
#include "config.h"

#include "k8s/specs.h"

#include <cstring>
#include <dirent.h>
#include <unistd.h>

extern "C" {
#include "core/log.h"
}

namespace k8s {

namespace {

const char stem[] = "cumemguard-";
const char suffix[] = ".json";

// The group a file of ours is the spec of, or "" for any other file: a
// group is named k8s- and 16 hex digits (units.cc).
std::string
group_of(const char *name)
{
  size_t n = strlen(name), p = sizeof(stem) - 1, s = sizeof(suffix) - 1;
  const char *g = name + p;
  if (n != p + 4 + 16 + s || strncmp(name, stem, p) != 0 ||
      strncmp(g, "k8s-", 4) != 0 || strspn(g + 4, "0123456789abcdef") != 16 ||
      strcmp(name + n - s, suffix) != 0)
    return "";
  return std::string(g, n - p - s);
}

} // namespace

std::string
spec_path(const std::string &dir, const std::string &group)
{
  return dir + "/" + stem + group + suffix;
}

void
Specs::collect(const std::set<std::string> &held, Clock::time_point now)
{
  DIR *d = opendir(dir_.c_str());
  if (d == nullptr)
    return;
  std::map<std::string, Clock::time_point> seen;
  long seconds =
      (long)std::chrono::duration_cast<std::chrono::seconds>(keep_).count();
  for (struct dirent *e; (e = readdir(d)) != nullptr;) {
    std::string group = group_of(e->d_name);
    if (group.empty())
      continue;
    auto at = seen_.find(group);
    Clock::time_point last =
        held.count(group) || at == seen_.end() ? now : at->second;
    if (now - last < keep_) {
      seen[group] = last;
      continue;
    }
    std::string path = spec_path(dir_, group);
    if (unlink(path.c_str()) == 0)
      cmg__log("removed %s: no container has held group %s for %ld s",
               path.c_str(), group.c_str(), seconds);
  }
  closedir(d);
  seen_ = std::move(seen);
}

} // namespace k8s
