/*
 * The option string, CUMEMGUARD_OPTIONS="limit=4GiB,limit.1=50%,...",
 * parsed into a struct cmg__config (conf.c): no CUDA, no I/O but the error
 * line the caller prints.
 */
#ifndef CMG_CORE_CONF_H
#define CMG_CORE_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base.h"
#include "core/conf_gpu.h"
#include "core/size.h"

#define CMG__REPORT_MAX 1024
#define CMG__STACK_DEPTH_MAX 256
#define CMG__STACK_DEPTH_DEFAULT 32
#define CMG__REPORT_DEFAULT "cumemguard.%p.json"

enum cmg__on_exceed {
  CMG__ON_EXCEED_FAIL = 0, /* refuse the allocation (default) */
  CMG__ON_EXCEED_WARN,     /* allow it, record it, warn once per device */
  CMG__ON_EXCEED_WAIT,     /* wait for frees, up to wait_timeout */
};

/* How capture unwinds (unwind.c). */
enum cmg__stack_mode {
  CMG__STACK_MODE_AUTO = 0, /* frame pointers where proven, else libunwind */
  CMG__STACK_MODE_FP,       /* frame pointers everywhere, bounds-checked */
  CMG__STACK_MODE_DWARF,    /* libunwind only */
};

#define CMG__WAIT_TIMEOUT_DEFAULT_NS (30ull * 1000000000ull)

/* GPUs that GPU keys name (limit.GPU-<uuid>), and the index a handler
 * gets for the k-th of them. */
#define CMG__GPU_KEYS 16
#define CMG__GPU_INDEX(k) (CMG__MAX_DEVICES + (k))

/* What the options set for one GPU named by its UUID. */
struct cmg__gpu_limits {
  unsigned char uuid[CMG__UUID_BYTES];
  struct cmg__limit limit;       /* limit.GPU-...=SIZE */
  struct cmg__limit soft_limit;  /* soft_limit.GPU-... */
  struct cmg__limit group_limit; /* group_limit.GPU-... */
};

struct cmg__config {
  struct cmg__limit limit;                       /* limit=SIZE */
  struct cmg__limit limit_dev[CMG__MAX_DEVICES]; /* limit.N=SIZE */
  struct cmg__limit soft_limit;                  /* soft_limit=SIZE */
  struct cmg__limit soft_limit_dev[CMG__MAX_DEVICES];
  uint64_t max_alloc;  /* max_alloc=SIZE; CMG__NO_LIMIT when unset */
  uint64_t host_limit; /* host_limit=SIZE; CMG__NO_LIMIT when unset */
  enum cmg__on_exceed on_exceed;
  uint64_t wait_timeout_ns;      /* wait_timeout=DURATION; default 30 s */
  uint64_t snapshot_ns;          /* snapshot=DURATION; 0 = none (default) */
  char group[64];                /* group=NAME; "" for none */
  struct cmg__limit group_limit; /* group_limit=SIZE */
  struct cmg__limit group_limit_dev[CMG__MAX_DEVICES]; /* group_limit.N */
  char report[CMG__REPORT_MAX];    /* report=PATTERN; default above */
  unsigned stack_depth;            /* stack_depth=N, 0..256; default 32 */
  enum cmg__stack_mode stack_mode; /* stack_mode=auto|fp|dwarf */
  int dump_signal;                 /* dump_signal=USR1 etc.; 0 = none */
  int leak_exitcode;               /* leak_exitcode=N, 1..255; 0 = off */
  bool no_pools;                   /* no_pools=1: frameworks' pools off */
  bool timeline;                   /* timeline=0|1; default 1 */
  bool python_frames;              /* python_frames=0|1; default 1 */
  bool signal_report; /* signal_report=0|1: a report as a signal kills */
  bool count_context; /* count_context=0|1: caps count contexts and modules */
  struct cmg__gpu_limits gpu[CMG__GPU_KEYS]; /* by UUID, in key order */
  unsigned n_gpu;
};

/* Parses a whole option string into *cfg (zeroed, then the defaults).  On error
 * returns -EINVAL and writes one line (no prefix, no newline) into err naming
 * the bad key or value and what was expected. */
int cmg__config_parse(const char *opts, struct cmg__config *cfg, char *err,
                      size_t errlen);

/* The options' entry for the GPU of that UUID, or NULL (uuid NULL: NULL). */
const struct cmg__gpu_limits *cmg__config_gpu(const struct cmg__config *cfg,
                                              const unsigned char *uuid);

/* The limit in bytes for `device` (the GPU `uuid`, NULL when unknown)
 * given its physical size: limit.GPU-<uuid> if set, else limit.N, else
 * limit, else CMG__NO_LIMIT. */
uint64_t cmg__config_limit(const struct cmg__config *cfg, int device,
                           const unsigned char *uuid, uint64_t physical);

/* The soft limit in bytes for `device`, as cmg__config_limit. */
uint64_t cmg__config_soft_limit(const struct cmg__config *cfg, int device,
                                const unsigned char *uuid, uint64_t physical);

#endif /* CMG_CORE_CONF_H */
