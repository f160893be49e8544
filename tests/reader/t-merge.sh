#!/bin/sh
# merge: the reports of several processes as one view.  Two processes that
# leak from the same site make one group with the sum of both; devices are
# matched by UUID, so two ranks that number the same GPU differently add up
# on one row; the totals are the sums of the reports' totals, graph memory
# and contexts included.
. "$srcdir/tests/reader/defs.sh"
D=$TOOLDIR/data

tool_in "$TOOLDIR" merge data/job-a.json data/job-b.json
is "$rc" 0 "merge of the fixed reports"
golden merge-job-a-b.txt "its text"

tool_json "$tmp/m.json" merge --json --top 0 "$D/job-a.json" "$D/job-b.json"
s='d["summaries"][0]'
is "$(js "$tmp/m.json" "len(d['summaries']), len($s['sources'])")" "(1, 2)" \
  "--json: one summary of two sources"
is "$(js "$tmp/m.json" "$s['leaked_bytes']")" \
  "$(($(js "$D/job-a.json" 'd["summary"]["live_bytes"]') + $(js "$D/job-b.json" 'd["summary"]["live_bytes"]')))" \
  "leaked bytes: the sum of the two reports' live bytes"
is "$(js "$tmp/m.json" "$s['leaked_allocations']")" \
  "$(($(js "$D/job-a.json" 'd["summary"]["live_allocations"]') + $(js "$D/job-b.json" 'd["summary"]["live_allocations"]')))" \
  "leaked allocations: the sum"
is "$(js "$tmp/m.json" "[(x['uuid'][:12], x['processes'], x['live_bytes'], x['allocations']) for x in $s['devices']]")" \
  "[('GPU-0a0a0a0a', 2, 7517241344, 12), ('GPU-0b0b0b0b', 2, 1090523136, 5)]" \
  "devices matched by UUID across ranks that number them differently"
is "$(js "$tmp/m.json" "[(l['count'], l['bytes']) for l in $s['leaks'] if [f['function'] for f in l['frames']][2:3] == ['alloc_weights']]")" \
  "[(4, 6442450944)]" "the same site in both processes is one group: 2 + 2 allocations"
is "$(js "$tmp/m.json" "len($s['leaks'])")" 7 \
  "groups of both, without duplicates (7 in job-a, 3 in job-b, 3 shared)"
is "$(js "$tmp/m.json" "[(p['source'], p['device']) for p in $s['peaks']]")" \
  "[(0, 0), (0, 1), (1, 0), (1, 1)]" "each process's peaks, by source"

# Two runs of the simulated CUDA, as two processes of one job: the same
# sites, so the same stacks, whatever their addresses.
guard "--report $tmp/p1.json" app_rt_shared site 1 1M site 2 2M
guard "--report $tmp/p2.json" app_rt_shared site 1 1M site 3 4M
validate "$tmp/p1.json" "$tmp/p2.json"
tool_json "$tmp/m.json" merge --json "$tmp/p1.json" "$tmp/p2.json"
is "$(js "$tmp/m.json" "sorted((l['count'], l['bytes'], [f['function'] for f in l['frames'] if (f['function'] or '').startswith('cmgtest_site')]) for l in $s['leaks'])")" \
  "[(1, 2097152, ['cmgtest_site_2']), (1, 4194304, ['cmgtest_site_3']), (2, 2097152, ['cmgtest_site_1'])]" \
  "cmgtest_site_1 of both processes is one group of 2"
is "$(js "$tmp/m.json" "($s['leaked_bytes'], $s['leaked_allocations'])")" \
  "($((8 * M)), 4)" "the totals add up"
is "$(js "$tmp/m.json" "[(x['processes'], x['live_bytes'], x['allocations']) for x in $s['devices']]")" \
  "[(2, $((8 * M)), 4)]" "one device row for both processes"

# A parent and its forked child, each with its own report.
guard "--report $tmp/f.%p.json" app_rt_static site 1 1M site 2 2M fork site 1 3M \
  endfork site 3 4M
set -- "$tmp"/f.*.json
is "$#" 2 "a parent and its child wrote a report each"
validate "$@"
tool_json "$tmp/m.json" merge --json "$@"
is "$(js "$tmp/m.json" "$s['leaked_bytes']")" \
  "$(($(q "$1" 'r["summary"]["live_bytes"]') + $(q "$2" 'r["summary"]["live_bytes"]')))" \
  "merged leaked bytes: the sum of both reports"
is "$(js "$tmp/m.json" "$s['leaked_bytes']")" $((10 * M)) "that is 1M + 2M + 4M + 3M"
is "$(js "$tmp/m.json" "[(x['processes'], x['live_bytes']) for x in $s['devices']]")" \
  "[(2, $((10 * M)))]" "one device row, both processes"
tool merge "$@"
is "$(tail -n 1 "$tmp/out")" \
  "SUMMARY: cumemguard: 10.0 MiB (10485760 bytes) leaked in 4 allocations" "text: the SUMMARY line"
is "$(head -n 1 "$tmp/out")" "cumemguard reports of 2 processes, merged" "text: the header"

# merged KIND MEMBER KEYS DEVICES WHAT GROUPS: merge --json of
# data/KIND.json and a second process's $tmp/KIND2.json: each device's
# MEMBER, by KEYS, is DEVICES (WHAT says why); the groups of kind KIND
# (api, count, bytes), their bytes and the leaked bytes are GROUPS, summed
# apart from the leaks.  Leaves the merge's text in $tmp/out.
merged() {
  tool_json "$tmp/m.json" merge --json "$D/$1.json" "$tmp/${1}2.json"
  is "$(js "$tmp/m.json" "[tuple(x['$2'][k] for k in $3) for x in $s['devices']]")" \
    "$4" "$5"
  is "$(js "$tmp/m.json" "[(l['api'], l['count'], l['bytes']) for l in $s['$1']], $s['$1_bytes'], $s['leaked_bytes']")" \
    "$6" "the $1 groups add up apart from the leaks"
  tool merge "$D/$1.json" "$tmp/${1}2.json"
}

# Graph memory of two processes on the same devices: each has its pool,
# so what they held adds up, counts too; the highs are the larger one's;
# an estimate in either makes the sum one.  The second process is
# data/graph.json with device 0 estimated and a higher high.
"$PYTHON3" - "$D/graph.json" "$tmp/graph2.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["process"]["pid"] += 1
r["devices"][0]["graph_memory"].update(source="estimate", reserved_high_bytes=2 << 30)
json.dump(r, open(sys.argv[2], "w"))
PY
merged graph graph_memory \
  "('reserved_bytes', 'reserved_high_bytes', 'used_bytes', 'used_high_bytes', 'source', 'launches', 'uploads', 'trims', 'denied')" \
  "[(3221225472, 2147483648, 2147483648, 1610612736, 'estimate', 8, 2, 0, 2), (0, 268435456, 0, 268435456, 'estimate', 4, 0, 2, 0)]" \
  "graph_memory: sums, the larger highs, an estimate if either is" \
  "([('cudaGraphLaunch', 2, 2147483648), ('cuGraphUpload', 2, 1073741824)], 3221225472, 7516192768)"
is "$(grep '^device 0 graph memory: ' "$tmp/out")" \
  "device 0 graph memory: 3.0 GiB reserved (high 2.0 GiB), 2.0 GiB in use (high 1.5 GiB), cumemguard's estimate; 8 launches, 2 uploads, 0 trims, 2 denied" \
  "text: the merged line"

# The footprints of two processes on the same devices: their contexts and
# bytes add up, each null where either is; the caps count the contexts
# only if both processes' do; NVML is the source if it was either's.  The
# second process is data/context.json run under count_context=0 (no
# entries of kind context) and measured by the driver, without NVML's
# figure for the process.
"$PYTHON3" - "$D/context.json" "$tmp/context2.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["process"]["pid"] += 1
r["options"]["count_context"] = False
ctx = sum(l["bytes"] for l in r["leaks"] if l["kind"] == "context")
r["leaks"] = [l for l in r["leaks"] if l["kind"] != "context"]
r["devices"][0]["live_bytes"] -= ctx
r["devices"][0]["footprint"].update(source="driver", process_bytes=None,
                                    unexplained_bytes=None, counted=False,
                                    cross_check=None)
json.dump(r, open(sys.argv[2], "w"))
PY
merged context footprint \
  "('contexts', 'context_bytes', 'source', 'why', 'allocated_bytes', 'process_bytes', 'unexplained_bytes', 'counted', 'processes')" \
  "[(4, 1635778560, 'nvml', None, 2147483648, None, None, False, 2), (2, None, None, 'NVML does not know GPU-0b0b0b0b-5555-6666-7777-888888888888', 1073741824, None, None, False, 2)]" \
  "footprint: sums, null where either is, counted only if both are, NVML if either" \
  "([('cuDevicePrimaryCtxRetain', 1, 543162368), ('cuCtxCreate_v4', 1, 274726912)], 817889280, 3221225472)"
is "$(grep '^device [0-9] on the card' "$tmp/out")" \
  "device 0 on the card: 2.0 GiB allocated + 1.5 GiB in 4 contexts (NVML's and the driver's counts); NVML gave no figure for the whole process; the caps of some processes count their contexts
device 1 on the card: not measured (NVML does not know GPU-0b0b0b0b-5555-6666-7777-888888888888); 1.0 GiB allocated, 2 contexts; the caps count allocations only" \
  "text: the merged lines"
is "$(js "$tmp/m.json" "[x['footprint']['cross_check'] for x in $s['devices']]")" \
  "[{'contexts': 1, 'nvml_bytes': 274726912, 'driver_bytes': 281018368}, None]" \
  "cross_check: a process measured by the driver alone adds nothing"
# Two processes whose contexts were both cross-checked: the checks add up.
"$PYTHON3" - "$D/context.json" "$tmp/context3.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["process"]["pid"] += 2
r["devices"][0]["footprint"]["cross_check"]["driver_bytes"] += 10 << 20
json.dump(r, open(sys.argv[2], "w"))
PY
tool_json "$tmp/m3.json" merge --json "$D/context.json" "$tmp/context3.json"
is "$(js "$tmp/m3.json" "[x['footprint']['cross_check'] for x in $s['devices']]")" \
  "[{'contexts': 2, 'nvml_bytes': 549453824, 'driver_bytes': 572522496}, None]" \
  "cross_check: sums over the processes"
tool merge "$D/context.json" "$tmp/context3.json"
is "$(grep '^device 0 cross-check' "$tmp/out")" \
  "device 0 cross-check of 2 contexts: NVML 524.0 MiB, the driver's free memory 546.0 MiB (+22.0 MiB)" \
  "text: the merged cross-check"
# With a report written before footprints, only the one that has it is
# summed, and the line says so.
tool merge "$D/context.json" "$D/job-a.json"
is "$(grep '^device 0 on the card' "$tmp/out")" \
  "device 0 on the card (1 of 2 processes): 1.8 GiB (NVML) = 1.0 GiB allocated + 780.0 MiB in 2 contexts + 36.0 MiB unexplained; the caps count the contexts" \
  "text: a process without a footprint is not in the sum, and the line says so"

# merge of one report is its summary.
tool merge "$1"
cp "$tmp/out" "$tmp/merged1"
tool "$1"
cmp -s "$tmp/out" "$tmp/merged1"
tap $? "merge of one report prints what its summary prints"

done_testing
