/*
 * Shared by the two graph files of the simulated driver: graphs.c
 * (graphs, their nodes and the addresses of graph allocations) and
 * graphexec.c (executable graphs and each device's graph memory pool).
 * Everything here is under sim_obj_lock.
 */
#ifndef CMGSIM_GRAPHS_H
#define CMGSIM_GRAPHS_H

#include "libcuda.h"

/* The allocation of one allocation node: its address, fixed when the node
 * is made and the same at every launch, and whether a launch made it live
 * (it escaped its graph, and nothing has freed it yet).  Kept while a
 * node or an executable names it, or while it is live. */
struct galloc {
  uint64_t addr;
  uint64_t bytes;
  uint64_t span;
  struct sim_device *dev;
  int refs;
  bool live;
};

/* MEM_ALLOC, MEM_FREE or EMPTY.  Nodes keep the order they were added in;
 * dependencies are checked, not kept. */
struct CUgraphNode_st {
  uint32_t magic;
  CUgraphNodeType type;
  struct galloc *alloc; /* what it allocates or frees */
  bool freed_here;      /* an allocation that a free node of its graph frees */
  CUmemPoolProps props; /* an allocation node's parameters, as given */
  CUmemAccessDesc *access;
  size_t naccess;
  struct CUgraphNode_st *next;
};

struct CUgraph_st {
  uint32_t magic;
  bool capturing; /* a stream's capture graph, the capture not ended */
  size_t nnodes;
  struct CUgraphNode_st *first;
  struct CUgraphNode_st *last;
  CUgraphExec exec; /* the one executable of a graph with memory nodes */
  struct CUgraph_st *next;
};

/* An executable graph: a copy of what its graph's memory nodes do. */
struct exec_alloc {
  struct galloc *alloc;
  bool escapes; /* no free node of the graph frees it */
};

struct CUgraphExec_st {
  uint32_t magic;
  CUgraph graph; /* while the graph lives, if it has memory nodes */
  cuuint64_t flags;
  size_t nallocs;
  struct exec_alloc *allocs;
  size_t nfrees;
  struct galloc **frees; /* free nodes of other graphs' allocations */
  struct CUgraphExec_st *next;
};

/* Whether `g` is a live graph. */
SIM_HIDDEN bool sim_graph_is(CUgraph g);

/* The graph allocation at `addr`, or NULL. */
SIM_HIDDEN struct galloc *sim_galloc_find(uint64_t addr);

/* Gives the address of `a` back once nothing holds it (no reference, not
 * live); sim_galloc_unref drops a reference first. */
SIM_HIDDEN void sim_galloc_put(struct galloc *a);
SIM_HIDDEN void sim_galloc_unref(struct galloc *a);

/* The addresses of every graph allocation on `d`, in a new malloc'd array;
 * the count, or -ENOMEM. */
SIM_HIDDEN long sim_gallocs_on(const struct sim_device *d, uint64_t **out);

#endif /* CMGSIM_GRAPHS_H */
