// cumemguard-device-plugin: a kubelet device plugin (API v1beta1) that
// hands out GPU memory in units, each container's units one cap for all
// its processes on the GPUs they are on, held by libcumemguard.so in the
// container.  Run as a DaemonSet on GPU nodes (deploy/kubernetes/).
//
// It serves its socket in the kubelet's device-plugins folder and
// registers with the kubelet there.  Each second it reads the GPUs' health
// again, and looks at the folder: the kubelet empties it when it starts
// and makes kubelet.sock anew, so a kubelet.sock of another inode is
// registered with again, and a socket of ours that is gone is served
// again.  A registration that fails is tried again the next second; only
// SIGTERM or SIGINT stops the plugin, which then removes its socket.
#include "config.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "k8s/deviceplugin.grpc.pb.h"
#include "k8s/flags.h"
#include "k8s/gpus.h"
#include "k8s/labels.h"
#include "k8s/specs.h"
#include "k8s/plugin.h"
#include "k8s/units.h"

extern "C" {
#include "core/log.h"
#include "core/size.h"
}

namespace {

using k8s::Flags;

// Registers the plugin with the kubelet at kubelet_sock: "" or why not.
std::string
register_with(const std::string &kubelet_sock, const Flags &f)
{
  auto channel = grpc::CreateChannel("unix://" + kubelet_sock,
                                     grpc::InsecureChannelCredentials());
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest req;
  req.set_version("v1beta1");
  req.set_endpoint(f.endpoint);
  req.set_resource_name(f.resource);
  req.mutable_options()->set_get_preferred_allocation_available(true);
  v1beta1::Empty out;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Status st = stub->Register(&ctx, req, &out);
  return st.ok() ? ""
                 : st.error_message() + " (gRPC status " +
                       std::to_string(st.error_code()) + ")";
}

struct Served {
  std::unique_ptr<grpc::Server> server;
  ino_t ino = 0;
};

// Serves plugin on path, made anew: false after one line.
bool
serve(const std::string &path, k8s::Plugin *plugin, Served *s)
{
  struct stat st;
  if (s->server) {
    s->server->Shutdown(std::chrono::system_clock::now() +
                        std::chrono::seconds(1));
    s->server.reset();
  }
  unlink(path.c_str());
  grpc::ServerBuilder b;
  b.AddListeningPort("unix://" + path, grpc::InsecureServerCredentials());
  b.RegisterService(plugin);
  s->server = b.BuildAndStart();
  if (!s->server || stat(path.c_str(), &st) != 0) {
    cmg__log("cannot serve on %s", path.c_str());
    s->server.reset();
    return false;
  }
  s->ino = st.st_ino;
  return true;
}

// Whether the file at path is there with inode ino.
bool
is_there(const std::string &path, ino_t ino)
{
  struct stat st;
  return stat(path.c_str(), &st) == 0 && st.st_ino == ino;
}

// Reads the GPUs' health again; says what changed.
void
look(k8s::Gpus &gpus, k8s::State &state)
{
  if (!gpus.look())
    return;
  std::lock_guard<std::mutex> lock(state.mu);
  for (size_t g = 0; g < gpus.list().size(); g++) {
    const k8s::Gpu &now = gpus.list()[g];
    if (now.healthy != state.gpus[g].healthy)
      cmg__log("%s is %s%s%s", now.uuid.c_str(),
               now.healthy ? "healthy again" : "unhealthy",
               now.healthy ? "" : ": NVML says ", now.why.c_str());
    state.gpus[g] = now;
  }
  state.version++;
  state.cv.notify_all();
}

// The kubelet's side, once a second until a stop signal: our socket
// served, the kubelet registered with, the GPUs looked at.
int
run(const Flags &f, k8s::Gpus &gpus, k8s::State &state, k8s::Plugin &plugin)
{
  const std::string ours = f.plugin_dir + "/" + f.endpoint;
  const std::string kubelet = f.plugin_dir + "/kubelet.sock";
  Served served;
  // kubelet.sock as registered with: its inode and change time, since a
  // socket made anew may get the inode of the one removed.
  std::pair<ino_t, long long> registered{ 0, 0 };
  std::string said;
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  struct timespec second = { 1, 0 };
  k8s::Labels labels(f.pod_resources, f.labels_dir, f.resource, f.unit);
  std::string labels_said;
  k8s::Specs specs(f.layout.cdi_dir, std::chrono::nanoseconds(f.cdi_keep_ns));
  if (!serve(ours, &plugin, &served))
    return 1;
  cmg__log("serving %s on %s", f.resource.c_str(), ours.c_str());
  for (;;) {
    if (!is_there(ours, served.ino)) {
      cmg__log("%s is gone: serving it again", ours.c_str());
      if (serve(ours, &plugin, &served))
        registered = { 0, 0 };
    }
    struct stat st = {};
    bool up = stat(kubelet.c_str(), &st) == 0;
    std::pair<ino_t, long long> now;
    now = { st.st_ino,
            (long long)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec };
    if (up && now != registered) {
      std::string why = register_with(kubelet, f);
      if (why.empty()) {
        registered = now;
        said.clear();
        cmg__log("registered %s with the kubelet at %s", f.resource.c_str(),
                 kubelet.c_str());
      } else if (why != said) {
        said = why;
        cmg__log("cannot register with the kubelet at %s: %s; trying again "
                 "each second",
                 kubelet.c_str(), why.c_str());
      }
    }
    int sig = sigtimedwait(&stop, nullptr, &second);
    if (sig == SIGTERM || sig == SIGINT)
      break;
    look(gpus, state);
    // The kubelet is asked only when its answer is used.
    std::string why =
        f.labels_dir.empty() && !f.layout.cdi ? "" : labels.refresh();
    if (!why.empty() && why != labels_said)
      cmg__log("%s; trying again each second", why.c_str());
    labels_said = why;
    if (f.layout.cdi && labels.held() != nullptr)
      specs.collect(*labels.held(), k8s::Specs::Clock::now());
  }
  {
    std::lock_guard<std::mutex> lock(state.mu);
    state.stopping = true;
    state.cv.notify_all();
  }
  served.server->Shutdown(std::chrono::system_clock::now() +
                          std::chrono::seconds(2));
  unlink(ours.c_str());
  cmg__log("stopped");
  return 0;
}

} // namespace

int
main(int argc, char **argv)
{
  cmg__log_program("cumemguard-device-plugin");
  Flags f;
  int rc = k8s::read_flags(argc, argv, &f);
  if (rc >= 0)
    return rc;
  // Before any thread: the signals are waited for, not handled.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  k8s::Gpus gpus;
  std::string why = gpus.open();
  if (!why.empty()) {
    cmg__log("%s", why.c_str());
    return 1;
  }
  if (!(why = k8s::check_units(f, gpus.list())).empty()) {
    cmg__log("%s", why.c_str());
    return 2;
  }
  k8s::State state;
  state.gpus = gpus.list();
  state.units = k8s::make_units(state.gpus, f.unit, f.reserve);
  for (const k8s::Unit &u : state.units)
    state.gpu_of[u.id] = u.gpu;
  for (const k8s::Gpu &g : state.gpus) {
    char total[32], unit[32];
    cmg__format_size(g.total, total, sizeof(total));
    cmg__format_size(f.unit, unit, sizeof(unit));
    cmg__log("%s: %s, %llu units of %s", g.uuid.c_str(), total,
             (unsigned long long)((g.total - f.reserve) / f.unit), unit);
  }
  k8s::Plugin plugin(&state, f.layout, f.unit, f.resource);
  return run(f, gpus, state, plugin);
}
