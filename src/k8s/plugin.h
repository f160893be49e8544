// The device-plugin service the kubelet calls (plugin.cc), over the
// state the main loop keeps (the GPUs, their units and their health).
#ifndef CMG_K8S_PLUGIN_H
#define CMG_K8S_PLUGIN_H

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "k8s/deviceplugin.grpc.pb.h"
#include "k8s/gpus.h"
#include "k8s/respond.h"
#include "k8s/units.h"

namespace k8s {

// What the streams send: each change bumps version and wakes them.
struct State {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t version = 0;
  bool stopping = false;
  std::vector<Gpu> gpus;
  std::vector<Unit> units;
  std::map<std::string, size_t> gpu_of; // unit ID -> GPU index
};

class Plugin final : public v1beta1::DevicePlugin::Service {
public:
  Plugin(State *state, Layout layout, uint64_t unit, std::string resource)
      : state_(state), layout_(std::move(layout)), unit_(unit),
        resource_(std::move(resource))
  {
  }

  grpc::Status GetDevicePluginOptions(grpc::ServerContext *,
                                      const v1beta1::Empty *,
                                      v1beta1::DevicePluginOptions *) override;
  grpc::Status
  ListAndWatch(grpc::ServerContext *, const v1beta1::Empty *,
               grpc::ServerWriter<v1beta1::ListAndWatchResponse> *) override;
  grpc::Status
  GetPreferredAllocation(grpc::ServerContext *,
                         const v1beta1::PreferredAllocationRequest *,
                         v1beta1::PreferredAllocationResponse *) override;
  grpc::Status Allocate(grpc::ServerContext *, const v1beta1::AllocateRequest *,
                        v1beta1::AllocateResponse *) override;
  grpc::Status PreStartContainer(grpc::ServerContext *,
                                 const v1beta1::PreStartContainerRequest *,
                                 v1beta1::PreStartContainerResponse *) override;

private:
  State *state_;
  Layout layout_;
  uint64_t unit_;
  std::string resource_;
};

} // namespace k8s

#endif // CMG_K8S_PLUGIN_H
