/*
 * The process's side of its group (group_member.h): one instance, set up by
 * joining (group_join.c) and read by counting (group.c).
 */
#include "config.h"

#include "runtime/group/group_member.h"

struct cmg__group_self cmg__gs = { .state = CMG__GS_OFF, .seg_fd = -1 };

struct cmg__member
cmg__group_member(void)
{
  return (struct cmg__member){ .slot = cmg__gs.mine,
                               .pid = cmg__gs.self_pid,
                               .pidns = cmg__gs.self_pidns,
                               .registry = cmg__gs.registry,
                               .group = cmg__gs.group,
                               .fd = cmg__gs.seg_fd,
                               .dev = cmg__gs.seg_dev,
                               .ino = cmg__gs.seg_ino };
}
