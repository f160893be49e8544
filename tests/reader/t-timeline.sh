#!/bin/sh
# timeline: memory over time as a Chrome trace-event JSON document.  A run
# with a denial and a dump gives a trace that parses, whose "in use"
# counter reaches the report's peak, with one instant per denial and per
# report write, and the live allocations as slices; two reports are two
# processes.  A long run keeps the report's timeline bounded.  Bad input
# is one line and status 2.
. "$srcdir/tests/reader/defs.sh"

CUMEMGUARD_OPTIONS=limit=3M,stack_depth=16
export CUMEMGUARD_OPTIONS
guard "" app_driver alloc 1M sleep 10 alloc 1M sleep 10 alloc 2M alloc 2M \
  free 0 sleep 5 alloc 1M sleep 20 site 1 1M
r=$(report)
mv "$r" "$tmp/a.json"
validate "$tmp/a.json"
tool timeline -o "$tmp/t.json" "$tmp/a.json"
is "$rc" 0 "timeline exits 0"
is "$(js "$tmp/t.json" 'len(d["traceEvents"]) > 0')" True "the trace parses as JSON"
peak=$(q "$tmp/a.json" 'r["devices"][0]["peak_bytes"]')
is "$(js "$tmp/t.json" 'max(e["args"]["bytes"] for e in d["traceEvents"] if e["ph"] == "C" and e["name"] == "device 0 in use")')" \
  "$peak" "the in-use counter reaches the report's peak ($peak)"
is "$(js "$tmp/t.json" 'sum(1 for e in d["traceEvents"] if e["ph"] == "i" and e["name"].startswith("denied"))')" \
  "$(q "$tmp/a.json" 'len(r["denials"])')" "one instant per denial"
is "$(js "$tmp/t.json" '[round(e["ts"]) for e in d["traceEvents"] if e["ph"] == "i" and e["name"].startswith("denied")]')" \
  "$(q "$tmp/a.json" '[round(x["time"] * 1e6) for x in r["denials"]]')" \
  "each at its denial's time"
is "$(js "$tmp/t.json" '[e["name"] for e in d["traceEvents"] if e["ph"] == "i" and e["name"].startswith("report")]')" \
  "['report (exit)']" "one instant per report written"
is "$(js "$tmp/t.json" 'max(e["args"]["bytes"] for e in d["traceEvents"] if e["name"] == "device 0 limit")')" \
  3145728 "a counter of the limit"
is "$(js "$tmp/t.json" 'sorted(e["args"]["bytes"] for e in d["traceEvents"] if e["ph"] == "b" and e.get("cat") == "live allocation")')" \
  "$(q "$tmp/a.json" 'sorted(a["bytes"] for l in r["leaks"] for a in l["allocations"])')" \
  "the live allocations are slices"
is "$(q "$tmp/a.json" '[(f["bytes"], f["api"], f["free_time"] > f["time"]) for f in r["timeline"]["freed"]]')" \
  "[(1048576, 'cuMemAlloc_v2', True)]" "the report keeps the freed allocation"
is "$(js "$tmp/t.json" '[(round(e["ts"]), e["ph"]) for e in d["traceEvents"] if e.get("cat") == "freed allocation"]' 2>&1)" \
  "$(q "$tmp/a.json" '[(round(f[k] * 1e6), p) for f in r["timeline"]["freed"] for k, p in (("time", "b"), ("free_time", "e"))]')" \
  "a freed allocation is a slice from its allocation to its free"
is "$(js "$tmp/t.json" 'sum(1 for e in d["traceEvents"] if e["ph"] == "b" and "cmgtest_site_1" in e["args"]["stack"])')" \
  1 "a slice names its top frames"

# Two runs side by side: two processes, one clock.
guard "" app_driver alloc 1M sleep 5 alloc 1M
mv "$(report)" "$tmp/b.json"
tool timeline "$tmp/a.json" "$tmp/b.json"
mv "$tmp/out" "$tmp/two.json"
is "$rc" 0 "two reports: exit 0, the trace on stdout"
is "$(js "$tmp/two.json" 'len({e["pid"] for e in d["traceEvents"] if e["name"] == "process_name"})')" \
  2 "two reports are two processes"
tool timeline "$tmp/a.json" "$tmp/a.json"
mv "$tmp/out" "$tmp/same.json"
is "$(js "$tmp/same.json" 'len({e["pid"] for e in d["traceEvents"]})')" \
  2 "the same report twice is still two processes"

# A long run: changes in 1100 ticks of the coarse clock, one after another
# (1 to 10 ms each), each in a bucket of its own at first, kept in at most
# 1024 points (and the last).  A sleep of 4 ms left some of them in the
# tick before, and under 1024 buckets when enough did.
# (awk writes the script: a shell loop that grows "$@" takes seconds)
# shellcheck disable=SC2046
set -- $(awk 'BEGIN { for (i = 0; i < 1100; i++) print "alloc 64K free " i " tick" }')
guard "" app_driver "$@"
mv "$(report)" "$tmp/long.json"
validate "$tmp/long.json"
is "$(q "$tmp/long.json" 'len(r["timeline"]["devices"][0]["points"]) <= 1025')" \
  True "a long run keeps its timeline bounded"
is "$(q "$tmp/long.json" 'r["timeline"]["devices"][0]["resolution"] > 0.002')" \
  True "by coarser points"
is "$(q "$tmp/long.json" 'max(p[3] for p in r["timeline"]["devices"][0]["points"]) == r["devices"][0]["peak_bytes"]')" \
  True "and keeps the peak"

# The largest frees are kept, largest first, however many there are:
# 20 allocations of 1..20 x 64K, each freed, keep the 16 of 5..20 x 64K.
set --
i=0
while [ $i -lt 20 ]; do
  set -- "$@" alloc $((64 * (i + 1)))K free $i
  i=$((i + 1))
done
CUMEMGUARD_OPTIONS=stack_depth=8 guard "" app_driver "$@"
mv "$(report)" "$tmp/freed.json"
is "$(q "$tmp/freed.json" '[f["bytes"] // 65536 for f in r["timeline"]["freed"]]')" \
  "$("$PYTHON3" -c 'print(list(range(20, 4, -1)))')" \
  "the 16 largest frees are kept, largest first"
is "$(q "$tmp/freed.json" 'all(f["stack"] in {s["id"] for s in r["stacks"]} for f in r["timeline"]["freed"])')" \
  True "each with its stack in stacks[]"

# timeline=0: no series, and the commands that draw it say why.
CUMEMGUARD_OPTIONS=timeline=0 guard "" app_driver alloc 1M free 0 alloc 1M
mv "$(report)" "$tmp/off.json"
validate "$tmp/off.json"
is "$(q "$tmp/off.json" '("timeline" in r, r["options"]["timeline"])')" \
  "(False, False)" "timeline=0: the report has no timeline"
tool timeline -o "$tmp/x.json" "$tmp/off.json"
one_line_error 'timeline=0' "timeline=0: the timeline command says why in one line"
CUMEMGUARD_OPTIONS=timeline=2 guard "" app_driver alloc 1M
grep -c "timeline=2" "$tmp/err" > "$tmp/n"; is "$rc" 2 "timeline=2: the launcher refuses it"
is "$(cat "$tmp/n")" 1 "timeline=2 is one line naming the value"

# Bad input.
"$PYTHON3" - "$tmp/a.json" "$tmp/old.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
del r["timeline"]
json.dump(r, open(sys.argv[2], "w"))
r = json.load(open(sys.argv[1]))
r["timeline"]["devices"][0]["points"].reverse()
json.dump(r, open(sys.argv[2] + ".bad", "w"))
PY
tool timeline -o "$tmp/x.json" "$tmp/old.json"
one_line_error 'no "timeline" in this report' "a report without a timeline is one line"
[ ! -e "$tmp/x.json" ]
tap $? "and no trace is created"
tool timeline "$tmp/old.json.bad"
one_line_error "expected points in time order" "points out of order are one line"
tool timeline "$tmp/nothing.json"
one_line_error "nothing.json" "a missing file is one line"
tool timeline --top 3 "$tmp/a.json"
one_line_error "does not apply to timeline" "an option of another command is one line"
tool timeline
one_line_error "no report FILE" "no file is one line"
done_testing
