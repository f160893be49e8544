/*
 * The report's "timeline" member (docs/report-format.md): for each device
 * that has a series, its points as [time, live, min, max] arrays, which
 * keep a long series to a fraction of the size of objects, closed by a
 * point at the moment of the report so a reader can draw up to it; then
 * the report writes, oldest first.  Runs where report.c runs: it may
 * malloc and take the timeline's locks one at a time.
 */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/base.h"
#include "core/policy.h"
#include "core/report_timeline.h"
#include "core/timeline.h"

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
  cJSON_AddNumberToObject(o, "device", device);
  cJSON_AddNumberToObject(o, "resolution", seconds(t->resolution_ns));
  cJSON_AddNumberToObject(o, "peak_bytes", (double)t->peak_bytes);
  cJSON_AddNumberToObject(o, "peak_time", seconds(t->peak_time_ns));
  cJSON *points = cJSON_AddArrayToObject(o, "points");
  for (size_t i = 0; i < t->n; i++) {
    const struct cmg__timeline_point *p = &t->points[i];
    cJSON_AddItemToArray(points, point_json(p->time_ns, p->live, p->min,
                                            p->max));
  }
  uint64_t last = t->points[t->n - 1].time_ns;
  uint64_t live = cmg__policy_used(device);
  cJSON_AddItemToArray(points, point_json(now_ns > last ? now_ns : last, live,
                                          live, live));
  return o;
}

cJSON *
cmg__report_timeline(uint64_t now_ns, const char *const reasons[4])
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
    cJSON_AddStringToObject(e, "reason",
                            reasons[dumps[i].reason < 4 ? dumps[i].reason
                                                        : 0]);
    cJSON_AddItemToArray(list, e);
  }
  cJSON_AddNumberToObject(o, "dumps_total", (double)total);
  return o;
}
