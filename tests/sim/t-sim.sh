#!/bin/sh
# The simulated CUDA itself, without the interposer: every allocation
# family through every program that reaches it, with the driver's exact
# accounting (stats), context teardown and what contexts cost, VMM
# reference counts, streams, stream capture and the graph memory pool,
# CUDA_VISIBLE_DEVICES, NVML and its process list, entry points, a
# library's own path to the driver (lib_alloc), and that
# a naive preload
# (cuMemCreate and cuGetProcAddress_v2, no dlsym hook) is reached only by
# the program that calls the driver by name.
. "$srcdir/tests/lib/defs.sh"
unset CUDA_VISIBLE_DEVICES CMG_SIM_FAIL_ALLOC_AFTER CMG_SIM_FAIL_FREE_AFTER \
  CMG_SIM_CONTEXT_BYTES CMG_SIM_CONTEXT_DRIVER_BYTES CMG_SIM_NVML_PID \
  CMG_SIM_NVML_PROCESSES

MiB=1048576
ALL="app_driver app_dlsym app_getproc app_rt_shared app_rt_static"
DRIVER="app_driver app_dlsym app_getproc"
RUNTIME="app_rt_shared app_rt_static"

# line N: line N of the output.
line() {
  sed -n "${1}p" "$tmp/out"
}

# pidbare APP SCRIPT...: bare, with the program's pid as line 1 ("pid=N"):
# the shell prints its own and execs the program, which keeps it.
pidbare() {
  app=$1
  shift
  sh -c 'echo "pid=$$"; exec "$@"' sh "$SIM/$app" "$@" >"$tmp/out" \
    2>"$tmp/err"
  rc=$?
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
    "hoststats used=$MiB/0/ctx_primary dev=0 rc=0" \
    "$a: nor host memory; then the context under it, the primary one, is current again"
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

# What contexts cost (CMG_SIM_CONTEXT_BYTES), as on an H100, where each
# takes about 518 MiB that nobody allocated: in used and against free
# memory, never as an allocation.  A plain run holds the primary context.
C=$((500 * MiB))
for a in $ALL; do
  CMG_SIM_DEVICES=4G CMG_SIM_CONTEXT_BYTES=500M bare $a info stats 0 \
    ctxstats 0 alloc 1M ctx_create ctx_create info stats 0 ctx_destroy 0 \
    stats 0 nvml 0 ctx_destroy 1 ctx_primary stats 0 reset stats 0 info \
    release stats 0 retain ctxstats 0
  is "$(val 1 free)|$(line 2)|$(line 3)" \
    "$((4096 * MiB - C))|stats dev=0 used=$C peak=$C allocs=0 frees=0|ctxstats dev=0 bytes=$C" \
    "$a: a plain run holds one context, which is no allocation"
  is "$(val 7 free)/$(val 8 used)/$(val 8 allocs)" \
    $((4096 * MiB - 3 * C - MiB))/$((3 * C + MiB))/1 \
    "$a: two created contexts cost two more"
  is "$(line 9)/$(val 10 used)/$(val 10 frees)/$(val 11 used)" \
    "ctx_destroy c=0 rc=0/$((2 * C + MiB))/0/$((2 * C + MiB))" \
    "$a: ctx_destroy gives one back, no free; NVML's used has the rest"
  is "$(val 14 used)/$(line 15)/$(val 16 used)/$(val 16 frees)" \
    "$((C + MiB))/reset dev=0 rc=0/0/1" \
    "$a: a reset destroys the primary context and its memory"
  is "$(val 17 free)/$(line 18)/$(val 19 used)/$(line 21)/$(val 19 peak)" \
    "$((4096 * MiB - C))/release dev=0 rc=0/0/ctxstats dev=0 bytes=$C/$((3 * C + MiB))" \
    "$a: its next use makes it again; the last release ends it, a retain makes it"

  # No room for a context: its creation fails, nothing changed.
  CMG_SIM_DEVICES=1G CMG_SIM_CONTEXT_BYTES=500M bare $a ctx_create \
    ctx_create stats 0 alloc 1M
  is "$(val 1 rc)/$(val 2 rc)/$(val 3 used)/$(val 3 peak)/$(val 4 rc)" \
    0/2/$((2 * C))/$((2 * C))/0 "$a: cuCtxCreate on a full device fails with 2"
  CMG_SIM_DEVICES=256M CMG_SIM_CONTEXT_BYTES=500M bare $a alloc 1M \
    stats 0 nvml_procs 0
  is "$(val 1 rc)/$(val 2 used)/$(line 3)" \
    "2/0/nvml_procs dev=0 rc=0 count=0" \
    "$a: a device without room for the primary context runs nothing"

  # NVML lists the process, with all it holds, under its own pid.
  CMG_SIM_DEVICES=4G,1G CMG_SIM_CONTEXT_BYTES=500M pidbare $a \
    nvml_procs 0 alloc 1G nvml_procs 0 nvml_procs 1 ctx_create \
    nvml_procs 0 nvml_procs 0 0 nvml_procs 0 1 nvml2 0
  pid=$(val 1 pid)
  is "$(line 2)" "nvml_procs dev=0 rc=0 count=0" \
    "$a: nvml_procs lists no process before CUDA"
  is "$(line 4)" \
    "nvml_procs dev=0 rc=0 count=1 pid=$pid used=$((1024 * MiB + C))" \
    "$a: then this one, with its allocations and its context"
  is "$(line 5)/$(val 7 used)/$(val 10 used)" \
    "nvml_procs dev=1 rc=0 count=0/$((1024 * MiB + 2 * C))/$((1024 * MiB + 2 * C))" \
    "$a: none on an idle device; a created context counts, as in nvml2"
  is "$(line 8)/$(line 9)" \
    "nvml_procs dev=0 rc=7 count=1/nvml_procs dev=0 rc=0 count=1 pid=$pid used=$((1024 * MiB + 2 * C))" \
    "$a: no room says how much is needed; room for one is enough"

  # A pid namespace's view, and a process that may not list others.
  CMG_SIM_NVML_PID=4242 bare $a alloc 1M nvml_procs 0
  is "$(line 2)" "nvml_procs dev=0 rc=0 count=1 pid=4242 used=$MiB" \
    "$a: CMG_SIM_NVML_PID"
  CMG_SIM_NVML_PROCESSES=denied bare $a alloc 1M nvml_procs 0 nvml 0
  is "$(line 2)/$(val 3 used)" "nvml_procs dev=0 rc=4/$MiB" \
    "$a: CMG_SIM_NVML_PROCESSES=denied; memory still reads"
done
CMG_SIM_CONTEXT_BYTES=500M CMG_SIM_FAIL_ALLOC_AFTER=0 bare app_getproc \
  ctx_create stats 0 alloc 1M
is "$(val 1 rc)/$(val 2 used)/$(val 2 allocs)/$(val 3 rc)" 0/$((2 * C))/0/2 \
  "CMG_SIM_FAIL_ALLOC_AFTER does not apply to contexts"
CMG_SIM_CONTEXT_BYTES=500M bare app_rt_shared graph graph_alloc 0 0 1G \
  instantiate 0 0 upload 0 0 alloc 1M nvml_procs 0
is "$(val 6 used)" $((1024 * MiB + C + MiB)) \
  "nvml_procs counts the graph memory pool too"
# What the driver keeps for itself with each context (on an H100 three
# contexts took 1573 MiB of cudaMemGetInfo and 1554 in nvidia-smi): out of
# the free memory and in NVML's device used, not in the process's usage.
CMG_SIM_DEVICES=4G CMG_SIM_CONTEXT_BYTES=500M CMG_SIM_CONTEXT_DRIVER_BYTES=6M \
  pidbare app_driver info alloc 1G nvml 0 nvml_procs 0 ctxstats 0 \
  ctx_create info nvml_procs 0
pid=$(val 1 pid)
is "$(val 2 free)/$(val 4 used)/$(line 5)/$(line 6)" \
  "$((4096 * MiB - C - 6 * MiB))/$((1024 * MiB + C + 6 * MiB))/nvml_procs dev=0 rc=0 count=1 pid=$pid used=$((1024 * MiB + C))/ctxstats dev=0 bytes=$((C + 6 * MiB))" \
  "CMG_SIM_CONTEXT_DRIVER_BYTES: in free memory and NVML's used, not the process's"
is "$(val 8 free)/$(line 9)" \
  "$((3072 * MiB - 2 * C - 12 * MiB))/nvml_procs dev=0 rc=0 count=1 pid=$pid used=$((1024 * MiB + 2 * C))" \
  "CMG_SIM_CONTEXT_DRIVER_BYTES: a created context keeps its share too"
CMG_SIM_CONTEXT_DRIVER_BYTES=1Q bare app_driver alloc 1M
is "$(val 1 rc)/$(grep -c 'CMG_SIM_CONTEXT_DRIVER_BYTES=1Q: expected a size' "$tmp/err")" 1/1 \
  "a malformed CMG_SIM_CONTEXT_DRIVER_BYTES: cuInit returns 1"
bare app_driver alloc 1M ctxstats 0 ctxstats 1
is "$(line 2)/$(line 3)" "ctxstats dev=0 bytes=0/ctxstats dev=1 rc=-22" \
  "contexts cost nothing by default"
CMG_SIM_CONTEXT_BYTES=5X bare app_driver alloc 1M nvml 0
is "$(val 1 rc)/$(val 2 rc)/$(grep -c CMG_SIM_CONTEXT_BYTES "$tmp/err")" 1/999/1 \
  "a malformed CMG_SIM_CONTEXT_BYTES: cuInit returns 1, nvmlInit 999"
for v in CMG_SIM_NVML_PID=0 CMG_SIM_NVML_PID=x CMG_SIM_NVML_PROCESSES=yes; do
  env "$v" "$SIM/app_dlsym" nvml_procs 0 >"$tmp/out" 2>"$tmp/err"
  is "$(line 1)/$(grep -c "${v%%=*}" "$tmp/err")" "nvml_procs dev=0 rc=999/1" \
    "a malformed $v: nvmlInit returns 999"
done

# Streams, capture and graphs with memory nodes, through every program.
GiB=$((1024 * MiB))
for a in $ALL; do
  # Capture allocates nothing: the capture graph gets the nodes, and the
  # allocation its node's fixed address, in a range of its own.
  CMG_SIM_DEVICES=8G bare $a stream capture 1 global capturing 1 \
    async_on 1 1G info stats 0 free_async_on 1 0 capture_end 1 capturing 1 \
    graph_nodes 0
  is "$(line 1)/$(line 2)/$(line 3)" \
    "stream s=1 rc=0/capture s=1 rc=0/capturing s=1 rc=0 status=active" \
    "$a: stream, capture, capturing"
  is "$(line 4)" "async_on i=0 s=1 size=$GiB rc=0 ptr=0x500000000000" \
    "$a: async_on a capturing stream returns the node's address"
  is "$(val 5 free)/$(val 6 used)/$(val 6 allocs)" $((8 * GiB))/0/0 \
    "$a: and allocates nothing"
  is "$(line 7)/$(line 8)/$(line 9)" \
    "free_async_on i=0 s=1 rc=0/capture_end s=1 g=0 rc=0/capturing s=1 rc=0 status=none" \
    "$a: a captured free; capture_end ends the capture"
  is "$(line 10)" "graph_nodes g=0 rc=0 n=2 alloc=1 free=1 bytes=$GiB" \
    "$a: the graph has the allocation and free nodes"

  # The graph memory pool, as an H100 showed it: a graph that allocates
  # and frees 2 GiB takes 2 GiB at upload and nothing more at launch; a
  # second graph allocating 3 GiB without freeing takes 1 GiB more.
  CMG_SIM_DEVICES=8G bare $a stream capture 1 relaxed async_on 1 2G \
    free_async_on 1 0 capture_end 1 instantiate 0 0 graph_mem 0 stats 0 \
    upload 0 1 graph_mem 0 info nvml 0 stats 0 launch 0 1 launch 0 1 \
    launch 0 0 graph_mem 0 stats 0 graph graph_alloc 1 0 3G \
    instantiate_params 1 0 launch 1 0 graph_mem 0 stats 0 graph_trim 0 \
    graph_mem 0 info
  is "$(line 6)/$(line 7)/$(val 8 used)" \
    "instantiate e=0 g=0 rc=0/graph_mem dev=0 rc=0 used=0 used_high=0 reserved=0 reserved_high=0/0" \
    "$a: instantiate reserves nothing"
  is "$(line 9)|$(line 10)" \
    "upload e=0 s=1 rc=0|graph_mem dev=0 rc=0 used=$((2 * GiB)) used_high=$((2 * GiB)) reserved=$((2 * GiB)) reserved_high=$((2 * GiB))" \
    "$a: upload grows the pool to the graph's footprint"
  is "$(val 11 free)/$(val 12 used)/$(val 13 used)/$(val 13 allocs)" \
    $((6 * GiB))/$((2 * GiB))/$((2 * GiB))/1 \
    "$a: info, NVML and stats count the pool's reserved bytes"
  is "$(val 14 rc)$(val 15 rc)$(val 16 rc)/$(val 17 reserved)/$(val 17 used)/$(val 18 allocs)" \
    000/$((2 * GiB))/$((2 * GiB))/1 "$a: relaunches take nothing more"
  is "$(line 20)/$(line 21)/$(line 22)" \
    "graph_alloc i=1 g=1 dev=0 size=$((3 * GiB)) rc=0 ptr=0x500080000000/instantiate_params e=1 g=1 rc=0/launch e=1 s=0 rc=0" \
    "$a: a second graph, instantiated with parameters, launches"
  is "$(val 23 used)/$(val 23 reserved)/$(val 24 used)/$(val 24 allocs)" \
    $((3 * GiB))/$((3 * GiB))/$((3 * GiB))/2 \
    "$a: it takes 1 GiB more, reusing the 2"
  is "$(line 25)/$(val 26 reserved)/$(val 27 free)" \
    "graph_trim dev=0 rc=0/$((3 * GiB))/$((5 * GiB))" \
    "$a: a trim frees nothing while 3 GiB are in use"

  # Relaunching a graph whose allocations were not freed: invalid unless
  # it was instantiated to free them itself; one executable per graph.
  CMG_SIM_DEVICES=8G bare $a graph graph_alloc 0 0 1G instantiate 0 0 \
    launch 0 0 launch 0 0 graph graph_alloc 1 0 1G instantiate 1 auto \
    launch 1 0 launch 1 0 graph_mem 0 instantiate 0 0 exec_destroy 0 \
    instantiate 0 auto launch 3 0
  is "$(val 4 rc)/$(val 5 rc)" 0/1 \
    "$a: a relaunch with its allocation live is invalid"
  is "$(val 9 rc)/$(val 10 rc)" 0/0 "$a: with auto-free it is not"
  is "$(val 11 used)/$(val 11 reserved)" $((2 * GiB))/$((2 * GiB)) \
    "$a: auto-free reuses its own memory"
  is "$(line 12)/$(line 13)/$(line 14)/$(val 15 rc)" \
    "instantiate e=2 g=0 rc=1/exec_destroy e=0 rc=0/instantiate e=3 g=0 rc=0/0" \
    "$a: a second executable of a graph only after the first is destroyed"

  # Escaped allocations: freed by free or free_async (once), the memory
  # stays in the pool; a trim gives back all but what is still in use.
  CMG_SIM_DEVICES=8G bare $a graph graph_alloc 0 0 1G graph_alloc 0 0 2G \
    graph_free 0 1 instantiate 0 0 launch 0 0 graph_mem 0 graph_trim 0 \
    graph_mem 0 stats 0 free 0 free 0 graph_mem 0 launch 0 0 graph_mem 0 \
    free_async 0 graph_mem_reset 0 graph_mem 0 graph_trim 0 graph_mem 0 \
    info stats 0
  is "$(line 4)/$(val 6 rc)/$(val 7 used)/$(val 7 reserved)" \
    "graph_free g=0 i=1 rc=0/0/$((3 * GiB))/$((3 * GiB))" \
    "$a: 1 GiB escapes, 2 GiB are freed inside the graph"
  is "$(line 9)" \
    "graph_mem dev=0 rc=0 used=$GiB used_high=$((3 * GiB)) reserved=$GiB reserved_high=$((3 * GiB))" \
    "$a: a trim gives back all but the escaped allocation"
  is "$(val 10 used)/$(val 10 frees)" $GiB/1 "$a: to the device"
  is "$(line 11)/$(line 12)/$(val 13 used)/$(val 13 reserved)" \
    "free i=0 rc=0/free i=0 rc=1/0/$GiB" \
    "$a: free frees an escaped allocation once; the pool keeps the memory"
  is "$(val 14 rc)/$(val 15 used)/$(val 15 reserved)" \
    0/$((3 * GiB))/$((3 * GiB)) "$a: a relaunch grows the pool again"
  is "$(line 16)|$(line 18)" \
    "free_async i=0 rc=0|graph_mem dev=0 rc=0 used=$((2 * GiB)) used_high=$((2 * GiB)) reserved=$((3 * GiB)) reserved_high=$((3 * GiB))" \
    "$a: free_async too; graph_mem_reset resets the highs to the current values"
  is "$(line 20)|$(val 21 free)|$(val 22 used)" \
    "graph_mem dev=0 rc=0 used=0 used_high=$((2 * GiB)) reserved=0 reserved_high=$((3 * GiB))|$((8 * GiB))|0" \
    "$a: nothing in use, a trim empties the pool"

  # A graph and its executable destroyed while its memory is in use.
  CMG_SIM_DEVICES=8G bare $a graph graph_alloc 0 0 1G instantiate 0 0 \
    launch 0 0 exec_destroy 0 graph_destroy 0 graph_mem 0 free_async 0 \
    free_async 0 graph_mem 0 stats 0
  is "$(line 5)/$(line 6)/$(val 7 used)/$(val 7 reserved)" \
    "exec_destroy e=0 rc=0/graph_destroy g=0 rc=0/$GiB/$GiB" \
    "$a: destroyed, the memory stays in use"
  is "$(val 8 rc)/$(val 9 rc)/$(val 10 used)/$(val 11 used)" \
    0/1/0/$GiB "$a: until it is freed, into the pool"

  # A full device: instantiating succeeds, upload and launch fail with
  # nothing changed.
  CMG_SIM_DEVICES=4G bare $a alloc 3G graph graph_alloc 0 0 2G \
    instantiate 0 0 upload 0 0 launch 0 0 graph_mem 0 stats 0 free 0 \
    launch 0 0 graph_mem 0 stats 0
  is "$(val 4 rc)/$(val 5 rc)/$(val 6 rc)" 0/2/2 \
    "$a: out of memory at upload and launch"
  is "$(line 7)/$(val 8 used)/$(val 8 allocs)" \
    "graph_mem dev=0 rc=0 used=0 used_high=0 reserved=0 reserved_high=0/$((3 * GiB))/1" \
    "$a: and nothing changed"
  is "$(val 10 rc)/$(val 11 reserved)/$(val 12 used)" \
    0/$((2 * GiB))/$((2 * GiB)) "$a: once there is room, it launches"

  # The pool's memory belongs to the context whose launch grew it: a
  # primary reset or a context's destruction gives it back, and its
  # streams go with the context.
  CMG_SIM_DEVICES=4G bare $a stream graph graph_alloc 0 0 1G \
    instantiate 0 0 launch 0 1 stats 0 reset graph_mem 0 stats 0 free 0 \
    sync 1 ctx_create graph graph_alloc 1 0 2G graph_alloc 1 0 1G \
    graph_free 1 2 instantiate 1 0 launch 1 0 graph_mem 0 ctx_destroy 0 \
    graph_mem 0 ctx_primary info
  is "$(val 6 used)/$(line 8)/$(val 9 used)" \
    "$GiB/graph_mem dev=0 rc=0 used=0 used_high=$GiB reserved=0 reserved_high=$GiB/0" \
    "$a: a primary reset gives the pool back"
  is "$(val 10 rc)/$(val 11 rc)" 1/400 \
    "$a: with the allocations in it, and the context's streams"
  is "$(val 18 rc)/$(val 19 used)/$(val 19 reserved)" \
    0/$((3 * GiB))/$((3 * GiB)) "$a: a launch in a created context"
  is "$(line 20)/$(val 21 reserved)/$(val 23 free)" \
    "ctx_destroy c=0 rc=0/0/$((4 * GiB))" \
    "$a: its destruction gives the pool back"

  # Two streams capture at once, each into its own graph; a thread-local
  # capture takes work from another thread, as capture is per stream; the
  # NULL stream allocates meanwhile.
  CMG_SIM_DEVICES=8G bare $a stream stream capture 1 thread \
    capture 2 relaxed async_thread 1 2M async_on 2 1M async_on 0 4M \
    capturing 1 capturing 2 stats 0 capture_end 2 capture_end 1 \
    graph_nodes 0 graph_nodes 1 free_async 2 stats 0
  is "$(line 5)|$(line 6)|$(line 7)" \
    "async_thread i=0 s=1 size=$((2 * MiB)) rc=0 ptr=0x500000000000|async_on i=1 s=2 size=$MiB rc=0 ptr=0x500000200000|async_on i=2 s=0 size=$((4 * MiB)) rc=0 ptr=0x7f0000000000" \
    "$a: async_thread into a capture, two captures, the NULL stream"
  is "$(val 8 status)/$(val 9 status)/$(val 10 used)" active/active/$((4 * MiB)) \
    "$a: both capture; only the NULL stream's allocation counts"
  is "$(line 11)/$(line 12)/$(val 13 bytes)/$(val 14 bytes)" \
    "capture_end s=2 g=0 rc=0/capture_end s=1 g=1 rc=0/$MiB/$((2 * MiB))" \
    "$a: each graph has its own stream's nodes"
  is "$(val 15 rc)/$(val 16 used)" 0/0 "$a: the NULL stream's is freed"

  # Invalidated captures: cuMemAlloc during a global capture fails (900)
  # and invalidates it, not a relaxed one; so does a sync of the
  # capturing stream; capture_end then fails (901).
  CMG_SIM_DEVICES=8G bare $a stream stream capture 1 global \
    capture 2 relaxed alloc 1M capturing 1 capturing 2 async_on 1 1M \
    capture_end 1 alloc 1M capture_end 2 capture 1 relaxed sync 1 \
    capturing 1 capture_end 1 capture_end 1 stream_destroy 1 capture 1 global
  is "$(val 5 rc)/$(val 6 status)/$(val 7 status)" 900/invalidated/active \
    "$a: cuMemAlloc during a global capture fails and invalidates it"
  is "$(val 8 rc)/$(line 9)" "901/capture_end s=1 g=0 rc=901" \
    "$a: work on an invalidated capture fails, and so does its end"
  is "$(val 10 rc)/$(line 11)" "0/capture_end s=2 g=1 rc=0" \
    "$a: after it cuMemAlloc works; the relaxed capture survived"
  is "$(val 12 rc)/$(val 13 rc)/$(val 14 status)/$(val 15 rc)" \
    0/900/invalidated/901 "$a: a sync of a capturing stream invalidates it"
  is "$(val 16 rc)/$(line 17)/$(val 18 rc)" "401/stream_destroy s=1 rc=0/400" \
    "$a: capture_end without a capture; a destroyed stream"

  # The special streams never capture (a failed capture_end takes a
  # graph number all the same); graph nodes are checked.
  CMG_SIM_DEVICES=1G,1G bare $a capture 0 global capture legacy thread \
    capture per_thread relaxed capture_end legacy async_on legacy 1M \
    async_on per_thread 1M sync 0 sync legacy graph graph_alloc 1 2 1M \
    alloc 1M graph_free 1 3 graph_alloc 1 1 512M graph_free 1 4 \
    graph_free 1 4 instantiate 1 0 launch 0 0 stats 0 stats 1 graph_mem 1 \
    graph_mem 0
  is "$(val 1 rc)/$(val 2 rc)/$(val 3 rc)/$(line 4)/$(line 9)" \
    "900/900/900/capture_end s=legacy g=0 rc=401/graph g=1 rc=0" \
    "$a: capture on the NULL, legacy and per-thread streams"
  is "$(val 5 rc)/$(val 6 rc)/$(val 7 rc)/$(val 8 rc)" 0/0/0/0 \
    "$a: which run work at once"
  is "$(val 10 rc)/$(val 12 rc)/$(val 14 rc)/$(val 15 rc)" 1/1/0/1 \
    "$a: no node on an unknown device, no free of a plain allocation, nor twice"
  is "$(val 17 rc)/$(val 19 used)/$(val 20 reserved)/$(val 21 reserved)" \
    0/$((512 * MiB))/$((512 * MiB))/0 \
    "$a: an allocation node on device 1 takes device 1's pool"
done

# Failure injection counts a growth of the pool as one allocation.
CMG_SIM_DEVICES=8G CMG_SIM_FAIL_ALLOC_AFTER=1 bare app_getproc graph \
  graph_alloc 0 0 1M instantiate 0 0 launch 0 0 graph_mem 0 graph \
  graph_alloc 1 0 1M instantiate 1 0 upload 1 0 graph_mem 0
is "$(val 4 rc)/$(val 5 reserved)/$(val 9 rc)/$(val 10 reserved)" 0/$MiB/2/$MiB \
  "CMG_SIM_FAIL_ALLOC_AFTER applies to the graph memory pool"

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
# A library's own allocations, in every program: its own path to the
# driver, in the context current, which teardown frees with the rest.
for a in $ALL; do
  CMG_SIM_DEVICES=1G bare $a lib_alloc 1M stats 0 ctx_create lib_alloc 2M \
    ctx_destroy 0 lib_free 0 lib_free 1 stats 0
  is "$(val 1 rc)/$(val 2 used)/$(val 4 rc)/$(val 6 rc)/$(val 7 rc)/$(val 8 used)" \
    "0/$MiB/0/0/1/0" "$a: lib_alloc and lib_free, and a created context's teardown"
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
           "cuMipmappedArrayGetMemoryRequirements 11060 0 cuMipmappedArrayGetMemoryRequirements" \
           "cuStreamDestroy 2000 0 cuStreamDestroy" "cuStreamDestroy 13000 0 cuStreamDestroy_v2" \
           "cuStreamSynchronize 7000 2 cuStreamSynchronize_ptsz" \
           "cuStreamSynchronize 6050 2 cuStreamSynchronize" \
           "cuStreamBeginCapture 10000 2 cuStreamBeginCapture_ptsz" \
           "cuStreamBeginCapture 12000 0 cuStreamBeginCapture_v2" \
           "cuStreamGetCaptureInfo 11030 0 cuStreamGetCaptureInfo_v2" \
           "cuStreamGetCaptureInfo 12030 2 cuStreamGetCaptureInfo_v3_ptsz" \
           "cuStreamEndCapture 10000 2 cuStreamEndCapture_ptsz" \
           "cuGraphAddNode 12020 0 cuGraphAddNode" "cuGraphAddNode 12030 0 cuGraphAddNode_v2" \
           "cuGraphInstantiate 10000 0 cuGraphInstantiate" \
           "cuGraphInstantiate 12000 0 cuGraphInstantiate_v2" \
           "cuGraphInstantiateWithParams 12000 2 cuGraphInstantiateWithParams_ptsz" \
           "cuGraphUpload 11010 2 cuGraphUpload_ptsz" "cuGraphLaunch 10000 0 cuGraphLaunch" \
           "cuDeviceSetGraphMemAttribute 11040 0 cuDeviceSetGraphMemAttribute"; do
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

# await: a step that waits for a file another process makes.
"$SIM/app_driver" await "$tmp/go" info >"$tmp/out" 2>"$tmp/err" &
sleep 0.2
is "$(wc -l <"$tmp/out")" 0 "await: nothing runs before the file exists"
: >"$tmp/go"
wait $!
is "$(line 1)/$(val 2 rc)" "await rc=0/0" "await: then the script goes on"

done_testing
