/*
 * The process's side of its group (group_self.h): one instance, set up by
 * joining (group_join.c) and read by counting (group.c).
 */
#include "config.h"

#include "runtime/group_self.h"

struct cmg__group_self cmg__gs = { .state = CMG__GS_OFF, .seg_fd = -1 };

struct cmg__member
cmg__group_member(void)
{
  return (struct cmg__member){ cmg__gs.mine, cmg__gs.self_pid,
                               cmg__gs.self_pidns, cmg__gs.registry,
                               cmg__gs.group };
}
