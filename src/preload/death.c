/*
 * Reports on the deaths that can leave one.  A process that a deadly
 * signal kills by its default action (a scheduler's SIGTERM, Ctrl-C's
 * SIGINT, CPython's re-raise of an uncaught KeyboardInterrupt, abort, a
 * crash) writes its report first, then dies exactly as it would have: by
 * the same signal, with the same status and the same core dump.
 *
 * Our handler stands in the kernel only where the program's action is the
 * default; what the program set is kept apart (view[]) and sigaction and
 * signal answer from it, so the program sees what it set and its own
 * handlers run as they would.  CPython installs its SIGINT handler only
 * where it finds the default: it still does.
 *
 * The handler does only what a signal handler may: it asks the dump
 * thread for the report (dump.c) and sleeps until the report is written.
 * A signal that lands while its thread holds one of the library's locks
 * is put off until the lock is released (defer.c), so the dump thread
 * never waits for a lock the dying thread holds.  It mallocs as any report
 * does, so a signal inside malloc, or in the dynamic loader, can still keep
 * it waiting: the handler waits while the report makes progress, and gives
 * up after STALL_NS without any (or DEATH_WAIT_NS in all), removing the
 * report's temporary file and saying so in one line: a death without a
 * report, never a hang, and nothing left behind.  Then the default action
 * goes back and the signal kills: a fault the kernel raised (SIGSEGV,
 * SIGBUS, SIGFPE, SIGILL) by returning to the instruction, which faults
 * again; any other by sending the signal to the thread again, delivered as
 * the handler returns.
 *
 * A program that sets a default action back while ours stands in the
 * kernel, or puts it back after its own, never opens a window with the
 * default action in the kernel: ours goes in in the same call.
 *
 * Left alone: SIGKILL and SIGSTOP (nothing runs), signals the program
 * ignores, blocks or handles, the dump signal, actions set by a raw
 * rt_sigaction system call (Go's runtime does that) or by the obsolete
 * sigset and sigvec.
 *
 * SIGBUS is the exception, from the moment a group segment is mapped
 * (cmg__death_guard): another process of the user may truncate the
 * segment under us, and the next read of it faults.  Our handler then
 * stands in the kernel whatever the program sets, but SIG_IGN: a fault in
 * the segment is put right (runtime/group/group.c) and the instruction runs
 * again; any other SIGBUS goes to the program's own handler, called as the
 * kernel would have called it (its flags, with its mask added to the mask
 * the signal found), or takes the default action, with a report where one
 * is asked for.  pytest and Python's faulthandler set a SIGBUS handler.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/base.h"
#include "runtime/group/group.h"
#include "runtime/ledger/history.h"
#include "runtime/report/report_file.h"
#include "core/signals.h"
#include "preload/death.h"
#include "preload/defer.h"
#include "preload/dump.h"
#include "preload/real.h"

#define STALL_NS (2 * 1000000000ull)
#define DEATH_WAIT_NS (10 * 1000000000ull)
#define SIGNALS 65

static const int deadly[] = { SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGABRT,
                              SIGBUS, SIGFPE, SIGSEGV, SIGTERM };

static const struct cmg__config *cfg;
static _Atomic bool armed;
/* Per signal: whether our handler stands in the kernel, and then the
 * action the program set (a default one: its flags and mask). */
static _Atomic bool ours[SIGNALS];
static struct sigaction view[SIGNALS];
static _Atomic int dying;
/* A group segment is mapped: our handler stays for SIGBUS. */
static _Atomic bool guards_bus;

static bool
is_deadly(int sig)
{
  if (cfg == NULL || !cfg->signal_report || sig == cfg->dump_signal)
    return false;
  for (size_t i = 0; i < sizeof(deadly) / sizeof(*deadly); i++)
    if (deadly[i] == sig)
      return true;
  return false;
}

static bool
is_default(const struct sigaction *act)
{
  return act->sa_handler == SIG_DFL;
}

static pid_t
gettid_now(void)
{
  return (pid_t)syscall(SYS_gettid);
}

static uint64_t
now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* One line on stderr with write(2), the one way a handler may. */
static void
say_lost(int sig)
{
  const char *name = cmg__signal_abbrev(sig);
  const char *parts[] = { "cumemguard: no report: SIG", name ? name : "?",
                          " killed the process before its report was "
                          "written (it made no progress for 2 s)\n" };
  for (size_t i = 0; i < sizeof(parts) / sizeof(*parts); i++)
    if (write(STDERR_FILENO, parts[i], strlen(parts[i])) < 0)
      return;
}

/* Until the report is written, while it makes progress. */
static void
wait_for_report(int sig)
{
  struct timespec step = { 0, 5 * 1000 * 1000 };
  uint64_t start = now_ns(), moved = start, seen = cmg__report_progress();
  while (!cmg__dump_death_written()) {
    nanosleep(&step, NULL);
    uint64_t now = now_ns(), p = cmg__report_progress();
    if (p != seen) {
      seen = p;
      moved = now;
    }
    if (now - moved > STALL_NS || now - start > DEATH_WAIT_NS) {
      cmg__report_abandon();
      say_lost(sig);
      return;
    }
  }
}

static bool
is_fault(int sig, const siginfo_t *info)
{
  return info->si_code > 0 &&
         (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
}

/* Puts the default action back and lets the signal take it. */
static void
die(int sig, const siginfo_t *info)
{
  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  atomic_store(&ours[sig], false);
  cmg__real_sigaction(sig, &dfl, NULL);
  if (!is_fault(sig, info))
    syscall(SYS_tgkill, getpid(), gettid_now(), sig);
}

/* The program's own handler for a signal our handler stood in for: with
 * the mask the kernel would have set (the signal's own, unless
 * SA_NODEFER), its flags, and SA_RESETHAND's default put back. */
static void
chain(int sig, siginfo_t *info, void *context)
{
  struct sigaction act = view[sig];
  const ucontext_t *uc = context;
  sigset_t mask = uc->uc_sigmask, old;

  sigorset(&mask, &mask, &act.sa_mask);
  if (!(act.sa_flags & SA_NODEFER))
    sigaddset(&mask, sig);
  if (act.sa_flags & SA_RESETHAND) {
    view[sig].sa_handler = SIG_DFL;
    view[sig].sa_flags &= ~SA_SIGINFO;
  }
  pthread_sigmask(SIG_SETMASK, &mask, &old);
  if (act.sa_flags & SA_SIGINFO)
    act.sa_sigaction(sig, info, context);
  else
    act.sa_handler(sig);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void
on_deadly(int sig, siginfo_t *info, void *context)
{
  int saved = errno;
  /* A group segment truncated under us: zeroed pages replace it and the
   * instruction runs again (runtime/group/group.c). */
  if ((!is_fault(sig, info) && is_deadly(sig) && cmg__defer_postpone(sig)) ||
      (sig == SIGBUS && is_fault(sig, info) &&
       cmg__group_fault(info->si_addr))) {
    errno = saved;
    return;
  }
  if (!is_default(&view[sig])) {
    errno = saved;
    chain(sig, info, context);
    return;
  }
  if (is_deadly(sig) && cmg__dump_can_report_death(gettid_now())) {
    int none = 0;
    if (atomic_compare_exchange_strong(&dying, &none, sig))
      cmg__dump_request_death(sig);
    wait_for_report(sig);
  }
  die(sig, info);
  errno = saved;
}

/* Our handler in place of the default action the program set (act), the
 * action it replaces in *old: 0, or -1 with errno. */
static int
stand_in(int sig, const struct sigaction *act, struct sigaction *old)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_deadly;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigfillset(&sa.sa_mask);
  view[sig] = *act;
  int rc = cmg__real_sigaction(sig, &sa, old);
  if (rc == 0)
    atomic_store(&ours[sig], true);
  return rc;
}

void
cmg__death_setup(const struct cmg__config *options)
{
  cfg = options;
  /* Resolved now, before the program's first sigaction needs it. */
  cmg__real_sigaction(0, NULL, NULL);
}

void
cmg__death_guard(void)
{
  struct sigaction now;
  if (atomic_exchange(&guards_bus, true) ||
      cmg__real_sigaction(SIGBUS, NULL, &now) != 0 ||
      now.sa_handler == SIG_IGN || now.sa_sigaction == on_deadly)
    return;
  stand_in(SIGBUS, &now, NULL);
}

void
cmg__death_arm(void)
{
  if (cfg == NULL || !cfg->signal_report)
    return;
  cmg__dump_start_thread();
  if (atomic_exchange(&armed, true))
    return;
  for (size_t i = 0; i < sizeof(deadly) / sizeof(*deadly); i++) {
    struct sigaction now;
    int sig = deadly[i];
    if (is_deadly(sig) && cmg__real_sigaction(sig, NULL, &now) == 0 &&
        is_default(&now))
      stand_in(sig, &now, NULL);
  }
}

/* SIGBUS under the guard: the program's action is kept in view[], ours
 * stays in the kernel; SIG_IGN alone goes in, and the guard with it (an
 * ignored signal stays ignored across exec, a handled one does not). */
static int
guard_sigaction(const struct sigaction *act, struct sigaction *old)
{
  if (old != NULL)
    *old = view[SIGBUS];
  if (act == NULL)
    return 0;
  if (act->sa_handler == SIG_IGN) {
    int rc = cmg__real_sigaction(SIGBUS, act, NULL);
    if (rc == 0)
      atomic_store(&ours[SIGBUS], false);
    return rc;
  }
  view[SIGBUS] = *act;
  return 0;
}

int
cmg__death_sigaction(int sig, const struct sigaction *act,
                     struct sigaction *old)
{
  if (sig == SIGBUS && atomic_load(&guards_bus) && atomic_load(&ours[SIGBUS]))
    return guard_sigaction(act, old);
  if (!is_deadly(sig) || !atomic_load(&ours[sig])) {
    if (act != NULL && is_default(act) && is_deadly(sig) && atomic_load(&armed))
      return stand_in(sig, act, old);
    return cmg__real_sigaction(sig, act, old);
  }
  if (old != NULL)
    *old = view[sig];
  if (act == NULL || is_default(act)) {
    if (act != NULL)
      view[sig] = *act;
    return 0;
  }
  /* The program's own action replaces ours in the kernel. */
  int rc = cmg__real_sigaction(sig, act, NULL);
  if (rc == 0)
    atomic_store(&ours[sig], false);
  return rc;
}

/* glibc's signal: BSD semantics, the signal itself blocked while its
 * handler runs, interrupted calls restarted. */
__sighandler_t
cmg__death_signal(int sig, __sighandler_t handler)
{
  struct sigaction act, old;
  memset(&act, 0, sizeof(act));
  act.sa_handler = handler;
  act.sa_flags = SA_RESTART;
  sigemptyset(&act.sa_mask);
  if (sig > 0 && sig < SIGNALS && sigaddset(&act.sa_mask, sig) < 0)
    return SIG_ERR;
  if (handler == SIG_ERR || cmg__death_sigaction(sig, &act, &old) < 0) {
    if (handler == SIG_ERR)
      errno = EINVAL;
    return SIG_ERR;
  }
  return old.sa_handler;
}
