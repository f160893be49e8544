// The node's GPUs as NVML sees them (gpus.cc): found once at start, their
// health read again at every look.
#ifndef CMG_K8S_GPUS_H
#define CMG_K8S_GPUS_H

#include <cstdint>
#include <string>
#include <vector>

namespace k8s {

struct Gpu {
  std::string uuid;   // "GPU-..." as NVML gives it
  uint64_t total = 0; // bytes
  bool healthy = true;
  std::string why; // what NVML said of an unhealthy one
};

class Gpus {
public:
  // Loads libnvidia-ml.so.1 and lists the GPUs: "" or one line saying why
  // not.
  std::string open();
  const std::vector<Gpu> &list() const
  {
    return gpus_;
  }
  // Reads each GPU's health again: true when one changed.
  bool look();

private:
  std::vector<Gpu> gpus_;
  std::vector<void *> handles_;
  void *lib_ = nullptr;
};

} // namespace k8s

#endif // CMG_K8S_GPUS_H
