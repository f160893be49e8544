// The kubelet knows which pod and container hold which devices; the
// plugin names each container's group after its devices (units.cc).  So
// every few seconds the plugin asks PodResources' List, and for each
// container holding units of its resource writes DIR/<group>, lines of
// namespace=, pod= and container=, which `cumemguard status` and its
// Prometheus metrics read to label the group (ops/seg_find.c).  A group
// no container holds any more loses its file.  What it lists also tells
// which CDI specs are still held (specs.cc).
#include "config.h"

#include "k8s/labels.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <sys/stat.h>
#include <unistd.h>

#include "k8s/podresources.grpc.pb.h"
#include "k8s/units.h"

extern "C" {
#include "ops/files.h"
}

namespace k8s {

std::string
Labels::refresh()
{
  struct stat st;
  listed_ = false;
  if (stat(socket_.c_str(), &st) != 0)
    return "";
  auto stub = v1::PodResourcesLister::NewStub(grpc::CreateChannel(
      "unix://" + socket_, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  v1::ListPodResourcesRequest req;
  v1::ListPodResourcesResponse out;
  grpc::Status rc = stub->List(&ctx, req, &out);
  if (!rc.ok())
    return "PodResources' List at " + socket_ + ": " + rc.error_message();
  std::set<std::string> now;
  held_.clear();
  for (const auto &pod : out.pod_resources())
    for (const auto &c : pod.containers())
      for (const auto &d : c.devices()) {
        if (d.resource_name() != resource_ || d.device_ids_size() == 0)
          continue;
        std::vector<std::string> ids(d.device_ids().begin(),
                                     d.device_ids().end());
        std::string group = share_of(ids, unit_).group;
        held_.insert(group);
        std::string text = "namespace=" + pod.namespace_() +
                           "\npod=" + pod.name() + "\ncontainer=" + c.name() +
                           "\n";
        std::string path = dir_ + "/" + group;
        if (!dir_.empty() &&
            cmg__write_atomic(path.c_str(), text.c_str(), text.size()) == 0)
          now.insert(group);
      }
  listed_ = true;
  for (const std::string &g : written_)
    if (now.count(g) == 0)
      unlink((dir_ + "/" + g).c_str());
  written_ = now;
  return "";
}

} // namespace k8s
