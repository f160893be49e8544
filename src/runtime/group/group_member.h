/*
 * The process's side of its group, or of the user's registry: its state,
 * its segment and slot, and the group's limits, kept apart so that joining
 * and leaving (group_join.c) and counting (group.c) share them, and
 * nothing else does (group_member.c).
 */
#ifndef CMG_RUNTIME_GROUP_GROUP_MEMBER_H
#define CMG_RUNTIME_GROUP_GROUP_MEMBER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtime/group/group_reclaim.h"
#include "core/segment.h"

/* OFF: no group; FORKED: a child that has not taken a slot yet; BROKEN:
 * every reservation fails; LEFT: after exit; UNSEEN: no room for the
 * registry's slot, which the first reservation says (why), then OFF;
 * PENDING: the segment's lock was held past its bound (a member stopped
 * while joining): each reservation tries to join again, and fails alone
 * if it cannot (why). */
enum {
  CMG__GS_OFF,
  CMG__GS_JOINING,
  CMG__GS_JOINED,
  CMG__GS_FORKED,
  CMG__GS_BROKEN,
  CMG__GS_LEFT,
  CMG__GS_UNSEEN,
  CMG__GS_PENDING
};

struct cmg__group_self {
  _Atomic int state;
  bool registry; /* in the registry, not in a group */
  struct seg *seg;
  int seg_fd;
  dev_t seg_dev; /* what seg_fd is, to tell it from a file the program */
  ino_t seg_ino; /* opened at its number after closing it */
  struct seg_slot *mine;
  /* What the process's contexts take, kept for a slot claimed later (a
   * forked child's, a rejoin). */
  _Atomic uint64_t noted[SEG_DEVICES];
  char group[64];
  char shm_name[96];  /* "/cumemguard.<uid>.<group>" */
  char shm_path[112]; /* the same under /dev/shm, for messages */
  struct seg_limit own[SEG_DEVICES + 1];        /* ours; [SEG_DEVICES] all */
  struct seg_limit caps[SEG_DEVICES + 1];       /* the group's */
  struct seg_gpu_limit own_gpu[SEG_GPU_LIMITS]; /* ours, keyed by GPU */
  unsigned n_own_gpu;
  /* Per ordinal: its GPU's UUID once CUDA said it (group_gpus.c), the
   * group's device counter it counts in, plus 1 (0: not named yet), and
   * the group's cap entry for it. */
  unsigned char uuid[SEG_DEVICES][CMG__UUID_BYTES];
  _Atomic bool uuid_known[SEG_DEVICES];
  _Atomic int at[SEG_DEVICES];
  struct seg_limit cap_at[SEG_DEVICES];
  _Atomic uint64_t physical_seen[SEG_DEVICES];
  pid_t self_pid;
  uint64_t self_start, self_pidns;
  char self_comm[16];
  char why[256]; /* UNSEEN's and PENDING's line */
};

extern struct cmg__group_self cmg__gs;

/* The member this process is, for the functions that reclaim slots. */
struct cmg__member cmg__group_member(void);

#endif /* CMG_RUNTIME_GROUP_GROUP_MEMBER_H */
