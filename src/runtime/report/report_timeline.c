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

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/base.h"
#include "core/jsonw.h"
#include "runtime/ledger/freed_largest.h"
#include "runtime/limits/policy.h"
#include "runtime/report/report_devices.h"
#include "runtime/report/report_refs.h"
#include "runtime/report/report_timeline.h"
#include "runtime/ledger/timeline.h"

static double
seconds(uint64_t ns)
{
  return (double)(ns / 1000) / 1e6;
}

static void
point(struct cmg__jsonw *w, uint64_t time_ns, uint64_t live, uint64_t min,
      uint64_t max)
{
  cmg__jsonw_array(w);
  cmg__jsonw_number(w, seconds(time_ns));
  cmg__jsonw_number(w, (double)live);
  cmg__jsonw_number(w, (double)min);
  cmg__jsonw_number(w, (double)max);
  cmg__jsonw_array_end(w);
}

static void
device(struct cmg__jsonw *w, int d, const struct cmg__timeline *t,
       uint64_t now_ns)
{
  cmg__jsonw_object(w);
  cmg__report_device(cmg__jsonw_key(w, "device"), d);
  cmg__jsonw_number(cmg__jsonw_key(w, "resolution"), seconds(t->resolution_ns));
  cmg__jsonw_number(cmg__jsonw_key(w, "peak_bytes"), (double)t->peak_bytes);
  cmg__jsonw_number(cmg__jsonw_key(w, "peak_time"), seconds(t->peak_time_ns));
  cmg__jsonw_array(cmg__jsonw_key(w, "points"));
  for (size_t i = 0; i < t->n; i++) {
    const struct cmg__timeline_point *p = &t->points[i];
    point(w, p->time_ns, p->live, p->min, p->max);
  }
  uint64_t last = t->points[t->n - 1].time_ns;
  uint64_t live = cmg__policy_used(d);
  point(w, now_ns > last ? now_ns : last, live, live, live);
  cmg__jsonw_array_end(w);
  cmg__jsonw_object_end(w);
}

static void
freed(struct cmg__jsonw *w, struct cmg__refs *refs,
      const char *(*api)(unsigned fn))
{
  struct cmg__freed f[CMG__FREED_KEEP];
  size_t n = cmg__freed_get(f, CMG__FREED_KEEP);
  cmg__jsonw_array(cmg__jsonw_key(w, "freed"));
  for (size_t i = 0; i < n; i++) {
    cmg__jsonw_object(w);
    cmg__jsonw_hex(cmg__jsonw_key(w, "address"), f[i].a.addr);
    cmg__jsonw_number(cmg__jsonw_key(w, "bytes"), (double)f[i].a.size);
    cmg__report_device(cmg__jsonw_key(w, "device"), f[i].a.device);
    cmg__jsonw_string(cmg__jsonw_key(w, "api"), api(f[i].a.fn));
    cmg__refs_stack(cmg__jsonw_key(w, "stack"), refs, f[i].a.stack);
    cmg__jsonw_number(cmg__jsonw_key(w, "thread"), f[i].a.thread);
    cmg__jsonw_number(cmg__jsonw_key(w, "time"), seconds(f[i].a.time_ns));
    cmg__jsonw_number(cmg__jsonw_key(w, "free_time"), seconds(f[i].free_ns));
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
}

static void
dumps(struct cmg__jsonw *w, const char *const reasons[CMG__REASONS])
{
  struct cmg__timeline_dump d[CMG__TIMELINE_DUMPS];
  uint64_t total;
  size_t n = cmg__timeline_dumps(d, CMG__TIMELINE_DUMPS, &total);
  cmg__jsonw_array(cmg__jsonw_key(w, "dumps"));
  for (size_t i = 0; i < n; i++) {
    cmg__jsonw_object(w);
    cmg__jsonw_number(cmg__jsonw_key(w, "time"), seconds(d[i].time_ns));
    cmg__jsonw_string(cmg__jsonw_key(w, "reason"),
                      reasons[d[i].reason < CMG__REASONS ? d[i].reason : 0]);
    cmg__jsonw_object_end(w);
  }
  cmg__jsonw_array_end(w);
  cmg__jsonw_number(cmg__jsonw_key(w, "dumps_total"), (double)total);
}

void
cmg__report_timeline(struct cmg__jsonw *w, uint64_t now_ns,
                     const char *const reasons[CMG__REASONS],
                     struct cmg__refs *refs, const char *(*api)(unsigned fn))
{
  struct cmg__timeline *t = malloc(sizeof(*t));
  if (t == NULL) {
    cmg__jsonw_fail(w, -ENOMEM);
    return;
  }
  cmg__jsonw_object(w);
  cmg__jsonw_array(cmg__jsonw_key(w, "devices"));
  for (int d = 0; d < CMG__MAX_DEVICES; d++)
    if (cmg__timeline_get(d, t))
      device(w, d, t, now_ns);
  cmg__jsonw_array_end(w);
  free(t);
  dumps(w, reasons);
  freed(w, refs, api);
  cmg__jsonw_object_end(w);
}
