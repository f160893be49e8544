// The device plugin's command line (flags.cc), read by the project's one
// rule for options (core/args.c).
#ifndef CMG_K8S_FLAGS_H
#define CMG_K8S_FLAGS_H

#include <cstdint>
#include <string>
#include <vector>

#include "k8s/gpus.h"
#include "k8s/respond.h"

namespace k8s {

struct Flags {
  std::string plugin_dir = "/var/lib/kubelet/device-plugins";
  std::string endpoint = "cumemguard.sock";
  std::string resource = "cumemguard.io/gpu-memory";
  uint64_t unit = uint64_t(1) << 30;
  uint64_t reserve = 0;
  std::string pod_resources = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::string labels_dir = "/var/run/cumemguard/k8s";
  uint64_t cdi_keep_ns = 600ull * 1000000000ull; // --cdi-keep, 10 minutes
  Layout layout;
};

// Reads argv into *f: -1 to go on, else the exit status (0 after --help
// or --version, 2 after one line naming what is wrong).
int read_flags(int argc, char **argv, Flags *f);

// Checks the unit against each GPU: "" or one line.
std::string check_units(const Flags &f, const std::vector<Gpu> &gpus);

} // namespace k8s

#endif // CMG_K8S_FLAGS_H
