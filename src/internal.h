/*
 * Everything the files of cumemguard share.  Functions named cmg__ return 0
 * or a negative errno unless their comment says otherwise; predicates are
 * bool is_...  Nothing here is exported from libcumemguard.so: the build uses
 * -fvisibility=hidden and a version script.
 */
#ifndef CMG_INTERNAL_H
#define CMG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cumemguard.h"

#define CMG__MAX_DEVICES 64
#define CMG__NO_LIMIT UINT64_MAX
#define CMG__EXPORT __attribute__((visibility("default")))
#define CMG__TLS __thread __attribute__((tls_model("initial-exec")))
#define cmg__likely(x) __builtin_expect(!!(x), 1)
#define cmg__unlikely(x) __builtin_expect(!!(x), 0)

#ifdef CMG_DEBUG
#include <assert.h>
#define CMG_ASSERT(e) assert(e)
#else
#define CMG_ASSERT(e) ((void)0)
#endif

/* Every wrapped or called entry point, from hooks.def; also the API label. */
enum cmg__fn {
#define DRV(elf, base, version, suffix) CMG__FN_##elf,
#define RT(name) CMG__FN_##name,
#define AUX(name, version) CMG__FN_##name,
#include "hooks.def"
  CMG__FN_COUNT
};

/* ---- log.c: one line to stderr, never allocating ---------------------- */

/* Writes "cumemguard: " + the formatted text + "\n" to stderr with one
 * write(2); errno is preserved. */
void cmg__log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Formats `bytes` for people ("512 B", "1.5 GiB") into buf. */
const char *cmg__format_size(uint64_t bytes, char *buf, size_t len);

/* ---- config.c: CUMEMGUARD_OPTIONS -> struct cmg__config --------------- */

enum cmg__limit_kind {
  CMG__LIMIT_NONE = 0,
  CMG__LIMIT_BYTES,
  CMG__LIMIT_PERCENT,
};

struct cmg__limit {
  enum cmg__limit_kind kind;
  uint64_t bytes;   /* CMG__LIMIT_BYTES */
  uint32_t ppm;     /* CMG__LIMIT_PERCENT, in millionths of the device */
};

struct cmg__config {
  struct cmg__limit limit;                      /* limit=SIZE */
  struct cmg__limit limit_dev[CMG__MAX_DEVICES]; /* limit.N=SIZE */
};

/* Parses one size ("4GiB", "512M", "1.5GB", "1073741824", "50%" when
 * allow_percent) of `len` bytes at s.  Returns 0, -EINVAL (not a size) or
 * -ERANGE (does not fit in 64 bits, or a percentage outside (0, 100]). */
int cmg__size_parse(const char *s, size_t len, bool allow_percent,
                    struct cmg__limit *out);

/* Parses a whole option string into *cfg (zeroed first).  On error returns
 * -EINVAL and writes one line (no prefix, no newline) into err naming the
 * bad key or value and what was expected. */
int cmg__config_parse(const char *opts, struct cmg__config *cfg, char *err,
                      size_t errlen);

/* The limit in bytes for `device` given its physical size: limit.N if set,
 * else limit, else CMG__NO_LIMIT. */
uint64_t cmg__config_limit(const struct cmg__config *cfg, int device,
                           uint64_t physical);

/* ---- ledger.c: live allocations and per-device counters --------------- */

struct cmg__alloc {
  uint64_t addr;
  uint64_t size;
  uint64_t seq;
  uint32_t thread;
  int16_t device;
  uint16_t fn;      /* enum cmg__fn of the API the program called */
};

/* Records a live allocation and counts it.  Returns 0; 1 when the address
 * was still recorded (its free went unseen): the stale record, copied to
 * *stale, is counted as freed and the caller gives back its bytes; -ENOMEM
 * if the table cannot grow (the allocation then stays untracked); -EINVAL
 * for a bad device. */
int cmg__ledger_insert(const struct cmg__alloc *a, struct cmg__alloc *stale);

/* Removes the entry for addr into *out, leaving the counters alone until
 * the real free succeeded; -ENOENT if it is not tracked. */
int cmg__ledger_remove(uint64_t addr, struct cmg__alloc *out);

/* Puts back an entry removed by cmg__ledger_remove (a failed free). */
int cmg__ledger_restore(const struct cmg__alloc *a);

/* Counts the free of an entry removed by cmg__ledger_remove. */
void cmg__ledger_count_free(const struct cmg__alloc *a);

/* Copies the entry for addr into *out; -ENOENT if it is not tracked. */
int cmg__ledger_lookup(uint64_t addr, struct cmg__alloc *out);

uint64_t cmg__ledger_live_bytes(int device);

/* Counts a refused allocation. */
void cmg__ledger_count_denial(int device);

/* Counts a free of memory the ledger never saw. */
void cmg__ledger_count_untracked_free(void);

/* Copies the counters of a device (limit and physical left zero). */
void cmg__ledger_stats(int device, struct cmg_device_stats *out);

uint64_t cmg__ledger_untracked_frees(void);

/* Next allocation sequence number, from 1. */
uint64_t cmg__ledger_next_seq(void);

/* fork: lock every shard before, unlock after; the child also empties the
 * ledger, since CUDA state does not survive fork. */
void cmg__ledger_prefork(void);
void cmg__ledger_postfork(bool child);

/* ---- policy.c: limit decisions, reserve-then-commit ------------------- */

struct cmg__reservation {
  int device;
  uint64_t bytes;
};

/* Gives `device` its limit (CMG__NO_LIMIT for none) and physical size.  The
 * first call for a device wins; later ones return -EALREADY. */
int cmg__policy_set_device(int device, uint64_t limit, uint64_t physical);

bool cmg__policy_is_device_set(int device);

/* Reserves `bytes` on `device` before the real allocation.  Returns 0, or
 * -ENOMEM when the limit would be passed (*used_out then holds the bytes in
 * use), or -EPERM when the process fails closed. */
int cmg__policy_prepare(int device, uint64_t bytes,
                        struct cmg__reservation *r, uint64_t *used_out);

/* Grows a reservation made by prepare; -ENOMEM leaves it unchanged. */
int cmg__policy_grow(struct cmg__reservation *r, uint64_t extra);

/* Gives back a reservation whose allocation failed or was freed. */
void cmg__policy_release(int device, uint64_t bytes);

uint64_t cmg__policy_limit(int device);
uint64_t cmg__policy_physical(int device);
uint64_t cmg__policy_used(int device);

/* After a configuration error: no device allocation succeeds. */
void cmg__policy_fail_closed(void);
bool cmg__policy_is_failed_closed(void);

/* Forgets every reservation (fork child). */
void cmg__policy_reset_usage(void);

/* ---- resolve.c: the real functions and the resolvers ------------------ */

/* The real function for fn, resolved once from libcuda (driver) or the next
 * object (runtime); NULL when it does not exist. */
void *cmg__real(enum cmg__fn fn);

/* The real dlsym, never the override. */
void *cmg__real_dlsym(void *handle, const char *name);

/* Given the pointer the driver returned for (symbol, version, flags), the
 * pointer to hand back to the program: a wrapper, or p itself. */
void *cmg__resolve_proc(const char *symbol, int version,
                        unsigned long long flags, void *p);

/* Our own wrapper for fn, or NULL for AUX entries. */
void *cmg__hook_address(enum cmg__fn fn);

const char *cmg__fn_name(enum cmg__fn fn);

/* ---- init.c: once-init, thread state, fork ---------------------------- */

struct cmg__thread {
  int depth;          /* > 0 inside a driver wrapper: nested calls forward */
  uint16_t label;     /* runtime API being served, 0 = none */
  uint32_t tid;
};

extern CMG__TLS struct cmg__thread cmg__self;

/* Reads CUMEMGUARD_OPTIONS once; safe to call from any hook, at any time. */
void cmg__init(void);

extern struct cmg__config cmg__cfg;

uint32_t cmg__tid(void);

#endif /* CMG_INTERNAL_H */
