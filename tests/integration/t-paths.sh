#!/bin/sh
# Every way a program reaches the driver (linked directly, dlopen + dlsym of
# versioned names, cuGetProcAddress, shared runtime, static runtime): capped,
# counted once, labeled with the API the program called, memory info
# virtualized.
. "$srcdir/tests/lib/defs.sh"

M=1048576
check_path() {
  app=$1 api=$2
  export CMG_SIM_DEVICES=16G
  guard "--limit 1GiB" "$app" alloc 512M alloc 600M alloc 400M info total 0 \
    stats 0 cmg 0 whatis 0 whatis 2 free 0 cmg 0
  is "$rc" 0 "$app: exits normally"
  is "$(val 1 rc)" 0 "$app: 512 MiB under a 1 GiB limit succeeds"
  is "$(val 2 rc)" 2 "$app: 600 MiB more is refused as out of memory"
  is "$(val 3 rc)" 0 "$app: 400 MiB more still fits"
  is "$(val 4 total)" $((1024 * M)) "$app: mem info total is the limit"
  is "$(val 4 free)" $(((1024 - 912) * M)) "$app: mem info free is limit - live"
  is "$(val 5 bytes)" $((1024 * M)) "$app: device total is the limit"
  is "$(val 6 allocs)" 2 "$app: the driver never saw the refused allocation"
  is "$(val 7 allocs)" 2 "$app: each allocation counted once"
  is "$(val 7 denials)" 1 "$app: one denial"
  is "$(val 7 live)" $((912 * M)) "$app: live bytes"
  is "$(val 8 api)" "$api" "$app: labeled $api"
  is "$(val 9 bytes)" $((400 * M)) "$app: second allocation's size"
  is "$(val 11 live)" $((400 * M)) "$app: the free is counted"
  is "$(val 11 peak)" $((912 * M)) "$app: peak kept"
  is "$(count "denied $api of 600.0 MiB (629145600 bytes) on device 0: 512.0 MiB in use, limit 1.0 GiB" "$tmp/err")" 1 \
    "$app: one denial line naming API, size, device, usage and limit"
  is "$(noise)" 1 "$app: nothing else on stderr but the report line"
}

check_path app_driver cuMemAlloc_v2
check_path app_dlsym cuMemAlloc_v2
check_path app_getproc cuMemAlloc_v2
check_path app_rt_shared cudaMalloc
check_path app_rt_static cuMemAlloc_v2

# The 4-argument resolver, and the runtime's habit of re-resolving
# cuGetProcAddress through itself.
for mode in v1 self; do
  CMG_APP_GETPROC=$mode guard "--limit 1GiB" app_getproc alloc 1G alloc 1 cmg 0
  is "$(val 2 rc)" 2 "cuGetProcAddress ($mode): capped"
  is "$(val 3 allocs)" 1 "cuGetProcAddress ($mode): counted once"
done

# A driver need not return its exported addresses from cuGetProcAddress.
for app in app_getproc app_rt_shared app_rt_static; do
  CMG_SIM_GETPROC_TRAMPOLINE=1 guard "--limit 1GiB" $app alloc 1G alloc 1 cmg 0
  is "$(val 2 rc)" 2 "$app with a driver returning internal addresses: capped"
  is "$(val 3 allocs)" 1 "$app with a driver returning internal addresses: counted"
done

done_testing
