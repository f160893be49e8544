/*
 * The public C API of include/cumemguard.h, for programs that look it up
 * with dlsym.  Read-only views of the ledger and the policy.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/base.h"
#include "runtime/ledger/ledger.h"
#include "runtime/limits/policy.h"
#include "preload/dump.h"
#include "preload/fn.h"

#include "preload/start.h"

/* Copies what fits of `from` into the caller's struct of `size` bytes and
 * zeroes the rest of it. */
static void
give(void *out, size_t size, const void *from, size_t have)
{
  memcpy(out, from, size < have ? size : have);
  if (size > have)
    memset((char *)out + have, 0, size - have);
}

CMG__EXPORT int
cmg_device_stats(int device, struct cmg_device_stats *out, size_t size)
{
  _Static_assert(CMG_HOST_MEMORY == CMG__HOST, "one number for host memory");
  struct cmg_device_stats s;
  if (out == NULL || device < 0 || device >= CMG__SLOTS)
    return -EINVAL;
  cmg__ledger_stats(device, &s);
  s.limit_bytes = cmg__policy_is_device_set(device) ? cmg__policy_limit(device)
                                                    : CMG__NO_LIMIT;
  s.physical_bytes = cmg__policy_physical(device);
  give(out, size, &s, sizeof(s));
  return 0;
}

CMG__EXPORT int
cmg_allocation_info(uint64_t address, struct cmg_allocation_info *out,
                    size_t size)
{
  struct cmg__alloc a;
  struct cmg_allocation_info info;
  if (out == NULL)
    return -EINVAL;
  if (cmg__ledger_lookup(address, CMG__KIND_DEVICE, &a) < 0 &&
      cmg__ledger_lookup(address, CMG__KIND_HOST, &a) < 0)
    return -ENOENT;
  memset(&info, 0, sizeof(info));
  info.address = a.addr;
  info.bytes = a.size;
  info.seq = a.seq;
  info.device = a.device;
  info.thread = a.thread;
  snprintf(info.api, sizeof(info.api), "%s", cmg__fn_name(a.fn));
  give(out, size, &info, sizeof(info));
  return 0;
}

CMG__EXPORT int
cmg_dump(const char *path)
{
  cmg__init();
  return cmg__dump_now(path, CMG__REASON_REQUEST);
}
