/*
 * One cap shared by a group of processes of one user, kept in a POSIX
 * shared-memory segment: the process's side (group.c).
 */
#ifndef CMG_RUNTIME_GROUP_GROUP_H
#define CMG_RUNTIME_GROUP_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/conf.h"
#include "core/conf_gpu.h"

/* Records the UUID of the process's ordinal, as CUDA (or NVML) gives it,
 * before the group counts anything on it: the group counts each GPU once,
 * and its caps keyed by GPU follow it, whatever ordinal it has here. */
void cmg__group_know_device(int ordinal,
                            const unsigned char uuid[CMG__UUID_BYTES]);

/* Whether the process is in a group (not the registry). */
bool cmg__group_active(void);

/* Whether reservations count somewhere: a group, or the registry. */
bool cmg__group_counting(void);

/* Counts a refused allocation in the process's slot, for status. */
void cmg__group_count_denial(void);

/* Reserves bytes against the group's cap on `device` (physical resolves a
 * percentage).  Returns 0, -ENOMEM with *used_out and *limit_out set,
 * -EPERM for a group that failed closed (its line said why), -EAGAIN
 * when the group could not be joined yet, or -EBUSY when the device's GPU
 * could not be named in it yet (for both cmg__group_why says why; the
 * next reservation tries again, waiting up to 2 s for the lock); never
 * takes a lock a dead process could leave held. */
int cmg__group_reserve(int device, uint64_t bytes, uint64_t physical,
                       uint64_t *used_out, uint64_t *limit_out);

/* Tells the status view what this process's contexts and modules take on
 * `device` (a figure, not a reservation). */
void cmg__group_note_context(int device, uint64_t bytes);

/* Counts bytes the driver has already handed out, past the cap if need
 * be: 0, or -EPERM for a broken group (nothing counted). */
int cmg__group_force(int device, uint64_t bytes, uint64_t physical);

/* For a process in the registry: counts bytes in its slot and returns
 * true (the whole reservation: no cap); false otherwise, for
 * cmg__group_reserve.  The allocation path's one extra cost for a process
 * in no group: no locked instruction (the thread's own lane). */
bool cmg__group_solo_add(int device, uint64_t bytes);

/* `used`, the process's bytes on the device after an allocation, becomes
 * its slot's peak if higher (a group's, or the registry's). */
void cmg__group_peak(int device, uint64_t used);

/* Gives back bytes reserved by cmg__group_reserve (failed allocation or
 * free), waking processes that wait for room. */
void cmg__group_release(int device, uint64_t bytes);

/* Waits up to timeout_ns for the group to have room for bytes on device,
 * woken by another member's free or death: 0 once reserved, -ETIMEDOUT,
 * or -EPERM for a group that failed closed. */
int cmg__group_wait(int device, uint64_t bytes, uint64_t physical,
                    uint64_t timeout_ns, uint64_t *used_out,
                    uint64_t *limit_out);

/* What a member's memory views show of the group's cap on `device` (physical
 * resolves a percentage): 0 with the cap and every member's usage, after
 * reclaiming the dead (at most once a second, as allocating does), so that
 * what a dead member held comes back in the view; 1 when the group sets no
 * cap there (or the process is in no group); -EPERM for a group that is
 * broken or not joined yet, with *limit its cap as far as it is known
 * (CMG__NO_LIMIT when not) and no room. */
int cmg__group_cap_used(int device, uint64_t physical, uint64_t *limit,
                        uint64_t *used);

/* From a SIGBUS handler: whether addr lies in the group's segment, which
 * was then truncated under the process; its pages are replaced by zeroed
 * ones of the process's own and the group fails closed.  Async-signal-safe;
 * the line is said by the next allocation. */
bool cmg__group_fault(const void *addr);

/* For the report: the group's name, its cap and usage per device. */
struct cmg__group_usage {
  uint64_t limit; /* CMG__NO_LIMIT for none */
  uint64_t used;  /* all members */
  uint64_t mine;  /* this process */
};
const char *cmg__group_name(void);
/* Why the group is not joined yet, or cannot count on a GPU yet (-EAGAIN,
 * -EBUSY from a reservation). */
const char *cmg__group_why(void);
int cmg__group_usage(int device, struct cmg__group_usage *out);
unsigned cmg__group_members(void);

#endif /* CMG_RUNTIME_GROUP_GROUP_H */
