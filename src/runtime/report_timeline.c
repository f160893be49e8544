/*
 * The report's "timeline" member (docs/report-format.md): for each device
 * that has a series, its points as [time, live, min, max] arrays, which
 * keep a long series to a fraction of the size of objects, closed by a
 * point at the moment of the report so a reader can draw up to it; the
 * report writes, oldest first; and the largest allocations freed.  Runs
 * where report.c runs: it may malloc and take the timeline's locks one at
 * a time.
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/base.h"
#include "runtime/freed.h"
#include "runtime/policy.h"
#include "runtime/report_devices.h"
#include "runtime/report_refs.h"
#include "runtime/report_timeline.h"
#include "runtime/timeline.h"

static double
seconds(uint64_t ns)
{
  return (double)(ns / 1000) / 1e6;
}

static cJSON *
point_json(uint64_t time_ns, uint64_t live, uint64_t min, uint64_t max)
{
  cJSON *a = cJSON_CreateArray();
  cJSON_AddItemToArray(a, cJSON_CreateNumber(seconds(time_ns)));
  cJSON_AddItemToArray(a, cJSON_CreateNumber((double)live));
  cJSON_AddItemToArray(a, cJSON_CreateNumber((double)min));
  cJSON_AddItemToArray(a, cJSON_CreateNumber((double)max));
  return a;
}

static cJSON *
device_json(int device, const struct cmg__timeline *t, uint64_t now_ns)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToObject(o, "device", cmg__report_device(device));
  cJSON_AddNumberToObject(o, "resolution", seconds(t->resolution_ns));
  cJSON_AddNumberToObject(o, "peak_bytes", (double)t->peak_bytes);
  cJSON_AddNumberToObject(o, "peak_time", seconds(t->peak_time_ns));
  cJSON *points = cJSON_AddArrayToObject(o, "points");
  for (size_t i = 0; i < t->n; i++) {
    const struct cmg__timeline_point *p = &t->points[i];
    cJSON_AddItemToArray(points,
                         point_json(p->time_ns, p->live, p->min, p->max));
  }
  uint64_t last = t->points[t->n - 1].time_ns;
  uint64_t live = cmg__policy_used(device);
  cJSON_AddItemToArray(
      points, point_json(now_ns > last ? now_ns : last, live, live, live));
  return o;
}

static cJSON *
freed_json(struct cmg__refs *refs, const char *(*api)(unsigned fn))
{
  struct cmg__freed f[CMG__FREED_KEEP];
  size_t n = cmg__freed_get(f, CMG__FREED_KEEP);
  cJSON *list = cJSON_CreateArray();
  for (size_t i = 0; i < n; i++) {
    char address[24];
    cJSON *e = cJSON_CreateObject();
    snprintf(address, sizeof(address), "0x%" PRIx64, f[i].a.addr);
    cJSON_AddStringToObject(e, "address", address);
    cJSON_AddNumberToObject(e, "bytes", (double)f[i].a.size);
    cJSON_AddItemToObject(e, "device", cmg__report_device(f[i].a.device));
    cJSON_AddStringToObject(e, "api", api(f[i].a.fn));
    cJSON_AddItemToObject(e, "stack", cmg__refs_stack(refs, f[i].a.stack));
    cJSON_AddNumberToObject(e, "thread", f[i].a.thread);
    cJSON_AddNumberToObject(e, "time", seconds(f[i].a.time_ns));
    cJSON_AddNumberToObject(e, "free_time", seconds(f[i].free_ns));
    cJSON_AddItemToArray(list, e);
  }
  return list;
}

cJSON *
cmg__report_timeline(uint64_t now_ns, const char *const reasons[CMG__REASONS],
                     struct cmg__refs *refs, const char *(*api)(unsigned fn))
{
  struct cmg__timeline *t = malloc(sizeof(*t));
  if (t == NULL)
    return NULL;
  cJSON *o = cJSON_CreateObject();
  cJSON *devices = cJSON_AddArrayToObject(o, "devices");
  for (int d = 0; d < CMG__MAX_DEVICES; d++)
    if (cmg__timeline_get(d, t))
      cJSON_AddItemToArray(devices, device_json(d, t, now_ns));
  free(t);

  struct cmg__timeline_dump dumps[CMG__TIMELINE_DUMPS];
  uint64_t total;
  size_t n = cmg__timeline_dumps(dumps, CMG__TIMELINE_DUMPS, &total);
  cJSON *list = cJSON_AddArrayToObject(o, "dumps");
  for (size_t i = 0; i < n; i++) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "time", seconds(dumps[i].time_ns));
    cJSON_AddStringToObject(
        e, "reason",
        reasons[dumps[i].reason < CMG__REASONS ? dumps[i].reason : 0]);
    cJSON_AddItemToArray(list, e);
  }
  cJSON_AddNumberToObject(o, "dumps_total", (double)total);
  cJSON_AddItemToObject(o, "freed", freed_json(refs, api));
  return o;
}
