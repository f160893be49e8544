/*
 * The script interpreter shared by the simulated-CUDA test programs.
 *
 * app.c parses argv into a script and runs it; each app_<path>.c supplies
 * one backend, a table of operations that reach CUDA by one path (the
 * driver by name, dlsym, cuGetProcAddress, the runtime).  Every operation
 * returns the API's own status code (CUresult, or cudaError_t for the
 * runtime backends), which is what the script prints as rc=.
 */
#ifndef CMGSIM_APP_H
#define CMGSIM_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct app_backend {
  const char *name;
  /* Called once, before the first CUDA operation of the process: driver
   * backends resolve their entry points, call cuInit and bind `dev`.  NULL
   * for the runtime, which initialises itself on its first call. */
  int (*start)(int dev);
  /* Makes the calling thread use `dev`: driver backends make the device's
   * primary context current, runtime backends call cudaSetDevice.  Also
   * run first by every thread of a `threads` operation. */
  int (*set_device)(int dev);
  int (*alloc)(uint64_t *ptr, size_t size);
  int (*alloc_pitch)(uint64_t *ptr, size_t *pitch, size_t width,
                     size_t height, unsigned int elem);
  int (*alloc_managed)(uint64_t *ptr, size_t size);
  int (*alloc_async)(uint64_t *ptr, size_t size, bool ptsz);
  int (*free)(uint64_t ptr);
  int (*free_async)(uint64_t ptr, bool ptsz);
  int (*meminfo)(size_t *free, size_t *total);
  int (*totalmem)(int dev, size_t *bytes);
  /* Resets `dev`'s primary context, which frees everything allocated in
   * it: cuDevicePrimaryCtxReset, or cudaDeviceReset on the current device. */
  int (*reset)(int dev);
  /* Optional (NULL if the path has none): a cuGetProcAddress-style lookup
   * through this backend's path; *status is a CUdriverProcAddressQueryResult. */
  int (*getproc)(const char *symbol, int version, unsigned long long flags,
                 void **fn, int *status);
};

/* Runs the script in argv[1..] with backend `b`; returns the exit code. */
int app_main(const struct app_backend *b, int argc, char **argv);

/*
 * Known allocation sites, exported (the programs are linked -rdynamic) so
 * that a report's stacks name them.  Each allocates size bytes with the
 * backend's plain alloc through cmgtest_alloc_leaf and returns its status:
 * the `site N` operation calls cmgtest_site_N, and `deep D` calls
 * cmgtest_deep(D), which is D frames of cmgtest_deep above the leaf.
 */
int cmgtest_alloc_leaf(uint64_t *ptr, size_t size);
int cmgtest_site_1(uint64_t *ptr, size_t size);
int cmgtest_site_2(uint64_t *ptr, size_t size);
int cmgtest_site_3(uint64_t *ptr, size_t size);
int cmgtest_deep(int depth, uint64_t *ptr, size_t size);

#endif /* CMGSIM_APP_H */
