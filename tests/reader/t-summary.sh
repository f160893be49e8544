#!/bin/sh
# The summary: exact text for the fixed reports of tests/reader/data (two
# devices, hidden CUDA and start-up frames, a frame without a module, a
# truncated stack, a leak without a stack, pinned host memory, denials,
# events), and for a scripted run of the simulated CUDA with what varies
# filtered out; its numbers equal the report's; --top, --min-bytes,
# --all-frames, --json, several files, standard input; CUDA graph memory;
# CUDA contexts and each device's footprint on the card.
. "$srcdir/tests/reader/defs.sh"
D=$TOOLDIR/data

tool_in "$TOOLDIR" data/job-a.json
is "$rc" 0 "summary of a fixed report"
golden summary-job-a.txt "its text"
tool_in "$TOOLDIR" --all-frames data/job-a.json
golden summary-job-a-all.txt "--all-frames shows the CUDA and start-up frames"
tool_in "$TOOLDIR" --top 2 --min-bytes 512M data/job-a.json
golden summary-job-a-top.txt "--top 2 --min-bytes 512M"
tool_in "$TOOLDIR" --min-bytes 1G --top 0 data/job-a.json
is "$(grep -c '^Leaked' "$tmp/out")" 1 "--min-bytes 1G lists the one group of 1 GiB or more"
is "$(grep -c '^\.\.\. and 6 more leak groups: ' "$tmp/out")" 1 \
  "and says how many it did not list"
is "$(tail -n 1 "$tmp/out")" \
  "SUMMARY: cumemguard: 4.3 GiB (4581232640 bytes) leaked in 10 allocations; 64.0 MiB (67108864 bytes) in 1 allocation of host or imported memory" \
  "the SUMMARY line counts everything, listed or not"
is "$(js "$D/job-a.json" 'd["summary"]["live_bytes"]')" 4581232640 \
  "and that is the report's summary.live_bytes"

# --json: the numbers are the report's.
tool_json "$tmp/a.json" --json "$D/job-a.json"
is "$rc" 0 "--json"
is "$(js "$tmp/a.json" '(d["format"], d["version"], len(d["summaries"]))')" \
  "('cumemguard-report-summary', 1, 1)" "a summary document of one summary"
is "$(js "$tmp/a.json" '[(x["ordinal"], x["live_bytes"], x["peak_bytes"], x["allocations"], x["frees"], x["denied"], x["limit_bytes"]) for x in d["summaries"][0]["devices"]]')" \
  "$(js "$D/job-a.json" '[(x["ordinal"], x["live_bytes"], x["peak_bytes"], x["allocations"], x["frees"], x["denied"], x["limit_bytes"]) for x in d["devices"]]')" \
  "devices as the report has them"
is "$(js "$tmp/a.json" '(d["summaries"][0]["leaked_bytes"], d["summaries"][0]["leaked_allocations"], d["summaries"][0]["other_bytes"])')" \
  "$(js "$D/job-a.json" '(d["summary"]["live_bytes"], d["summary"]["live_allocations"], d["summary"]["host_live_bytes"])')" \
  "leaked bytes and allocations as the report's summary"
is "$(js "$tmp/a.json" '[(l["api"], l["kind"], l["device"], l["count"], l["bytes"]) for l in d["summaries"][0]["leaks"]]')" \
  "$(js "$D/job-a.json" '[(l["api"], l["kind"], l["device"], l["count"], l["bytes"]) for l in d["leaks"]]')" \
  "every leak group, in the report's order"
is "$(js "$tmp/a.json" '[f["function"] for f in d["summaries"][0]["leaks"][0]["frames"] if not f["hidden"]]')" \
  "['alloc_weights', 'load_model', 'main']" "frames, with the hidden ones marked"
is "$(js "$tmp/a.json" '[f["module"] for f in d["summaries"][0]["leaks"][0]["frames"] if f["hidden"]]')" \
  "['libcudart.so.12', 'libcudart.so.12', 'libc.so.6', 'libc.so.6', 'trainer']" \
  "the hidden ones: CUDA runtime inside, start-up outside"
is "$(js "$tmp/a.json" '[(p["device"], p["live_bytes"], [(b["bytes"], b["count"]) for b in p["by_stack"]]) for p in d["summaries"][0]["peaks"]]')" \
  "$(js "$D/job-a.json" '[(p["device"], p["bytes"], [(b["bytes"], b["count"]) for b in p["by_stack"]]) for p in d["peaks"]]')" \
  "the peaks as the report has them"
is "$(js "$tmp/a.json" '[(x["device"], x["api"], x["requested_bytes"], x["live_bytes"], x["limit_bytes"], x["by_stack"] is None) for x in d["summaries"][0]["first_denials"]]')" \
  "[(0, 'cudaMalloc', 13958643712, 3758096384, 17179869184, False), (None, 'cuMemHostAlloc', 1073741824, 100663296, 134217728, True)]" \
  "the first denial of each device, and of host memory"

# Several files: one summary each.
tool "$D/job-a.json" "$D/job-b.json"
is "$(grep -c '^SUMMARY: ' "$tmp/out")" 2 "two files: two summaries"
is "$(grep -c '^cumemguard report ' "$tmp/out")" 2 "each with its header"
tool_json "$tmp/j.json" --json "$D/job-a.json" "$D/job-b.json"
is "$(js "$tmp/j.json" '[s["sources"][0]["pid"] for s in d["summaries"]]')" "[4242, 4243]" \
  "--json: one summary object each"
tool - <"$D/job-b.json"
is "$rc/$(tail -n 1 "$tmp/out")" \
  "0/SUMMARY: cumemguard: 3.8 GiB (4026531840 bytes) leaked in 4 allocations" \
  "'-' reads standard input"

# A scripted run on the simulated CUDA: site 1 1M, site 2 2M, site 1 1M,
# site 3 4M (the peak, 8M), free it, site 3 5M (denied), site 2 1M.
R=$tmp/r.json
guard "--limit 8M --report $R" app_rt_shared site 1 1M site 2 2M site 1 1M \
  site 3 4M free 3 site 3 5M site 2 1M
validate "$R"
tool "$R"
is "$rc" 0 "summary of a simulated run"
normalize <"$tmp/out" >"$tmp/norm"
cp "$tmp/norm" "$tmp/out"
golden summary-sim.txt "its text, pids, times, paths and offsets aside"
is "$(tail -n 1 "$tmp/norm")" \
  "SUMMARY: cumemguard: 5.0 MiB ($(q "$R" 'r["summary"]["live_bytes"]') bytes) leaked in $(q "$R" 'r["summary"]["live_allocations"]') allocations" \
  "SUMMARY says the report's live bytes and allocations"
tool_json "$tmp/j.json" --json "$R"
is "$(js "$tmp/j.json" '[(l["bytes"], l["count"], [f["function"] for f in l["frames"] if f["function"] and f["function"].startswith("cmgtest_site")]) for l in d["summaries"][0]["leaks"]]')" \
  "[($((3 * M)), 2, ['cmgtest_site_2']), ($((2 * M)), 2, ['cmgtest_site_1'])]" \
  "--json: the leak groups of the run, with their sites"
is "$(js "$tmp/j.json" '[(x["live_bytes"], x["peak_bytes"], x["denied"]) for x in d["summaries"][0]["devices"]]')" \
  "$(q "$R" '[(x["live_bytes"], x["peak_bytes"], x["denied"]) for x in r["devices"]]')" \
  "--json: the device counters of the run"

# Without stacks.
guard "--report $R --stack-depth 0" app_driver site 1 1M
tool "$R"
is "$(grep -c 'no stack was recorded' "$tmp/out")" 1 "stack_depth=0: says there is no stack"
is "$(tail -n 1 "$tmp/out")" "SUMMARY: cumemguard: 1.0 MiB (1048576 bytes) leaked in 1 allocation" \
  "and still counts the leak"

# Nothing leaked.
guard "--report $R" app_driver site 1 1M free 0
tool "$R"
is "$(grep -c '^No device memory leaked\.$' "$tmp/out")/$(tail -n 1 "$tmp/out")" \
  "1/SUMMARY: cumemguard: 0 B (0 bytes) leaked in 0 allocations" "nothing leaked"

# CUDA graph memory (data/graph.json): what device 0's graph memory pool
# grew by, and CUDA contexts (data/context.json): what each context's
# creation took.  Both are listed apart from the leaks and never counted
# as leaked, with a line under the device table for each device with
# graph_memory, or with a footprint, measured (device 0) or not (device 1);
# --json keeps them apart too.  Reports without either read as before.
s='d["summaries"][0]'

# held_text KIND WHAT UNIT RULES...: data/KIND.json, a report with WHAT,
# is valid and its summary is golden/summary-KIND.txt (kept in
# $tmp/KIND.txt); all its groups of kind KIND, "in 1 UNIT (", are listed
# whatever --top and --min-bytes say, and leak: RULES that match them all
# do not hide them, which is no suppression.
held_text() {
  r=$D/$1.json kind=$1 what=$2 unit=$3
  shift 3
  validate "$r"
  tool_in "$TOOLDIR" "data/$kind.json"
  is "$rc" 0 "summary of a report with $what"
  golden "summary-$kind.txt" "its text"
  cp "$tmp/out" "$tmp/$kind.txt"
  tool --top 1 --min-bytes 1G "$r"
  is "$(grep -c '^Leaked ' "$tmp/out")/$(grep -c " in 1 $unit (" "$tmp/out")" "1/2" \
    "--top and --min-bytes shorten the leaks, not the $unit groups"
  printf 'leak:%s\n' "$@" >"$tmp/supp"
  tool --suppressions "$tmp/supp" "$r"
  is "$(grep -c " in 1 $unit (" "$tmp/out")/$(grep -c '^SUMMARY: .*suppressed' "$tmp/out")" "2/0" \
    "no leak: rule hides a $unit group"
}

# held_json KIND MEMBER EXPR: --json of data/KIND.json lists the report's
# groups of kind KIND in KIND, not in leaks, with their totals beside the
# leaks' adding up to the report's live memory, and each device's MEMBER
# as EXPR of the report's device x says; job-a, written before MEMBER,
# has neither ($tmp/a.json, its --json above).
held_json() {
  tool_in "$TOOLDIR" --json "data/$1.json"
  golden "summary-$1.json" "--json"
  cp "$tmp/out" "$tmp/$1.json"
  is "$(js "$tmp/$1.json" "$s['leaked_bytes'] + $s['$1_bytes'], $s['leaked_allocations'] + $s['$1_allocations']")" \
    "$(js "$D/$1.json" '(d["summary"]["live_bytes"], d["summary"]["live_allocations"])')" \
    "--json: leaked memory and $1 groups add up to the report's live bytes"
  is "$(js "$tmp/$1.json" "[(l['api'], l['kind'], l['device'], l['count'], l['bytes']) for l in $s['$1']]")" \
    "$(js "$D/$1.json" "[(l['api'], l['kind'], l['device'], l['count'], l['bytes']) for l in d['leaks'] if l['kind'] == '$1']")" \
    "--json: $1 lists the report's groups of kind $1"
  is "$(js "$tmp/$1.json" "[l['kind'] for l in $s['leaks']] + [l['device_memory'] for l in $s['$1']]")" \
    "['device', 'device', True, True]" "--json: and leaks has none of them, which are device memory"
  is "$(js "$tmp/$1.json" "[x['$2'] for x in $s['devices']]")" \
    "$(js "$D/$1.json" "[$3 for x in d['devices']]")" \
    "--json: each device's $2 as the report has it"
  is "$(js "$tmp/a.json" "[x['$2'] for x in $s['devices']] + [$s['$1'], $s['$1_bytes']]")" \
    "[None, None, [], 0]" "--json: a report written before $2 has none"
}

held_text graph "graph memory" growth launch_step cuGraphUpload
is "$(grep -c '^Leaked ' "$tmp/graph.txt")/$(grep -c 'cudaGraphLaunch\|cuGraphUpload' "$tmp/graph.txt")" \
  "2/3" "graph memory is not called leaked (its two groups and the denial name their API)"
held_json graph graph_memory 'x["graph_memory"]'

held_text context contexts context init_devices cuCtxCreate_v4
is "$(grep -c '^Leaked ' "$tmp/context.txt")/$(grep -c '^[0-9.]* MiB in 1 context (' "$tmp/context.txt")" \
  "2/2" "contexts are not called leaked"
is "$(grep '^device [0-9] on the card: ' "$tmp/context.txt")" \
"device 0 on the card: 1.8 GiB (NVML) = 1.0 GiB allocated + 780.0 MiB in 2 contexts + 36.0 MiB unexplained; the caps count the contexts
device 1 on the card: not measured (NVML does not know GPU-0b0b0b0b-5555-6666-7777-888888888888); 512.0 MiB allocated, 1 context; the caps count allocations only" \
  "a line per device: NVML's figure split up, or why it was not measured"
is "$(grep '^device [0-9] cross-check' "$tmp/context.txt")" \
  "device 0 cross-check of 1 context: NVML 262.0 MiB, the driver's free memory 268.0 MiB (+6.0 MiB)" \
  "a cross-check line where NVML and the driver both measured a context"

# The line under the table in the other cases: measured by the driver,
# with no NVML figure for the whole process; not counted (count_context=0).
"$PYTHON3" - "$D/context.json" "$tmp/c2.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
fp = r["devices"][0]["footprint"]
fp.update(source="driver", process_bytes=None, unexplained_bytes=None,
          cross_check=None)
r["devices"][1]["footprint"].update(why=None)
json.dump(r, open(sys.argv[2], "w"))
PY
tool "$tmp/c2.json"
is "$(grep '^device [0-9] on the card: ' "$tmp/out")" \
"device 0 on the card: 1.0 GiB allocated + 780.0 MiB in 2 contexts (the driver's count); NVML gave no figure for the whole process; the caps count the contexts
device 1 on the card: not measured; 512.0 MiB allocated, 1 context; the caps count allocations only" \
  "measured by the driver; not measured, with no reason given"
is "$(grep -c 'cross-check' "$tmp/out")" 0 "no cross-check line without one"

# The driver's free memory can fall by less than NVML counted, where
# another process freed memory meanwhile.
"$PYTHON3" - "$D/context.json" "$tmp/c3.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["devices"][0]["footprint"]["cross_check"]["driver_bytes"] = 200 << 20
json.dump(r, open(sys.argv[2], "w"))
PY
tool "$tmp/c3.json"
is "$(grep '^device [0-9] cross-check' "$tmp/out")" \
  "device 0 cross-check of 1 context: NVML 262.0 MiB, the driver's free memory 200.0 MiB (-62.0 MiB)" \
  "a cross-check below NVML's count"

# A summary is of one process, so each footprint says processes 1.
held_json context footprint 'dict(x["footprint"], processes=1)'

done_testing
