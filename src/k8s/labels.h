// Which pod each container's group caps (labels.cc): the kubelet's
// PodResources API, read for `cumemguard status` and its metrics.
#ifndef CMG_K8S_LABELS_H
#define CMG_K8S_LABELS_H

#include <cstdint>
#include <set>
#include <string>

namespace k8s {

class Labels {
public:
  Labels(std::string socket, std::string dir, std::string resource,
         uint64_t unit)
      : socket_(std::move(socket)), dir_(std::move(dir)),
        resource_(std::move(resource)), unit_(unit)
  {
  }
  // Asks the kubelet which containers hold our units and writes a file a
  // group for those, removing those of groups gone: "" or why not.
  std::string refresh();
  // The groups containers held at the last refresh, or nullptr when it
  // could not ask.
  const std::set<std::string> *held() const
  {
    return listed_ ? &held_ : nullptr;
  }

private:
  std::string socket_, dir_, resource_;
  uint64_t unit_;
  std::set<std::string> written_, held_;
  bool listed_ = false;
};

} // namespace k8s

#endif // CMG_K8S_LABELS_H
