/*
 * The public C API of include/cumemguard.h, for programs that look it up
 * with dlsym.  Read-only views of the ledger and the policy.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hooks.h"

CMG__EXPORT int
cmg_device_stats(int device, struct cmg_device_stats *out)
{
  _Static_assert(CMG_HOST_MEMORY == CMG__HOST, "one number for host memory");
  if (out == NULL || device < 0 || device >= CMG__SLOTS)
    return -EINVAL;
  cmg__ledger_stats(device, out);
  out->limit_bytes = cmg__policy_is_device_set(device)
                         ? cmg__policy_limit(device)
                         : CMG__NO_LIMIT;
  out->physical_bytes = cmg__policy_physical(device);
  return 0;
}

CMG__EXPORT int
cmg_allocation_info(uint64_t address, struct cmg_allocation_info *out)
{
  struct cmg__alloc a;
  if (out == NULL)
    return -EINVAL;
  if (cmg__ledger_lookup(address, CMG__KIND_DEVICE, &a) < 0 &&
      cmg__ledger_lookup(address, CMG__KIND_HOST, &a) < 0)
    return -ENOENT;
  memset(out, 0, sizeof(*out));
  out->address = a.addr;
  out->bytes = a.size;
  out->seq = a.seq;
  out->device = a.device;
  out->thread = a.thread;
  snprintf(out->api, sizeof(out->api), "%s", cmg__fn_name(a.fn));
  return 0;
}
