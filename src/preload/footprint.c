/*
 * What a process takes on the card beyond its allocations.  On an H100 a
 * process holding 1 GiB showed 1542 MiB in nvidia-smi: each CUDA context,
 * with the modules loaded into it, takes about half a GiB that no
 * allocation call asks for.  Caps that leave it out overcommit the card.
 *
 * Each context's cost is measured around its creation (a primary
 * context's first retain, cuCtxCreate): what NVML's per-process usage grew
 * by, or, without NVML, what the driver's free memory fell by where a
 * context was current to ask it.  Where both answer, the report gives
 * both (cross_check), but NVML's is counted: the driver's free memory is
 * the whole card's, and the driver keeps a few MiB per context for itself
 * that nvidia-smi does not show.  Where neither can be read the report
 * says why; nothing is guessed.  Under count_context (the default) the
 * cost is a ledger entry of kind context, counted past any limit (the
 * driver took it already), which dies with its context.  Before each
 * report NVML's whole figure for the process is read again (nvml_usage.c),
 * so that what modules and the driver took later shows as unexplained.
 *
 * NVML numbers processes by the host's pids: in a container's PID
 * namespace it lists the process under a pid it does not know itself by.
 * The process's entry is then the one that appeared (or grew) in NVML's
 * list as it made its context, if exactly one did and the card's used
 * memory grew by as much; its pid is kept for the device.  When two
 * processes start on the card at the same moment, or the card's memory
 * moved by more, it cannot be told apart: the footprint is not measured,
 * and the report says so.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/ledger/driver_held.h"
#include "runtime/group/group.h"
#include "runtime/ledger/ledger.h"
#include "preload/account.h"
#include "preload/device.h"
#include "preload/context.h"
#include "preload/forklock.h"
#include "preload/footprint.h"
#include "preload/hooks/nvml_abi.h"
#include "preload/nvml_usage.h"
#include "preload/state.h"
#include "preload/real.h"

#define MAX_RECORDS 256
#define LISTED CMG__NVML_LISTED
/* What the card's used memory may grow by beyond the process's entry as a
 * context is made: the driver keeps a few MiB of each context for itself,
 * which NVML counts for the card but not for the process (about 6 MiB on
 * an H100). */
#define CARD_SLACK (UINT64_C(64) << 20)

struct record {
  uint16_t ctx;
  int device;
  bool primary;
  enum cmg__footprint_source source;
  uint64_t bytes;
  bool has_driver;       /* the driver's free memory was read around it */
  uint64_t driver_bytes; /* what that fell by */
  uint64_t key;          /* its ledger entry, 0 for none */
};

static struct record records[MAX_RECORDS];
static size_t n_records;
static char why[CMG__MAX_DEVICES][sizeof(((struct cmg__footprint *)0)->why)];
static _Atomic uint64_t keys = 1;

/* What pid's entry held in a listing: 0 where it was not listed. */
static uint64_t
listed_bytes(const struct cmg__nvml_listing *l, unsigned pid)
{
  for (unsigned i = 0; i < l->n && i < LISTED; i++)
    if (l->pid[i] == pid)
      return l->bytes[i];
  return 0;
}

/* This process's entry where NVML does not list it under getpid(): the
 * one entry of *l that appeared or grew since p's listing, if the card's
 * used memory grew by as much.  0 with its bytes before and after (its pid
 * kept for the device), or 1 with why not in r. */
static int
find_self(const struct cmg__ctx_probe *p, const struct cmg__nvml_listing *l,
          uint64_t *before, uint64_t *after, char *r, size_t len)
{
  unsigned grown = 0, at = 0;
  uint64_t card = 0;
  for (unsigned i = 0; i < l->n && i < LISTED; i++)
    if (l->bytes[i] > listed_bytes(&p->before, l->pid[i])) {
      grown++;
      at = i;
    }
  if (grown == 0) {
    snprintf(r, len,
             "NVML lists %u other process%s but not this one (pid %ld): "
             "a PID namespace?",
             l->n, l->n == 1 ? "" : "es", (long)getpid());
    return 1;
  }
  if (grown > 1 || l->n > LISTED || p->before.n > LISTED) {
    snprintf(r, len,
             "NVML lists this process (pid %ld) under another pid, and %u "
             "processes appeared or grew as it made its context: it cannot "
             "tell which is this one",
             (long)getpid(), l->n > LISTED ? l->n : grown);
    return 1;
  }
  uint64_t was = listed_bytes(&p->before, l->pid[at]);
  uint64_t grew = l->bytes[at] - was;
  if (!p->has_card || !cmg__nvml_card_used(p->device, &card) ||
      card < p->card_before || card - p->card_before < grew ||
      card - p->card_before - grew > CARD_SLACK) {
    uint64_t moved = card > p->card_before ? card - p->card_before : 0;
    snprintf(r, len,
             "NVML's entry for pid %u grew by %.1f MiB as this process "
             "(pid %ld) made its context, the card's used memory by %.1f "
             "MiB: another process too?",
             l->pid[at], grew / 1048576.0, (long)getpid(), moved / 1048576.0);
    return 1;
  }
  cmg__nvml_usage_alias(p->device, l->pid[at]);
  *before = was;
  *after = l->bytes[at];
  return 0;
}

/* ---- the driver ------------------------------------------------------- */

/* The driver's free memory on the current context's device. */
static bool
driver_free(uint64_t *free)
{
  cmg__pfn_cuMemGetInfo_v2 info = REAL(cuMemGetInfo_v2);
  size_t f = 0, t = 0;
  if (info == NULL || info(&f, &t) != CUDA_SUCCESS)
    return false;
  *free = f;
  return true;
}

/* ---- records ---------------------------------------------------------- */

/* The device's figures from its contexts: the bytes of those measured, by
 * NVML if any was, and why the others were not. */
static void
publish(int device)
{
  struct cmg__footprint f;
  if (cmg__footprint_get(device, &f) < 0)
    memset(&f, 0, sizeof(f));
  unsigned unmeasured = 0;
  f.contexts = 0;
  f.context_bytes = 0;
  f.checked = 0;
  f.checked_nvml = 0;
  f.checked_driver = 0;
  f.source = CMG__FOOTPRINT_NONE;
  f.counted = false;
  for (size_t i = 0; i < n_records; i++) {
    const struct record *r = &records[i];
    if (r->device != device)
      continue;
    f.contexts++;
    f.context_bytes += r->bytes;
    f.counted = f.counted || r->key != 0;
    unmeasured += r->source == CMG__FOOTPRINT_NONE;
    if (r->source == CMG__FOOTPRINT_NVML || f.source == CMG__FOOTPRINT_NONE)
      f.source = r->source;
    if (r->source == CMG__FOOTPRINT_NVML && r->has_driver) {
      f.checked++;
      f.checked_nvml += r->bytes;
      f.checked_driver += r->driver_bytes;
    }
  }
  f.why[0] = '\0';
  if (unmeasured == f.contexts && unmeasured > 0)
    snprintf(f.why, sizeof(f.why), "%s", why[device]);
  else if (unmeasured > 0)
    snprintf(f.why, sizeof(f.why), "%u of %u contexts not measured: %s",
             unmeasured, f.contexts, why[device]);
  f.counted = f.counted || (cmg__cfg.count_context && unmeasured == 0 &&
                            f.source != CMG__FOOTPRINT_NONE);
  cmg__footprint_set(device, &f);
  cmg__group_note_context(device, f.context_bytes);
}

static bool
has_primary(int device)
{
  for (size_t i = 0; i < n_records; i++)
    if (records[i].device == device && records[i].primary)
      return true;
  return false;
}

/* Counts a measured cost against the caps, as the context's own entry:
 * CUDA_SUCCESS with *key its entry (0 for none), or
 * CUDA_ERROR_OUT_OF_MEMORY when the caps refuse it.  Called without the
 * lock: on_exceed=wait may wait for frees. */
static CUresult
count(enum cmg__fn fn, int device, uint16_t ctx, uint64_t bytes, uint64_t *key)
{
  *key = 0;
  if (!cmg__cfg.count_context || bytes == 0)
    return CUDA_SUCCESS;
  uint64_t k = UINT64_C(0xc7) << 56 | (uint64_t)device << 48 |
               atomic_fetch_add(&keys, 1);
  struct cmg__alloc a;
  CUresult rc = cmg__alloc_made(fn, CMG__KIND_CONTEXT, device, bytes, k, ctx);
  if (rc == CUDA_SUCCESS && cmg__ledger_lookup(k, CMG__KIND_CONTEXT, &a) == 0)
    *key = k;
  return rc;
}

/* ---- fork ------------------------------------------------------------ */

/* The child has none of its parent's contexts. */
static void
forget_all(void)
{
  n_records = 0;
  cmg__nvml_usage_forget();
  cmg__held_reset();
}

/* Held while a context's cost is counted; taken before the ledger's. */
static struct cmg__forklock guard = CMG__FORKLOCK(forget_all);

/* ---- exit ------------------------------------------------------------- */

/* The driver ends the process's contexts in an exit handler that cuInit
 * registers, and NVML then no longer lists the process.  The report's own
 * handler was registered earlier, at load, so it runs after the driver's;
 * this one, registered once a context exists, runs before it and keeps
 * NVML's figure as the program ended for the report. */
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void
register_exit_sample(void)
{
  atexit(cmg__nvml_usage_final);
}

/* ---- contexts --------------------------------------------------------- */

void
cmg__footprint_before(struct cmg__ctx_probe *p, int device, bool primary)
{
  *p = (struct cmg__ctx_probe){ .device = device, .primary = primary };
  if (device < 0 || device >= CMG__MAX_DEVICES)
    return;
  p->nvml = cmg__nvml_usage(device, &p->before, &p->nvml_before, p->why,
                            sizeof(p->why));
  p->has_card = p->nvml >= 0 && cmg__nvml_card_used(device, &p->card_before);
  if (cmg__current_device() == device)
    p->has_free = driver_free(&p->free_before);
}

/* What the driver's free memory fell by as the context was made, where a
 * context of the device was current before and after to ask it: NVML's
 * figure is checked against it, and it stands in where NVML is missing. */
static void
driver_drop(const struct cmg__ctx_probe *p, struct record *rec)
{
  uint64_t after;
  rec->has_driver =
      p->has_free && cmg__current_device() == p->device && driver_free(&after);
  if (rec->has_driver)
    rec->driver_bytes = p->free_before > after ? p->free_before - after : 0;
}

/* The cost of the context just made: its source, with rec's bytes. */
static enum cmg__footprint_source
measure(const struct cmg__ctx_probe *p, struct record *rec, char *r, size_t len)
{
  uint64_t after = 0;
  struct cmg__nvml_listing l = { 0 };
  int got = p->nvml < 0 ? -1 : cmg__nvml_usage(p->device, &l, &after, r, len);
  uint64_t before = p->nvml == 0 ? p->nvml_before : 0;
  driver_drop(p, rec);
  if (got == 1 && l.n > 0)
    got = find_self(p, &l, &before, &after, r, len);
  if (got == 0 || (got == 1 && l.n == 0)) {
    rec->bytes = after > before ? after - before : 0;
    return CMG__FOOTPRINT_NVML;
  }
  if (p->nvml < 0)
    snprintf(r, len, "%s", p->why);
  rec->bytes = rec->driver_bytes;
  return rec->has_driver ? CMG__FOOTPRINT_DRIVER : CMG__FOOTPRINT_NONE;
}

/* Whether a record of the context can be kept (with the lock held). */
static bool
has_room(const struct cmg__ctx_probe *p)
{
  return n_records < MAX_RECORDS && !(p->primary && has_primary(p->device));
}

CUresult
cmg__footprint_after(const struct cmg__ctx_probe *p, CUresult rc,
                     const CUcontext *pctx, enum cmg__fn fn)
{
  int d = p->device;
  if (rc != CUDA_SUCCESS || pctx == NULL || *pctx == NULL || d < 0 ||
      d >= CMG__MAX_DEVICES)
    return rc;
  uint16_t id = cmg__context_id(*pctx);
  cmg__device_setup(d);
  cmg__forklock_take(&guard);
  if (!has_room(p)) {
    cmg__forklock_give(&guard);
    return rc;
  }
  struct record rec = { .ctx = id, .device = d, .primary = p->primary };
  char r[sizeof(why[0])] = "";
  rec.source = measure(p, &rec, r, sizeof(r));
  cmg__forklock_give(&guard);
  if (rec.source != CMG__FOOTPRINT_NONE &&
      count(fn, d, id, rec.bytes, &rec.key) != CUDA_SUCCESS)
    return CUDA_ERROR_OUT_OF_MEMORY;
  cmg__forklock_take(&guard);
  if (rec.source == CMG__FOOTPRINT_NONE)
    snprintf(why[d], sizeof(why[d]), "%s", r);
  if (has_room(p))
    records[n_records++] = rec;
  publish(d);
  cmg__forklock_give(&guard);
  pthread_once(&exit_once, register_exit_sample);
  return rc;
}

void
cmg__footprint_gone(uint16_t ctx, int device)
{
  cmg__forklock_take(&guard);
  for (size_t i = n_records; i-- > 0;) {
    const struct record *r = &records[i];
    bool dead = ctx != 0 ? r->ctx == ctx : r->device == device && r->primary;
    if (!dead)
      continue;
    int d = r->device;
    records[i] = records[--n_records];
    publish(d);
  }
  cmg__forklock_give(&guard);
}
