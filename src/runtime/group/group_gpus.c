/*
 * The group counts each GPU once, whatever ordinal each member gives it:
 * CUDA_VISIBLE_DEVICES=1,0 in one process and none in another must not
 * put two GPUs' bytes in one counter.  The segment's name table says which
 * GPU (by UUID) each device counter counts; a process maps each of its
 * ordinals to an entry the first time it counts there, reading the table
 * without a lock when the GPU is named already, else naming it under the
 * segment's lock: the entry of the same number as the ordinal where it is
 * free (so that a group whose members agree on the ordinals numbers its
 * counters as they do), else the first free one.  Entries are never
 * renamed while the group lives; a group set up again starts unnamed
 * (group_segment.c).
 *
 * A driver that gives no UUID (cuDeviceGetUuid failing) leaves the
 * ordinal named by itself, as the group counted before it knew GPUs.
 *
 * The cap of an ordinal follows its GPU too: group_limit.GPU-<uuid> from
 * the group's header, else group_limit.N of the ordinal, else
 * group_limit.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "runtime/group/group.h"
#include "runtime/group/group_gpus.h"
#include "runtime/group/group_member.h"
#include "runtime/group/group_segment.h"

void
cmg__group_know_device(int ordinal, const unsigned char uuid[CMG__UUID_BYTES])
{
  if (ordinal < 0 || ordinal >= SEG_DEVICES ||
      atomic_load(&cmg__gs.uuid_known[ordinal]))
    return;
  memcpy(cmg__gs.uuid[ordinal], uuid, CMG__UUID_BYTES);
  atomic_store_explicit(&cmg__gs.uuid_known[ordinal], true,
                        memory_order_release);
}

/* What names the ordinal's GPU in the table: its UUID, or for a driver
 * that gave none, the ordinal itself ("ord" and its number). */
static void
key_of(int ordinal, unsigned char key[CMG__UUID_BYTES])
{
  if (atomic_load_explicit(&cmg__gs.uuid_known[ordinal],
                           memory_order_acquire)) {
    memcpy(key, cmg__gs.uuid[ordinal], CMG__UUID_BYTES);
    return;
  }
  memset(key, 0, CMG__UUID_BYTES);
  memcpy(key,
         "\xff"
         "ord",
         4);
  key[CMG__UUID_BYTES - 1] = (unsigned char)ordinal;
}

static int
find(const struct seg *s, const unsigned char *key)
{
  for (int i = 0; i < SEG_DEVICES; i++)
    if (atomic_load_explicit(&s->name[i].state, memory_order_acquire) ==
            NAME_SET &&
        memcmp(s->name[i].uuid, key, CMG__UUID_BYTES) == 0)
      return i;
  return -1;
}

/* Under the lock: the entry for key, named now if need be; -1 if full. */
static int
claim(struct seg *s, int prefer, const unsigned char *key)
{
  int i = find(s, key);
  if (i >= 0)
    return i;
  if (atomic_load(&s->name[prefer].state) != NAME_FREE)
    for (prefer = 0; prefer < SEG_DEVICES &&
                     atomic_load(&s->name[prefer].state) != NAME_FREE;
         prefer++)
      ;
  if (prefer == SEG_DEVICES)
    return -1;
  memcpy(s->name[prefer].uuid, key, CMG__UUID_BYTES);
  atomic_store_explicit(&s->name[prefer].state, NAME_SET, memory_order_release);
  return prefer;
}

/* Takes the segment's lock through our descriptor, if it is still the
 * segment's: 0, or a negative errno. */
static int
lock_segment(void)
{
  struct stat st;
  int fd = cmg__gs.seg_fd;

  if (fd < 0 || fstat(fd, &st) != 0 || st.st_dev != cmg__gs.seg_dev ||
      st.st_ino != cmg__gs.seg_ino)
    return -EBADF;
  return cmg__seg_lock(fd, LOCK_TIMEOUT_NS);
}

/* The counter's index once named: the cap entry first, then the index. */
static int
named(int ordinal, int i)
{
  const struct seg_limit *g = NULL;
  if (atomic_load_explicit(&cmg__gs.uuid_known[ordinal], memory_order_acquire))
    g = cmg__seg_gpu_limit(&cmg__gs.seg->h, cmg__gs.uuid[ordinal]);
  cmg__gs.cap_at[ordinal] =
      g ? *g : *cmg__seg_limit_entry(cmg__gs.caps, ordinal);
  atomic_store_explicit(&cmg__gs.at[ordinal], i + 1, memory_order_release);
  return i;
}

int
cmg__group_name_device(int ordinal)
{
  struct seg *s = cmg__gs.seg;
  unsigned char key[CMG__UUID_BYTES];
  char text[CMG__UUID_TEXT];
  int i, rc;

  if (ordinal < 0 || ordinal >= SEG_DEVICES || s == NULL)
    return -1;
  key_of(ordinal, key);
  if ((i = find(s, key)) >= 0)
    return named(ordinal, i);
  while (!cmg__group_hold())
    nanosleep(&(struct timespec){ 0, 100000 }, NULL);
  if ((rc = lock_segment()) != 0) {
    cmg__group_unhold();
    cmg__uuid_format(key, text);
    snprintf(cmg__gs.why, sizeof(cmg__gs.why),
             "cannot lock %s to count %s there: %s", cmg__gs.shm_path,
             key[0] == 0xff ? "the device" : text,
             rc == -ETIMEDOUT ? "another process held it for 2 s "
                                "(a member stopped while joining?)"
                              : strerror(-rc));
    return -1;
  }
  i = claim(s, ordinal, key);
  flock(cmg__gs.seg_fd, LOCK_UN);
  cmg__group_unhold();
  if (i < 0) {
    snprintf(cmg__gs.why, sizeof(cmg__gs.why),
             "all %d device counters of %s count other GPUs", SEG_DEVICES,
             cmg__gs.shm_path);
    return -1;
  }
  return named(ordinal, i);
}

void
cmg__group_forget_names(void)
{
  for (int d = 0; d < SEG_DEVICES; d++)
    atomic_store_explicit(&cmg__gs.at[d], 0, memory_order_relaxed);
}

const struct seg_limit *
cmg__group_cap_entry(int ordinal)
{
  if (atomic_load_explicit(&cmg__gs.at[ordinal], memory_order_acquire) > 0)
    return &cmg__gs.cap_at[ordinal];
  if (atomic_load_explicit(&cmg__gs.uuid_known[ordinal], memory_order_acquire))
    for (unsigned g = 0; g < cmg__gs.n_own_gpu; g++)
      if (memcmp(cmg__gs.own_gpu[g].uuid, cmg__gs.uuid[ordinal],
                 CMG__UUID_BYTES) == 0)
        return &cmg__gs.own_gpu[g].limit;
  return cmg__seg_limit_entry(cmg__gs.caps, ordinal);
}
