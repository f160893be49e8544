/*
 * HAMi's variables, for a cluster that mounts this library in place of
 * HAMi-core's (hami.c).
 */
#ifndef CMG_PRELOAD_HAMI_H
#define CMG_PRELOAD_HAMI_H

#include <stddef.h>

/* The options HAMi's variables ask for, written into out (len bytes):
 * 1 when there are some, 0 when there are none (or CUDA_DISABLE_CONTROL
 * turns them off), -ENAMETOOLONG when they do not fit.  Read only where
 * CUMEMGUARD_OPTIONS is absent. */
int cmg__hami_options(char *out, size_t len);

#endif /* CMG_PRELOAD_HAMI_H */
