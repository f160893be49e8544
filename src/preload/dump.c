/*
 * When reports are written: once at exit by a process that used device
 * memory (never by one that did not, such as a forked child that only
 * execs), as a deadly signal kills it (death.c), every snapshot=TIME, on a
 * dump signal, and on request through cmg_dump().  Snapshots go to the
 * path the last report will take, named once, so that a process killed
 * outright (SIGKILL, the OOM killer) leaves its last snapshot there and one
 * that ends otherwise replaces it.
 *
 * A dump signal's handler only sets a bit in a word and wakes a thread of
 * ours sleeping on it (a futex), which writes the report, because nothing a
 * report needs (malloc, locks, dladdr) is async-signal-safe.  The word is
 * no descriptor: a program that closes every descriptor, or opens its own
 * files where ours were, can neither cut the thread off nor receive a byte
 * meant for it, and a forked child's word is its own, so that no signal of
 * one process is taken by another's thread.  A soft-limit crossing asks the
 * same thread for a snapshot, so the allocation that crossed does not wait
 * for a report to be written.  Dumps are serialized by one mutex, so an
 * exit during a signal dump waits for it rather than race it; a thread that
 * writes a report puts a deadly signal off until it is done (defer.h).
 *
 * The report of a dying process is written from what can be read without
 * the driver: the footprint is not measured again then.
 *
 * A report that cannot be written costs one line on stderr and nothing
 * else: the program's exit status is its own, unless leak_exitcode asks for
 * another when memory is still live at exit.  Snapshots say where they go
 * once, with their first, and a snapshot that cannot be written is said
 * once, not every time.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "core/conf.h"
#include "core/conf_report.h"
#include "runtime/group/group_join.h"
#include "runtime/ledger/history.h"
#include "runtime/ledger/ledger.h"
#include "core/log.h"
#include "runtime/report/report.h"
#include "core/size.h"
#include "preload/defer.h"
#include "preload/dump.h"
#include "preload/nvml_usage.h"
#include "preload/fn.h"
#include "preload/real.h"
#include "preload/state.h"

static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;
/* The reports asked of the dump thread, a bit per reason: its futex word. */
static _Atomic uint32_t requests;
/* The process whose dump thread runs, and that thread: a forked child has
 * none until it starts its own. */
static _Atomic pid_t thread_pid, thread_tid;
/* From pthread_create until the thread runs our code: see
 * cmg__dump_prefork. */
static _Atomic bool starting;
/* The signal killing the process, and whether its report is written. */
static _Atomic int death_signal;
static _Atomic bool death_written;
static char cwd[PATH_MAX];
/* The process a pattern without %p names (CMG__REPORT_PID_VAR, else the
 * one that read the options); a forked child keeps its parent's. */
static long named_pid;
/* With snapshots: the path of the process's last report, fixed at its
 * first snapshot (a pattern's %t would move it). */
static char run_path[PATH_MAX + CMG__REPORT_MAX];
static const struct cmg__config *cfg;
/* Snapshots: whether one was said, and whether one failed and was said. */
static bool snapshot_said, snapshot_failure_said;

/* Reads /proc/self/cmdline into a NULL-terminated argv (malloc'd). */
static char **
read_argv(void)
{
  static char buf[65536];
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
  if (fd >= 0)
    close(fd);
  if (n <= 0)
    return NULL;
  buf[n] = '\0';
  size_t count = 0;
  for (ssize_t i = 0; i < n; i++)
    count += buf[i] == '\0';
  char **argv = calloc(count + 1, sizeof(*argv));
  if (argv == NULL)
    return NULL;
  for (size_t i = 0, off = 0; i < count; i++, off += strlen(buf + off) + 1)
    argv[i] = buf + off;
  return argv;
}

/* The final path of the report: the pattern expanded, relative paths taken
 * from the directory the process started in (it may have moved since). */
static int
report_path(const char *pattern, const char *host, char *out, size_t len)
{
  char name[CMG__REPORT_MAX];
  long pid = (long)getpid();
  int err = cmg__config_expand(pattern, pid, host, (long long)time(NULL), name,
                               sizeof(name));
  if (err == 0 && pid != named_pid && !cmg__config_names_pid(pattern))
    err = cmg__config_add_pid(name, sizeof(name), pid);
  if (err < 0)
    return err;
  if (name[0] == '/' || cwd[0] == '\0')
    return snprintf(out, len, "%s", name) < (int)len ? 0 : -ENAMETOOLONG;
  return snprintf(out, len, "%s/%s", cwd, name) < (int)len ? 0 : -ENAMETOOLONG;
}

static void
count_allocation(const struct cmg__alloc *a, void *arg)
{
  if (cmg__kind_is_device(a->kind) && !cmg__kind_is_drivers(a->kind))
    ++*(uint64_t *)arg;
}

/* Device memory the program still has allocated, from the ledger (no
 * report needed); graph memory pools and contexts are the driver's. */
static uint64_t
live_device_allocations(void)
{
  uint64_t n = 0;
  cmg__ledger_foreach(count_allocation, &n);
  return n;
}

static const char *
api_name(unsigned fn)
{
  return cmg__fn_name((enum cmg__fn)fn);
}

/* The report's one line on stderr, if it has one: a snapshot says where
 * snapshots go with its first, and a failure once. */
static void
say(int err, const char *pattern, const char *final, enum cmg__reason reason,
    uint64_t n, uint64_t bytes)
{
  char size[32], live[64];
  bool snapshot = reason == CMG__REASON_SNAPSHOT;
  if (err < 0 && snapshot && snapshot_failure_said)
    return;
  if (err < 0) {
    snapshot_failure_said = snapshot_failure_said || snapshot;
    cmg__log("cannot write %s %s: %s%s", snapshot ? "snapshot" : "report",
             err == -ENAMETOOLONG || err == -EINVAL ? pattern : final,
             strerror(-err),
             snapshot ? " (later snapshots that fail are not said)" : "");
    return;
  }
  if (snapshot && snapshot_said)
    return;
  if (n == 0)
    snprintf(live, sizeof(live), "no device memory live");
  else
    snprintf(live, sizeof(live), "%s in %" PRIu64 " allocation%s live",
             cmg__format_size(bytes, size, sizeof(size)), n, n == 1 ? "" : "s");
  if (snapshot) {
    snapshot_said = true;
    cmg__log("snapshot %s: %s (rewritten every %.3g s, without a line)", final,
             live, (double)cfg->snapshot_ns / 1e9);
  } else
    cmg__log("report %s: %s", final, live);
}

static int
write_report(const char *path, enum cmg__reason reason, int status)
{
  char host[256] = "", exe[PATH_MAX] = "", final[PATH_MAX + CMG__REPORT_MAX];
  uint64_t n = 0, bytes = 0;
  gethostname(host, sizeof(host) - 1);
  ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  exe[len > 0 ? len : 0] = '\0';

  pthread_mutex_lock(&dump_lock);
  int err = 0;
  bool last = path == NULL && cfg->snapshot_ns != 0 &&
              (reason == CMG__REASON_EXIT || reason == CMG__REASON_KILLED ||
               reason == CMG__REASON_SNAPSHOT);
  if (last && run_path[0] != '\0')
    memcpy(final, run_path, sizeof(run_path));
  else if ((err = report_path(path ? path : cfg->report, host, final,
                              sizeof(final))) == 0 &&
           last)
    memcpy(run_path, final, sizeof(run_path));
  char **argv = read_argv();
  if (reason != CMG__REASON_KILLED)
    cmg__nvml_usage_refresh();
  struct cmg__process proc = {
    .pid = (long)getpid(),
    .ppid = (long)getppid(),
    .exe = exe,
    .argv = (const char *const *)argv,
    .hostname = host,
    .options = secure_getenv("CUMEMGUARD_OPTIONS"),
    .cfg = cfg,
    .pools = &cmg__pools_seen,
    .api_name = api_name,
    .reason = reason,
    .status = status,
  };
  if (err == 0)
    err = cmg__report_write(final, &proc, &n, &bytes);
  free(argv);
  pthread_mutex_unlock(&dump_lock);

  say(err, path ? path : cfg->report, final, reason, n, bytes);
  /* The exit status says whether memory was live, report or not. */
  if (err < 0)
    n = live_device_allocations();
  if (reason == CMG__REASON_EXIT && n > 0 && cfg->leak_exitcode != 0) {
    cmg__group_leave();
    fflush(NULL);
    _exit(cfg->leak_exitcode);
  }
  return err;
}

/* A program's thread writing a report (at exit, through cmg_dump) holds
 * the locks a dying process's report needs: a deadly signal waits. */
static int
dump(const char *path, enum cmg__reason reason, int status)
{
  cmg__defer_enter();
  int err = write_report(path, reason, status);
  cmg__defer_leave();
  return err;
}

/* A fork while another thread writes a report leaves dump_lock held in
 * the child, by a thread the child does not have: the child's own report
 * (at its exit, or on request) would wait for it forever.  Only the forking
 * thread runs in the child, so the lock can be made anew. */
void
cmg__dump_after_fork(void)
{
  pthread_mutex_init(&dump_lock, NULL);
  atomic_store(&starting, false);
  run_path[0] = '\0';
  atomic_store(&requests, 0);
  atomic_store(&death_signal, 0);
  atomic_store(&death_written, false);
  snapshot_said = snapshot_failure_said = false;
}

/* The report first, so it carries the group's usage with ours in it.
 * on_exit rather than atexit: the report says the exit status. */
static void
at_exit(int status, void *arg)
{
  (void)arg;
  /* A child no fork handler ran for exits with its parent's ledger and
   * slot, or shares them: as a forked child that used no device memory,
   * it writes nothing and leaves nothing. */
  if (!cmg__state_is_mine())
    return;
  if (cmg__history_touched())
    dump(NULL, CMG__REASON_EXIT, status & 0xff);
  cmg__group_leave();
}

static void
wake_dumper(enum cmg__reason reason)
{
  int saved = errno;
  atomic_fetch_or(&requests, 1u << reason);
  syscall(SYS_futex, &requests, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  errno = saved;
}

static void
on_signal(int sig)
{
  wake_dumper(CMG__REASON_SIGNAL);
}

void
cmg__dump_request(enum cmg__reason reason)
{
  wake_dumper(reason);
}

/* The last report of a process a signal is killing: the group's usage
 * goes with it, since no exit follows. */
static void
dump_death(void)
{
  int sig = atomic_load(&death_signal);
  if (sig == 0)
    return; /* no signal of this process asked for it */
  dump(NULL, CMG__REASON_KILLED, sig);
  cmg__group_leave();
  atomic_store(&death_written, true);
}

/* Sleeps until a request comes or the next snapshot is due (due 0: no
 * snapshots). */
static void
sleep_until(uint64_t due)
{
  struct timespec left, *timeout = NULL;
  if (due != 0) {
    uint64_t now = cmg__now_ns(), ns = due > now ? due - now : 0;
    left =
        (struct timespec){ (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
    timeout = &left;
  }
  syscall(SYS_futex, &requests, FUTEX_WAIT_PRIVATE, 0, timeout, NULL, 0);
}

/* The reports asked for: a death's first, then the others in the order of
 * their reasons. */
static void
serve(uint32_t asked)
{
  if (asked & 1u << CMG__REASON_KILLED)
    dump_death();
  for (unsigned r = 0; r < CMG__REASONS; r++)
    if (r != CMG__REASON_KILLED && (asked & 1u << r))
      dump(NULL, (enum cmg__reason)r, -1);
}

static void *
dumper(void *arg)
{
  uint64_t period = cfg->snapshot_ns, due = period ? cmg__now_ns() + period : 0;
  atomic_store(&thread_tid, (pid_t)syscall(SYS_gettid));
  atomic_store(&starting, false);
  for (;;) {
    uint32_t asked = atomic_exchange(&requests, 0);
    if (asked != 0) {
      serve(asked);
      continue;
    }
    if (due != 0 && cmg__now_ns() >= due) {
      if (cmg__history_touched())
        dump(NULL, CMG__REASON_SNAPSHOT, -1);
      due = cmg__now_ns() + period;
      continue;
    }
    sleep_until(due);
  }
  return arg;
}

bool
cmg__dump_can_report_death(pid_t tid)
{
  return atomic_load(&thread_pid) == getpid() &&
         atomic_load(&thread_tid) != tid && cmg__history_touched();
}

void
cmg__dump_request_death(int sig)
{
  atomic_store(&death_signal, sig);
  wake_dumper(CMG__REASON_KILLED);
}

bool
cmg__dump_death_written(void)
{
  return atomic_load(&death_written);
}

/* The dump thread serves dump_signal and soft-limit snapshots from the
 * start, and the report of a deadly signal once device memory is used. */
static bool
needs_thread(void)
{
  if (cfg->dump_signal != 0 || cfg->soft_limit.kind != CMG__LIMIT_NONE ||
      cfg->snapshot_ns != 0)
    return true;
  for (int i = 0; i < CMG__MAX_DEVICES; i++)
    if (cfg->soft_limit_dev[i].kind != CMG__LIMIT_NONE)
      return true;
  return cfg->signal_report && cmg__history_touched();
}

void
cmg__dump_start_thread(void)
{
  /* Not wanted, or it runs already. */
  if (!needs_thread() || atomic_load(&thread_pid) == getpid())
    return;
  pthread_t t;
  pthread_attr_t attr;
  sigset_t all, old;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  /* The thread must not take the program's signals.  SIGBUS stays open:
   * its reads of a group segment truncated under the process fault, and a
   * fault on a blocked signal kills without a handler (death.c). */
  sigfillset(&all);
  sigdelset(&all, SIGBUS);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  atomic_store(&starting, true);
  if (pthread_create(&t, &attr, dumper, NULL) != 0) {
    atomic_store(&starting, false);
    cmg__log("cannot start the dump thread: dump_signal, soft-limit and "
             "signal reports will not be written");
  } else {
    atomic_store(&thread_pid, getpid());
    pthread_setname_np(t, "cumemguard");
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
}

/* A thread's start-up, before it runs our code, may allocate: under ASan,
 * pthread_getattr_np's calloc takes a lock of its allocator, which has no
 * fork handler.  A fork in that moment would leave the child that lock
 * held forever, and the thread starts at the first allocation, where a
 * program's fork may well follow at once.  So a fork waits for the start
 * to end, for a millisecond at a time and at most 100 in all: a thread
 * that cannot start sooner must not hold the fork up. */
void
cmg__dump_prefork(void)
{
  struct timespec ms = { 0, 1000000 };
  for (int i = 0; i < 100 && atomic_load(&starting); i++)
    nanosleep(&ms, NULL);
}

void
cmg__dump_setup(const struct cmg__config *options)
{
  cfg = options;
  const char *named = getenv(CMG__REPORT_PID_VAR);
  char *end = NULL;
  named_pid = named != NULL ? strtol(named, &end, 10) : 0;
  if (named == NULL || end == named || *end != '\0' || named_pid <= 0)
    named_pid = (long)getpid();
  if (getcwd(cwd, sizeof(cwd)) == NULL)
    cwd[0] = '\0';
  on_exit(at_exit, NULL);
  if (!needs_thread() && !cfg->signal_report)
    return;
  int sig = cfg->dump_signal;
  if (sig != 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    cmg__real_sigaction(sig, &sa, NULL);
  }
  cmg__dump_start_thread();
}

int
cmg__dump_now(const char *path, enum cmg__reason reason)
{
  if (!cmg__state_is_mine())
    return -ECHILD; /* its ledger is its parent's (at_exit) */
  return dump(path, reason, -1);
}
