#!/bin/sh
# No figure passes the cap: a context whose cost would take the process or
# its group past its cap is refused, as a full card refuses one
# (CUDA_ERROR_OUT_OF_MEMORY from cuCtxCreate, cudaErrorMemoryAllocation
# from the runtime's first call, which makes the primary context), with one
# line; nothing of it stays, the thread's current context is the one it
# had, and the process's views and NVML's agree.  on_exceed=warn lets it
# pass, as it lets an allocation.
. "$srcdir/tests/lib/defs.sh"
M=1048576
G=ctxcap$$
trap 'rm -rf "$tmp"; rm -f /dev/shm/cumemguard.$(id -u).$G*' EXIT
CMG_SIM_CONTEXT_BYTES=100M
export CMG_SIM_CONTEXT_BYTES

# 900 MiB and the primary context's 100 MiB leave no room for another.
guard "--limit 1GiB" app_driver alloc 900M ctx_create cmg 0 info nvml 0 \
  alloc 10M free 0 ctx_create cmg 0
is "$(at ctx rc 1)/$(at cmg live 1)" 2/$((1000 * M)) \
  "cuCtxCreate past the limit: out of memory, and nothing of it counted"
is "$(count "cumemguard: denied cuCtxCreate_v4's context of 100.0 MiB (104857600 bytes) on device 0: 1000.0 MiB in use, limit 1.0 GiB" "$tmp/err")" \
  1 "with one line"
is "$(at info free)/$(at info total)/$(at nvml used)/$(at nvml free)" \
  $((24 * M))/$((1024 * M))/$((1000 * M))/$((24 * M)) \
  "the process's view and NVML's agree, within the cap"
is "$(at alloc rc 2)" 0 "the context the thread had is current again"
is "$(at ctx rc 2)/$(at cmg live 2)" 0/$((210 * M)) \
  "with room, a context is made and counted"

# The runtime's first call makes the primary context.
guard "--limit 50M" app_rt_shared alloc 10M info cmg 0
is "$(at alloc rc)/$(at info rc)/$(at cmg live)" 2/2/0 \
  "the runtime's first call past the limit: cudaErrorMemoryAllocation, nothing counted"
is "$(count "denied cudaMalloc's context of 100.0 MiB (104857600 bytes) on device 0: 0 B in use, limit 50.0 MiB" "$tmp/err")/$(count "'s context of 100.0 MiB" "$tmp/err")" \
  1/2 "a line for each call that tried to make it, named after that call"

# A group: a member holds 900 MiB and its context; the next one's context
# does not fit.
: >"$tmp/a.out"
"$LAUNCHER" --group "$G" --group-limit 1GiB --report "$tmp/a.%p.json" -- \
  "$SIM/app_driver" alloc 900M await "$tmp/a.go" >"$tmp/a.out" 2>&1 &
apid=$!
until_line "$tmp/a.out" '^alloc i=0 .*rc=0'
guard "--group $G --group-limit 1GiB" app_driver alloc 1M
is "$(at alloc rc)/$(count "denied cuDevicePrimaryCtxRetain's context of 100.0 MiB (104857600 bytes) on device 0: group '$G' has 1000.0 MiB in use, group limit 1.0 GiB" "$tmp/err")" \
  2/1 "past the group's cap: the second member's context is refused, with one line"
"$LAUNCHER" status "$G" --json >"$tmp/out"
is "$("$PYTHON3" -c 'import json, sys; print(json.load(open(sys.argv[1]))["groups"][0]["devices"][0]["used"])' "$tmp/out")" \
  $((1000 * M)) \
  "and the group's usage stays within its cap"
: >"$tmp/a.go"
wait $apid

guard "--limit 1GiB --on-exceed warn" app_driver alloc 900M ctx_create cmg 0
is "$(at ctx rc)/$(at cmg live)/$(count "allowed cuCtxCreate_v4's context of 100.0 MiB on device 0 over the limit" "$tmp/err")" \
  0/$((1100 * M))/1 "on_exceed=warn: the context passes, with the warning's line"

done_testing
