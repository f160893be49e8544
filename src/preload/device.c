/*
 * Each device as the library knows it: its name and UUID, for reports
 * that line up across processes, and its physical size and limits, set up
 * the first time the device is used (a percentage needs the size).
 */
#include "config.h"

#include <cuda.h>
#include <errno.h>
#include <stdio.h>

#include "core/conf.h"
#include "preload/device.h"
#include "preload/real.h"
#include "preload/state.h"
#include "runtime/history.h"
#include "runtime/policy.h"

/* The device's name and UUID, for reports that line up across processes. */
static void
identify(int device)
{
  cmg__pfn_cuDeviceGetName get_name = REAL(cuDeviceGetName);
  char name[256] = "", uuid[48] = "";
  if (get_name == NULL || get_name(name, sizeof(name), device) != CUDA_SUCCESS)
    name[0] = '\0';
  cmg__device_uuid(device, uuid, sizeof(uuid));
  cmg__history_set_device(device, name, uuid);
}

int
cmg__device_uuid(int device, char *out, size_t len)
{
  cmg__pfn_cuDeviceGetUuid_v2 get = REAL(cuDeviceGetUuid_v2);
  CUuuid u;
  if (get == NULL || get(&u, device) != CUDA_SUCCESS) {
    snprintf(out, len, "%s", "");
    return -ENOENT;
  }
  const unsigned char *b = (const unsigned char *)u.bytes;
  snprintf(out, len,
           "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
           "%02x%02x%02x%02x%02x%02x",
           b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
           b[11], b[12], b[13], b[14], b[15]);
  return 0;
}

static CMG__COLD void
setup_device(int device)
{
  cmg__pfn_cuDeviceTotalMem_v2 total = REAL(cuDeviceTotalMem_v2);
  size_t physical = 0;
  if (total == NULL || total(&physical, device) != CUDA_SUCCESS)
    physical = 0;
  identify(device);
  cmg__policy_set_device(device, cmg__config_limit(&cmg__cfg, device, physical),
                         cmg__config_soft_limit(&cmg__cfg, device, physical),
                         physical);
}

void
cmg__device_setup(int device)
{
  if (!cmg__policy_is_device_set(device))
    setup_device(device);
}
