#!/bin/sh
# Every memory view shows the cap that binds: cuMemGetInfo, cudaMemGetInfo,
# cuDeviceTotalMem, the device properties' total and NVML's memory
# information (v1, v2, and the process's entry in its list of processes),
# under a process's limit, a group's cap, or both (the smaller binds, either
# way round).  Free is the least room any cap leaves: a group's room is its
# cap less every member's usage, contexts included under count_context=1,
# and comes back within a second when a member dies.  Free never wraps
# below zero, also past the cap under on_exceed=warn, which passes a
# group's cap as it passes the process's.  A process that has not started
# CUDA (nvidia-smi run by a guarded program) sees its caps through NVML on
# the GPUs CUDA_VISIBLE_DEVICES gives it.
. "$srcdir/tests/lib/defs.sh"
M=1048576
G=mi$$
SHM=/dev/shm/cumemguard.$(id -u)
trap 'rm -rf "$tmp"; rm -f "$SHM.$G"*' EXIT
export CMG_SIM_DEVICES=8G

# views APP: the script every case runs, after one allocation of 100 MiB.
VIEWS="alloc 100M info total 0 nvml 0 nvml2 0 nvml_procs 0"

# check WHAT FREE TOTAL USED: the lines of $VIEWS in $tmp/out, each figure
# exactly; USED is the process's own entry in NVML's list.
check() {
  what=$1 free=$2 total=$3 own=$4
  is "$(val 1 rc)" 0 "$what: the allocation is made"
  is "$(val 2 free)/$(val 2 total)" "$free/$total" "$what: the runtime's or driver's memory information"
  is "$(val 3 bytes)" "$total" "$what: the device's total memory"
  is "$(val 4 free)/$(val 4 total)/$(val 4 used)" "$free/$total/$((total - free))" \
    "$what: NVML's memory information"
  is "$(val 5 free)/$(val 5 total)/$(val 5 used)" "$free/$total/$((total - free))" \
    "$what: NVML's memory information, v2"
  is "$(val 6 used)" "$own" "$what: the process's entry in NVML's list"
}

# ---- one process -------------------------------------------------------------

# shellcheck disable=SC2086
bare app_driver $VIEWS
check "no cap" $((8192 * M - 100 * M)) $((8192 * M)) $((100 * M))

for app in app_driver app_rt_shared; do
  # shellcheck disable=SC2086
  guard "--limit 1GiB" $app $VIEWS
  check "$app, a process's limit" $((924 * M)) $((1024 * M)) $((100 * M))
  # shellcheck disable=SC2086
  guard "--group $G-a --group-limit 1GiB" $app $VIEWS
  check "$app, a group's cap alone" $((924 * M)) $((1024 * M)) $((100 * M))
done

# shellcheck disable=SC2086
guard "--limit 512M --group $G-b --group-limit 1GiB" app_driver $VIEWS
check "the process's limit below the group's cap" $((412 * M)) $((512 * M)) $((100 * M))
# shellcheck disable=SC2086
guard "--limit 1GiB --group $G-c --group-limit 512M" app_driver $VIEWS
check "the group's cap below the process's limit" $((412 * M)) $((512 * M)) $((100 * M))

# A percentage, and a cap on one device only.
CMG_SIM_DEVICES=8G,4G guard "--group $G-d --group-limit 25%" app_driver \
  info device 1 info
is "$(val 1 total)/$(val 3 total)" $((2048 * M))/$((1024 * M)) \
  "group_limit=25%: a quarter of each device"
CMG_SIM_DEVICES=8G,4G CUMEMGUARD_OPTIONS="group_limit.1=1G" \
  guard "--group $G-e" app_driver info total 0 device 1 info total 1
is "$(val 1 total)/$(val 2 bytes)" $((8192 * M))/$((8192 * M)) \
  "group_limit.1: device 0 has no cap and shows the card"
is "$(val 4 free)/$(val 4 total)/$(val 5 bytes)" \
  $((1024 * M))/$((1024 * M))/$((1024 * M)) "group_limit.1: device 1 shows its cap"

# ---- a process that has not started CUDA ----------------------------------------

# nvidia-smi run by a guarded program, or a server's launcher reading NVML
# before its workers start CUDA: app_dlsym's NVML operations start no CUDA
# and reach NVML through dlopen and dlsym, as nvidia-smi does.  The
# ordinal CUDA will give each GPU comes from CUDA_VISIBLE_DEVICES.
NOCUDA="nvml 0 nvml2 0 nvml 1 nvml_procs 0"
# shellcheck disable=SC2086
CMG_SIM_DEVICES=8G,4G CUDA_DEVICE_ORDER=PCI_BUS_ID guard "--limit 1GiB" \
  app_dlsym $NOCUDA
is "$(sed -n 1,3p "$tmp/out" | tr '\n' '|')" \
  "nvml dev=0 rc=0 total=$((1024 * M)) free=$((1024 * M)) used=0|nvml2 dev=0 rc=0 total=$((1024 * M)) reserved=0 free=$((1024 * M)) used=0|nvml dev=1 rc=0 total=$((1024 * M)) free=$((1024 * M)) used=0|" \
  "without CUDA: NVML shows the limit on every GPU, and nothing held"
is "$(val 4 count)" 0 "without CUDA: the process is not in NVML's list"

# Per-device limits need the ordinal: a UUID names its GPU; an index is
# NVML's where CUDA numbers GPUs by PCI bus as NVML does.  The simulated
# GPUs are two models, so without CUDA_DEVICE_ORDER=PCI_BUS_ID an index
# cannot be placed and NVML's own answer stands.
for row in "1|PCI_BUS_ID|$((8192 * M))/$((1024 * M))" \
  "GPU-c36d6751-5e1a-4d0c-9a77-73696d677001||$((8192 * M))/$((1024 * M))" \
  "GPU-c36d6751-5e1a-4d0c-9a77-73696d677001,0|PCI_BUS_ID|$((2048 * M))/$((1024 * M))" \
  "1||$((8192 * M))/$((4096 * M))" \
  "GPU-c36d6751|PCI_BUS_ID|$((8192 * M))/$((4096 * M))" \
  "MIG-1|PCI_BUS_ID|$((8192 * M))/$((4096 * M))"; do
  v=${row%%|*} order=${row#*|}
  order=${order%%|*} want=${row##*|}
  CMG_SIM_DEVICES=8G,4G CUDA_VISIBLE_DEVICES=$v CUDA_DEVICE_ORDER=$order \
    CUMEMGUARD_OPTIONS=limit.0=1G,limit.1=2G guard "" app_dlsym nvml 0 nvml 1
  is "$(val 1 total)/$(val 2 total)" "$want" \
    "without CUDA, CUDA_VISIBLE_DEVICES='$v' CUDA_DEVICE_ORDER='$order': NVML's totals"
done

# Once CUDA starts, its own numbering takes over, and the device is set up
# from the driver: nothing was set up from NVML before.
CMG_SIM_DEVICES=8G guard "--limit 50%" app_dlsym nvml 0 info nvml 0 cmg 0
is "$(val 1 total)/$(val 2 total)/$(val 3 total)/$(val 4 physical)" \
  "$((4096 * M))/$((4096 * M))/$((4096 * M))/$((8192 * M))" \
  "limit=50%: half the card before CUDA starts and after, set up from the driver"

# ---- a group of two ------------------------------------------------------------

# bg NAME "LAUNCHER OPTIONS" SCRIPT...: a member in the background, its
# output in $tmp/NAME.out, its pid in $tmp/NAME.pid.
bg() {
  name=$1 opts=$2
  shift 2
  # shellcheck disable=SC2086
  "$LAUNCHER" $opts --report "$tmp/$name.%p.json" -- "$SIM/app_driver" "$@" \
    >"$tmp/$name.out" 2>"$tmp/$name.err" &
  echo $! >"$tmp/$name.pid"
}

bg holder "--group $G-f --group-limit 1GiB" alloc 300M sleep 60000
until_line "$tmp/holder.out" 'alloc i=0 .* rc=0'
# shellcheck disable=SC2086
guard "--group $G-f --group-limit 1GiB" app_driver $VIEWS
check "another member holds 300 MiB" $((624 * M)) $((1024 * M)) $((100 * M))
# shellcheck disable=SC2086
guard "--limit 800M --group $G-f --group-limit 1GiB" app_driver $VIEWS
check "the group leaves less room than the process's own limit" \
  $((624 * M)) $((800 * M)) $((100 * M))

# The holder dies while a member looks: what it held comes back in the
# view within a second, without an allocation.
bg looker "--group $G-f --group-limit 1GiB" info sleep 1100 info
until_line "$tmp/looker.out" '^info '
kill -KILL "$(cat "$tmp/holder.pid")"
wait "$(cat "$tmp/holder.pid")" 2>/dev/null
wait "$(cat "$tmp/looker.pid")"
is "$(sed -n 's/^info rc=0 free=\([0-9]*\) .*/\1/p' "$tmp/looker.out" | tr '\n' /)" \
  "$((724 * M))/$((1024 * M))/" \
  "a member killed while holding 300 MiB: free comes back within a second"

# ---- virtual memory: a sleep/wake cycle ------------------------------------------

guard "--group $G-g --group-limit 1GiB" app_driver vmm 512M info nvml 0 \
  vmm_free 0 info nvml 0 vmm 512M info vmm_free 1 info cmg 0
is "$(val 1 rc)/$(val 4 rc)/$(val 7 rc)/$(val 9 rc)" 0/0/0/0 \
  "cuMemCreate + cuMemMap, unmap + release, and again"
is "$(val 2 free)/$(val 3 free)/$(val 5 free)/$(val 6 free)/$(val 8 free)/$(val 10 free)" \
  "$((512 * M))/$((512 * M))/$((1024 * M))/$((1024 * M))/$((512 * M))/$((1024 * M))" \
  "free falls by the mapping, comes back when it is released, and falls again"
is "$(val 11 live)/$(val 11 allocs)/$(val 11 frees)" 0/2/2 "nothing is counted twice"

# ---- contexts ------------------------------------------------------------------

CMG_SIM_CONTEXT_BYTES=500M guard "--group $G-h --group-limit 2GiB" \
  app_driver alloc 100M info nvml_procs 0
is "$(val 2 free)/$(val 3 used)" $((1448 * M))/$((600 * M)) \
  "count_context=1: the group's room and the process's entry count the context"
CMG_SIM_CONTEXT_BYTES=500M CUMEMGUARD_OPTIONS=count_context=0 \
  guard "--group $G-h --group-limit 2GiB" app_driver alloc 100M info nvml_procs 0
is "$(val 2 free)/$(val 3 used)" $((1948 * M))/$((100 * M)) \
  "count_context=0: allocations only"

# ---- past the cap under on_exceed=warn -------------------------------------------

twelve=$(for i in 1 2 3 4 5 6 7 8 9 10 11 12; do printf 'alloc 100M '; done)
for caps in "--limit 1GiB" "--group $G-i --group-limit 1GiB"; do
  rm -f "$tmp"/report.*.json
  # shellcheck disable=SC2086
  guard "$caps --on-exceed warn" app_driver $twelve info total 0 nvml 0 \
    nvml_procs 0
  is "$(grep -c 'rc=0' "$tmp/out")" 16 "$caps, warn: all twelve allocations pass"
  is "$(val 13 free)/$(val 13 total)/$(val 14 bytes)" "0/$((1024 * M))/$((1024 * M))" \
    "$caps, warn: past the cap free is 0, never wrapped"
  is "$(val 15 free)/$(val 15 used)/$(val 16 used)" \
    "0/$((1024 * M))/$((1200 * M))" \
    "$caps, warn: NVML's figures, and the process's own 1.2 GiB"
  is "$(grep -c 'over the .*on_exceed=warn; later ones are only in the report' "$tmp/err")" 1 \
    "$caps, warn: one line says so"
  is "$(q "$(report)" '[(e["kind"], e["limit_bytes"]) for e in r["events"]]')" \
    "[('warn', $((1024 * M))), ('warn', $((1024 * M)))]" \
    "$caps, warn: each allocation past the cap is an event of the report"
done
is "$(count "allowed cuMemAlloc_v2 of 100.0 MiB on device 0 over the group's cap: group '$G-i' has 1000.0 MiB in use, group limit 1.0 GiB (on_exceed=warn; later ones are only in the report)" "$tmp/err")" 1 \
  "the line names the group, its usage and its cap"

done_testing
