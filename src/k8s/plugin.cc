// The kubelet's calls.  ListAndWatch sends every unit with its GPU's
// health at once and again at every change, until the kubelet hangs up or
// the plugin stops.  Allocate checks every ID of every container first: an
// ID this plugin never advertised is an INVALID_ARGUMENT status naming it,
// and nothing is written.  Then, for each container, its share (one group,
// a cap per GPU), the library's options (read by the library's own parser,
// so that no container is started with options the library would refuse)
// and the response (respond.cc).  No call is refused for a GPU's health:
// the kubelet does not hand out units of an unhealthy GPU.
#include "config.h"

#include "k8s/plugin.h"

#include <chrono>

extern "C" {
#include "core/conf.h"
#include "core/log.h"
#include "core/size.h"
}

namespace k8s {

grpc::Status
Plugin::GetDevicePluginOptions(grpc::ServerContext *, const v1beta1::Empty *,
                               v1beta1::DevicePluginOptions *out)
{
  out->set_pre_start_required(false);
  out->set_get_preferred_allocation_available(true);
  return grpc::Status::OK;
}

grpc::Status
Plugin::ListAndWatch(grpc::ServerContext *ctx, const v1beta1::Empty *,
                     grpc::ServerWriter<v1beta1::ListAndWatchResponse> *w)
{
  std::unique_lock<std::mutex> lock(state_->mu);
  for (;;) {
    v1beta1::ListAndWatchResponse list;
    for (const Unit &u : state_->units) {
      v1beta1::Device *d = list.add_devices();
      d->set_id(u.id);
      d->set_health(state_->gpus[u.gpu].healthy ? "Healthy" : "Unhealthy");
    }
    uint64_t sent = state_->version;
    lock.unlock();
    if (!w->Write(list))
      return grpc::Status::OK;
    lock.lock();
    while (state_->version == sent && !state_->stopping && !ctx->IsCancelled())
      state_->cv.wait_for(lock, std::chrono::milliseconds(500));
    if (state_->stopping || ctx->IsCancelled())
      return grpc::Status::OK;
  }
}

grpc::Status
Plugin::GetPreferredAllocation(grpc::ServerContext *,
                               const v1beta1::PreferredAllocationRequest *in,
                               v1beta1::PreferredAllocationResponse *out)
{
  for (const auto &req : in->container_requests()) {
    std::vector<std::string> avail(req.available_deviceids().begin(),
                                   req.available_deviceids().end());
    std::vector<std::string> must(req.must_include_deviceids().begin(),
                                  req.must_include_deviceids().end());
    size_t size = req.allocation_size() > 0 ? (size_t)req.allocation_size() : 0;
    auto *resp = out->add_container_responses();
    for (const std::string &id : preferred(avail, must, size))
      resp->add_deviceids(id);
  }
  return grpc::Status::OK;
}

grpc::Status
Plugin::Allocate(grpc::ServerContext *, const v1beta1::AllocateRequest *in,
                 v1beta1::AllocateResponse *out)
{
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    for (const auto &req : in->container_requests()) {
      if (req.devices_ids_size() == 0)
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            "Allocate: a container asks for no device");
      for (const std::string &id : req.devices_ids())
        if (state_->gpu_of.count(id) == 0)
          return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "Allocate: unknown device ID '" + id +
                                  "': expected one this plugin advertised "
                                  "for " +
                                  resource_ + " (GPU-<uuid>::<unit>)");
    }
  }
  for (const auto &req : in->container_requests()) {
    std::vector<std::string> ids(req.devices_ids().begin(),
                                 req.devices_ids().end());
    Share s = share_of(ids, unit_);
    std::string opts = options_of(s, layout_.report_dir);
    struct cmg__config cfg;
    char err[512];
    if (cmg__config_parse(opts.c_str(), &cfg, err, sizeof(err)) != 0)
      return grpc::Status(grpc::StatusCode::INTERNAL,
                          "Allocate: the options '" + opts +
                              "' are refused by the library: " + err);
    std::string why = respond(layout_, s, opts, out->add_container_responses());
    if (!why.empty())
      return grpc::Status(grpc::StatusCode::INTERNAL, "Allocate: " + why);
    std::string caps;
    for (const auto &[gpu, bytes] : s.cap) {
      char size[32];
      cmg__format_size(bytes, size, sizeof(size));
      caps += std::string(caps.empty() ? "" : ", ") + gpu + " " + size;
    }
    cmg__log("allocated %zu unit%s to group %s: %s", ids.size(),
             ids.size() == 1 ? "" : "s", s.group.c_str(), caps.c_str());
  }
  return grpc::Status::OK;
}

grpc::Status
Plugin::PreStartContainer(grpc::ServerContext *,
                          const v1beta1::PreStartContainerRequest *,
                          v1beta1::PreStartContainerResponse *)
{
  return grpc::Status::OK;
}

} // namespace k8s
