/*
 * Page-locked host memory (cudaMallocHost, cudaHostAlloc and their driver
 * calls).  It is recorded, so a report shows it, and counted on the host
 * slot, never against a device's limit; host_limit=SIZE caps it.
 */
#include "config.h"

#include "core/base.h"
#include "runtime/ledger/ledger.h"
#include "preload/hooks/hooks.h"

CMG__ALLOC_HOOK(cuMemAllocHost_v2, (void **pp, size_t bytesize), CMG__KIND_HOST,
                CMG__HOST, bytesize, (pp, bytesize), (uintptr_t)*pp)
CMG__ALLOC_HOOK(cuMemHostAlloc,
                (void **pp, size_t bytesize, unsigned int Flags),
                CMG__KIND_HOST, CMG__HOST, bytesize, (pp, bytesize, Flags),
                (uintptr_t)*pp)
CMG__FREE_HOOK(cuMemFreeHost, (void *p), CMG__KIND_HOST, (uintptr_t)p, (p))
