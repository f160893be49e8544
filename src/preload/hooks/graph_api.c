/*
 * CUDA graphs (preload/graph.c does the counting).  Graphs are built,
 * cloned and captured in many ways (memory nodes, the generic cuGraphAddNode,
 * stream capture); all of them end in an instantiation, where the graph's
 * memory nodes are read, so the builders are not wrapped.  The CUDA 10
 * cuGraphInstantiate forms without flags are not wrapped either: their
 * executables reserve nothing before a launch and are counted from the
 * driver's figures after it.
 */
#include "config.h"

#include "preload/graph.h"
#include "preload/hooks/hooks.h"

#define CAPTURE_HOOK(elf, params, args)                                        \
  CUresult CUDAAPI elf params                                                  \
  {                                                                            \
    CMG__REAL_OR_FAIL(real, elf)                                               \
    cmg__graph_capture_began();                                                \
    return real args;                                                          \
  }

CAPTURE_HOOK(cuStreamBeginCapture_v2,
             (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode))
CAPTURE_HOOK(cuStreamBeginCapture_v2_ptsz,
             (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode))
CAPTURE_HOOK(cuStreamBeginCaptureToGraph,
             (CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
              const CUgraphEdgeData *dependencyData, size_t numDependencies,
              CUstreamCaptureMode mode),
             (hStream, hGraph, dependencies, dependencyData, numDependencies,
              mode))
CAPTURE_HOOK(cuStreamBeginCaptureToGraph_ptsz,
             (CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
              const CUgraphEdgeData *dependencyData, size_t numDependencies,
              CUstreamCaptureMode mode),
             (hStream, hGraph, dependencies, dependencyData, numDependencies,
              mode))

CUresult CUDAAPI
cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                            unsigned long long flags)
{
  CMG__REAL_OR_FAIL(real, cuGraphInstantiateWithFlags)
  CUresult rc = real(phGraphExec, hGraph, flags);
  cmg__graph_instantiated(rc, phGraphExec, hGraph, flags);
  return rc;
}

#define PARAMS_HOOK(elf)                                                       \
  CUresult CUDAAPI elf(CUgraphExec *phGraphExec, CUgraph hGraph,               \
                       CUDA_GRAPH_INSTANTIATE_PARAMS *params)                  \
  {                                                                            \
    CMG__REAL_OR_FAIL(real, elf)                                               \
    CUresult rc = real(phGraphExec, hGraph, params);                           \
    cmg__graph_instantiated(rc, phGraphExec, hGraph,                           \
                            params != NULL ? params->flags : 0);               \
    return rc;                                                                 \
  }

PARAMS_HOOK(cuGraphInstantiateWithParams)
PARAMS_HOOK(cuGraphInstantiateWithParams_ptsz)

#define RUN_HOOK(elf, launch)                                                  \
  CUresult CUDAAPI elf(CUgraphExec hGraphExec, CUstream hStream)               \
  {                                                                            \
    CMG__REAL_OR_FAIL(real, elf)                                               \
    struct cmg__graph_run r;                                                   \
    CUresult rc = cmg__graph_run_begin(&r, CMG__FN_##elf, hGraphExec, launch); \
    if (rc != CUDA_SUCCESS)                                                    \
      return rc;                                                               \
    return cmg__graph_run_end(&r, real(hGraphExec, hStream));                  \
  }

RUN_HOOK(cuGraphUpload, false)
RUN_HOOK(cuGraphUpload_ptsz, false)
RUN_HOOK(cuGraphLaunch, true)
RUN_HOOK(cuGraphLaunch_ptsz, true)

CUresult CUDAAPI
cuGraphExecDestroy(CUgraphExec hGraphExec)
{
  CMG__REAL_OR_FAIL(real, cuGraphExecDestroy)
  CUresult rc = real(hGraphExec);
  cmg__graph_exec_destroyed(rc, hGraphExec);
  return rc;
}

CUresult CUDAAPI
cuDeviceGraphMemTrim(CUdevice device)
{
  CMG__REAL_OR_FAIL(real, cuDeviceGraphMemTrim)
  CUresult rc = real(device);
  cmg__graph_trimmed(rc, device);
  return rc;
}
