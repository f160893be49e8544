/*
 * The group segment's layout, shared by the members of a group (group.c)
 * and by whoever reads one (group_status.c), and the checks every reader of
 * one makes (segment.c).  The layout is versioned: a segment of another
 * layout is refused with one line, never read.
 */
#ifndef CMG_CORE_SEGMENT_H
#define CMG_CORE_SEGMENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/base.h"
#include "core/conf_gpu.h"

/* A counter that needed a lock would take a process-local one. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
               "counters shared between processes must be lock-free");

#define SEG_MAGIC 0x70756f7267676d63ull /* "cmggroup" */
/* 2: slots count denials; the registry segment (REGISTRY_NAME).
 * 3: a slot's bytes on each device on a cache line of their own.
 * 4: and on a pair of lines (CMG__APART), the group's as well; a registry
 *    member's bytes in lanes, one per thread.
 * 5: a checksum of the header.
 * 6: a group member's bytes in lanes too, each with the count that
 *    brackets its thread's changes (seq), and the slot's for threads
 *    without a lane (busy); a slot its process gave up (gone); devices
 *    counted by GPU (names), and caps keyed by GPU (limit_gpu). */
#define SEG_VERSION 6u
#define SEG_SLOTS 256u
#define SEG_DEVICES CMG__MAX_DEVICES
#define SEG_LANES 8
#define SHM_DIR "/dev/shm"
#define PID_LIMIT 4194304 /* PID_MAX_LIMIT on 64-bit Linux */
#define NS 1000000000ull
#define SCAN_PERIOD_NS NS
#define SCAN_DENIAL_NS (NS / 10)
#define LOCK_TIMEOUT_NS (2 * NS)
#define LEAVE_LOCK_NS (NS / 10)
#define LEAVE_WAIT_NS (NS / 50)
#define ATTACH_TRIES 8
#define PPM 1000000u
/* The per-user segment of processes that name no group: no cap, a slot
 * each, so that `cumemguard status` sees them.  '@' is not allowed in a
 * group name, so no group can take this one. */
#define REGISTRY_NAME "@solo"

enum { SLOT_FREE, SLOT_CLAIMED, SLOT_RECLAIMING };

struct seg_limit {
  uint32_t kind; /* enum cmg__limit_kind */
  uint32_t ppm;
  uint64_t bytes;
};

/* Caps keyed by GPU (group_limit.GPU-<uuid>) a segment holds. */
#define SEG_GPU_LIMITS 16

/* Which GPU each device counter of the group counts.  Members number a
 * GPU by their own ordinals, which CUDA_VISIBLE_DEVICES may reorder, so
 * the group counts by UUID: the first member to use a GPU names an entry
 * for it, under the segment's lock (group_gpus.c). */
enum { NAME_FREE, NAME_SET };
struct seg_name {
  _Atomic uint32_t state;
  uint32_t spare;
  unsigned char uuid[CMG__UUID_BYTES];
};

struct seg_gpu_limit {
  unsigned char uuid[CMG__UUID_BYTES];
  struct seg_limit limit;
};

struct seg_device {
  _Atomic uint64_t used;
  _Atomic uint64_t peak;
  _Atomic uint64_t physical; /* as the first member to use it saw it */
  uint64_t spare[13];
};

/* What a member holds on one device, alone on its pair of cache lines:
 * threads of one process allocating on two devices would otherwise write
 * one line on every allocation and free (2 threads ran at 0.74x the
 * throughput of one), or neighbouring ones (CMG__APART).  12 KiB a slot
 * with its lanes; tmpfs gives pages only to the slots and devices in use. */
struct seg_held {
  _Atomic uint64_t used;
  _Atomic uint64_t peak;
  /* What its contexts and modules took, as measured when each was made:
   * part of used under count_context=1, beside it otherwise (0 from a
   * library that did not measure it). */
  _Atomic uint64_t context;
  uint64_t spare[13];
};

/* A member's bytes on each device as one of its threads counted them: a
 * thread adds to its own lane (cmg__tally_number) with a plain load and
 * store, where a shared counter would cost a locked instruction per
 * allocation and free.  A lane wraps below zero when its thread frees what
 * another allocated; the sum over the lanes and dev[d].used (for threads
 * without a lane) is the member's bytes.  In a group, seq is odd while the
 * thread changes its lane and the group's counter (group.c): a lane whose
 * seq is even holds exactly what its thread has put in the group's
 * counter, which is what lets the bytes of a member killed half way be
 * known (group_reclaim.c). */
struct seg_lane {
  _Atomic uint64_t held[SEG_DEVICES];
  _Atomic uint64_t seq;
} __attribute__((aligned(CMG__APART)));

/* busy for the threads without a lane: each change adds BUSY_ONE, counts
 * itself in the low half while it runs, and takes that back at its end. */
#define BUSY_ONE (UINT64_C(1) << 32 | 1)
#define BUSY_RUNNING UINT64_C(0xffffffff)

struct seg_slot {
  _Atomic uint64_t owner;   /* pid << 32 | SLOT_* */
  _Atomic uint64_t start;   /* /proc/PID/stat field 22; 0 unknown */
  _Atomic uint64_t pidns;   /* inode of /proc/PID/ns/pid; 0 unknown */
  _Atomic uint32_t waiting; /* its threads in cmg__group_wait */
  _Atomic uint32_t denials; /* allocations refused, its own limit's too */
  char comm[16];
  _Atomic uint64_t busy; /* BUSY_* of its threads without a lane */
  /* Its process left (or is leaving): no member, counted by nothing, and
   * freed once the process is gone. */
  _Atomic uint32_t gone;
  struct seg_held dev[SEG_DEVICES] __attribute__((aligned(CMG__APART)));
  struct seg_lane lane[SEG_LANES];
} __attribute__((aligned(CMG__APART)));

struct seg_header {
  _Atomic uint64_t magic;
  uint32_t version;
  uint32_t header_size;
  uint32_t slot_size;
  uint32_t slot_count;
  uint32_t device_count;
  _Atomic uint32_t retired; /* removed by its last member: join again */
  uint64_t total_size;
  int64_t created;      /* unix time the limits were set */
  int32_t creator;      /* pid of the member that set them */
  uint32_t visible_set; /* whether it had CUDA_VISIBLE_DEVICES */
  char visible[256];
  struct seg_limit limit;                  /* group_limit */
  struct seg_limit limit_dev[SEG_DEVICES]; /* group_limit.N */
  uint32_t n_limit_gpu;
  struct seg_gpu_limit limit_gpu[SEG_GPU_LIMITS]; /* group_limit.GPU-... */
  uint64_t checksum; /* of the fields above but magic and retired */
  _Atomic uint32_t wake __attribute__((aligned(64))); /* the futex word */
  _Atomic uint32_t waiters;
  _Atomic uint64_t scan_ns; /* CLOCK_MONOTONIC_COARSE of the last scan */
};

struct seg {
  struct seg_header h;
  struct seg_name name[SEG_DEVICES]; /* what dev[i] counts */
  struct seg_device dev[SEG_DEVICES] __attribute__((aligned(CMG__APART)));
  struct seg_slot slot[SEG_SLOTS];
};

/* A group name: letters, digits, '-', '_' and '.', 1 to 63 of them (it
 * becomes part of a file name in /dev/shm). */
bool cmg__seg_is_valid_name(const char *s);

/* Writes the message into err, after "group 'NAME': " when a name is
 * given (the status view; the library's caller names the group itself);
 * returns rc. */
int cmg__seg_fail(char *err, size_t errlen, const char *name, int rc,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The state letter and start time (field 22, clock ticks after boot) of pid
 * from /proc/PID/stat.  Returns 0, -ENOENT when there is no such process,
 * or another negative errno when /proc cannot tell. */
int cmg__seg_proc_stat(pid_t pid, char *letter, uint64_t *start);

/* The inode of a pid namespace link (/proc/PID/ns/pid), 0 when unknown. */
uint64_t cmg__seg_pidns_of(const char *path);

/* Whether pid no longer names the process that started at `start` (0:
 * unknown, then only existence counts).  A zombie's memory is gone. */
bool cmg__seg_is_dead(pid_t pid, uint64_t start);

/* Bytes for one limit of the segment on a device of `physical` bytes;
 * CMG__NO_LIMIT for none. */
uint64_t cmg__seg_limit_bytes(const struct seg_limit *l, uint64_t physical);

/* One limit in words: "4.0 GiB", "50%" or "none". */
const char *cmg__seg_describe_one(const struct seg_limit *l, char *buf,
                                  size_t len);

/* "4.0 GiB", "50%", "none", then " (device 1: 2.0 GiB, ..., GPU-...: 3.0
 * GiB)" for the caps keyed by ordinal and the n_gpu keyed by GPU. */
const char *cmg__seg_describe(const struct seg_limit *limits,
                              const struct seg_gpu_limit *gpu, unsigned n_gpu,
                              char *buf, size_t len);

/* cmg__seg_check_file for a segment that must belong to uid (root reading
 * another user's segment: the uid its name says). */
int cmg__seg_check_owner(int fd, const char *path, const char *name,
                         unsigned uid, char *err, size_t errlen);

/* The line for a segment of the wrong size: another layout, or not ours. */
int cmg__seg_describe_size(int fd, off_t size, const char *path,
                           const char *name, char *err, size_t errlen);

/* Checks a segment (mapped, or a copy): 0, -EAGAIN when its last member
 * removed it, -EINPROGRESS when it was never set up, -EPROTO for another
 * layout, -EBADMSG when it is corrupt; one line in err. */
int cmg__seg_validate(const struct seg *s, const char *path, const char *name,
                      char *err, size_t errlen);

/* Sets the header's checksum, after setting its fields up (under the
 * segment's lock). */
void cmg__seg_seal(struct seg *s);

/* Whether the header's fields are still the ones sealed with the group. */
bool cmg__seg_is_sealed(const struct seg_header *h);

/* Slots in use: members, live or not yet reclaimed, but not those whose
 * process left. */
unsigned cmg__seg_members(const struct seg *s);

/* A member's bytes on device d: its shared counter and its lanes. */
uint64_t cmg__seg_held(const struct seg_slot *sl, int d);

/* The cap of device counter i, as a reader of the segment sees it: its
 * GPU's (group_limit.GPU-...), else group_limit.i, else group_limit. */
const struct seg_limit *cmg__seg_cap_of(const struct seg *s, int i);

/* The UUID of the GPU counter i counts, into out: false when it counts
 * none yet, or an ordinal of a driver that gave no UUID. */
bool cmg__seg_gpu_of(const struct seg *s, int i, char out[CMG__UUID_TEXT]);

/* The group's cap entry for the GPU uuid, or NULL. */
const struct seg_limit *cmg__seg_gpu_limit(const struct seg_header *h,
                                           const unsigned char *uuid);

#endif /* CMG_CORE_SEGMENT_H */
