/*
 * Contexts as the ledger knows them.
 *
 * Each allocation records the id of the context current when it was made
 * (a small number from the table below, so a ledger entry stays small); a
 * context is a primary one unless it came from cuCtxCreate.  The table is
 * append-only and read without a lock; a thread remembers the last context
 * it looked up and that context's device, so the common case is one driver
 * call (cuCtxGetCurrent) and a compare.  The memory is dropped when any
 * context is created or destroyed (a generation count), since a destroyed
 * context's address may come back as another device's.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>

#include "core/base.h"
#include "runtime/ledger/ledger.h"
#include "preload/context.h"
#include "preload/real.h"

#define MAX_CONTEXTS CMG__MAX_CONTEXTS

static _Atomic(CUcontext) contexts[MAX_CONTEXTS]; /* by id; 0 unused */
static _Atomic bool created[MAX_CONTEXTS];        /* by cuCtxCreate */
static _Atomic unsigned n_contexts = 1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static CMG__TLS CUcontext last_ctx;
static CMG__TLS uint16_t last_id;
static CMG__TLS int last_device;
static CMG__TLS unsigned last_generation;
static _Atomic unsigned generation = 1;

uint16_t
cmg__context_id(CUcontext ctx)
{
  if (ctx == NULL)
    return 0;
  if (ctx == last_ctx)
    return last_id;
  unsigned n = atomic_load_explicit(&n_contexts, memory_order_acquire);
  unsigned id = 1;
  while (id < n &&
         atomic_load_explicit(&contexts[id], memory_order_relaxed) != ctx)
    id++;
  if (id == n) {
    pthread_mutex_lock(&lock);
    n = atomic_load(&n_contexts);
    for (id = 1; id < n && atomic_load(&contexts[id]) != ctx; id++)
      ;
    if (id == n && n < MAX_CONTEXTS) {
      atomic_store(&contexts[id], ctx);
      atomic_store_explicit(&n_contexts, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&lock);
    if (id >= MAX_CONTEXTS)
      return 0;
  }
  return (uint16_t)id;
}

int
cmg__current_device(void)
{
  cmg__pfn_cuCtxGetDevice get = REAL(cuCtxGetDevice);
  CUdevice dev;
  if (get == NULL || get(&dev) != CUDA_SUCCESS)
    return -1;
  return dev;
}

/* The thread's context changed since its last allocation. */
static CMG__COLD int
context_changed(CUcontext ctx, unsigned gen, uint16_t *id)
{
  int device = cmg__current_device();
  /* The cache is set only here, all of it at once: an id looked up for
   * another context (a primary context's retain) must not pair with this
   * thread's device. */
  *id = cmg__context_id(ctx);
  last_ctx = ctx;
  last_id = *id;
  last_device = device;
  last_generation = gen;
  return device;
}

int CMG__HOT
cmg__context_device(uint16_t *id)
{
  cmg__pfn_cuCtxGetCurrent get = REAL(cuCtxGetCurrent);
  CUcontext ctx = NULL;
  *id = 0;
  if (get == NULL || get(&ctx) != CUDA_SUCCESS || ctx == NULL)
    return -1;
  unsigned gen = atomic_load_explicit(&generation, memory_order_acquire);
  if (ctx != last_ctx || gen != last_generation)
    return context_changed(ctx, gen, id);
  *id = last_id;
  return last_device;
}

void
cmg__context_created(CUresult rc, const CUcontext *pctx)
{
  cmg__context_forget();
  if (rc == CUDA_SUCCESS && pctx != NULL) {
    uint16_t id = cmg__context_id(*pctx);
    if (id != 0)
      atomic_store(&created[id], true);
  }
}

void
cmg__context_destroyed(uint16_t id)
{
  if (id != 0 && id < MAX_CONTEXTS)
    atomic_store(&created[id], false);
}

bool
cmg__context_is_created(uint16_t id)
{
  return id < MAX_CONTEXTS && atomic_load(&created[id]);
}

void
cmg__context_forget(void)
{
  atomic_fetch_add(&generation, 1);
}
