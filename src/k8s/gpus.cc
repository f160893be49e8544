// NVML, opened with dlopen as every program of the project opens it, so
// that the simulated NVML stands in for NVIDIA's in tests: the GPUs and
// their memory at start, and each GPU's health at every look.  A GPU is
// unhealthy while NVML cannot read its memory (it answers
// NVML_ERROR_GPU_IS_LOST for one that fell off the bus, as after an Xid
// 79), and healthy again once it can.  NVIDIA's device plugin watches Xid
// events instead; a look each second finds the same GPUs lost, without
// the events API, and finds them back.
#include "config.h"

#include "k8s/gpus.h"

#include <dlfcn.h>

extern "C" {
#include "core/nvml_abi.h"
}

namespace k8s {

namespace {

template <typename F>
F
symbol(void *lib, const char *name)
{
  return reinterpret_cast<F>(dlsym(lib, name));
}

std::string
nvml_error(void *lib, nvmlReturn_t rc)
{
  auto text = symbol<cmg__pfn_nvmlErrorString>(lib, "nvmlErrorString");
  std::string s = text ? text(rc) : "error";
  return s + " (" + std::to_string(rc) + ")";
}

} // namespace

std::string
Gpus::open()
{
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib_ == nullptr)
    return std::string("cannot load NVML (libnvidia-ml.so.1): ") + dlerror();
  auto init = symbol<cmg__pfn_nvmlInit_v2>(lib_, "nvmlInit_v2");
  auto count =
      symbol<cmg__pfn_nvmlDeviceGetCount_v2>(lib_, "nvmlDeviceGetCount_v2");
  auto by_index = symbol<cmg__pfn_nvmlDeviceGetHandleByIndex_v2>(
      lib_, "nvmlDeviceGetHandleByIndex_v2");
  auto uuid = symbol<cmg__pfn_nvmlDeviceGetUUID>(lib_, "nvmlDeviceGetUUID");
  auto memory =
      symbol<cmg__pfn_nvmlDeviceGetMemoryInfo>(lib_, "nvmlDeviceGetMemoryInfo");
  if (!init || !count || !by_index || !uuid || !memory)
    return "NVML (libnvidia-ml.so.1) lacks nvmlInit_v2, "
           "nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2, "
           "nvmlDeviceGetUUID or nvmlDeviceGetMemoryInfo";
  nvmlReturn_t rc = init();
  unsigned n = 0;
  if (rc == NVML_SUCCESS)
    rc = count(&n);
  if (rc != NVML_SUCCESS)
    return "NVML cannot list the GPUs: " + nvml_error(lib_, rc);
  for (unsigned i = 0; i < n; i++) {
    nvmlDevice_t h;
    char text[96];
    nvmlMemory_t m;
    if ((rc = by_index(i, &h)) != NVML_SUCCESS ||
        (rc = uuid(h, text, sizeof(text))) != NVML_SUCCESS ||
        (rc = memory(h, &m)) != NVML_SUCCESS)
      return "NVML cannot read GPU " + std::to_string(i) + ": " +
             nvml_error(lib_, rc);
    gpus_.push_back(Gpu{ text, m.total, true, "" });
    handles_.push_back(h);
  }
  if (gpus_.empty())
    return "NVML lists no GPU on this node";
  return "";
}

bool
Gpus::look()
{
  auto memory =
      symbol<cmg__pfn_nvmlDeviceGetMemoryInfo>(lib_, "nvmlDeviceGetMemoryInfo");
  bool changed = false;
  for (size_t i = 0; i < gpus_.size(); i++) {
    nvmlMemory_t m;
    nvmlReturn_t rc = memory(static_cast<nvmlDevice_t>(handles_[i]), &m);
    bool healthy = rc == NVML_SUCCESS;
    if (healthy != gpus_[i].healthy) {
      gpus_[i].healthy = healthy;
      gpus_[i].why = healthy ? "" : nvml_error(lib_, rc);
      changed = true;
    }
  }
  return changed;
}

} // namespace k8s
