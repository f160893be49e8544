/*
 * What snapshot=TIME costs a running program: interposed alloc+free pairs
 * for two snapshot periods over 10^5 live allocations, in one process
 * without snapshots and in one with snapshot=10s (work.c's hold child),
 * each run's mean ns per pair over its whole length, so the snapshots'
 * cost is averaged in as a program meets it, and its slowest block, a
 * stall while a snapshot is written.  The smoke run keeps the shape with
 * tiny counts and a 1 s period.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmgbench.h"

#define TARGET_PERCENT 1.0

static const struct cmgb_snapshot_plan full = { 100000, "20", "10s" };
static const struct cmgb_snapshot_plan smoke = { 1000, "1.5", "1s" };

const struct cmgb_snapshot_plan *
cmgb_snapshot_plan(void)
{
  return strcmp(cmgb_plan->mode, "smoke") == 0 ? &smoke : &full;
}

static double
added_percent(void)
{
  double off = cmgb_get("snapshot.off.pair_ns");
  return (cmgb_get("snapshot.on.pair_ns") - off) / off * 100;
}

void
cmgb_snapshot_require(void)
{
  static const char *const keys[] = { "snapshot.off.pair_ns",
                                      "snapshot.on.pair_ns",
                                      "snapshot.off.worst_block_ns",
                                      "snapshot.on.worst_block_ns" };
  for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
    if (isnan(cmgb_get("%s", keys[i]))) {
      fprintf(stderr, "cmgbench: no figure %s\n", keys[i]);
      cmgb_broken = 1;
    }
}

void
cmgb_print_snapshot(void)
{
  const struct cmgb_snapshot_plan *p = cmgb_snapshot_plan();
  double added = added_percent();
  printf("\nSnapshots: interposed alloc+free pairs for %s s over %ld live "
         "allocations\n(32 frames), without snapshots and with "
         "snapshot=%s, one process each\n",
         p->seconds, p->live, p->every);
  printf("   %-34s %10s %10s %9s\n", "", "without", "snapshots", "added");
  printf("   %-34s %10.0f %10.0f %+8.2f%%  <= %.0f%% %s\n",
         "ns per pair, mean over the run", cmgb_get("snapshot.off.pair_ns"),
         cmgb_get("snapshot.on.pair_ns"), added, TARGET_PERCENT,
         isnan(added)              ? "n/a"
         : added <= TARGET_PERCENT ? "PASS"
                                   : "MISS");
  printf("   %-34s %10.0f %10.0f\n", "ns per pair, slowest block",
         cmgb_get("snapshot.off.worst_block_ns"),
         cmgb_get("snapshot.on.worst_block_ns"));
}

static void
number(FILE *f, const char *name, double v)
{
  fprintf(f, "\"%s\": ", name);
  if (isnan(v))
    fputs("null", f);
  else
    fprintf(f, "%.2f", v);
}

void
cmgb_snapshot_json(FILE *f)
{
  const struct cmgb_snapshot_plan *p = cmgb_snapshot_plan();
  fprintf(f,
          ",\n  \"snapshot\": {\"live\": %ld, \"seconds\": %s, "
          "\"every\": \"%s\", ",
          p->live, p->seconds, p->every);
  number(f, "pair_ns_without", cmgb_get("snapshot.off.pair_ns"));
  fputs(", ", f);
  number(f, "pair_ns_with", cmgb_get("snapshot.on.pair_ns"));
  fputs(", ", f);
  number(f, "added_percent", added_percent());
  fputs(", ", f);
  number(f, "worst_block_ns_without", cmgb_get("snapshot.off.worst_block_ns"));
  fputs(", ", f);
  number(f, "worst_block_ns_with", cmgb_get("snapshot.on.worst_block_ns"));
  fprintf(f, ", \"target_added_percent\": %.0f}", TARGET_PERCENT);
}
