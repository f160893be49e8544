/*
 * When reports are written: once at exit by a process that used device
 * memory (never by one that did not, such as a forked child that only
 * execs), as a deadly signal kills it (death.c), every snapshot=TIME, on a
 * dump signal, and on request through cmg_dump().  Snapshots go to the
 * path the last report will take, named once, so that a process killed
 * outright (SIGKILL, the OOM killer) leaves its last snapshot there and one
 * that ends otherwise replaces it.
 *
 * A dump signal's handler only writes a byte to a pipe; a thread of ours
 * reads it and writes the report, because nothing a report needs (malloc,
 * locks, dladdr) is async-signal-safe.  A soft-limit crossing asks the same
 * thread for a snapshot, so the allocation that crossed does not wait for
 * a report to be written.  Dumps are serialized by one mutex,
 * so an exit during a signal dump waits for it rather than race it.
 *
 * A report that cannot be written costs one line on stderr and nothing
 * else: the program's exit status is its own, unless leak_exitcode asks for
 * another when memory is still live at exit.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
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
#include "core/group.h"
#include "core/history.h"
#include "core/ledger.h"
#include "core/log.h"
#include "core/report.h"
#include "core/size.h"
#include "preload/dump.h"
#include "preload/footprint.h"
#include "preload/fn.h"
#include "preload/init.h"

static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;
static int wake[2] = { -1, -1 };
/* The process whose dump thread runs, and that thread: a forked child has
 * none until it starts its own. */
static _Atomic pid_t thread_pid, thread_tid;
/* The signal killing the process, and whether its report is written. */
static _Atomic int death_signal;
static _Atomic bool death_written;
static char cwd[PATH_MAX];
/* With snapshots: the path of the process's last report, fixed at its
 * first snapshot (a pattern's %t would move it). */
static char run_path[PATH_MAX + CMG__REPORT_MAX];
static const struct cmg__config *cfg;

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
  int err = cmg__config_expand(pattern, (long)getpid(), host,
                               (long long)time(NULL), name, sizeof(name));
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

static int
dump(const char *path, enum cmg__reason reason, int status)
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
  cmg__footprint_refresh();
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

  char size[32];
  if (err < 0)
    cmg__log("cannot write report %s: %s",
             err == -ENAMETOOLONG || err == -EINVAL
                 ? (path ? path : cfg->report)
                 : final,
             strerror(-err));
  else if (n == 0)
    cmg__log("report %s: no device memory live", final);
  else
    cmg__log("report %s: %s in %" PRIu64 " allocation%s live", final,
             cmg__format_size(bytes, size, sizeof(size)), n, n == 1 ? "" : "s");
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

/* A fork while another thread writes a report leaves dump_lock held in
 * the child, by a thread the child does not have: the child's own report
 * (at its exit, or on request) would wait for it forever.  Only the forking
 * thread runs in the child, so the lock can be made anew. */
static void
postfork_child(void)
{
  pthread_mutex_init(&dump_lock, NULL);
  run_path[0] = '\0';
}

/* The report first, so it carries the group's usage with ours in it.
 * on_exit rather than atexit: the report says the exit status. */
static void
at_exit(int status, void *arg)
{
  (void)arg;
  if (cmg__history_touched())
    dump(NULL, CMG__REASON_EXIT, status & 0xff);
  cmg__group_leave();
}

static void
wake_dumper(enum cmg__reason reason)
{
  int saved = errno;
  char c = (char)reason;
  if (wake[1] >= 0 && write(wake[1], &c, 1) < 0) {
    /* A full pipe already holds a pending dump request. */
  }
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
  dump(NULL, CMG__REASON_KILLED, atomic_load(&death_signal));
  cmg__group_leave();
  atomic_store(&death_written, true);
}

/* Milliseconds until the next snapshot is due, -1 for none. */
static int
until_snapshot(uint64_t due)
{
  if (cfg->snapshot_ns == 0)
    return -1;
  uint64_t now = cmg__now_ns();
  return due > now ? (int)((due - now + 999999) / 1000000) : 0;
}

static void *
dumper(void *arg)
{
  char c;
  uint64_t due = cmg__now_ns() + cfg->snapshot_ns;
  atomic_store(&thread_tid, (pid_t)syscall(SYS_gettid));
  for (;;) {
    struct pollfd p = { .fd = wake[0], .events = POLLIN };
    int ready = poll(&p, 1, until_snapshot(due));
    if (ready == 0) {
      if (cmg__history_touched())
        dump(NULL, CMG__REASON_SNAPSHOT, -1);
      due = cmg__now_ns() + cfg->snapshot_ns;
      continue;
    }
    ssize_t n = ready > 0 ? read(wake[0], &c, 1) : -1;
    if (n == 1 && c == CMG__REASON_KILLED)
      dump_death();
    else if (n == 1)
      dump(NULL, (enum cmg__reason)c, -1);
    else if (n == 0 || errno != EINTR)
      return arg;
  }
}

bool
cmg__dump_can_report_death(pid_t tid)
{
  return wake[1] >= 0 && atomic_load(&thread_pid) == getpid() &&
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
  /* Not wanted, its pipe could not be made, or it runs already. */
  if (wake[0] < 0 || !needs_thread() || atomic_load(&thread_pid) == getpid())
    return;
  pthread_t t;
  pthread_attr_t attr;
  sigset_t all, old;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  /* The thread must not take the program's signals. */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  if (pthread_create(&t, &attr, dumper, NULL) != 0) {
    cmg__log("cannot start the dump thread: dump_signal, soft-limit and "
             "signal reports will not be written");
  } else {
    atomic_store(&thread_pid, getpid());
    pthread_setname_np(t, "cumemguard");
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
}

void
cmg__dump_setup(const struct cmg__config *options)
{
  cfg = options;
  if (getcwd(cwd, sizeof(cwd)) == NULL)
    cwd[0] = '\0';
  on_exit(at_exit, NULL);
  pthread_atfork(NULL, NULL, postfork_child);
  if (!needs_thread() && !cfg->signal_report)
    return;
  if (pipe2(wake, O_CLOEXEC) < 0 || fcntl(wake[1], F_SETFL, O_NONBLOCK) < 0) {
    cmg__log("cannot start the dump thread: %s", strerror(errno));
    wake[0] = wake[1] = -1;
    return;
  }
  int sig = cfg->dump_signal;
  if (sig != 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
  }
  cmg__dump_start_thread();
}

int
cmg__dump_now(const char *path, enum cmg__reason reason)
{
  return dump(path, reason, -1);
}
