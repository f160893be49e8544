/*
 * The few basics every file of cumemguard shares: how many devices, "no
 * limit", and the attributes that place code.  Functions named cmg__ return
 * 0 or a negative errno unless their comment says otherwise; predicates are
 * bool is_...  Nothing is exported from libcumemguard.so but what its
 * version script names: the build uses -fvisibility=hidden.
 */
#ifndef CMG_CORE_BASE_H
#define CMG_CORE_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The library's file name, as the launcher, the CDI writers and the
 * device plugin look for it. */
#define CMG__LIBRARY_NAME "libcumemguard.so"

#define CMG__MAX_DEVICES 64
#define CMG__NO_LIMIT UINT64_MAX

/* The counters and limit slot of host memory, after the devices'. */
#define CMG__HOST CMG__MAX_DEVICES
#define CMG__SLOTS (CMG__MAX_DEVICES + 1)

/* How far apart data written by different threads is kept: Intel's
 * adjacent-line prefetcher moves 64-byte lines in 128-byte pairs, so two
 * threads writing neighbouring lines still take the pair from each other
 * (a thread allocating on device 0 paid 25% more per pair while another
 * allocated on device 1, and nothing while it allocated on device 2). */
#define CMG__APART 128

#define CMG__EXPORT __attribute__((visibility("default")))
#define CMG__TLS __thread __attribute__((tls_model("initial-exec")))
#define cmg__likely(x) __builtin_expect(!!(x), 1)
#define cmg__unlikely(x) __builtin_expect(!!(x), 0)
/* Code a sanitizer runtime calls while it starts (the dlsym override),
 * before its shadow memory exists: an ASan build must not instrument it. */
#define CMG__NO_ASAN __attribute__((no_sanitize_address))
/* The allocation and free path, placed together (.text.hot) so that it
 * spans as few cache lines and pages as can be; what it rarely does is kept
 * out of line and apart (.text.unlikely). */
#define CMG__HOT __attribute__((hot))
#define CMG__COLD __attribute__((cold, noinline))
/* A wrapper of the allocation path: all it calls that is not cold is
 * inlined into it, so an allocation makes a handful of calls instead of
 * twenty.  Calls and returns are what slows most when the machine's core is
 * shared with a busy neighbour (docs/PERFORMANCE.md). */
#define CMG__ENTRY __attribute__((hot, flatten))

/* --enable-debug: our own invariants are checked.  A constant, not an
 * #ifdef, so that both builds compile every check (jemalloc's
 * config_debug). */
static const bool cmg__config_debug = CMG_DEBUG;

/* Checks an invariant of ours in a debug build: a failure says where on
 * stderr and aborts.  Compiles to nothing otherwise. */
void cmg__assert_failed(const char *what, const char *file, int line);
#define CMG_ASSERT(e)                                                          \
  do {                                                                         \
    if (cmg__config_debug && cmg__unlikely(!(e)))                              \
      cmg__assert_failed(#e, __FILE__, __LINE__);                              \
  } while (0)

/* Whether s (NULL: never) starts with prefix.  Without the C library and
 * without a sanitizer's checks: the library's dlsym override asks before
 * either is ready. */
CMG__NO_ASAN static inline bool
cmg__has_prefix(const char *s, const char *prefix)
{
  if (s == NULL)
    return false;
  while (*prefix != '\0' && *s == *prefix)
    s++, prefix++;
  return *prefix == '\0';
}

#endif /* CMG_CORE_BASE_H */
