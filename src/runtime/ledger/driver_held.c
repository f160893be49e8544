/*
 * Figures per device, written by graph calls, context creations and
 * teardowns and before each report, read by the report writer: all rare
 * next to allocations, so one mutex guards both tables.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "core/base.h"
#include "runtime/ledger/driver_held.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct cmg__graphmem graphs[CMG__MAX_DEVICES];
static struct cmg__footprint footprints[CMG__MAX_DEVICES];
static bool graph_seen[CMG__MAX_DEVICES], footprint_seen[CMG__MAX_DEVICES];

static bool
is_device(int device)
{
  return device >= 0 && device < CMG__MAX_DEVICES;
}

static void
put(bool *seen, void *slot, const void *in, size_t size)
{
  pthread_mutex_lock(&lock);
  memcpy(slot, in, size);
  *seen = true;
  pthread_mutex_unlock(&lock);
}

/* 0 with the figures, or -ENOENT for a device never set. */
static int
get(const bool *seen, const void *slot, void *out, size_t size)
{
  pthread_mutex_lock(&lock);
  bool known = *seen;
  memcpy(out, slot, size);
  pthread_mutex_unlock(&lock);
  return known ? 0 : -ENOENT;
}

void
cmg__graphmem_set(int device, uint64_t reserved, uint64_t reserved_high,
                  uint64_t used, uint64_t used_high, bool from_driver)
{
  struct cmg__graphmem g = { 0 };
  if (!is_device(device))
    return;
  cmg__graphmem_get(device, &g); /* keeps the counts */
  g.reserved = reserved;
  g.reserved_high = reserved_high;
  g.used = used;
  g.used_high = used_high;
  g.from_driver = from_driver;
  put(&graph_seen[device], &graphs[device], &g, sizeof(g));
}

void
cmg__graphmem_count(int device, enum cmg__graphmem_count what)
{
  if (!is_device(device))
    return;
  pthread_mutex_lock(&lock);
  struct cmg__graphmem *g = &graphs[device];
  uint64_t *n[] = { &g->launches, &g->uploads, &g->trims, &g->denied };
  (*n[what])++;
  graph_seen[device] = true;
  pthread_mutex_unlock(&lock);
}

int
cmg__graphmem_get(int device, struct cmg__graphmem *out)
{
  if (!is_device(device))
    return -ENOENT;
  return get(&graph_seen[device], &graphs[device], out, sizeof(*out));
}

void
cmg__footprint_set(int device, const struct cmg__footprint *f)
{
  if (!is_device(device))
    return;
  pthread_mutex_lock(&lock);
  struct cmg__footprint *slot = &footprints[device];
  bool has = slot->has_process;
  uint64_t bytes = slot->process_bytes;
  *slot = *f;
  slot->has_process = has;
  slot->process_bytes = bytes;
  footprint_seen[device] = true;
  pthread_mutex_unlock(&lock);
}

void
cmg__footprint_set_process(int device, bool has, uint64_t bytes)
{
  if (!is_device(device))
    return;
  pthread_mutex_lock(&lock);
  if (footprint_seen[device]) {
    footprints[device].has_process = has;
    footprints[device].process_bytes = bytes;
  }
  pthread_mutex_unlock(&lock);
}

int
cmg__footprint_get(int device, struct cmg__footprint *out)
{
  if (!is_device(device))
    return -ENOENT;
  return get(&footprint_seen[device], &footprints[device], out, sizeof(*out));
}

void
cmg__held_reset(void)
{
  pthread_mutex_init(&lock, NULL);
  memset(graphs, 0, sizeof(graphs));
  memset(footprints, 0, sizeof(footprints));
  memset(graph_seen, 0, sizeof(graph_seen));
  memset(footprint_seen, 0, sizeof(footprint_seen));
}
