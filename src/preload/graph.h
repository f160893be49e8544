/*
 * CUDA graph memory (graph.c).  A graph's memory nodes take memory from
 * the device's graph memory pool when the graph is uploaded or launched,
 * never when it is built or captured.  The pool's growth is counted as
 * ledger entries of kind graph, reserved against the limits before the
 * upload or launch that needs it, and set right after each call from the
 * driver's own count (cuDeviceGetGraphMemAttribute), or from this module's
 * estimate where the driver cannot be asked.
 */
#ifndef CMG_PRELOAD_GRAPH_H
#define CMG_PRELOAD_GRAPH_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

#include "preload/account.h"

/* A capture is beginning somewhere in the process: from now on,
 * stream-ordered allocations ask whether their stream is capturing.  Said
 * before the real call, so that no allocation on the stream can miss it. */
void cmg__graph_capture_began(void);

/* Whether `stream` is capturing, so that a stream-ordered allocation or
 * free on it only adds a node to the graph.  `ptsz`: the caller is a
 * per-thread-default-stream variant, whose NULL is the thread's stream. */
bool cmg__graph_capturing(CUstream stream, bool ptsz);

/* After an instantiation: learns the memory nodes of `graph` for `exec`. */
void cmg__graph_instantiated(CUresult rc, const CUgraphExec *exec,
                             CUgraph graph, unsigned long long flags);

struct cmg__graph_run {
  struct cmg__call c;
  CUgraphExec exec;
  int device;
  enum cmg__fn fn;
  bool launch;
  bool active; /* holds the lock */
  bool began;  /* c began a reservation for the pool's growth */
};

/* Before an upload (launch false) or launch of `exec`: reserves what the
 * device's graph memory pool must grow by.  CUDA_SUCCESS, or
 * CUDA_ERROR_OUT_OF_MEMORY after a denial.  Holds the module's lock until
 * cmg__graph_run_end, which every successful begin is paired with.  An
 * executable instantiated where the library did not see it reserves
 * nothing before its call; the driver's count after it still counts. */
CUresult cmg__graph_run_begin(struct cmg__graph_run *r, enum cmg__fn fn,
                              CUgraphExec exec, bool launch);
CUresult cmg__graph_run_end(struct cmg__graph_run *r, CUresult rc);

void cmg__graph_exec_destroyed(CUresult rc, CUgraphExec exec);

/* After cuDeviceGraphMemTrim(device). */
void cmg__graph_trimmed(CUresult rc, CUdevice device);

/* After a successful free of `addr` that the ledger did not hold: true if
 * it was a graph allocation (its memory stays in the pool). */
bool cmg__graph_freed(uint64_t addr);

/* After a context's teardown: the pool entries it took are gone. */
void cmg__graph_context_gone(void);

#endif /* CMG_PRELOAD_GRAPH_H */
