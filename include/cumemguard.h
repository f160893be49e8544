/*
 * cumemguard public interface.
 *
 * libcumemguard.so is normally loaded with LD_PRELOAD under a program that
 * was not built against it, so a program that wants these functions looks
 * them up at run time:
 *
 *   int (*stats)(int, struct cmg_device_stats *, size_t) =
 *       dlsym(RTLD_DEFAULT, "cmg_device_stats");
 *   if (stats != NULL && stats(0, &s, sizeof(s)) == 0) ...
 *
 * Every function returns 0 on success or a negative errno value.
 */
#ifndef CUMEMGUARD_H
#define CUMEMGUARD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CMG_VERSION_MAJOR 0
#define CMG_VERSION_MINOR 1
#define CMG_VERSION_PATCH 0
#define CMG_VERSION_STRING "0.1.0"

/* Version of the JSON report format (docs/report-format.md). */
#define CMG_REPORT_VERSION 1

/* Exit status of the launcher when its own arguments are wrong. */
#define CMG_EXIT_USAGE 2

/* Exit status of the launcher when the program could not be started. */
#define CMG_EXIT_EXEC 127

/* Counters of one device, as the process sees its ordinals. */
struct cmg_device_stats {
  uint64_t limit_bytes;    /* UINT64_MAX: no limit, or device not used yet */
  uint64_t physical_bytes; /* 0 until the device was first used */
  uint64_t live_bytes;     /* device memory allocated and not yet freed */
  uint64_t peak_bytes;     /* highest live_bytes seen */
  uint64_t live_allocations;
  uint64_t allocations; /* successful allocations, ever */
  uint64_t frees;       /* frees of tracked allocations, ever */
  uint64_t denials;     /* allocations refused by a limit */
  uint64_t released;    /* allocations freed by a context teardown */
};

/* What the ledger knows about one live allocation. */
struct cmg_allocation_info {
  uint64_t address;
  uint64_t bytes;
  uint64_t seq; /* order of allocation within the process */
  int32_t device;
  uint32_t thread; /* kernel thread id of the allocating thread */
  char api[48];    /* the API the program called, e.g. "cudaMalloc" */
};

/* Host memory's counters, as a device ordinal for cmg_device_stats. */
#define CMG_HOST_MEMORY 64

/* The structs below may grow at their end in later versions: a caller
 * passes the size of the struct it was compiled with, and only that many
 * bytes are written (fields the library does not know are left zero). */

/* Fills *out (size bytes) for device ordinal `device` or CMG_HOST_MEMORY;
 * -EINVAL for a bad ordinal. */
int cmg_device_stats(int device, struct cmg_device_stats *out, size_t size);

/* Fills *out (size bytes) for the live allocation at `address`; -ENOENT if
 * none. */
int cmg_allocation_info(uint64_t address, struct cmg_allocation_info *out,
                        size_t size);

/* Writes a report now, with reason "request": to `path`, or where the
 * report option says when path is NULL.  Returns 0 or a negative errno:
 * -ECHILD in a child made without fork() (a raw clone), whose memory
 * records are its parent's. */
int cmg_dump(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* CUMEMGUARD_H */
