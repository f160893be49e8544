/*
 * A minimal TAP producer for the unit tests.  A failure prints the
 * expression, the file and line, and both values.
 */
#ifndef CMG_TAP_H
#define CMG_TAP_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int tap_n;
static int tap_failed;

#define plan(n) printf("1..%d\n", (n))
#define done_testing() (printf("1..%d\n", tap_n), tap_failed ? 1 : 0)

#define tap_report(cond, fmt, ...)                                           \
  do {                                                                       \
    tap_n++;                                                                 \
    if (cond) {                                                              \
      printf("ok %d - " fmt "\n", tap_n, ##__VA_ARGS__);                     \
    } else {                                                                 \
      tap_failed++;                                                          \
      printf("not ok %d - " fmt "\n", tap_n, ##__VA_ARGS__);                 \
    }                                                                        \
  } while (0)

#define ok(expr, ...)                                                        \
  do {                                                                       \
    int ok_ = !!(expr);                                                      \
    tap_report(ok_, __VA_ARGS__);                                            \
    if (!ok_)                                                                \
      printf("#   %s:%d: %s\n", __FILE__, __LINE__, #expr);                  \
  } while (0)

#define is_u64(got, want, ...)                                               \
  do {                                                                       \
    uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);                    \
    tap_report(g_ == w_, __VA_ARGS__);                                       \
    if (g_ != w_)                                                            \
      printf("#   %s:%d: %s\n#   got:  %" PRIu64 "\n#   want: %" PRIu64 "\n", \
             __FILE__, __LINE__, #got, g_, w_);                              \
  } while (0)

#define is_int(got, want, ...)                                               \
  do {                                                                       \
    long long g_ = (long long)(got), w_ = (long long)(want);                 \
    tap_report(g_ == w_, __VA_ARGS__);                                       \
    if (g_ != w_)                                                            \
      printf("#   %s:%d: %s\n#   got:  %lld\n#   want: %lld\n", __FILE__,    \
             __LINE__, #got, g_, w_);                                        \
  } while (0)

#define is_str(got, want, ...)                                               \
  do {                                                                       \
    const char *g_ = (got), *w_ = (want);                                    \
    int eq_ = g_ && w_ && strcmp(g_, w_) == 0;                               \
    tap_report(eq_, __VA_ARGS__);                                            \
    if (!eq_)                                                                \
      printf("#   %s:%d: %s\n#   got:  \"%s\"\n#   want: \"%s\"\n",          \
             __FILE__, __LINE__, #got, g_ ? g_ : "(null)",                   \
             w_ ? w_ : "(null)");                                            \
  } while (0)

#endif /* CMG_TAP_H */
