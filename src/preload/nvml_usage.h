/*
 * What NVML says the process holds on a device, and the card's list of
 * processes (nvml_usage.c).
 */
#ifndef CMG_PRELOAD_NVML_USAGE_H
#define CMG_PRELOAD_NVML_USAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CMG__NVML_LISTED 64

/* NVML's list of a device's processes, by the pids NVML gives them. */
struct cmg__nvml_listing {
  unsigned n; /* how many it lists; the first CMG__NVML_LISTED kept */
  unsigned pid[CMG__NVML_LISTED];
  uint64_t bytes[CMG__NVML_LISTED];
};

/* What the process holds on CUDA device `device` as NVML sees it: 0 with
 * *bytes, 1 when NVML does not list it, -1 with a reason in r; NVML's list
 * in *l. */
int cmg__nvml_usage(int device, struct cmg__nvml_listing *l, uint64_t *bytes,
                    char *r, size_t len);

/* NVML's used memory of the card behind CUDA device `device`. */
bool cmg__nvml_card_used(int device, uint64_t *used);

/* The pid NVML lists the process under on `device` (a PID namespace). */
void cmg__nvml_usage_alias(int device, unsigned pid);

/* Forgets the aliases (a forked child is another process). */
void cmg__nvml_usage_forget(void);

/* Before a report: reads what NVML says the process holds on each device
 * where it made a context. */
void cmg__nvml_usage_refresh(void);

/* At exit, before the driver ends the contexts (NVML then no longer lists
 * the process): the last refresh, kept for the exit report. */
void cmg__nvml_usage_final(void);

#endif /* CMG_PRELOAD_NVML_USAGE_H */
