#!/bin/sh
# Each process's footprint on the card: every context costs memory no
# allocation asks for (CMG_SIM_CONTEXT_BYTES, as a real driver's ~0.5 GiB).
# Its cost is measured as it is made (NVML's per-process usage, else the
# driver's free memory), counted by the caps under count_context=1 (the
# default) and not under 0; cuMemGetInfo, NVML's memory information and
# NVML's list of processes tell one story; the report splits the card's
# figure; without NVML or with NVML denied it says why; in another PID
# namespace the process's entry is the one that appeared as it made its
# context, and where that cannot be told the report says why; the group's
# view, status and metrics show it.
. "$srcdir/tests/lib/defs.sh"
M=1048576
C=$((500 * M))
R=$tmp/r.json
export CMG_SIM_DEVICES=4G,4G CMG_SIM_CONTEXT_BYTES=500M

# run OPTIONS APP SCRIPT...: guard, with a fresh report in $R.
run() {
  rm -f "$R"
  guard "$@"
}

# fp FIELD: devices[0].footprint.FIELD of the report.
fp() {
  q "$R" "r['devices'][0]['footprint']['$1']"
}

SCRIPT="info cmg 0 alloc 1G alloc 600M info nvml_procs 0 nvml 0"

# Without the library: the context shows in every view.
# shellcheck disable=SC2086
bare app_driver $SCRIPT
is "$(val 1 free)" $((4096 * M - C)) "without the library the context takes 500 MiB"
is "$(val 6 used)/$(val 7 used)" $((1624 * M + C))/$((1624 * M + C)) \
  "NVML's process list and memory information count it"

# count_context=1 (the default): the caps count the context.
# shellcheck disable=SC2086
run "--limit 2G --report $R" app_driver $SCRIPT
is "$(val 1 free)/$(val 1 total)" $((2048 * M - C))/$((2048 * M)) \
  "cuMemGetInfo: the context takes its share of the limit"
is "$(val 2 live)" "$C" "the interposer counts it"
is "$(val 3 rc)/$(val 4 rc)" 0/2 "what is left for allocations is the limit less the context"
is "$(count 'denied cuMemAlloc_v2 of 600.0 MiB (629145600 bytes) on device 0: 1.5 GiB in use, limit 2.0 GiB' "$tmp/err")" 1 \
  "the denial counts the context in use"
is "$(val 5 free)/$(val 6 used)/$(val 7 used)" \
  $((512 * M - C + 512 * M))/$((1024 * M + C))/$((1024 * M + C)) \
  "cuMemGetInfo, NVML's process list and its memory information agree"
validate "$R"
is "$(fp contexts)/$(fp context_bytes)/$(fp source)/$(fp counted)" "1/$C/nvml/True" \
  "report: one context of 500 MiB, measured by NVML, counted"
is "$(fp allocated_bytes)/$(fp process_bytes)/$(fp unexplained_bytes)" \
  "$((1024 * M))/$((1024 * M + C))/0" \
  "report: 1 GiB allocated, the card's 1.5 GiB, nothing unexplained"
is "$(q "$R" '[(l["kind"], l["api"], l["bytes"]) for l in r["leaks"] if l["kind"] == "context"]')" \
  "[('context', 'cuDevicePrimaryCtxRetain', $C)]" \
  "report: the context is an entry of kind context, from the retain that made it"
is "$(grep -c '^cumemguard: report .*: 1.0 GiB in 1 allocation live' "$tmp/err")" 1 \
  "the exit line counts allocations only"

# A leak exit code is about the program's allocations, never its context.
guard "--limit 2G --leak-exitcode 9" app_driver alloc 1M free 0
is "$rc" 0 "a context alone is not a leak"

# count_context=0: allocations only, and every view says so.
export CUMEMGUARD_OPTIONS=count_context=0
# shellcheck disable=SC2086
run "--limit 2G --report $R" app_driver $SCRIPT
unset CUMEMGUARD_OPTIONS
is "$(val 1 free)/$(val 2 live)" $((2048 * M))/0 "count_context=0: the context is not counted"
is "$(val 3 rc)/$(val 4 rc)" 0/0 "allocations have the whole limit"
is "$(val 5 free)/$(val 6 used)/$(val 7 used)" \
  $((424 * M))/$((1624 * M))/$((1624 * M)) \
  "NVML's views show the allocations only, as cuMemGetInfo does"
is "$(fp context_bytes)/$(fp counted)/$(fp process_bytes)" \
  "$C/False/$((1624 * M + C))" \
  "report: the context measured, not counted, and NVML's own figure for the card"
is "$(q "$R" 'len([l for l in r["leaks"] if l["kind"] == "context"])')" 0 \
  "report: no context entry"

# Created contexts: each is measured and counted; destroyed, released.
run "--limit 4G --report $R" app_driver ctx_create cmg 0 ctx_create cmg 0 \
  ctx_destroy 0 cmg 0
is "$(val 2 live)/$(val 4 live)/$(val 6 live)" $((2 * C))/$((3 * C))/$((2 * C)) \
  "cuCtxCreate's contexts count, and their destruction gives them back"
is "$(fp contexts)/$(fp context_bytes)" "2/$((2 * C))" "report: two contexts alive"
is "$(q "$R" '[(l["kind"], l["bytes"]) for l in r["released"]]')" \
  "[('context', $C)]" "report: the destroyed one is released by teardown"

# The cross-check: where a context of the device is current as another is
# made, the driver's free memory is read around it too.  The driver keeps
# some memory per context that NVML does not count for the process (about
# 6 MiB on an H100); the report gives both, and NVML's is counted.
export CMG_SIM_CONTEXT_DRIVER_BYTES=6M
run "--limit 2G --report $R" app_driver info ctx_create cmg 0 info \
  nvml_procs 0 nvml 0
unset CMG_SIM_CONTEXT_DRIVER_BYTES
is "$(val 3 live)" $((2 * C)) "the caps count NVML's figure for each context"
is "$(($(val 4 total) - $(val 4 free)))/$(val 5 used)/$(val 6 used)" \
  $((2 * C))/$((2 * C))/$((2 * C)) \
  "cuMemGetInfo, NVML's process list and its memory information agree on it"
is "$(q "$R" 'r["devices"][0]["footprint"]["cross_check"]')" \
  "{'contexts': 1, 'nvml_bytes': $C, 'driver_bytes': $((C + 6 * M))}" \
  "report: the created context cross-checked; the first context cannot be"
validate "$R"
"$top_builddir/cumemguard-report" "$R" >"$tmp/sum" 2>&1
is "$(grep '^device 0 cross-check' "$tmp/sum")" \
  "device 0 cross-check of 1 context: NVML 500.0 MiB, the driver's free memory 506.0 MiB (+6.0 MiB)" \
  "the summary prints both"
run "--limit 4G --report $R" app_driver info alloc 1M
is "$(fp cross_check)" None "report: one context, nothing to cross-check"

# A primary context's reset and last release give it back.
guard "--limit 2G" app_driver info cmg 0 reset cmg 0
is "$(val 2 live)/$(val 4 live)" "$C/0" "a reset releases the primary context's cost"

# ---- when the cost cannot be measured --------------------------------------

export CMG_SIM_NVML_PROCESSES=denied
run "--limit 2G --report $R" app_driver info ctx_create cmg 0
unset CMG_SIM_NVML_PROCESSES
is "$(val 1 free)" $((2048 * M)) \
  "NVML denied: the primary context is not measured, so not counted"
is "$(val 3 live)" "$C" \
  "a created context is measured by the driver's free memory, and counted"
is "$(fp source)/$(fp context_bytes)/$(fp counted)" "driver/$C/True" \
  "report: what was measured, and that it is counted"
is "$(fp why)" "1 of 2 contexts not measured: NVML refused the list of processes (no permission)" \
  "report: why the other was not"

# ---- in a PID namespace -----------------------------------------------------

# NVML lists the process under the host's pid.  Its entry is the one that
# appeared as it made its context, checked against the card's used memory.
export CMG_SIM_NVML_PID=1
run "--limit 2G --report $R" app_driver info alloc 1M
unset CMG_SIM_NVML_PID
is "$(val 1 free)" $((2048 * M - C)) \
  "in another PID namespace, the entry that appeared is this process's: counted"
is "$(fp source)/$(fp context_bytes)/$(fp counted)/$(fp why)" \
  "nvml/$C/True/None" "report: measured by NVML, nothing to explain"
is "$(fp process_bytes)" $((C + M)) \
  "report: NVML's figure for the process read again, under the pid found"

# Among other processes of the card, every process of the namespace under
# a pid of its own; a second context is found under the pid kept.
export CMG_SIM_NVML_PIDNS=100000 CMG_SIM_NVML_OTHERS=4000:300M,4001:200M
run "--limit 2G --report $R" app_driver info ctx_create cmg 0 nvml_procs 0
is "$(val 1 free)/$(val 3 live)" $((2048 * M - C))/$((2 * C)) \
  "among two other processes, both contexts found and counted"
is "$(val 4 count)/$(val 4 pid)" "3/$(($(q "$R" 'r["process"]["pid"]') + 100000))" \
  "NVML lists the two others and this process, under its pid plus 100000"
is "$(fp contexts)/$(fp context_bytes)/$(fp why)" "2/$((2 * C))/None" \
  "report: both contexts measured"

# Another process starting on the card at the same moment: two entries
# appear, and which is this one cannot be told.
export CMG_SIM_NVML_RIVAL=4002:700M
run "--limit 2G --report $R" app_driver info alloc 1M
is "$(val 1 free)/$(fp source)/$(fp context_bytes)" "$((2048 * M))/None/None" \
  "a process starting at the same moment: not measured, not counted"
tap "$(fp why | grep -q 'NVML lists this process (pid [0-9]*) under another pid, and 2 processes appeared or grew as it made its context: it cannot tell which is this one'; echo $?)" \
  "report: it cannot tell which entry is this process, and says so"
# One that NVML does not list: the card's used memory grew by more.
export CMG_SIM_NVML_RIVAL=0:700M
run "--limit 2G --report $R" app_driver info alloc 1M
is "$(val 1 free)/$(fp source)" "$((2048 * M))/None" \
  "memory taken by a process NVML does not list: not measured"
is "$(fp why | sed 's/(pid [0-9]*)/(pid P)/')" \
  "NVML's entry for pid $(($(fp why | sed -n 's/.*for pid \([0-9]*\) .*/\1/p'))) grew by 500.0 MiB as this process (pid P) made its context, the card's used memory by 1200.0 MiB: another process too?" \
  "report: the entry and the card's memory disagree, and it says so"
unset CMG_SIM_NVML_PIDNS CMG_SIM_NVML_OTHERS CMG_SIM_NVML_RIVAL

# The simulated NVML's variables, malformed: one line naming the value.
for bad in "CMG_SIM_NVML_OTHERS=4000" "CMG_SIM_NVML_RIVAL=x:1M" \
  "CMG_SIM_NVML_PIDNS=-3"; do
  env "$bad" "$SIM/app_driver" nvml 0 >"$tmp/out" 2>"$tmp/err"
  is "$(val 1 rc)/$(wc -l <"$tmp/err")/$(grep -c "^cmgsim: ${bad%%=*}=" "$tmp/err")" \
    999/1/1 "the simulated NVML refuses $bad in one line"
done

# Without NVML at all.
mkdir -p "$tmp/nonvml"
for f in "$SIM"/.libs/libcuda.so*; do ln -s "$f" "$tmp/nonvml/"; done
saved=$LD_LIBRARY_PATH
export LD_LIBRARY_PATH=$tmp/nonvml
run "--limit 2G --report $R" app_dlsym info alloc 1M
export LD_LIBRARY_PATH=$saved
is "$(val 1 free)" $((2048 * M)) "without NVML, not counted"
is "$(fp why)" "no NVML (libnvidia-ml.so.1 not found)" "report: no NVML, said"

# ---- groups, status, metrics ------------------------------------------------

G=fp$$
SHM=/dev/shm/cumemguard.$(id -u)
trap 'rm -rf "$tmp"; rm -f "$SHM.$G"*' EXIT
guard "--group $G --group-limit 1G" app_driver alloc 600M cmg 0
is "$(val 1 rc)" 2 "a group's cap counts the context too"
is "$(count "group '$G' has 500.0 MiB in use, group limit 1.0 GiB" "$tmp/err")" 1 \
  "and says so"
"$LAUNCHER" --group "$G" --group-limit 2G --report "$tmp/g.%p.json" -- \
  "$SIM/app_driver" alloc 100M sleep 30000 >"$tmp/bg.out" 2>&1 &
bgpid=$!
until_line "$tmp/bg.out" '^alloc '
"$LAUNCHER" status "$G" >"$tmp/status" 2>&1
is "$(grep -c ' 600\.0 MiB .*contexts 500\.0 MiB' "$tmp/status")" 1 \
  "cumemguard status shows the process's contexts"
"$LAUNCHER" status "$G" --json >"$tmp/status.json"
is "$("$PYTHON3" -c 'import json,sys; p=json.load(open(sys.argv[1]))["groups"][0]["processes"][0]["devices"][0]; print(p["live"], p["context"])' "$tmp/status.json")" \
  "$((600 * M)) $C" "and its JSON"
"$LAUNCHER" status "$G" --prometheus >"$tmp/metrics"
is "$(grep -c "^cumemguard_process_context_bytes{group=\"$G\",.*,device=\"0\",uuid=\"GPU-c36d6751-5e1a-4d0c-9a77-73696d677000\"} $C\$" "$tmp/metrics")" 1 \
  "the Prometheus exposition has cumemguard_process_context_bytes"
kill "$bgpid" 2>/dev/null
wait "$bgpid" 2>/dev/null

done_testing
