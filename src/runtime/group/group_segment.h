/*
 * The group segment as its members write it (group_segment.c): opening
 * it, setting it up, slots, locks and counters.  The layout and what a
 * reader of a segment needs are core's (core/segment.h).
 */
#ifndef CMG_RUNTIME_GROUP_GROUP_SEGMENT_H
#define CMG_RUNTIME_GROUP_GROUP_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/segment.h"

/* Where a member's threads were in their changes to its bytes, for a
 * later look to tell whether one began meanwhile. */
struct seg_still {
  uint64_t busy;
  uint64_t seq[SEG_LANES];
};

/* The group's limit entry for device d: group_limit.d if set, else
 * group_limit. */
const struct seg_limit *cmg__seg_limit_entry(const struct seg_limit *limits,
                                             int d);

bool cmg__seg_is_same_limit(const struct seg_limit *a,
                            const struct seg_limit *b);

/* Refuses a segment that is not a regular file of ours that only we can
 * reach: whatever its contents, another user could change them. */
int cmg__seg_check_file(int fd, const char *path, const char *name, char *err,
                        size_t errlen);

/* The group's limits (per device, then the default) from the header of
 * the segment open as fd, read without its lock or a mapping: 0, or
 * -EINVAL when the header is not a whole one of this layout. */
int cmg__seg_peek_limits(int fd, struct seg_limit out[SEG_DEVICES + 1]);

/* Takes a read lock on the segment's first byte, which the kernel drops
 * when the member dies: 0 or a negative errno. */
int cmg__seg_hold(int fd);

/* Whether some live member holds the segment open as fd (a lock that
 * conflicts with a write lock): a joiner that finds it empty or zeroed
 * then knows that it was tampered with, not left half set up. */
bool cmg__seg_is_held(int fd);

/* A member's check of the segment it has mapped at s, named path, which
 * was the file (dev, ino) when it joined: 0, or -EBADMSG with one line
 * when the file was truncated, removed or made anew, or its header
 * changed.  *truncated says whether the mapping is past the file's end:
 * reading it would raise SIGBUS. */
int cmg__seg_check_live(const struct seg *s, const char *path, uint64_t dev,
                        uint64_t ino, bool *truncated, char *err,
                        size_t errlen);

/* Lowers a counter by n, stopping at 0. */
void cmg__seg_sub32(_Atomic uint32_t *c, uint32_t n);

/* Wakes every member waiting for room (the futex word). */
void cmg__seg_wake_all(struct seg *s);

/* Whether the segment open as fd, of another layout than this one's, is
 * ours (its magic) and no process it names still runs.  Read through what
 * every layout shares: the header's first fields and, last in the file,
 * slots that begin with owner, start and pid namespace.  For a registry,
 * which caps nothing: one a killed process of an older cumemguard left
 * would otherwise hide every new process from status. */
bool cmg__seg_is_abandoned(int fd, uint64_t pidns);

/* Removes the segment open as fd, locked, under name (shm_open's) and
 * path (/dev/shm's) if it is abandoned and still the one of that name:
 * true when the next shm_open may create it anew. */
bool cmg__seg_remove_abandoned(int fd, const char *name, const char *path,
                               uint64_t pidns);

/* Zeroes a member's bytes on every device, lanes and all. */
void cmg__seg_empty_held(struct seg_slot *sl);

/* Whether no thread of the slot's member is changing its bytes (every
 * lane's seq even, no change of a thread without one running), with *at
 * where they were. */
bool cmg__seg_is_still(const struct seg_slot *sl, struct seg_still *at);

/* Makes `own` (per device, then the default) and the caps keyed by GPU
 * (n of them) the group's limits, set by creator, with everything counted
 * from nothing and no device named.  Only under the lock, and only when
 * no member is left. */
void cmg__seg_adopt(struct seg *s, const struct seg_limit own[SEG_DEVICES + 1],
                    const struct seg_gpu_limit *gpu, unsigned n, pid_t creator);

/* Takes a free slot for the process (pid, its start time, pid namespace
 * and command), or returns NULL when every slot is taken.  A free slot
 * holds nothing: it was freed only after its process was gone, with every
 * count emptied. */
struct seg_slot *cmg__seg_claim(struct seg *s, pid_t pid, uint64_t start,
                                uint64_t pidns, const char comm[16]);

/* flock with a deadline: a member stopped while holding it must not hang
 * the others.  0, -ETIMEDOUT, or another negative errno. */
int cmg__seg_lock(int fd, uint64_t timeout_ns);

/* Maps the locked segment fd (named path in messages), sizing it if it is
 * new and giving every page its memory first: 0 with *out set and
 * *fresh_out telling whether nobody has set it up (the caller does, under
 * the lock), -ENOSPC when /dev/shm has no room for it (nothing touched),
 * or cmg__seg_validate()'s errors (*out may be set: the caller unmaps
 * it). */
int cmg__seg_map(int fd, const char *path, struct seg **out, bool *fresh_out,
                 char *err, size_t errlen);

#endif /* CMG_RUNTIME_GROUP_GROUP_SEGMENT_H */
