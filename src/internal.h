/*
 * Everything the files of cumemguard share.  Functions named cmg__ return 0
 * or a negative errno unless their comment says otherwise; predicates are
 * bool is_...  Nothing here is exported from libcumemguard.so: the build uses
 * -fvisibility=hidden and a version script.
 */
#ifndef CMG_INTERNAL_H
#define CMG_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cumemguard.h"

#define CMG__MAX_DEVICES 64
#define CMG__NO_LIMIT UINT64_MAX
#define CMG__EXPORT __attribute__((visibility("default")))
#define CMG__TLS __thread __attribute__((tls_model("initial-exec")))
#define cmg__likely(x) __builtin_expect(!!(x), 1)
/* Code a sanitizer runtime calls while it starts (the dlsym override),
 * before its shadow memory exists: an ASan build must not instrument it. */
#define CMG__NO_ASAN __attribute__((no_sanitize_address))
#define cmg__unlikely(x) __builtin_expect(!!(x), 0)
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

#ifdef CMG_DEBUG
#include <assert.h>
#define CMG_ASSERT(e) assert(e)
#else
#define CMG_ASSERT(e) ((void)0)
#endif

/* Every wrapped or called entry point, from hooks.def; also the API label. */
enum cmg__fn {
  CMG__FN_NONE,
#define DRV(elf, base, version, suffix) CMG__FN_##elf,
#define DRVAS(elf, base, version, pfn) CMG__FN_##elf,
#define RT(name) CMG__FN_##name,
#define AUX(name, base, version) CMG__FN_##name,
#define RTAUX(name) CMG__FN_##name,
#define NVML(name) CMG__FN_##name,
#define NVMLAUX(name) CMG__FN_##name,
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

#define CMG__REPORT_MAX 1024
#define CMG__STACK_DEPTH_MAX 256
#define CMG__STACK_DEPTH_DEFAULT 32
#define CMG__REPORT_DEFAULT "cumemguard.%p.json"

enum cmg__on_exceed {
  CMG__ON_EXCEED_FAIL = 0,  /* refuse the allocation (default) */
  CMG__ON_EXCEED_WARN,      /* allow it, record it, warn once per device */
  CMG__ON_EXCEED_WAIT,      /* wait for frees, up to wait_timeout */
};

#define CMG__WAIT_TIMEOUT_DEFAULT_NS (30ull * 1000000000ull)

struct cmg__config {
  struct cmg__limit limit;                      /* limit=SIZE */
  struct cmg__limit limit_dev[CMG__MAX_DEVICES]; /* limit.N=SIZE */
  struct cmg__limit soft_limit;                 /* soft_limit=SIZE */
  struct cmg__limit soft_limit_dev[CMG__MAX_DEVICES];
  uint64_t max_alloc;       /* max_alloc=SIZE; CMG__NO_LIMIT when unset */
  uint64_t host_limit;      /* host_limit=SIZE; CMG__NO_LIMIT when unset */
  enum cmg__on_exceed on_exceed;
  uint64_t wait_timeout_ns; /* wait_timeout=DURATION; default 30 s */
  char group[64];           /* group=NAME; "" for none */
  struct cmg__limit group_limit;                 /* group_limit=SIZE */
  struct cmg__limit group_limit_dev[CMG__MAX_DEVICES]; /* group_limit.N */
  char report[CMG__REPORT_MAX];   /* report=PATTERN; default above */
  unsigned stack_depth;           /* stack_depth=N, 0..256; default 32 */
  int dump_signal;                /* dump_signal=USR1 etc.; 0 = none */
  int leak_exitcode;              /* leak_exitcode=N, 1..255; 0 = off */
};

/* Parses one size ("4GiB", "512M", "1.5GB", "1073741824", "50%" when
 * allow_percent) of `len` bytes at s.  Returns 0, -EINVAL (not a size) or
 * -ERANGE (does not fit in 64 bits, or a percentage outside (0, 100]). */
int cmg__size_parse(const char *s, size_t len, bool allow_percent,
                    struct cmg__limit *out);

/* Parses a whole option string into *cfg (zeroed, then the defaults).  On error returns
 * -EINVAL and writes one line (no prefix, no newline) into err naming the
 * bad key or value and what was expected. */
int cmg__config_parse(const char *opts, struct cmg__config *cfg, char *err,
                      size_t errlen);

/* The limit in bytes for `device` given its physical size: limit.N if set,
 * else limit, else CMG__NO_LIMIT. */
uint64_t cmg__config_limit(const struct cmg__config *cfg, int device,
                           uint64_t physical);

/* The soft limit in bytes for `device`, as cmg__config_limit. */
uint64_t cmg__config_soft_limit(const struct cmg__config *cfg, int device,
                                uint64_t physical);

/* Expands a report pattern: %p pid, %h host name, %t unix time in seconds,
 * %% a percent sign.  Returns 0, -EINVAL for another escape, -ENAMETOOLONG
 * when the result does not fit in len bytes. */
int cmg__config_expand(const char *pattern, long pid, const char *host,
                       long long time, char *out, size_t len);

/* The name of a signal number as dump_signal takes it ("USR1"), or NULL. */
const char *cmg__signal_name(int sig);

/* ---- ledger.c: live allocations and per-device counters --------------- */

/* What a ledger entry is, which decides how it counts. */
enum cmg__kind {
  CMG__KIND_DEVICE,  /* device memory at an address: counted */
  CMG__KIND_ARRAY,   /* a CUDA array or mipmapped array handle: counted */
  CMG__KIND_VMM,     /* a cuMemCreate handle on a device: counted */
  CMG__KIND_HOST,    /* page-locked host memory: counted on CMG__HOST */
  CMG__KIND_IMPORT,  /* memory another process owns: never counted */
  CMG__KIND_VMM_OTHER, /* a cuMemCreate handle at a non-device location */
  CMG__KIND_COUNT
};

/* The counters and limit slot of host memory, after the devices'. */
#define CMG__HOST CMG__MAX_DEVICES
#define CMG__SLOTS (CMG__MAX_DEVICES + 1)

/* Context ids (hooks_context.c) stay below this. */
#define CMG__MAX_CONTEXTS 4096

/* One live allocation as the ledger's callers see it; the ledger keeps it
 * packed in 40 bytes (ledger.c). */
struct cmg__alloc {
  uint64_t addr;    /* device address, host address, or the handle */
  uint64_t size;
  uint64_t seq;
  uint64_t time_ns; /* since the process started */
  uint32_t stack;   /* interned stack id, CMG__STACK_NONE without one */
  uint32_t thread;
  int16_t device;   /* ordinal, or CMG__HOST */
  uint8_t fn;       /* enum cmg__fn of the API the program called */
  uint8_t kind;     /* enum cmg__kind */
  uint16_t ctx;     /* context id, 0 for none; < CMG__MAX_CONTEXTS */
  uint16_t refs;    /* references beyond the first (VMM handles) */
};

/* Whether entries of this kind count against a limit. */
static inline bool
cmg__kind_counts(unsigned kind)
{
  return kind != CMG__KIND_IMPORT && kind != CMG__KIND_VMM_OTHER;
}

/* Records a live allocation and counts it.  Returns 0; 1 when the address
 * was still recorded (its free went unseen): the stale record, copied to
 * *stale, is counted as freed and the caller gives back its bytes; -ENOMEM
 * if the table cannot grow (the allocation then stays untracked); -EINVAL
 * for a bad device, kind, context or api. */
int cmg__ledger_insert(const struct cmg__alloc *a, struct cmg__alloc *stale);

/* Removes the entry for (addr, kind) into *out, leaving the counters alone
 * until the real free succeeded; -ENOENT if it is not tracked. */
int cmg__ledger_remove(uint64_t addr, unsigned kind, struct cmg__alloc *out);

/* Takes one more reference on an entry (cuMemRetainAllocationHandle). */
int cmg__ledger_addref(uint64_t addr, unsigned kind);

/* Drops one reference: returns 1 after removing the last one into *out
 * (the caller frees), 0 if references remain, -ENOENT if not tracked. */
int cmg__ledger_unref(uint64_t addr, unsigned kind, struct cmg__alloc *out);

/* Removes every entry for which keep() says false, calling gone() on each
 * after its shard's lock is released.  Context teardown uses it. */
void cmg__ledger_remove_if(bool (*keep)(const struct cmg__alloc *, void *),
                           void (*gone)(const struct cmg__alloc *, void *),
                           void *arg);

/* Puts back an entry removed by cmg__ledger_remove (a failed free). */
int cmg__ledger_restore(const struct cmg__alloc *a);

/* Counts the free of an entry removed by cmg__ledger_remove, or its
 * release by a context teardown. */
void cmg__ledger_count_free(const struct cmg__alloc *a);
void cmg__ledger_count_release(const struct cmg__alloc *a);

/* Copies the entry for (addr, kind) into *out; -ENOENT if not tracked. */
int cmg__ledger_lookup(uint64_t addr, unsigned kind, struct cmg__alloc *out);

/* Bytes of the device's live allocations (a sum over threads). */
uint64_t cmg__ledger_live_bytes(int device);

/* Counts a refused allocation. */
void cmg__ledger_count_denial(int device);

/* Counts a free of memory the ledger never saw. */
void cmg__ledger_count_untracked_free(void);

/* Copies the counters of a device (limit and physical left zero). */
void cmg__ledger_stats(int device, struct cmg_device_stats *out);

uint64_t cmg__ledger_untracked_frees(void);

/* Next allocation sequence number, from 1: unique in the process and
 * increasing within a thread (threads take them in blocks). */
uint64_t cmg__ledger_next_seq(void);

/* fork: lock every shard before, unlock after; the child also empties the
 * ledger, since CUDA state does not survive fork. */
void cmg__ledger_prefork(void);
void cmg__ledger_postfork(bool child);

/* Calls fn for every live allocation, one shard locked at a time. */
void cmg__ledger_foreach(void (*fn)(const struct cmg__alloc *, void *),
                         void *arg);

/* ---- tally.c: per-thread counters, summed on read --------------------- */

/* What each device slot counts per thread. */
enum cmg__tally_kind {
  CMG__TALLY_ALLOCATIONS,
  CMG__TALLY_FREES,
  CMG__TALLY_RELEASED,
  CMG__TALLY_BYTES,       /* allocated */
  CMG__TALLY_BYTES_GONE,  /* freed or released */
  CMG__TALLY_KINDS
};

/* The counters before the devices' and host memory's: CMG__SLOTS of each
 * kind, counter (slot * CMG__TALLY_KINDS + kind). */
#define CMG__TALLIES (CMG__SLOTS * CMG__TALLY_KINDS)

struct cmg__tally {
  _Atomic uint64_t n[CMG__TALLIES];
  struct cmg__tally *next;
  _Atomic bool taken;
} __attribute__((aligned(64)));

extern CMG__TLS struct cmg__tally *cmg__tally_self;
extern struct cmg__tally cmg__tally_shared;

/* The calling thread's block, taken on first use. */
struct cmg__tally *cmg__tally_attach(void);

/* Adds n to counter i of the calling thread. */
static inline void
cmg__tally_add(unsigned i, uint64_t n)
{
  struct cmg__tally *t = cmg__tally_self;
  if (cmg__unlikely(t == NULL))
    t = cmg__tally_attach();
  if (cmg__unlikely(t == &cmg__tally_shared))
    atomic_fetch_add_explicit(&t->n[i], n, memory_order_release);
  else
    atomic_store_explicit(
        &t->n[i], atomic_load_explicit(&t->n[i], memory_order_relaxed) + n,
        memory_order_release);
}

/* Counter i summed over every thread. */
uint64_t cmg__tally_sum(unsigned i);

/* fork: the child's counts start from zero. */
void cmg__tally_prefork(void);
void cmg__tally_postfork(bool child);

/* ---- stacks.c: capture, interning, per-stack accounts, symbols -------- */

#define CMG__STACK_NONE 0u
/* Per-stack live accounts are kept for devices 0 .. CMG__STACK_DEVICES-1;
 * allocations on higher ordinals are attributed to their stacks in leaks
 * but not in peak compositions. */
#define CMG__STACK_DEVICES 8

/* Sets the capture depth (0 disables capture) before the first capture. */
void cmg__stacks_configure(unsigned depth);

extern _Atomic unsigned cmg__stack_depth;
uint32_t cmg__stacks_walk(void);

/* Captures the calling thread's stack, skipping the frames inside
 * libcumemguard itself, and interns it.  Returns its id (>= 1), or
 * CMG__STACK_NONE when capture is off or failed.  Never symbolizes, never
 * takes a lock when the stack is already known.  Inline, so that with
 * capture off an allocation pays one load for it. */
static inline uint32_t
cmg__stacks_capture(void)
{
  if (atomic_load_explicit(&cmg__stack_depth, memory_order_relaxed) == 0)
    return CMG__STACK_NONE;
  return cmg__stacks_walk();
}

/* Interns a given array of return addresses (tests, and capture). */
uint32_t cmg__stacks_intern(const uintptr_t *ips, unsigned depth,
                            bool truncated);

void cmg__stacks_add(uint32_t id, int device, int64_t bytes, int64_t count);

/* Adds (or, negative, removes) live bytes and allocations of a stack on a
 * device. */
static inline void
cmg__stacks_account(uint32_t id, int device, int64_t bytes, int64_t count)
{
  if (id != CMG__STACK_NONE)
    cmg__stacks_add(id, device, bytes, count);
}

struct cmg__stack_view {
  uint32_t id;
  unsigned depth;
  bool truncated;
  const uintptr_t *ips;           /* innermost first */
  uint64_t live_bytes[CMG__STACK_DEVICES];
  uint64_t live_count[CMG__STACK_DEVICES];
};

/* Number of interned stacks; ids run from 1 to this. */
uint32_t cmg__stacks_count(void);

/* Fills *out for stack id; -ENOENT for an unknown id. */
int cmg__stacks_get(uint32_t id, struct cmg__stack_view *out);

/* Zeroes every stack's live accounts (fork child); stacks stay interned. */
void cmg__stacks_reset_accounts(void);

struct cmg__symbol {
  char module[1024];     /* path of the object holding the address */
  uintptr_t module_base; /* its load address */
  char build_id[65];     /* lower-case hex of NT_GNU_BUILD_ID, "" if none */
  uint64_t offset;       /* address - module_base */
  char function[256];    /* "" when unknown */
  uint64_t function_offset;
};

/* Describes a return address for a report, looking up ip - 1 so that a call
 * at the end of a function is attributed to it.  Slow: report time only.
 * Returns 0, or -ENOENT when no loaded object holds it. */
int cmg__symbolize(uintptr_t ip, struct cmg__symbol *out);

/* ---- history.c: start time, peaks, denials, device identities -------- */

#define CMG__MAX_EVENTS 1024

struct cmg__composition {
  uint64_t bytes;     /* live bytes on the device at that moment */
  uint64_t time_ns;
  size_t n;
  struct cmg__share {
    uint32_t stack;
    uint64_t bytes;
    uint64_t count;
  } *items;
};

/* A policy decision the report shows. */
enum cmg__event_kind {
  CMG__EVENT_DENIAL,      /* refused */
  CMG__EVENT_WARN,        /* allowed over the limit (on_exceed=warn) */
  CMG__EVENT_WAIT,        /* waited for frees (on_exceed=wait) */
  CMG__EVENT_SOFT_LIMIT,  /* usage rose above the soft limit */
};

struct cmg__event {
  enum cmg__event_kind kind;
  uint64_t time_ns;
  uint64_t requested_bytes;
  uint64_t live_bytes;
  uint64_t limit_bytes;   /* the soft limit for CMG__EVENT_SOFT_LIMIT */
  uint64_t waited_ns;     /* CMG__EVENT_WAIT */
  bool granted;           /* CMG__EVENT_WAIT: room was found in time */
  uint32_t stack;
  int16_t device;
  uint8_t fn;
};

/* Allocations a context teardown released, grouped as leaks are. */
struct cmg__released {
  uint32_t stack;
  int16_t device;
  uint8_t fn;
  uint8_t kind;
  uint64_t count;
  uint64_t bytes;
  uint64_t time_ns;       /* of the last teardown that added to it */
};

struct cmg__device_history {
  char name[256];
  char uuid[48];
  bool has_peak;
  bool has_first_denial;
  struct cmg__composition peak;
  struct cmg__composition first_denial;
};

/* Marks the start of the process (constructor) or of a forked child. */
void cmg__history_start(void);

/* Nanoseconds since cmg__history_start; the process start as unix time.
 * The coarse clock (a few milliseconds of resolution) stamps allocations. */
uint64_t cmg__now_ns(void);
uint64_t cmg__now_coarse_ns(void);
double cmg__start_unix(void);

/* Notes that the process used device memory: only then is a report due. */
void cmg__history_touch(void);
bool cmg__history_touched(void);

void cmg__history_set_device(int device, const char *name, const char *uuid);

/* After an allocation raised `device`'s live bytes to `live`: records the
 * composition when it passed the last recorded peak by the hysteresis. */
void cmg__history_peak(int device, uint64_t live);

/* Records a policy decision; a denial also counts toward the composition
 * kept for each device's first denial. */
void cmg__history_event(const struct cmg__event *e);

/* Copies up to max recorded events; totals[kind] counts all of each kind,
 * kept or not. */
size_t cmg__history_events(struct cmg__event *out, size_t max,
                           uint64_t totals[4]);

/* Adds an allocation released by a context teardown. */
void cmg__history_released(const struct cmg__alloc *a);

/* A malloc'd copy of the released groups; *n their number. */
struct cmg__released *cmg__history_released_groups(size_t *n);

/* A copy of a device's history; release with cmg__history_device_free.
 * Returns 0, -EINVAL or -ENOMEM. */
int cmg__history_device(int device, struct cmg__device_history *out);
void cmg__history_device_free(struct cmg__device_history *h);

void cmg__history_reset(void);

/* ---- jsonw.c: JSON text to a file descriptor, buffered ---------------- */

struct cmg__jsonw {
  int fd;
  int err;        /* the first failure; nothing is written after it */
  size_t len;
  char *buf;
};

/* Starts writing to fd; -ENOMEM without a buffer. */
int cmg__jsonw_open(struct cmg__jsonw *w, int fd);

/* Text that is already JSON, written as it is. */
void cmg__jsonw_put(struct cmg__jsonw *w, const char *s, size_t n);
void cmg__jsonw_text(struct cmg__jsonw *w, const char *s);
#define cmg__jsonw_lit(w, s) cmg__jsonw_put((w), "" s, sizeof(s) - 1)

/* v in decimal; an address as the string "0x..." in lower-case hex; a time
 * in nanoseconds as seconds with six decimals. */
void cmg__jsonw_u64(struct cmg__jsonw *w, uint64_t v);
void cmg__jsonw_hex(struct cmg__jsonw *w, uint64_t v);
void cmg__jsonw_seconds(struct cmg__jsonw *w, uint64_t ns);

/* The decimal digits of v at p (room for 20), unterminated; returns the
 * end. */
char *cmg__jsonw_format_u64(char *p, uint64_t v);

/* Fails the writer with err (a negative errno) unless it already failed. */
void cmg__jsonw_fail(struct cmg__jsonw *w, int err);

/* Writes what is buffered and frees the buffer; returns the first error. */
int cmg__jsonw_close(struct cmg__jsonw *w);

/* ---- report.c: the JSON report ---------------------------------------- */

enum cmg__reason {
  CMG__REASON_EXIT,
  CMG__REASON_SIGNAL,
  CMG__REASON_REQUEST,
  CMG__REASON_SOFT_LIMIT,
};

/* What the report says of the process; filled by the caller. */
struct cmg__process {
  long pid;
  long ppid;
  const char *exe;
  const char *const *argv;   /* NULL-terminated, may be NULL */
  const char *hostname;
  const char *options;       /* CUMEMGUARD_OPTIONS as given, may be NULL */
  enum cmg__reason reason;
};

/* Writes the report to `path` through a temporary file in the same
 * directory and a rename, so the path never holds a partial report.
 * Returns 0 or a negative errno; on success fills the live totals. */
int cmg__report_write(const char *path, const struct cmg__process *proc,
                      uint64_t *live_allocations, uint64_t *live_bytes);

/* ---- policy.c: limit decisions, reserve-then-commit ------------------- */

struct cmg__reservation {
  int device;
  uint64_t bytes;
};

/* Gives `device` (or CMG__HOST) its limit and soft limit (CMG__NO_LIMIT
 * for none) and physical size.  The first call for a device wins; later
 * ones return -EALREADY. */
int cmg__policy_set_device(int device, uint64_t limit, uint64_t soft,
                           uint64_t physical);

/* A single allocation above this is refused (max_alloc). */
void cmg__policy_set_max_alloc(uint64_t bytes);

bool cmg__policy_is_device_set(int device);

/* Reserves `bytes` on `device` before the real allocation.  Returns 0, or
 * -ENOMEM when the limit would be passed, -E2BIG when max_alloc forbids the
 * size, -EPERM when the process fails closed; *used_out holds the bytes in
 * use. */
int cmg__policy_prepare(int device, uint64_t bytes,
                        struct cmg__reservation *r, uint64_t *used_out);

/* Reserves regardless of the limit (on_exceed=warn). */
void cmg__policy_force(int device, uint64_t bytes, struct cmg__reservation *r);

/* Like prepare, but waits up to timeout_ns for frees to make room: 0, or
 * -ETIMEDOUT, or prepare's other errors (on_exceed=wait). */
int cmg__policy_wait(int device, uint64_t bytes, uint64_t timeout_ns,
                     struct cmg__reservation *r, uint64_t *used_out);

/* True once each time usage rises above the device's soft limit. */
bool cmg__policy_soft_crossed(int device);
uint64_t cmg__policy_soft_limit(int device);

/* Grows a reservation made by prepare; -ENOMEM leaves it unchanged. */
int cmg__policy_grow(struct cmg__reservation *r, uint64_t extra);

/* Gives back a reservation whose allocation failed or was freed. */
void cmg__policy_release(int device, uint64_t bytes);

/* After a reserved allocation succeeded: raises the device's peak to what
 * is in use now, and returns that. */
uint64_t cmg__policy_commit(int device);

/* The most bytes in use at once: live allocations plus, at that moment,
 * other threads' reservations whose real call had not yet returned. */
uint64_t cmg__policy_peak(int device);

uint64_t cmg__policy_limit(int device);
uint64_t cmg__policy_physical(int device);
uint64_t cmg__policy_used(int device);

/* After a configuration error: no device allocation succeeds.  `why` is
 * kept (truncated to a line) for the first denial to say; a second call
 * keeps the first reason. */
void cmg__policy_fail_closed(const char *why);
bool cmg__policy_is_failed_closed(void);

/* Why the process fails closed, the first time it is asked, and NULL every
 * later time or when it does not fail closed: the reason is said once, by the first denial, in the process
 * that allocates (a shell or launcher script that never touches the device
 * says nothing). */
const char *cmg__policy_take_why(void);

/* Forgets every reservation (fork child). */
void cmg__policy_reset_usage(void);

/* ---- group.c: one cap shared by a group of processes ------------------ */

/* Joins the group cfg->group names (a no-op without one): opens or creates
 * the user's shared segment for it and takes a slot.  Returns 0, or a
 * negative errno with one line in err (no prefix): the caller fails closed. */
int cmg__group_join(const struct cmg__config *cfg, char *err, size_t errlen);

bool cmg__group_active(void);

/* Reserves bytes against the group's cap on `device` (physical resolves a
 * percentage).  Returns 0, or -ENOMEM with *used_out and *limit_out set;
 * never blocks, never takes a lock a dead process could leave held. */
int cmg__group_reserve(int device, uint64_t bytes, uint64_t physical,
                       uint64_t *used_out, uint64_t *limit_out);

/* Gives back bytes reserved by cmg__group_reserve (failed allocation or
 * free), waking processes that wait for room. */
void cmg__group_release(int device, uint64_t bytes);

/* Waits up to timeout_ns for the group to have room for bytes on device,
 * woken by another member's free or death: 0 once reserved, -ETIMEDOUT. */
int cmg__group_wait(int device, uint64_t bytes, uint64_t physical,
                    uint64_t timeout_ns, uint64_t *used_out,
                    uint64_t *limit_out);

/* A forked child leaves its parent's slot and takes its own on first use. */
void cmg__group_after_fork(void);

/* At exit: gives back what this process holds and frees its slot. */
void cmg__group_leave(void);

/* Writes the operator's view of one group (name) or of all the user's
 * groups (NULL) to fd, as text or JSON; 0, or -errno with one line in err. */
int cmg__group_status(const char *name, bool json, int fd, char *err,
                      size_t errlen);

/* For the report: the group's name, its cap and usage per device. */
struct cmg__group_usage {
  uint64_t limit;   /* CMG__NO_LIMIT for none */
  uint64_t used;    /* all members */
  uint64_t mine;    /* this process */
};
const char *cmg__group_name(void);
int cmg__group_usage(int device, struct cmg__group_usage *out);
unsigned cmg__group_members(void);

/* ---- resolve.c: the real functions and the resolvers ------------------ */

/* The real function for fn, resolved once from libcuda (driver) or the next
 * object (runtime); NULL when it does not exist. */
extern _Atomic(void *) cmg__reals[CMG__FN_COUNT];
void *cmg__real_lookup(enum cmg__fn fn);

static inline void *
cmg__real(enum cmg__fn fn)
{
  void *p = atomic_load_explicit(&cmg__reals[fn], memory_order_acquire);
  return cmg__likely(p != NULL) ? p : cmg__real_lookup(fn);
}

/* The real dlsym, never the override. */
void *cmg__real_dlsym(void *handle, const char *name);

/* ---- elfsym.c: a definition in one loaded object ---------------------- */

/* What dlsym would find for name in the object l alone, from its dynamic
 * symbol table, without dlopen; NULL if l does not define it, and then
 * *tls is set when the definition is a thread-local variable, whose
 * address only glibc can give. */
struct link_map;
void *cmg__object_symbol(const struct link_map *l, const char *name,
                         bool *tls);

/* strncmp(s, prefix, strlen(prefix)) == 0, without libc (see elfsym.c). */
bool cmg__has_prefix(const char *s, const char *prefix);

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

extern _Atomic bool cmg__ready;
void cmg__init_slow(void);

/* Reads CUMEMGUARD_OPTIONS once; safe to call from any hook, at any time. */
static inline void
cmg__init(void)
{
  if (cmg__unlikely(!atomic_load_explicit(&cmg__ready, memory_order_acquire)))
    cmg__init_slow();
}

extern struct cmg__config cmg__cfg;

uint32_t cmg__tid(void);

#endif /* CMG_INTERNAL_H */
