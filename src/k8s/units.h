// What the plugin hands out (units.cc): each GPU's memory, less a reserve,
// in units of one size, each a device of the kubelet's named by the GPU's
// UUID and the unit's index; and what a container given some of them may
// use on each GPU.  Pure rules, no I/O.
#ifndef CMG_K8S_UNITS_H
#define CMG_K8S_UNITS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "k8s/gpus.h"

namespace k8s {

struct Unit {
  std::string id; // "GPU-...::3"
  size_t gpu;     // its GPU's index in the list
};

// The units of every GPU: floor((total - reserve) / unit) each.
std::vector<Unit> make_units(const std::vector<Gpu> &gpus, uint64_t unit,
                             uint64_t reserve);

// The UUID of the GPU a unit's ID names, or "" for an ID of another form.
std::string gpu_of(const std::string &id);

// The IDs to give a container asking for `size` units out of `available`,
// `must` among them: as few GPUs as the request fits on, one where it
// fits on one (the GPU left with the fewest units that still fits), those
// of `must` first.  Fewer than size when there are not enough.
std::vector<std::string> preferred(const std::vector<std::string> &available,
                                   const std::vector<std::string> &must,
                                   size_t size);

// One container's share: its group (named after its units, which no other
// live container has) and the bytes it may use on each GPU.
struct Share {
  std::string group;                   // "k8s-<16 hex>"
  std::map<std::string, uint64_t> cap; // by GPU UUID
};

Share share_of(const std::vector<std::string> &ids, uint64_t unit);

// The library's options for a share: its group, a cap of 0 on any GPU
// the container was not given, each GPU's cap, and reports into
// report_dir (none when empty) named after the group, the container's
// host name and the pid.
std::string options_of(const Share &s, const std::string &report_dir);

} // namespace k8s

#endif // CMG_K8S_UNITS_H
