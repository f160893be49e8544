#!/bin/sh
# Every allocation path of docs/coverage.md through the interposer, each
# capped or deliberately not: VMM (device named by its properties, handle
# references), pools (the pool's device; frees after the pool's
# destruction), arrays, page-locked host memory, context teardown (reset,
# destroy, last release; created contexts survive a primary reset), memory
# owned elsewhere, the runtime's labels and entry points, NVML and
# CUDA_VISIBLE_DEVICES.
. "$srcdir/tests/lib/defs.sh"
M=1048576
R=$tmp/r.json
export CMG_SIM_DEVICES=8G,4G

# VMM.
guard "--limit 4M --report $R" app_driver vmm 2M vmm 2M vmm 2M vmm_retain 0 \
  vmm_free 0 cmg 0 vmm_release 0 cmg 0 vmm 2M 1 cmg 1 vmm_host 2M cmg 0
is "$(val 3 rc)" 2 "cuMemCreate is capped"
is "$(count 'denied cuMemCreate of 2.0 MiB' "$tmp/err")" 1 "and says so"
is "$(val 6 live)" $((4 * M)) "a retained handle stays counted after one release"
is "$(val 8 live)/$(val 8 frees)" $((2 * M))/1 "the last release uncounts it"
is "$(val 10 live)/$(val 12 live)" $((2 * M))/$((2 * M)) \
  "cuMemCreate counts on the device its properties name, not the current one"
validate "$R"
is "$(q $R 'sorted((l["kind"], l["device"]) for l in r["leaks"])')" \
  "[('vmm', 0), ('vmm', 1), ('vmm_host', None)]" \
  "a host-located handle is recorded, not counted"
guard "--limit 4M --report $R" app_rt_static vmm 2M vmm 2M vmm 2M
is "$(val 3 rc)" 2 "cuMemCreate reached through the runtime's entry points is capped"

# Pools.
guard "--limit 4M --report $R" app_driver pool_create 1 pool_alloc 0 1M \
  cmg 0 cmg 1 pool_destroy 0 free_async 0 cmg 1 pool_alloc default 5M \
  pool_alloc_ptsz default 1M whatis 2
is "$(val 3 allocs)/$(val 4 live)" 0/$M "an allocation from a pool counts on the pool's device"
is "$(val 7 live)/$(val 7 frees)" 0/1 "its free after the pool's destruction is counted"
is "$(val 8 rc)/$(val 9 rc)" 2/0 "allocations from the default pool are capped"
is "$(val 10 api)" cuMemAllocFromPoolAsync_ptsz "and labeled"
guard "--limit 4M --report $R" app_rt_shared pool_alloc default 1M whatis 0
is "$(val 2 api)" cudaMallocFromPoolAsync "the runtime's pool allocation is labeled"

# Arrays.
guard "--limit 3M --report $R" app_rt_shared array 1024 1024 f32 1 \
  array 512 512 f32 1 mipmap 64 64 3 cmg 0 array_free 1 mipmap_free 2 cmg 0
is "$(val 1 rc)/$(val 2 rc)" 2/0 "a 4 MiB array is refused under 3 MiB, a 1 MiB one fits"
is "$(val 4 live)" $((M + (64 * 64 + 32 * 32 + 16 * 16) * 4)) \
  "arrays count at width x height x channels x format, mipmaps over levels"
is "$(val 7 live)/$(val 7 frees)" 0/2 "destroying them uncounts them"
is "$(count 'denied cudaMallocArray of 4.0 MiB' "$tmp/err")" 1 "labeled cudaMallocArray"

# Page-locked host memory: never against a device, capped by host_limit.
guard "--limit 1M --host-limit 3M --report $R" app_rt_shared host 2M \
  hostalloc 2M cmg 0 cmg 64 host_free 0 cmg 64
is "$(val 1 rc)/$(val 2 rc)" 0/2 "host memory ignores the device limit, obeys host_limit"
is "$(val 3 live)/$(val 4 live)" 0/$((2 * M)) "counted on the host, not the device"
is "$(val 6 live)/$(val 6 frees)" 0/1 "cudaFreeHost uncounts it"
is "$(count 'denied cudaHostAlloc of 2.0 MiB (2097152 bytes) on host memory' "$tmp/err")" 1 \
  "the denial names host memory"
guard "--report $R" app_rt_shared host 1M
validate "$R"
is "$(q $R '[(l["api"], l["kind"], l["device"]) for l in r["leaks"]]')" \
  "[('cudaMallocHost', 'host', None)]" "reported as host memory"
is "$(q $R '(r["host"]["live_bytes"], r["summary"]["live_bytes"], r["summary"]["host_live_bytes"])')" \
  "($M, 0, $M)" "apart from device memory"

# Context teardown.
guard "--limit 3M --report $R" app_rt_shared alloc 1M alloc 2M reset cmg 0 \
  alloc 3M
is "$(val 4 live)/$(val 4 frees)" 0/0 "cudaDeviceReset releases everything, no frees"
is "$(val 5 rc)" 0 "and the limit has room again"
validate "$R"
is "$(q $R '[(g["api"], g["count"], g["bytes"]) for g in r["released"]]')" \
  "[('cudaMalloc', 2, $((3 * M)))]" "reported as released by teardown"
is "$(q $R '(r["devices"][0]["released"], len(r["leaks"]))')" "(2, 1)" \
  "apart from leaks"
guard "--limit 4M --report $R" app_driver ctx_create alloc 1M ctx_primary \
  alloc 2M reset_v2 cmg 0 ctx_destroy 0 cmg 0
is "$(val 6 live)" $M "a primary reset leaves a created context's memory"
is "$(val 8 live)" 0 "cuCtxDestroy releases it"
guard "--limit 4M --report $R" app_driver alloc 1M retain alloc 1M release \
  cmg 0 release cmg 0
is "$(val 5 live)" $((2 * M)) "a release that leaves a reference ends nothing"
is "$(val 7 live)" 0 "the last release ends the primary context"
guard "--limit 4M --report $R" app_driver alloc 1M release_legacy cmg 0
is "$(val 3 live)" 0 "the 7000 release too"
guard "--limit 4M --report $R" app_driver alloc 1M reset_legacy cmg 0
is "$(val 3 live)" 0 "the 7000 reset too"

# Memory owned elsewhere: recorded, never counted.
guard "--limit 4M --report $R" app_driver alloc 1M ipc_open 0 ext_import 3M \
  cmg 0 alloc 2M
is "$(val 4 live)/$(val 5 rc)" $M/0 "IPC and external memory are not counted"
validate "$R"
is "$(q $R 'sorted((l["api"], l["kind"]) for l in r["leaks"])')" \
  "[('cuImportExternalMemory', 'import'), ('cuIpcOpenMemHandle_v2', 'import'), ('cuMemAlloc_v2', 'device')]" \
  "but labeled in the report"
guard "--report $R" app_driver alloc 1M ipc_open_legacy 0 ipc_close 1 \
  ext_import 1M ext_destroy 2
validate "$R"
is "$(q $R '[l["kind"] for l in r["leaks"]]')" "['device']" "closed imports leave the ledger"

# Entry points from the runtime hand out wrappers.
for v in "cuMemAlloc 3020" "cuMemAlloc 0" "cuMemCreate 10020" "cuMemAllocFromPoolAsync 11020"; do
  # shellcheck disable=SC2086
  guard "" app_rt_shared entry $v
  is "$(val 1 lib)" libcumemguard.so "cudaGetDriverEntryPoint($v) hands out the wrapper"
done
guard "" app_rt_shared entry_ptsz cuMemAllocAsync 11020
is "$(val 1 fn)" cuMemAllocAsync_ptsz "the per-thread variant through the _ptsz entry point"

# NVML sees the limit, matched by UUID across CUDA_VISIBLE_DEVICES.
CUDA_VISIBLE_DEVICES=1 guard "--limit 2G --report $R" app_driver alloc 1M \
  nvml 0 nvml 1 nvml2 1 uuid 0 nvml_uuid 1
is "$(val 2 total)" $((8 * 1024 * M)) "an NVML device the process cannot see is left alone"
is "$(val 3 total)/$(val 3 free)/$(val 3 used)" \
  "$((2048 * M))/$((2047 * M))/$M" "NVML shows the limit of the matching CUDA device"
is "$(val 4 total)/$(val 4 free)" "$((2048 * M))/$((2047 * M))" "nvmlDeviceGetMemoryInfo_v2 too"
validate "$R"
is "$(q $R 'r["devices"][0]["uuid"]')" "$(val 5 uuid)" \
  "the report's device 0 is the visible device's UUID"
CUDA_VISIBLE_DEVICES=1 CUMEMGUARD_OPTIONS="limit=1G,limit.0=3M" guard "" \
  app_driver alloc 3M alloc 1
is "$(val 1 rc)/$(val 2 rc)" 0/2 "limit.N is the process's ordinal under CUDA_VISIBLE_DEVICES"

done_testing
