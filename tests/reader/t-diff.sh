#!/bin/sh
# diff BASE NEW finds exactly the growth planted between two runs of a
# simulated program, although every address differs between the runs
# (ASLR): stacks are matched by module, offset and function.  Also the
# reverse, no change at all, --json, and the fixed reports' exact text.
. "$srcdir/tests/reader/defs.sh"
A=$tmp/a.json B=$tmp/b.json

guard "--report $A" app_rt_shared site 1 1M
guard "--report $B" app_rt_shared site 1 1M site 1 1M site 2 3M
validate "$A" "$B"
# Position-independent programs load elsewhere on every run.
pa=$(q "$A" '[f["address"] for f in r["frames"] if f["function"] == "cmgtest_site_1"][0]')
pb=$(q "$B" '[f["address"] for f in r["frames"] if f["function"] == "cmgtest_site_1"][0]')
if [ "$pa" = "$pb" ]; then
  echo "ok $((tap_n + 1)) - # SKIP the two runs loaded the program at the same address"
  tap_n=$((tap_n + 1))
else
  tap 0 "the two runs put cmgtest_site_1 at different addresses ($pa, $pb)"
fi

tool_json "$tmp/d.json" diff --json "$A" "$B"
is "$rc" 0 "diff --json"
sites='[[f["function"] for f in c["frames"] if (f["function"] or "").startswith("cmgtest_site")] for c in d["changes"]]'
is "$(js "$tmp/d.json" "[(c['delta_bytes'], c['delta_count'], c['base_count'], c['new_count']) for c in d['changes']]")" \
  "[($((3 * M)), 1, 0, 1), ($M, 1, 1, 2)]" "exactly two changes: +3M in +1, +1M in +1"
is "$(js "$tmp/d.json" "$sites")" "[['cmgtest_site_2'], ['cmgtest_site_1']]" \
  "from cmgtest_site_2 (new) and cmgtest_site_1 (grown)"
is "$(js "$tmp/d.json" '(d["delta_bytes"], d["delta_allocations"], d["base_leaked_bytes"], d["new_leaked_bytes"])')" \
  "($((4 * M)), 2, $M, $((5 * M)))" "the totals"

tool diff "$A" "$B"
is "$(grep -c '^Grew by ' "$tmp/out")/$(grep -c '^Shrank by ' "$tmp/out")" 2/0 \
  "text: two groups grew, none shrank"
is "$(grep '^Grew by ' "$tmp/out")" \
"Grew by 3.0 MiB (+1 allocation), to 3.0 MiB in 1 allocation (cudaMalloc, device 0, new) from:
Grew by 1.0 MiB (+1 allocation), to 2.0 MiB in 2 allocations (cudaMalloc, device 0) from:" \
  "text: by how much, to what, and which is new"
is "$(tail -n 1 "$tmp/out")" \
  "SUMMARY: cumemguard: leaked +4.0 MiB (+4194304 bytes) in +2 allocations; 2 leak groups grew, 0 shrank, 0 held" \
  "text: the SUMMARY line"

tool diff "$B" "$A"
is "$(grep '^Shrank by ' "$tmp/out")" \
"Shrank by 3.0 MiB (-1 allocation), to 0 B in 0 allocations (cudaMalloc, device 0, gone) from:
Shrank by 1.0 MiB (-1 allocation), to 1.0 MiB in 1 allocation (cudaMalloc, device 0) from:" \
  "reversed: the same two groups shrank"
is "$(tail -n 1 "$tmp/out")" \
  "SUMMARY: cumemguard: leaked -4.0 MiB (-4194304 bytes) in -2 allocations; 0 leak groups grew, 2 shrank, 0 held" \
  "reversed: the SUMMARY line"

tool diff "$A" "$A"
is "$(grep -c '^No leak group changed\.$' "$tmp/out")/$(tail -n 1 "$tmp/out")" \
  "1/SUMMARY: cumemguard: leaked 0 B (+0 bytes) in +0 allocations; 0 leak groups grew, 0 shrank, 1 held" \
  "a report against itself: nothing changed"

# A third run on another path into CUDA: the same sites, another API.
C=$tmp/c.json
guard "--report $C" app_driver site 1 1M
tool_json "$tmp/d.json" diff --json "$A" "$C"
is "$(js "$tmp/d.json" '[(c["api"], c["delta_bytes"]) for c in d["changes"]]')" \
  "[('cuMemAlloc_v2', $M), ('cudaMalloc', -$M)]" "another API is another leak group"

# --min-bytes and --top leave out the smaller changes.
tool diff --min-bytes 2M "$A" "$B"
is "$(grep -c '^Grew by ' "$tmp/out")/$(grep -c '^\.\.\. and 1 smaller change' "$tmp/out")" 1/1 \
  "--min-bytes 2M: the 1M change is left out, and said to be"

# CUDA graph memory and contexts: their groups diff as any, in the words
# of what holds them (the pool, a context), and the SUMMARY line and
# --json count them apart from the leaks.  The bases: data/graph.json
# without the upload's growth and with one weight less, data/context.json
# before libmodel made its context.
"$PYTHON3" - "$TOOLDIR/data" "$tmp" <<'PY'
import json, sys
for kind, drop in (("graph", "cuGraphUpload"), ("context", "cuCtxCreate_v4")):
    r = json.load(open(f"{sys.argv[1]}/{kind}.json"))
    r["leaks"] = [l for l in r["leaks"] if l["api"] != drop]
    if kind == "graph":
        w = [l for l in r["leaks"] if l["api"] == "cudaMalloc"][0]
        w["count"], w["bytes"], w["allocations"] = 1, w["bytes"] // 2, w["allocations"][:1]
    json.dump(r, open(f"{sys.argv[2]}/{kind}0.json", "w"))
PY
# held KIND CHANGES SUMMARY JSON: diff of $tmp/KIND0.json against
# data/KIND.json: the first lines of its changes, its SUMMARY line, and
# --json's (delta_bytes, base_KIND_bytes, new_KIND_bytes, [(kind,
# delta_bytes) of each change]).
held() {
  tool diff "$tmp/${1}0.json" "$TOOLDIR/data/$1.json"
  is "$(grep '^Grew by \|^Still held: ' "$tmp/out")" "$2" \
    "$1: its groups diff as any, named as what holds them"
  is "$(tail -n 1 "$tmp/out")" "$3" \
    "$1: the SUMMARY line counts them apart from the leaks"
  tool_json "$tmp/d.json" diff --json "$tmp/${1}0.json" "$TOOLDIR/data/$1.json"
  is "$(js "$tmp/d.json" "(d['delta_bytes'], d['base_$1_bytes'], d['new_$1_bytes'], [(c['kind'], c['delta_bytes']) for c in d['changes']])")" \
    "$4" "--json: leaked and $1 bytes apart, the groups together"
}
held graph \
"Grew by 1.5 GiB (+1 allocation), to 3.0 GiB in 2 allocations (cudaMalloc, device 0) from:
Grew by 512.0 MiB (+1 allocation), to 512.0 MiB in 1 allocation (cuGraphUpload, graph memory pool, device 0, new) from:
Still held: 1.0 GiB in 1 allocation (cudaGraphLaunch, graph memory pool, device 0), unchanged, from:
Still held: 512.0 MiB in 1 allocation (cuMemAlloc_v2, device 1), unchanged, from:" \
  "SUMMARY: cumemguard: leaked +1.5 GiB (+1610612736 bytes) in +1 allocation; 1 leak group grew, 0 shrank, 1 held; CUDA graph memory pools +512.0 MiB (+536870912 bytes), not leaked" \
  "(1610612736, 1073741824, 1610612736, [('device', 1610612736), ('graph', 536870912)])"
held context \
"Grew by 262.0 MiB (+1 allocation), to 262.0 MiB in 1 allocation (cuCtxCreate_v4, context, device 0, new) from:
Still held: 1.0 GiB in 2 allocations (cudaMalloc, device 0), unchanged, from:
Still held: 518.0 MiB in 1 allocation (cuDevicePrimaryCtxRetain, context, device 0), unchanged, from:
Still held: 512.0 MiB in 1 allocation (cuMemAlloc_v2, device 1), unchanged, from:" \
  "SUMMARY: cumemguard: leaked 0 B (+0 bytes) in +0 allocations; 0 leak groups grew, 0 shrank, 2 held; CUDA contexts and modules +262.0 MiB (+274726912 bytes), not leaked" \
  "(0, 543162368, 817889280, [('context', 274726912)])"

# The fixed reports: job-b is another rank whose device 0 is job-a's device
# 1; diff matches devices by ordinal, so the growth moves devices.
tool_in "$TOOLDIR" diff data/job-a.json data/job-b.json
is "$rc" 0 "diff of the fixed reports"
golden diff-job-a-b.txt "its text"

done_testing
