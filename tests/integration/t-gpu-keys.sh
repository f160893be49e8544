#!/bin/sh
# Caps bound to a GPU, not to an ordinal: limit.GPU-<uuid> and
# group_limit.GPU-<uuid> hold on the GPU they name whatever ordinal
# CUDA_VISIBLE_DEVICES gives it, and a group counts each GPU once, however
# its members number them.  Two simulated GPUs, seen in both orders.
. "$srcdir/tests/lib/defs.sh"
M=1048576
G=gkey$$
SHM=/dev/shm/cumemguard.$(id -u)
trap 'rm -rf "$tmp"; rm -f "$SHM.$G"*' EXIT
export CMG_SIM_DEVICES=8G,8G
U0=GPU-c36d6751-5e1a-4d0c-9a77-73696d677000
U1=GPU-c36d6751-5e1a-4d0c-9a77-73696d677001

# ---- a process's own limits -------------------------------------------------

for cvd in unset 1,0; do
  if [ $cvd = unset ]; then unset CUDA_VISIBLE_DEVICES; else
    CUDA_VISIBLE_DEVICES=$cvd
    export CUDA_VISIBLE_DEVICES
  fi
  CUMEMGUARD_OPTIONS="limit.$U0=1GiB,limit.$U1=3GiB"
  export CUMEMGUARD_OPTIONS
  guard "" app_driver device 0 uuid 0 info alloc 2G device 1 uuid 1 info \
    alloc 2G
  # Which ordinal is which GPU here.
  if [ "$(at uuid uuid 1)" = $U0 ]; then small=1 big=2; else small=2 big=1; fi
  is "$(at uuid uuid $small)/$(at info total $small)/$(at alloc rc $small)" \
    "$U0/$((1024 * M))/2" \
    "CUDA_VISIBLE_DEVICES $cvd: $U0 has its 1 GiB, at ordinal $((small - 1))"
  is "$(at uuid uuid $big)/$(at info total $big)/$(at alloc rc $big)" \
    "$U1/$((3072 * M))/0" \
    "CUDA_VISIBLE_DEVICES $cvd: $U1 has its 3 GiB, at ordinal $((big - 1))"
done
unset CUDA_VISIBLE_DEVICES

# (Variables are exported, not put before a function: dash keeps those.)
CUMEMGUARD_OPTIONS="limit=2GiB,limit.1=5GiB,limit.$U0=1GiB"
guard "--report $tmp/keys.%p.json" app_driver device 0 info device 1 info \
  alloc 1M
is "$(at info total 1)/$(at info total 2)" $((1024 * M))/$((5120 * M)) \
  "a GPU's limit comes before its ordinal's, which comes before the default"
keys=$(ls "$tmp"/keys.*.json)
is "$(q "$keys" 'r["options"]["gpu_limits"]')" \
  "{'$U0': {'limit': {'bytes': $((1024 * M))}, 'soft_limit': None, 'group_limit': None}}" \
  "the report's options name the GPU's limit by its UUID"
is "$(q "$keys" 'sorted(r["options"]["limits"])')" "['1']" \
  "beside the ordinal's"
CUMEMGUARD_OPTIONS="soft_limit.$U1=1GiB,limit.$(echo $U0 | tr a-f A-F)=3GiB"
guard "--report $tmp/keys2.%p.json" app_driver alloc 1M
is "$(q "$(ls "$tmp"/keys2.*.json)" '[(k, [n for n, v in g.items() if v]) for k, g in r["options"]["gpu_limits"].items()]')" \
  "[('$U1', ['soft_limit']), ('$U0', ['limit'])]" \
  "each GPU's limits, in the order named, the UUID in lower case"
validate "$keys" "$tmp"/keys2.*.json

# ---- a group ------------------------------------------------------------------

# Member a sees the GPUs in order and holds 800 MiB of the first and 2 GiB
# of the second; member b sees them the other way round.
gopts="group_limit.$U0=1GiB,group_limit.$U1=3GiB"
: >"$tmp/a.out"
CUMEMGUARD_OPTIONS=$gopts "$LAUNCHER" --group "$G" --report "$tmp/a.%p.json" \
  -- "$SIM/app_driver" device 0 alloc 800M device 1 alloc 2G await \
  "$tmp/a.go" >"$tmp/a.out" 2>&1 &
apid=$!
until_line "$tmp/a.out" '^alloc i=1 .*rc=0'
CUDA_VISIBLE_DEVICES=1,0 CUMEMGUARD_OPTIONS=$gopts
export CUDA_VISIBLE_DEVICES
guard "--group $G" app_driver device 1 uuid 1 info alloc 300M alloc 200M \
  device 0 uuid 0 info alloc 1G alloc 1M
unset CUDA_VISIBLE_DEVICES
is "$(at uuid uuid 1)/$(at info total 1)/$(at info free 1)" \
  "$U0/$((1024 * M))/$((224 * M))" \
  "b's ordinal 1 is a's ordinal 0: one cap of 1 GiB, 800 MiB of it a's"
is "$(at alloc rc 1)/$(at alloc rc 2)" 2/0 "and it holds there"
is "$(at uuid uuid 2)/$(at info total 2)/$(at info free 2)" \
  "$U1/$((3072 * M))/$((1024 * M))" \
  "b's ordinal 0 is a's ordinal 1: 3 GiB, 2 GiB of it a's"
is "$(at alloc rc 3)/$(at alloc rc 4)" 0/2 "and it holds there"
is "$(count "group '$G' has 800.0 MiB in use, group limit 1.0 GiB" "$tmp/err")/$(count "group '$G' has 3.0 GiB in use, group limit 3.0 GiB" "$tmp/err")" \
  1/1 "each denial names its GPU's cap"
"$LAUNCHER" status "$G" --json >"$tmp/out"
is "$("$PYTHON3" -c '
import json, sys
g = json.load(open(sys.argv[1]))["groups"][0]
print(" ".join("%s=%d/%d" % (d["uuid"], d["used"], d["cap"]) for d in g["devices"]))' "$tmp/out")" \
  "$U0=$((800 * M))/$((1024 * M)) $U1=$((2048 * M))/$((3072 * M))" \
  "status counts each GPU once, by its UUID"
"$LAUNCHER" status "$G" >"$tmp/out"
is "$(awk '$1 ~ /^[0-9]+$/ && NF == 8 { print $1 "=" $NF }' "$tmp/out" | tr '\n' ' ')" \
  "0=$U0 1=$U1 " "its text names each device's GPU"
"$LAUNCHER" status "$G" --prometheus >"$tmp/out"
is "$(grep -c "^cumemguard_group_used_bytes{group=\"$G\",uid=\"$(id -u)\",device=\"1\",uuid=\"$U1\"} $((2048 * M))\$" "$tmp/out")/$(grep -c "^cumemguard_process_used_bytes{.*,device=\"0\",uuid=\"$U0\"} " "$tmp/out")" \
  1/1 "and its metrics label each device with its GPU's UUID"
: >"$tmp/a.go"
wait $apid
is "$(q "$(ls "$tmp"/a.*.json)" '[(k, g["group_limit"]["bytes"] // 2**20) for k, g in r["options"]["gpu_limits"].items()]')" \
  "[('$U0', 1024), ('$U1', 3072)]" "a member's report names each GPU's group cap"

# A member whose options key a GPU differently is told once, as for
# ordinals: once per start of the interposer, and under valgrind its own
# launcher inherits LD_PRELOAD and starts it once more under the same pid.
starts=1
case ${CMG_TEST_PREFIX:-} in *valgrind*) starts=2 ;; esac
: >"$tmp/a.out"
CUMEMGUARD_OPTIONS=$gopts "$LAUNCHER" --group "$G-2" --report "$tmp/a.%p.json" \
  -- "$SIM/app_driver" alloc 1M await "$tmp/a2.go" >"$tmp/a.out" 2>&1 &
apid=$!
until_line "$tmp/a.out" '^alloc i=0 .*rc=0'
CUMEMGUARD_OPTIONS="group_limit.$U0=2GiB"
guard "--group $G-2" app_driver alloc 1G alloc 1M
is "$(at alloc rc 1)/$(count "group=$G-2: group_limit here is" "$tmp/err")" \
  "2/$starts" "a member keyed otherwise: the group's caps stand, said once"
is "$(count "group_limit here is none ($U0: 2.0 GiB), but the group's is none ($U0: 1.0 GiB, $U1: 3.0 GiB)" "$tmp/err")" \
  "$starts" "the line names each GPU's cap"
: >"$tmp/a2.go"
wait $apid

done_testing
