/*
 * The simulated runtime's streams, stream capture and CUDA graphs with
 * memory nodes.
 *
 * Like the rest of the runtime, each call is a thin layer over a driver
 * entry point cudart.c resolved at boot with the base names and versions
 * cudart 13 asks for ("cuStreamBeginCapture" 10010, "cuGraphLaunch"
 * 10000, "cuGraphInstantiateWithFlags" 11040, ...), never over a driver
 * symbol.  Handles are the driver's (a cudaStream_t is a CUstream, a
 * cudaGraph_t a CUgraph), and the runtime's structures are copied field
 * by field into the driver's.  A driver result becomes the cudaError_t
 * the real runtime returns (rt_from_driver: 900 is
 * cudaErrorStreamCaptureUnsupported, 901 cudaErrorStreamCaptureInvalidated).
 */
#include "cudart.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- streams ---------------------------------------------------------- */

SIM_EXPORT cudaError_t
cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (pStream == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUstream s = NULL;
  CUresult rc = rt_drv.stream_create(&s, flags);
  if (rc == CUDA_SUCCESS)
    *pStream = (cudaStream_t)s;
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaStreamCreate(cudaStream_t *pStream)
{
  return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

SIM_EXPORT cudaError_t
cudaStreamDestroy(cudaStream_t stream)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(rt_drv.stream_destroy((CUstream)stream)));
}

SIM_EXPORT cudaError_t
cudaStreamSynchronize(cudaStream_t stream)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(rt_drv.stream_sync((CUstream)stream)));
}

/* cudaStreamCaptureMode and cudaStreamCaptureStatus have the driver's
 * values. */
SIM_EXPORT cudaError_t
cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(
      rt_drv.capture_begin((CUstream)stream, (CUstreamCaptureMode)mode)));
}

SIM_EXPORT cudaError_t
cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (pGraph == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUgraph g = NULL;
  CUresult rc = rt_drv.capture_end((CUstream)stream, &g);
  if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
    *pGraph = (cudaGraph_t)g;
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaStreamIsCapturing(cudaStream_t stream,
                      enum cudaStreamCaptureStatus *pCaptureStatus)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (pCaptureStatus == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult rc = rt_drv.capture_status((CUstream)stream, &st);
  if (rc == CUDA_SUCCESS)
    *pCaptureStatus = (enum cudaStreamCaptureStatus)st;
  return rt_ret(rt_from_driver(rc));
}

/* ---- graphs ------------------------------------------------------------ */

SIM_EXPORT cudaError_t
cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (pGraph == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUgraph g = NULL;
  CUresult rc = rt_drv.graph_create(&g, flags);
  if (rc == CUDA_SUCCESS)
    *pGraph = (cudaGraph_t)g;
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaGraphDestroy(cudaGraph_t graph)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(rt_drv.graph_destroy((CUgraph)graph)));
}

/* The runtime's parameters, field by field into the driver's (the access
 * descriptors into an array of the driver's type). */
SIM_EXPORT cudaError_t
cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                         const cudaGraphNode_t *pDependencies,
                         size_t numDependencies,
                         struct cudaMemAllocNodeParams *nodeParams)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (pGraphNode == NULL || nodeParams == NULL ||
      (nodeParams->accessDescCount > 0 && nodeParams->accessDescs == NULL))
    return rt_ret(cudaErrorInvalidValue);
  CUDA_MEM_ALLOC_NODE_PARAMS p;
  memset(&p, 0, sizeof(p));
  const struct cudaMemPoolProps *pp = &nodeParams->poolProps;
  p.poolProps.allocType = (CUmemAllocationType)pp->allocType;
  p.poolProps.handleTypes = (CUmemAllocationHandleType)pp->handleTypes;
  p.poolProps.location.type = (CUmemLocationType)pp->location.type;
  p.poolProps.location.id = pp->location.id;
  p.poolProps.maxSize = pp->maxSize;
  p.poolProps.usage = pp->usage;
  CUmemAccessDesc *access = NULL;
  size_t n = nodeParams->accessDescCount;
  if (n > 0 && (access = calloc(n, sizeof(*access))) == NULL)
    return rt_ret(cudaErrorMemoryAllocation);
  for (size_t i = 0; i < n; i++) {
    const struct cudaMemAccessDesc *a = &nodeParams->accessDescs[i];
    access[i].location.type = (CUmemLocationType)a->location.type;
    access[i].location.id = a->location.id;
    access[i].flags = (CUmemAccess_flags)a->flags;
  }
  p.accessDescs = access;
  p.accessDescCount = n;
  p.bytesize = nodeParams->bytesize;
  CUgraphNode node = NULL;
  CUresult rc = rt_drv.graph_add_alloc(&node, (CUgraph)graph,
                                       (const CUgraphNode *)pDependencies,
                                       numDependencies, &p);
  free(access);
  if (rc == CUDA_SUCCESS) {
    nodeParams->dptr = (void *)(uintptr_t)p.dptr;
    *pGraphNode = (cudaGraphNode_t)node;
  }
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaGraphAddMemFreeNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                        const cudaGraphNode_t *pDependencies,
                        size_t numDependencies, void *dptr)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (pGraphNode == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUgraphNode node = NULL;
  CUresult rc = rt_drv.graph_add_free(
      &node, (CUgraph)graph, (const CUgraphNode *)pDependencies,
      numDependencies, (CUdeviceptr)(uintptr_t)dptr);
  if (rc == CUDA_SUCCESS)
    *pGraphNode = (cudaGraphNode_t)node;
  return rt_ret(rt_from_driver(rc));
}

/* ---- executable graphs ------------------------------------------------- */

/* cudaGraphInstantiateFlags have the driver's values. */
static cudaError_t
instantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
            unsigned long long flags)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (pGraphExec == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUgraphExec e = NULL;
  CUresult rc = rt_drv.instantiate(&e, (CUgraph)graph, flags);
  if (rc == CUDA_SUCCESS)
    *pGraphExec = (cudaGraphExec_t)e;
  return rt_ret(rt_from_driver(rc));
}

/* CUDA 12's form, which took the flags of cudaGraphInstantiateWithFlags. */
SIM_EXPORT cudaError_t
cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                     unsigned long long flags)
{
  return instantiate(pGraphExec, graph, flags);
}

SIM_EXPORT cudaError_t
cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                              unsigned long long flags)
{
  return instantiate(pGraphExec, graph, flags);
}

/* cudaGraphInstantiateResult has the driver's values. */
SIM_EXPORT cudaError_t
cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                               cudaGraphInstantiateParams *instantiateParams)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  if (pGraphExec == NULL || instantiateParams == NULL)
    return rt_ret(cudaErrorInvalidValue);
  CUDA_GRAPH_INSTANTIATE_PARAMS p;
  memset(&p, 0, sizeof(p));
  p.flags = instantiateParams->flags;
  p.hUploadStream = (CUstream)instantiateParams->uploadStream;
  CUgraphExec e = NULL;
  CUresult rc = rt_drv.instantiate_params(&e, (CUgraph)graph, &p);
  instantiateParams->errNode_out = (cudaGraphNode_t)p.hErrNode_out;
  instantiateParams->result_out = (cudaGraphInstantiateResult)p.result_out;
  if (rc == CUDA_SUCCESS)
    *pGraphExec = (cudaGraphExec_t)e;
  return rt_ret(rt_from_driver(rc));
}

SIM_EXPORT cudaError_t
cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(
      rt_drv.graph_upload((CUgraphExec)graphExec, (CUstream)stream)));
}

SIM_EXPORT cudaError_t
cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(
      rt_drv.graph_launch((CUgraphExec)graphExec, (CUstream)stream)));
}

SIM_EXPORT cudaError_t
cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(rt_drv.exec_destroy((CUgraphExec)graphExec)));
}

/* ---- the graph memory pool --------------------------------------------- */

SIM_EXPORT cudaError_t
cudaDeviceGraphMemTrim(int device)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(rt_drv.graph_trim(device)));
}

/* cudaGraphMemAttributeType has the driver's values; each is a 64-bit
 * count. */
SIM_EXPORT cudaError_t
cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr,
                               void *value)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(
      rt_drv.graph_mem_get(device, (CUgraphMem_attribute)attr, value)));
}

SIM_EXPORT cudaError_t
cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr,
                               void *value)
{
  cudaError_t err = rt_enter();
  if (err != cudaSuccess)
    return rt_ret(err);
  return rt_ret(rt_from_driver(
      rt_drv.graph_mem_set(device, (CUgraphMem_attribute)attr, value)));
}
