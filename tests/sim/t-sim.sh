#!/bin/sh
# The simulated CUDA itself, without the interposer: every allocation
# family through every program that reaches it, with the driver's exact
# accounting (stats), context teardown, VMM reference counts,
# CUDA_VISIBLE_DEVICES, NVML, entry points, and that a naive preload
# (cuMemCreate and cuGetProcAddress_v2, no dlsym hook) is reached only by
# the program that calls the driver by name.
. "$srcdir/tests/integration/defs.sh"
unset CUDA_VISIBLE_DEVICES CMG_SIM_FAIL_ALLOC_AFTER CMG_SIM_FAIL_FREE_AFTER

MiB=1048576
ALL="app_driver app_dlsym app_getproc app_rt_shared app_rt_static"
DRIVER="app_driver app_dlsym app_getproc"
RUNTIME="app_rt_shared app_rt_static"

# line N: line N of the output.
line() {
  sed -n "${1}p" "$tmp/out"
}

for a in $ALL; do
  # VMM: counted on the device the location names, host memory apart.
  CMG_SIM_DEVICES=1G,1G bare $a vmm 2M vmm 4M 1 stats 0 stats 1 \
    vmm_free 0 vmm_free 1 stats 0 stats 1 vmm_host 2M hoststats stats 0 \
    vmm_free 2 hoststats
  is "$(val 1 rc)/$(val 1 dev)/$(val 2 rc)/$(val 2 dev)" 0/0/0/1 \
    "$a: vmm on the current device and on device 1"
  is "$(val 3 used)/$(val 4 used)" $((2 * MiB))/$((4 * MiB)) \
    "$a: each counts on its own device"
  is "$(line 5)/$(line 6)" "vmm_free i=0 rc=0/vmm_free i=1 rc=0" \
    "$a: vmm_free"
  is "$(val 7 used)/$(val 8 used)/$(val 8 frees)" 0/0/1 \
    "$a: and the memory is back"
  is "$(val 10 used)/$(val 11 used)" $((2 * MiB))/0 \
    "$a: vmm_host is host memory, not the device's"
  is "$(line 13)" "hoststats used=0" "$a: freed with its last reference"

  # VMM reference counts: retain, export and import.
  CMG_SIM_DEVICES=1G bare $a vmm 2M vmm_retain 0 vmm_free 0 stats 0 \
    vmm_release 0 stats 0 vmm 4M vmm_export 1 vmm_import 1 vmm_free 1 \
    stats 0 vmm_free 2 stats 0 vmm_import 1 vmm 3M vmm_release 0
  is "$(val 2 handle)" "$(val 1 handle)" "$a: vmm_retain returns the handle"
  is "$(val 4 used)" $((2 * MiB)) \
    "$a: unmapped and released once, a retained allocation stays"
  is "$(val 6 used)" 0 "$a: the last release frees it"
  tap "$([ "$(val 9 handle)" != "$(val 7 handle)" ] && [ "$(val 9 rc)" = 0 ]; echo $?)" \
    "$a: an import is a new handle"
  is "$(val 11 used)" $((4 * MiB)) \
    "$a: the imported handle keeps the memory, counted once"
  is "$(val 13 used)/$(val 13 frees)" 0/2 "$a: freed with the imported one"
  is "$(val 14 rc)/$(val 15 rc)/$(val 16 rc)" 1/1/1 \
    "$a: import after the free, a size off the 2 MiB granularity, a release too many"

  # Pools: the pool's device, whatever the current one; destroyed pools.
  CMG_SIM_DEVICES=1G,1G bare $a pool_create 1 pool_alloc 0 10M \
    pool_alloc_ptsz default 5M async 1M stats 0 stats 1 pool_stats 0 \
    pool_stats default pool_destroy 0 stats 1 pool_alloc 0 1M \
    free_async 0 stats 1 pool_trim default 0 pool_destroy default \
    free 1 free_async 2 stats 0 device 1 pool_alloc default 3G
  is "$(line 1)" "pool p=0 dev=1 rc=0" "$a: pool_create"
  is "$(val 2 ptr)/$(val 3 ptr)/$(val 4 ptr)" \
    0x800000000000/0x7f0000000000/0x7f0000500000 \
    "$a: pool_alloc from a pool of device 1, the default pool, async"
  is "$(val 5 used)/$(val 6 used)" $((6 * MiB))/$((10 * MiB)) \
    "$a: pool allocations count on the pool's device"
  is "$(line 7)|$(line 8)" \
    "pool_stats p=0 rc=0 reserved=$((10 * MiB)) used=$((10 * MiB))|pool_stats p=default rc=0 reserved=$((6 * MiB)) used=$((6 * MiB))" \
    "$a: pool_stats (async allocates from the default pool)"
  is "$(line 9)/$(val 10 used)/$(val 11 rc)" \
    "pool_destroy p=0 rc=0/$((10 * MiB))/1" \
    "$a: a destroyed pool's allocations stay, and it takes no more"
  is "$(val 13 used)/$(val 13 frees)" 0/1 \
    "$a: freed after the pool is gone"
  is "$(val 14 rc)/$(val 15 rc)/$(val 18 used)" 0/1/0 \
    "$a: pool_trim; the default pool cannot be destroyed; frees"
  is "$(val 20 rc)" 2 "$a: out of memory in a pool"

  # Arrays: width x height x depth x channels x bytes, rounded to 512;
  # mipmaps sum their levels.
  CMG_SIM_DEVICES=1G bare $a array 100 100 array 100 0 u8 4 \
    array3d 64 64 64 f16 2 mipmap 256 256 9 mipmap 256 256 10 \
    array 10 10 f32 3 stats 0 array_free 0 mipmap_free 3 array_free 3 stats 0
  is "$(line 1 | sed 's/ handle=.*//')" \
    "array i=0 width=100 height=100 format=f32 ch=1 rc=0" "$a: array"
  is "$(val 7 used)" $((40448 + 512 + 1048576 + 349696)) \
    "$a: array sizes (2D, 1D, 3D, 9-level mipmap)"
  is "$(val 5 rc)" 1 "$a: more levels than the extent has is invalid"
  is "$(val 9 rc)/$(val 10 rc)/$(val 11 used)" 0/400/1049088 \
    "$a: array_free, mipmap_free, and a mipmap is no array"

  # Page-locked host memory: real, writable, never a device's.
  CMG_SIM_DEVICES=1G bare $a host 1M hostalloc 2M hostalloc 4096 1 \
    hoststats stats 0 host_free 0 host_free 0 hoststats
  is "$(val 1 rc)/$(val 2 rc)/$(val 2 flags)/$(val 3 flags)" 0/0/0/1 \
    "$a: host, hostalloc (the operation writes to the memory)"
  is "$(line 4)/$(val 5 used)" "hoststats used=$((3 * MiB + 4096))/0" \
    "$a: host memory is counted apart"
  is "$(line 6)/$(line 7)/$(line 8)" \
    "host_free i=0 rc=0/host_free i=0 rc=1/hoststats used=$((2 * MiB + 4096))" \
    "$a: host_free, twice"

  # Context teardown frees exactly what the context allocated.
  CMG_SIM_DEVICES=1G,1G bare $a alloc 1M ctx_create alloc 2M async 3M \
    array 64 64 pool_create 1 pool_alloc 0 4M vmm 2M host 1M stats 0 \
    stats 1 ctx_destroy 0 stats 0 stats 1 hoststats alloc 1M ctx_primary \
    alloc 5M retain release release stats 0 alloc 1M retain alloc 1M \
    stats 0 reset_legacy stats 0 reset_v2 release_legacy alloc 1M
  is "$(line 2)" "ctx c=0 rc=0" "$a: ctx_create"
  is "$(val 10 used)/$(val 11 used)" $((8 * MiB + 16384))/$((4 * MiB)) \
    "$a: its allocations count"
  is "$(line 12)/$(val 13 used)/$(val 13 frees)/$(val 14 used)" \
    "ctx_destroy c=0 rc=0/$((3 * MiB))/3/0" \
    "$a: ctx_destroy frees its memory, arrays and pool allocations, not VMM"
  is "$(line 15)/$(val 16 rc)/$(line 17)" \
    "hoststats used=$MiB/201/ctx_primary dev=0 rc=0" \
    "$a: nor host memory; then no context is current"
  is "$(val 22 used)/$(val 23 rc)" $((2 * MiB))/709 \
    "$a: the last release frees the primary context's memory"
  is "$(val 25 rc)/$(val 26 used)" 0/$((3 * MiB)) \
    "$a: a retain starts it afresh"
  is "$(line 27)/$(val 28 used)" "reset_legacy dev=0 rc=0/$((2 * MiB))" \
    "$a: reset_legacy frees its memory"
  is "$(line 29)/$(line 30)/$(val 31 rc)" \
    "reset_v2 dev=0 rc=0/release_legacy dev=0 rc=0/709" \
    "$a: reset_v2, release_legacy"

  # IPC and external memory: aliases, never counted again.
  CMG_SIM_DEVICES=1G bare $a alloc 1M ipc_open 0 ipc_open_legacy 0 \
    stats 0 free 1 ipc_close 1 ipc_close 1 ipc_close 2 ext_import 8M \
    stats 0 free 3 ext_destroy 3 ext_import 4M ext_destroy 4 stats 0 \
    free 0 ipc_open 0
  is "$(line 2)|$(line 3)" \
    "ipc_open i=1 from=0 rc=0 ptr=0x7f0000100000|ipc_open_legacy i=2 from=0 rc=0 ptr=0x7f0000200000" \
    "$a: ipc_open gives new addresses"
  is "$(val 4 used)/$(val 5 rc)/$(val 6 rc)/$(val 7 rc)/$(val 8 rc)" \
    $MiB/1/0/1/0 "$a: not counted; not freed by free; closed once"
  is "$(val 9 rc)/$(val 10 used)" 0/$MiB "$a: ext_import, not counted"
  is "$(line 11)/$(line 12)/$(line 14)" \
    "free i=3 rc=0/ext_destroy i=3 free_rc=1 rc=0/ext_destroy i=4 free_rc=0 rc=0" \
    "$a: a mapped buffer is freed by free"
  is "$(val 15 used)/$(val 16 rc)/$(val 17 rc)" $MiB/0/1 \
    "$a: an IPC handle of freed memory does not open"

  # Identity and the ordinals of CUDA_VISIBLE_DEVICES.
  CMG_SIM_DEVICES=1G,2G,4G CUDA_VISIBLE_DEVICES=2,0 bare $a count uuid 0 \
    uuid 1 total 0 alloc 1M stats 0 nvml_count nvml_uuid 2 nvml 2 nvml2 0
  is "$(line 1)" "count rc=0 n=2" "$a: CUDA_VISIBLE_DEVICES=2,0: two devices"
  is "$(val 2 uuid)/$(val 3 uuid)" \
    GPU-c36d6751-5e1a-4d0c-9a77-73696d677002/GPU-c36d6751-5e1a-4d0c-9a77-73696d677000 \
    "$a: ordinal 0 is physical device 2, with its UUID"
  is "$(val 4 bytes)/$(val 5 ptr)/$(val 6 used)" \
    $((4096 * MiB))/0x810000000000/$MiB "$a: its size, addresses, stats"
  is "$(line 7)/$(val 8 uuid)" \
    "nvml_count rc=0 n=3/GPU-c36d6751-5e1a-4d0c-9a77-73696d677002" \
    "$a: NVML numbers every physical device"
  is "$(line 9)" \
    "nvml dev=2 rc=0 total=$((4096 * MiB)) free=$((4095 * MiB)) used=$MiB" \
    "$a: NVML device 2 has the allocation"
  is "$(line 10)" \
    "nvml2 dev=0 rc=0 total=$((1024 * MiB)) reserved=0 free=$((1024 * MiB)) used=0" \
    "$a: nvml2"
done

# Invalid entries end the list; no entry, no device.  Each line: the
# value, how many devices it shows, the physical device of ordinal 0.
while IFS='|' read -r v n phys; do
  CMG_SIM_DEVICES=1G,2G,4G CUDA_VISIBLE_DEVICES=$v bare app_driver count \
    uuid 0
  is "$(val 1 n)/$(val 2 uuid)" \
    "$n/GPU-c36d6751-5e1a-4d0c-9a77-73696d67700$phys" \
    "CUDA_VISIBLE_DEVICES='$v': $n device(s), the first is GPU $phys"
done <<'LIST'
1,7,0|1|1
0,0,1|1|0
GPU-c36d6751-5e1a-4d0c-9a77-73696d677001,x,0|1|1
GPU-c36d6751-5e1a-4d0c-9a77-73696d677002,0|2|2
 2 , 1 |2|2
LIST
for v in "" "GPU-c36d" "9" "gpu-c36d6751-5e1a-4d0c-9a77-73696d677002"; do
  CMG_SIM_DEVICES=1G,2G CUDA_VISIBLE_DEVICES=$v bare app_rt_static count \
    alloc 1M nvml_count
  is "$(val 1 rc)/$(val 2 rc)/$(line 3)" "100/100/nvml_count rc=0 n=2" \
    "CUDA_VISIBLE_DEVICES='$v': no device for CUDA, NVML still sees them"
done

# Runtime-only operations.
for a in $RUNTIME; do
  CMG_SIM_DEVICES=1G bare $a malloc_array 100 100 malloc_3darray 8 8 8 \
    malloc3d 100 10 10 stats 0 array_free 0 array_free 1 free 2 stats 0 \
    array 10 10 f32 3 host 200T
  is "$(line 3)" "malloc3d i=2 width=100 height=10 depth=10 rc=0 ptr=0x7f0000000000 pitch=512" \
    "$a: malloc3d"
  is "$(val 4 used)/$(val 8 used)" $((40448 + 2048 + 51200))/0 \
    "$a: malloc_array, malloc_3darray, malloc3d sizes"
  is "$(val 9 rc)" 20 "$a: a 3-channel format is cudaErrorInvalidChannelDescriptor"
  is "$(val 10 rc)" 2 "$a: host memory that malloc cannot give is cudaErrorMemoryAllocation"
  bare $a entry cuMemCreate 10020 entry cuMemCreate 0 \
    entry_ptsz cuMemAllocFromPoolAsync 0 entry cuMemAllocFromPoolAsync 0 \
    entry_ptsz cuMemAllocFromPoolAsync 12000 1 entry cuMemCreate 10010 \
    entry cuNoSuchFunction 13000
  is "$(val 1 fn)/$(val 1 lib)/$(val 2 fn)" cuMemCreate/libcuda.so.1/cuMemCreate \
    "$a: entry, by version and unversioned (13000)"
  is "$(val 3 fn)/$(val 4 fn)/$(val 5 fn)" \
    cuMemAllocFromPoolAsync_ptsz/cuMemAllocFromPoolAsync/cuMemAllocFromPoolAsync \
    "$a: entry_ptsz picks the per-thread variant unless told otherwise"
  is "$(val 6 status)/$(val 7 status)" 2/1 "$a: entry statuses"
done
for a in $DRIVER; do
  bare $a malloc3d 1 1 1 entry cuMemCreate 10020 alloc 1M
  is "$(line 1)/$(line 2)/$(val 3 rc)" "malloc3d unsupported/entry unsupported/0" \
    "$a: runtime-only operations are unsupported, and the script goes on"
done

# cuGetProcAddress knows every new variant.
for row in "cuCtxCreate 2000 0 cuCtxCreate" "cuCtxCreate 11040 0 cuCtxCreate_v3" \
           "cuCtxCreate 13000 0 cuCtxCreate_v4" "cuCtxDestroy 2000 0 cuCtxDestroy" \
           "cuMemAllocHost 2000 0 cuMemAllocHost" "cuMemAllocHost 3020 0 cuMemAllocHost_v2" \
           "cuArrayCreate 2000 0 cuArrayCreate" "cuArray3DCreate 3020 0 cuArray3DCreate_v2" \
           "cuIpcOpenMemHandle 4010 0 cuIpcOpenMemHandle" \
           "cuIpcOpenMemHandle 11000 0 cuIpcOpenMemHandle_v2" \
           "cuMemAllocFromPoolAsync 11020 2 cuMemAllocFromPoolAsync_ptsz" \
           "cuMemRetainAllocationHandle 11000 0 cuMemRetainAllocationHandle" \
           "cuMipmappedArrayGetMemoryRequirements 11060 0 cuMipmappedArrayGetMemoryRequirements"; do
  set -- $row
  bare app_getproc getproc "$1" "$2" "$3"
  is "$(val 1 fn)/$(val 1 lib)" "$4/libcuda.so.1" "getproc $1 $2 $3"
done

# Failure injection covers every counted family.
CMG_SIM_DEVICES=1G CMG_SIM_FAIL_ALLOC_AFTER=1 bare app_getproc vmm 2M \
  vmm 2M array 8 8 pool_alloc default 1M
is "$(val 1 rc)/$(val 2 rc)/$(val 3 rc)/$(val 4 rc)" 0/2/2/2 \
  "CMG_SIM_FAIL_ALLOC_AFTER applies to VMM, arrays and pools"

# NVML linked (app_driver) and loaded (the others) agree; before any CUDA.
for a in app_driver app_dlsym; do
  CMG_SIM_DEVICES=1G,2G bare $a nvml 1 nvml_uuid 1 alloc 1M nvml 0
  is "$(line 1)|$(val 2 uuid)|$(val 4 used)" \
    "nvml dev=1 rc=0 total=$((2048 * MiB)) free=$((2048 * MiB)) used=0|GPU-c36d6751-5e1a-4d0c-9a77-73696d677001|$MiB" \
    "$a: nvml, nvml_uuid"
done

# A naive preload (no dlsym hook) is reached by calls by name only.
naive=$SIM/.libs/libnaive.so
for a in $ALL; do
  LD_PRELOAD=$naive bare $a vmm 2M entry cuMemCreate 10020
  case $a in app_driver) want=1 ;; *) want=0 ;; esac
  is "$(grep -c '^naive:' "$tmp/err")/$(val 1 rc)" "$want/0" \
    "$a: the naive preload is called $want time(s)"
done

done_testing
