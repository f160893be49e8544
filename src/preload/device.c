/*
 * Each device as the library knows it: its name and UUID, for reports
 * that line up across processes, and its physical size and limits, set up
 * the first time the device is used (a percentage needs the size).
 */
#include "config.h"

#include <cuda.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/conf.h"
#include "core/conf_gpu.h"
#include "preload/device.h"
#include "preload/real.h"
#include "preload/state.h"
#include "runtime/group/group.h"
#include "runtime/ledger/history.h"
#include "runtime/limits/policy.h"

/* The device's UUID as CUDA gives it: 0, or -ENOENT. */
static int
uuid_of(int device, unsigned char out[CMG__UUID_BYTES])
{
  cmg__pfn_cuDeviceGetUuid_v2 get = REAL(cuDeviceGetUuid_v2);
  CUuuid u;
  if (get == NULL || get(&u, device) != CUDA_SUCCESS)
    return -ENOENT;
  memcpy(out, u.bytes, CMG__UUID_BYTES);
  return 0;
}

int
cmg__device_uuid(int device, char *out, size_t len)
{
  unsigned char u[CMG__UUID_BYTES];
  char text[CMG__UUID_TEXT] = "";
  int rc = uuid_of(device, u);
  if (rc == 0)
    cmg__uuid_format(u, text);
  snprintf(out, len, "%s", text);
  return rc;
}

/* Its name and UUID for reports that line up across processes, its GPU for
 * the group, and the limits of its ordinal and of its GPU. */
static CMG__COLD void
setup_device(int device)
{
  cmg__pfn_cuDeviceTotalMem_v2 total = REAL(cuDeviceTotalMem_v2);
  cmg__pfn_cuDeviceGetName get_name = REAL(cuDeviceGetName);
  char name[256] = "", text[CMG__UUID_TEXT] = "";
  unsigned char u[CMG__UUID_BYTES];
  size_t physical = 0;
  if (total == NULL || total(&physical, device) != CUDA_SUCCESS)
    physical = 0;
  if (get_name == NULL || get_name(name, sizeof(name), device) != CUDA_SUCCESS)
    name[0] = '\0';
  bool known = uuid_of(device, u) == 0;
  if (known) {
    cmg__uuid_format(u, text);
    cmg__group_know_device(device, u);
  }
  cmg__history_set_device(device, name, text);
  const unsigned char *gpu = known ? u : NULL;
  cmg__policy_set_device(
      device, cmg__config_limit(&cmg__cfg, device, gpu, physical),
      cmg__config_soft_limit(&cmg__cfg, device, gpu, physical), physical);
}

void
cmg__device_setup(int device)
{
  if (!cmg__policy_is_device_set(device))
    setup_device(device);
}
