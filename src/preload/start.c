/*
 * Start-up: the options read once, the group joined, the report's thread
 * and signal handlers set up; and the library's one fork handler.  At the
 * top: every wrapper calls cmg__init (start.h) before anything else, and
 * nothing below calls back up here.
 *
 * Initialisation is lazy and idempotent: the constructor runs it, and so does
 * every wrapper, because another library's constructor may allocate device
 * memory before ours has run.  It reads the environment and parses a string,
 * nothing more: it never calls CUDA, so it cannot re-enter a wrapper.
 *
 * A bad option string does not stop the program (it is not ours to stop),
 * but no device allocation succeeds afterwards: a typo must never leave a job
 * uncapped on a shared GPU.  The first denial says why; a process that never
 * allocates says nothing, so the scripts and shells around a program under
 * LD_PRELOAD do not each repeat the line.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/base.h"
#include "core/conf.h"
#include "runtime/ledger/freed_largest.h"
#include "runtime/group/group.h"
#include "runtime/group/group_join.h"
#include "runtime/ledger/history.h"
#include "runtime/ledger/ledger.h"
#include "core/log.h"
#include "runtime/limits/policy.h"
#include "core/pools.h"
#include "runtime/python/pylayout.h"
#include "runtime/python/pyline.h"
#include "runtime/stacks/stacks.h"
#include "runtime/stacks/symbols.h"
#include "runtime/ledger/thread_names.h"
#include "runtime/ledger/timeline.h"
#include "runtime/stacks/unwind.h"
#include "preload/death.h"
#include "preload/dump.h"
#include "preload/forklock.h"
#include "preload/hami.h"
#include "preload/start.h"
#include "preload/state.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
_Atomic bool cmg__ready;
static _Atomic bool child_pending;

/* The library's one fork handler.  The dump thread's start first, as it
 * takes none of our locks.  Then the modules' locks: each is held while
 * ledger locks are taken, so that is the order a fork takes them in. */
static void
prefork(void)
{
  cmg__dump_prefork();
  cmg__forklock_prefork();
  cmg__ledger_prefork();
}

static void
postfork_parent(void)
{
  cmg__ledger_postfork(false);
  cmg__forklock_parent();
}

/* The child's report is its own: it starts empty, and is written only if
 * the child itself uses device memory.  The dump thread did not survive the
 * fork; it is started again on the child's first use of the library, not
 * here, where only async-signal-safe calls are safe. */
static void
postfork_child(void)
{
  cmg__dump_after_fork();
  cmg__ledger_postfork(true);
  cmg__policy_reset_usage();
  cmg__stacks_reset_accounts();
  cmg__unwind_after_fork();
  cmg__symbols_after_fork();
  cmg__py_sites_after_fork();
  cmg__history_reset();
  cmg__timeline_reset();
  cmg__freed_reset();
  cmg__group_after_fork();
  cmg__threads_reset();
  cmg__forklock_child();
  cmg__self.tid = 0;
  cmg__state_pid = (pid_t)syscall(SYS_getpid);
  atomic_store(&child_pending, true);
  atomic_store(&cmg__ready, false);
}

static void
init_once(void)
{
  char err[512], why[640];
  cmg__state_pid = (pid_t)syscall(SYS_getpid);
  cmg__history_start();
  const char *opts = secure_getenv("CUMEMGUARD_OPTIONS");
  static char hami[2048];
  const char *var = "CUMEMGUARD_OPTIONS";
  int from_hami = opts == NULL ? cmg__hami_options(hami, sizeof(hami)) : 0;
  if (from_hami != 0) {
    /* Too many of them fails closed, as a bad option would. */
    opts = from_hami > 0 ? hami : "limit=?";
    var = "HAMi's CUDA_DEVICE_MEMORY_LIMIT variables";
  }
  if (cmg__config_parse(opts, &cmg__cfg, err, sizeof(err)) < 0) {
    snprintf(why, sizeof(why), "%s: %s", var, err);
    cmg__policy_fail_closed(why);
    cmg__config_parse(NULL, &cmg__cfg, err, sizeof(err));
  }
  /* Before main, so before any framework reads them: see pools.c.  A
   * failed setenv only costs the tensor-level view, never the cap. */
  if (cmg__cfg.no_pools && cmg__pools_apply() < 0)
    cmg__log("no_pools: cannot set the frameworks' variables");
  cmg__pools_read(&cmg__pools_seen);
  if (cmg__group_join(&cmg__cfg, err, sizeof(err)) < 0) {
    snprintf(why, sizeof(why), "group=%s: %s", cmg__cfg.group, err);
    cmg__policy_fail_closed(why);
  }
  cmg__unwind_configure(cmg__cfg.stack_mode);
  cmg__py_configure(cmg__cfg.python_frames, cmg__cfg.stack_depth > 0);
  cmg__stacks_configure(cmg__cfg.stack_depth);
  cmg__timeline_on = cmg__cfg.timeline;
  cmg__policy_set_device(CMG__HOST, cmg__cfg.host_limit, CMG__NO_LIMIT, 0);
  cmg__policy_set_max_alloc(cmg__cfg.max_alloc);
  cmg__death_setup(&cmg__cfg);
  if (cmg__group_counting())
    cmg__death_guard();
  cmg__dump_setup(&cmg__cfg);
  pthread_atfork(prefork, postfork_parent, postfork_child);
}

void CMG__COLD
cmg__init_slow(void)
{
  pthread_once(&once, init_once);
  if (atomic_exchange(&child_pending, false))
    cmg__dump_start_thread();
  atomic_store_explicit(&cmg__ready, true, memory_order_release);
}

__attribute__((constructor)) static void
constructor(void)
{
  cmg__init();
}
