// A container's GPUs and its caps reach it in one of two ways.  With CDI
// (the default; containerd 1.7+ with enable_cdi, on by default in 2.0, and
// CRI-O), the response names CDI devices: each GPU as the vendor's CDI
// spec names it (nvidia.com/gpu=<uuid>), and a device of kind
// cumemguard.io/k8s named after the container's group, whose spec this
// plugin writes into the CDI folder before it answers, so that the
// runtime finds it when it makes the container.  For runtimes without
// CDI (--strategy envs), the same as environment and mounts: the GPUs in
// the vendor runtime's visibility variable (NVIDIA_VISIBLE_DEVICES), the
// library's folder read-only, LD_PRELOAD, CUMEMGUARD_OPTIONS and the
// report folder.
#include "config.h"

#include "k8s/respond.h"
#include "k8s/specs.h"

#include <cstdlib>
#include <cstring>

extern "C" {
#include "core/base.h"
#include "ops/cdi_spec.h"
#include "ops/files.h"
#include "ops/preload_env.h"
}

namespace k8s {

const char *const spec_kind = "cumemguard.io/k8s";

namespace {

// The library's mount and the LD_PRELOAD entry that names it inside.
struct Mount {
  std::string host, in, preload;
};

std::string
library_mount(const std::string &library, Mount *m)
{
  char *host = nullptr, *value = nullptr, err[256];
  const char *container;
  if (cmg__cdi_library(library.c_str(), &host, &container) != 0)
    return "out of memory";
  int rc = cmg__preload_add(nullptr, container, &value, err, sizeof(err));
  bool folder = strcmp(container, CMG__CDI_DIR "/" CMG__LIBRARY_NAME) != 0;
  m->host = host;
  m->in = folder ? CMG__CDI_DIR : container;
  if (rc == 0)
    m->preload = value;
  free(host);
  free(value);
  return rc == 0 ? "" : err;
}

std::string
write_spec(const Layout &l, const Share &s, const std::string &opts,
           const Mount &m)
{
  std::string preload = "LD_PRELOAD=" + m.preload;
  std::string options = "CUMEMGUARD_OPTIONS=" + opts;
  const char *env[] = { preload.c_str(), options.c_str() };
  struct cmg__cdi_device dev = { s.group.c_str(), env, 2 };
  struct cmg__cdi_mount mounts[2] = {
    { m.host.c_str(), m.in.c_str(), false },
    { l.report_dir.c_str(), l.report_dir.c_str(), true },
  };
  char *text =
      cmg__cdi_spec(spec_kind, &dev, 1, mounts, l.report_dir.empty() ? 1 : 2);
  if (text == nullptr)
    return "out of memory";
  std::string body = std::string(text) + "\n";
  free(text);
  std::string path = spec_path(l.cdi_dir, s.group);
  if (cmg__write_atomic(path.c_str(), body.c_str(), body.size()) != 0)
    return "cannot write " + path;
  return "";
}

} // namespace

std::string
respond(const Layout &l, const Share &s, const std::string &opts,
        v1beta1::ContainerAllocateResponse *r)
{
  Mount m;
  std::string why = library_mount(l.library, &m);
  if (!why.empty())
    return why;
  std::string gpus;
  for (const auto &[gpu, bytes] : s.cap)
    gpus += (gpus.empty() ? "" : ",") + gpu;
  if (l.cdi) {
    if (!(why = write_spec(l, s, opts, m)).empty())
      return why;
    for (const auto &[gpu, bytes] : s.cap)
      r->add_cdi_devices()->set_name(l.gpu_kind + "=" + gpu);
    r->add_cdi_devices()->set_name(std::string(spec_kind) + "=" + s.group);
    return "";
  }
  (*r->mutable_envs())["LD_PRELOAD"] = m.preload;
  (*r->mutable_envs())["CUMEMGUARD_OPTIONS"] = opts;
  (*r->mutable_envs())[l.gpu_env] = gpus;
  v1beta1::Mount *lib = r->add_mounts();
  lib->set_host_path(m.host);
  lib->set_container_path(m.in);
  lib->set_read_only(true);
  if (!l.report_dir.empty()) {
    v1beta1::Mount *rep = r->add_mounts();
    rep->set_host_path(l.report_dir);
    rep->set_container_path(l.report_dir);
    rep->set_read_only(false);
  }
  return "";
}

} // namespace k8s
