/*
 * A report's devices[], read as read.c reads the rest: every member
 * checked, the first problem one line naming it.  Each device's
 * graph_memory and footprint are optional (null, or absent from reports
 * written before them); where one is given it must be whole, with values
 * that agree with each other, or the lines the summary makes of it would
 * be guesses.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reader/load/fields.h"
#include "reader/load/model.h"
#include "reader/load/read_devices.h"

/*
 * devices[i].graph_memory: null for a device whose graph memory pool was
 * never used, absent from reports written before it; an object must hold
 * every count and a source this reader knows, or the counts it shows would
 * be guesses.
 */
static int
read_graph(struct cmg__fields_reader *rd, const cJSON *dev, const char *at,
           struct cmg__model_graphmem *g)
{
  static const char *const names[] = {
    "reserved_bytes", "reserved_high_bytes",
    "used_bytes",     "used_high_bytes",
    "launches",       "uploads",
    "trims",          "denied",
  };
  uint64_t *const counts[] = {
    &g->reserved_bytes, &g->reserved_high_bytes,
    &g->used_bytes,     &g->used_high_bytes,
    &g->launches,       &g->uploads,
    &g->trims,          &g->denied,
  };
  const cJSON *o, *src;
  char where[96];

  CHECK(cmg__fields_optional_object(rd, dev, at, "graph_memory", &o));
  if (o == NULL)
    return 0;
  snprintf(where, sizeof(where), "%s.graph_memory", at);
  for (size_t k = 0; k < sizeof(names) / sizeof(*names); k++)
    CHECK(cmg__fields_count(rd, o, where, names[k], NULL, counts[k]));
  CHECK(cmg__fields_member(rd, o, where, "source", &src));
  const char *name = cJSON_IsString(src) ? src->valuestring : NULL;
  if (name == NULL ||
      (strcmp(name, "driver") != 0 && strcmp(name, "estimate") != 0))
    return cmg__fields_wrong(rd, where, "source", "\"driver\" or \"estimate\"",
                             src);
  g->estimate = strcmp(name, "estimate") == 0;
  g->present = true;
  return 0;
}

/* footprint.source: "nvml" or "driver" exactly where context_bytes says
 * what the contexts took, null where it does not. */
static int
read_source(struct cmg__fields_reader *rd, const cJSON *o, const char *where,
            struct cmg__model_footprint *fp)
{
  const cJSON *src;

  CHECK(cmg__fields_member(rd, o, where, "source", &src));
  const char *name = cJSON_IsString(src) ? src->valuestring : NULL;
  if (name != NULL && strcmp(name, "nvml") == 0)
    fp->source = CMG__MODEL_FP_NVML;
  else if (name != NULL && strcmp(name, "driver") == 0)
    fp->source = CMG__MODEL_FP_DRIVER;
  else if (!cJSON_IsNull(src))
    return cmg__fields_wrong(rd, where, "source",
                             "\"nvml\", \"driver\" or null", src);
  if (fp->has_context_bytes && fp->source == CMG__MODEL_FP_NONE)
    return cmg__fields_wrong(rd, where, "source",
                             "\"nvml\" or \"driver\" where context_bytes is "
                             "a number",
                             src);
  if (!fp->has_context_bytes && fp->source != CMG__MODEL_FP_NONE)
    return cmg__fields_wrong(rd, where, "source",
                             "null where context_bytes is null", src);
  return 0;
}

/* footprint.cross_check: null, or the contexts, from 1 to all of them,
 * that both NVML and the driver measured, which makes them NVML's. */
static int
read_cross_check(struct cmg__fields_reader *rd, const cJSON *fo,
                 const char *where, struct cmg__model_footprint *fp)
{
  const cJSON *o;
  char at[112];

  CHECK(cmg__fields_optional_object(rd, fo, where, "cross_check", &o));
  if (o == NULL)
    return 0;
  snprintf(at, sizeof(at), "%s.cross_check", where);
  CHECK(cmg__fields_count(rd, o, at, "contexts", NULL, &fp->checked));
  CHECK(cmg__fields_count(rd, o, at, "nvml_bytes", NULL, &fp->checked_nvml));
  CHECK(
      cmg__fields_count(rd, o, at, "driver_bytes", NULL, &fp->checked_driver));
  if (fp->checked == 0 || fp->checked > fp->contexts)
    return cmg__fields_fail(rd,
                            "%s.contexts: expected 1 to footprint.contexts "
                            "(%" PRIu64 "), got %" PRIu64,
                            at, fp->contexts, fp->checked);
  if (fp->source != CMG__MODEL_FP_NVML)
    return cmg__fields_wrong(rd, where, "cross_check",
                             "null where source is not \"nvml\"", o);
  if (fp->checked_nvml > fp->context_bytes)
    return cmg__fields_fail(rd,
                            "%s.nvml_bytes: expected at most "
                            "footprint.context_bytes (%" PRIu64
                            "), got %" PRIu64,
                            at, fp->context_bytes, fp->checked_nvml);
  return 0;
}

/*
 * devices[i].footprint: null for a device none of whose contexts the
 * library saw made, absent from reports written before it.  The summary
 * adds allocated_bytes, context_bytes and unexplained_bytes up to
 * process_bytes, so an unexplained_bytes without the two it is the rest
 * of is refused.
 */
static int
read_footprint(struct cmg__fields_reader *rd, const cJSON *dev, const char *at,
               struct cmg__model_footprint *fp)
{
  const cJSON *o, *b;
  char where[96];

  CHECK(cmg__fields_optional_object(rd, dev, at, "footprint", &o));
  if (o == NULL)
    return 0;
  snprintf(where, sizeof(where), "%s.footprint", at);
  CHECK(cmg__fields_count(rd, o, where, "contexts", NULL, &fp->contexts));
  CHECK(cmg__fields_count(rd, o, where, "context_bytes", &fp->has_context_bytes,
                          &fp->context_bytes));
  CHECK(read_source(rd, o, where, fp));
  CHECK(cmg__fields_string(rd, o, where, "why", true, &fp->why));
  CHECK(cmg__fields_count(rd, o, where, "allocated_bytes", NULL,
                          &fp->allocated_bytes));
  CHECK(cmg__fields_count(rd, o, where, "process_bytes", &fp->has_process_bytes,
                          &fp->process_bytes));
  CHECK(cmg__fields_count(rd, o, where, "unexplained_bytes",
                          &fp->has_unexplained_bytes, &fp->unexplained_bytes));
  if (fp->has_unexplained_bytes &&
      (!fp->has_process_bytes || !fp->has_context_bytes))
    return cmg__fields_wrong(
        rd, where, "unexplained_bytes",
        "null where process_bytes or context_bytes is null",
        cJSON_GetObjectItemCaseSensitive(o, "unexplained_bytes"));
  CHECK(cmg__fields_member(rd, o, where, "counted", &b));
  if (!cJSON_IsBool(b))
    return cmg__fields_wrong(rd, where, "counted", "true or false", b);
  fp->counted = cJSON_IsTrue(b);
  CHECK(read_cross_check(rd, o, where, fp));
  fp->present = true;
  return 0;
}

int
cmg__read_devices(struct cmg__fields_reader *rd, const cJSON *root,
                  struct cmg__model_report *r)
{
  const cJSON *arr, *it;
  char at[64];
  size_t i = 0;

  CHECK(cmg__fields_array(rd, root, "", "devices", &arr, &r->n_devices));
  r->devices = cmg__fields_table(r->n_devices, sizeof(*r->devices));
  if (r->devices == NULL)
    return -ENOMEM;
  cJSON_ArrayForEach(it, arr)
  {
    struct cmg__model_device *d = &r->devices[i];

    CHECK(cmg__fields_element(rd, it, "devices", i, at, sizeof(at)));
    CHECK(cmg__fields_device(rd, it, at, "ordinal", false, &d->ordinal));
    for (size_t k = 0; k < i; k++) {
      if (r->devices[k].ordinal == d->ordinal)
        return cmg__fields_fail(rd, "%s.ordinal: device %d is listed twice", at,
                                d->ordinal);
    }
    i++;
    CHECK(cmg__fields_string(rd, it, at, "name", false, &d->name));
    CHECK(cmg__fields_string(rd, it, at, "uuid", false, &d->uuid));
    CHECK(cmg__fields_count(rd, it, at, "physical_bytes", NULL,
                            &d->physical_bytes));
    CHECK(cmg__fields_count(rd, it, at, "limit_bytes", &d->has_limit,
                            &d->limit_bytes));
    CHECK(cmg__fields_count(rd, it, at, "live_bytes", NULL, &d->live_bytes));
    CHECK(cmg__fields_count(rd, it, at, "peak_bytes", NULL, &d->peak_bytes));
    CHECK(cmg__fields_count(rd, it, at, "allocations", NULL, &d->allocations));
    CHECK(cmg__fields_count(rd, it, at, "frees", NULL, &d->frees));
    CHECK(cmg__fields_count(rd, it, at, "denied", NULL, &d->denied));
    CHECK(read_graph(rd, it, at, &d->graph));
    CHECK(read_footprint(rd, it, at, &d->footprint));
  }
  return 0;
}
