/*
 * Which of the group's device counters each of the process's ordinals
 * counts in: the GPU's, named by UUID in the segment (group_gpus.c).
 */
#ifndef CMG_RUNTIME_GROUP_GROUP_GPUS_H
#define CMG_RUNTIME_GROUP_GROUP_GPUS_H

#include <stdatomic.h>

#include "core/conf_gpu.h"
#include "runtime/group/group_member.h"

/* Names the ordinal's GPU in the segment (cold): its counter's index, or
 * -1 when the segment's lock could not be taken or every entry is taken
 * (why in cmg__gs.why). */
int cmg__group_name_device(int ordinal);

/* Forgets which counter each ordinal counts in: after a join, the
 * segment may be another. */
void cmg__group_forget_names(void);

/* The group's cap entry for the ordinal: its GPU's, else group_limit.N,
 * else group_limit. */
const struct seg_limit *cmg__group_cap_entry(int ordinal);

/* The ordinal's counter in the joined segment, or -1 (hot). */
static inline int
cmg__group_index(int ordinal)
{
  int at = atomic_load_explicit(&cmg__gs.at[ordinal], memory_order_acquire);
  return at > 0 ? at - 1 : cmg__group_name_device(ordinal);
}

#endif /* CMG_RUNTIME_GROUP_GROUP_GPUS_H */
