// What Allocate returns for one container (respond.cc): CDI device names
// and the cumemguard device's spec, or environment and mounts.
#ifndef CMG_K8S_RESPOND_H
#define CMG_K8S_RESPOND_H

#include <string>

#include "k8s/deviceplugin.pb.h"
#include "k8s/units.h"

namespace k8s {

struct Layout {
  bool cdi = true;        // --strategy cdi, else envs
  std::string cdi_dir;    // --cdi-dir
  std::string gpu_kind;   // --gpu-cdi-kind
  std::string gpu_env;    // the GPUs' visibility variable (envs)
  std::string library;    // the library on the host
  std::string report_dir; // on the host and in the container; "" none
};

// The kind of the devices this plugin writes specs for.
extern const char *const spec_kind;

// Fills r for share s with the library's options; for CDI, writes the
// device's spec into the CDI folder first (atomically).  "" or one line
// saying why not (nothing written then).
std::string respond(const Layout &l, const Share &s, const std::string &opts,
                    v1beta1::ContainerAllocateResponse *r);

} // namespace k8s

#endif // CMG_K8S_RESPOND_H
