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
 * thread for the report with a byte on its pipe (dump.c) and sleeps until
 * the report is written or DEATH_WAIT_S have passed.  The dump thread
 * mallocs and locks as any report does, so a crash inside malloc or inside
 * one of our locks could keep it waiting; the bound makes that a death
 * without a report, never a hang.  Then the default action goes back and
 * the signal kills: a fault the kernel raised (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL) by returning to the instruction, which faults again; any other
 * by sending the signal to the thread again, delivered as the handler
 * returns.
 *
 * Left alone: SIGKILL and SIGSTOP (nothing runs), signals the program
 * ignores, blocks or handles, the dump signal, actions set by a raw
 * rt_sigaction system call (Go's runtime does that) or by the obsolete
 * sigset and sigvec.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/history.h"
#include "preload/death.h"
#include "preload/dump.h"
#include "preload/real.h"

#define DEATH_WAIT_S 10
#define SIGNALS 65

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static const int deadly[] = { SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGABRT,
                              SIGBUS, SIGFPE, SIGSEGV, SIGTERM };

static _Atomic(sigaction_fn) real_fn;
static const struct cmg__config *cfg;
static _Atomic bool armed;
/* Per signal: whether our handler stands in the kernel, and then the
 * action the program set (a default one: its flags and mask). */
static _Atomic bool ours[SIGNALS];
static struct sigaction view[SIGNALS];
static _Atomic int dying;

static sigaction_fn
real(void)
{
  sigaction_fn f = atomic_load_explicit(&real_fn, memory_order_acquire);
  if (f == NULL) {
    f = (sigaction_fn)cmg__real_dlsym(RTLD_NEXT, "sigaction");
    atomic_store_explicit(&real_fn, f, memory_order_release);
  }
  return f;
}

static int
real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
  sigaction_fn f = real();
  if (f == NULL) {
    errno = ENOSYS;
    return -1;
  }
  return f(sig, act, old);
}

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

static void
wait_for_report(void)
{
  struct timespec step = { 0, 10 * 1000 * 1000 };
  for (int i = 0; i < DEATH_WAIT_S * 100 && !cmg__dump_death_written(); i++)
    nanosleep(&step, NULL);
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
  real_sigaction(sig, &dfl, NULL);
  bool fault = info->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS ||
                                     sig == SIGFPE || sig == SIGILL);
  if (!fault)
    syscall(SYS_tgkill, getpid(), gettid_now(), sig);
}

static void
on_deadly(int sig, siginfo_t *info, void *context)
{
  (void)context;
  int saved = errno;
  if (cmg__dump_can_report_death(gettid_now())) {
    int none = 0;
    if (atomic_compare_exchange_strong(&dying, &none, sig))
      cmg__dump_request_death(sig);
    wait_for_report();
  }
  die(sig, info);
  errno = saved;
}

/* Our handler in place of the default action the program set (act). */
static void
stand_in(int sig, const struct sigaction *act)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_deadly;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigfillset(&sa.sa_mask);
  view[sig] = *act;
  if (real_sigaction(sig, &sa, NULL) == 0)
    atomic_store(&ours[sig], true);
}

void
cmg__death_setup(const struct cmg__config *options)
{
  cfg = options;
  real();
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
    if (is_deadly(sig) && real_sigaction(sig, NULL, &now) == 0 &&
        is_default(&now))
      stand_in(sig, &now);
  }
}

int
cmg__death_sigaction(int sig, const struct sigaction *act,
                     struct sigaction *old)
{
  if (!is_deadly(sig) || !atomic_load(&ours[sig])) {
    int rc = real_sigaction(sig, act, old);
    if (rc == 0 && act != NULL && is_default(act) && is_deadly(sig) &&
        atomic_load(&armed))
      stand_in(sig, act);
    return rc;
  }
  if (old != NULL)
    *old = view[sig];
  if (act == NULL || is_default(act)) {
    if (act != NULL)
      view[sig] = *act;
    return 0;
  }
  /* The program's own action replaces ours in the kernel. */
  int rc = real_sigaction(sig, act, NULL);
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
