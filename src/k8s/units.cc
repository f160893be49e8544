// The plugin's devices are units of memory, not GPUs: a container asking
// for 8 units of 1 GiB gets 8 GiB, on one GPU where it fits.  A unit's ID
// is "<GPU UUID>::<index>", the form NVIDIA's plugin gives the replicas of
// a shared GPU.  The kubelet hands each unit to one container at a time,
// so the units never add up past a GPU's memory less the reserve, and a
// container's set of units is its own while it lives: its group is named
// after them, so that two containers of one pod (which share /dev/shm)
// have a cap each.
#include "config.h"

#include "k8s/units.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace k8s {

std::vector<Unit>
make_units(const std::vector<Gpu> &gpus, uint64_t unit, uint64_t reserve)
{
  std::vector<Unit> out;
  for (size_t g = 0; g < gpus.size(); g++) {
    uint64_t room = gpus[g].total > reserve ? gpus[g].total - reserve : 0;
    for (uint64_t k = 0; k < room / unit; k++)
      out.push_back(Unit{ gpus[g].uuid + "::" + std::to_string(k), g });
  }
  return out;
}

std::string
gpu_of(const std::string &id)
{
  size_t at = id.rfind("::");
  if (at == std::string::npos || at == 0 || at + 2 == id.size() ||
      id.find_first_not_of("0123456789", at + 2) != std::string::npos)
    return "";
  return id.substr(0, at);
}

std::vector<std::string>
preferred(const std::vector<std::string> &available,
          const std::vector<std::string> &must, size_t size)
{
  std::vector<std::string> out;
  std::map<std::string, std::vector<std::string>> free; // by GPU
  for (const std::string &id : available)
    if (std::find(must.begin(), must.end(), id) == must.end())
      free[gpu_of(id)].push_back(id);
  for (const std::string &id : must)
    if (out.size() < size)
      out.push_back(id);
  // The GPUs of the units it must have first, then the best fit, then the
  // largest, until the request is met.
  auto take = [&](const std::string &gpu) {
    auto &ids = free[gpu];
    while (out.size() < size && !ids.empty()) {
      out.push_back(ids.front());
      ids.erase(ids.begin());
    }
  };
  for (const std::string &id : must)
    take(gpu_of(id));
  while (out.size() < size) {
    size_t need = size - out.size();
    std::string best, largest;
    for (const auto &[gpu, ids] : free) {
      if (ids.empty())
        continue;
      if (ids.size() >= need &&
          (best.empty() || ids.size() < free[best].size()))
        best = gpu;
      if (largest.empty() || ids.size() > free[largest].size())
        largest = gpu;
    }
    if (largest.empty())
      break;
    take(best.empty() ? largest : best);
  }
  return out;
}

Share
share_of(const std::vector<std::string> &ids, uint64_t unit)
{
  Share s;
  std::vector<std::string> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  uint64_t h = 0xcbf29ce484222325ull;
  for (const std::string &id : sorted) {
    for (unsigned char c : id)
      h = (h ^ c) * 0x100000001b3ull;
    h = (h ^ ',') * 0x100000001b3ull;
    s.cap[gpu_of(id)] += unit;
  }
  char name[32];
  snprintf(name, sizeof(name), "k8s-%016" PRIx64, h);
  s.group = name;
  return s;
}

std::string
options_of(const Share &s, const std::string &report_dir)
{
  std::string o = "group=" + s.group + ",group_limit=0";
  for (const auto &[gpu, bytes] : s.cap)
    o += ",group_limit." + gpu + "=" + std::to_string(bytes);
  if (!report_dir.empty())
    o += ",report=" + report_dir + "/" + s.group + ".%h.%p.json";
  return o;
}

} // namespace k8s
