/*
 * The frameworks' own switches that send every tensor to the driver: with
 * them a leak report names the tensor's allocation site instead of the
 * pool's growth path.  PyTorch's caching allocator checks only that
 * PYTORCH_NO_CUDA_MEMORY_CACHING exists (c10/cuda/CUDACachingAllocator.cpp,
 * forceUncachedAllocator); TensorFlow's TF_GPU_ALLOCATOR=cuda_malloc picks
 * GPUcudaMallocAllocator, one cudaMalloc per request; JAX's
 * XLA_PYTHON_CLIENT_ALLOCATOR=platform allocates and frees exactly on
 * demand, and XLA_PYTHON_CLIENT_PREALLOCATE=false stops it taking 75% of
 * the card first (docs.jax.dev, gpu_memory_allocation).  CuPy has no such
 * variable: its pool is turned off from Python (set_allocator(None)).
 *
 * Frameworks read these once, when they start, so they must be in the
 * environment before the program's first line: the launcher sets them
 * before exec, and the library sets them from its constructor, which runs
 * before main and so before Python copies environ into os.environ.  A
 * variable the user set is never changed.  The names cumemguard set go
 * into CUMEMGUARD_POOLS_SET, which children inherit, so that every report
 * can say which values were ours and which the user's.
 *
 * Called at start-up only, never from a wrapper: setenv allocates.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/pools.h"

/* The order is the report's (options.pool_switches) and the reader's. */
const struct cmg__pools_switch cmg__pools_switches[CMG__POOLS_N] = {
  { "PYTORCH_NO_CUDA_MEMORY_CACHING", "1" },
  { "TF_GPU_ALLOCATOR", "cuda_malloc" },
  { "XLA_PYTHON_CLIENT_ALLOCATOR", "platform" },
  { "XLA_PYTHON_CLIENT_PREALLOCATE", "false" },
};

/* True if the comma-separated list names name. */
static bool
is_listed(const char *list, const char *name)
{
  size_t len = strlen(name);

  for (const char *p = list; p != NULL && *p != '\0';) {
    size_t n = strcspn(p, ",");
    if (n == len && memcmp(p, name, n) == 0)
      return true;
    p += n;
    p += *p == ',';
  }
  return false;
}

/* Adds name to CUMEMGUARD_POOLS_SET.  A longer list than half the room
 * (not ours) is dropped rather than cut. */
static int
list_as_ours(const char *name)
{
  char set[256] = "";
  const char *old = getenv(CMG__POOLS_SET_VAR);
  size_t used = 0, n = strlen(name);

  if (old != NULL && strlen(old) < sizeof(set) / 2) {
    memcpy(set, old, strlen(old) + 1);
    used = strlen(old);
  }
  if (is_listed(set, name) || used + n + 2 > sizeof(set))
    return 0;
  if (used > 0)
    set[used++] = ',';
  memcpy(set + used, name, n + 1);
  return setenv(CMG__POOLS_SET_VAR, set, 1) != 0 ? -errno : 0;
}

int
cmg__pools_setenv(const char *name, const char *value)
{
  if (getenv(name) != NULL)
    return 0;
  if (setenv(name, value, 0) != 0)
    return -errno;
  return list_as_ours(name);
}

/* Sets the switches; see pools.h for the contract. */
int
cmg__pools_apply(void)
{
  for (size_t i = 0; i < CMG__POOLS_N; i++) {
    const struct cmg__pools_switch *s = &cmg__pools_switches[i];
    int err = cmg__pools_setenv(s->name, s->value);
    if (err < 0)
      return err;
  }
  return 0;
}

/* Records the switches; see pools.h. */
void
cmg__pools_read(struct cmg__pools *out)
{
  const char *ours = getenv(CMG__POOLS_SET_VAR);

  memset(out, 0, sizeof(*out));
  out->is_read = true;
  for (size_t i = 0; i < CMG__POOLS_N; i++) {
    const char *v = getenv(cmg__pools_switches[i].name);
    struct cmg__pools_seen *s = &out->seen[i];
    if (v == NULL)
      continue;
    s->is_set = true;
    s->by_us = is_listed(ours, cmg__pools_switches[i].name);
    size_t n = strlen(v);
    if (n >= sizeof(s->value))
      n = sizeof(s->value) - 1;
    memcpy(s->value, v, n);
    s->value[n] = '\0';
  }
}
