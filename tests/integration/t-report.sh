#!/bin/sh
# The JSON report of a scripted run whose every number is known: leaks
# grouped by stack with the functions that allocated them, the composition
# at the peak and at the first denial, the denial itself; labels for every
# path; stack depth and truncation; when a report is written and when not;
# leak_exitcode; an unwritable path.  Every report is checked against the
# schema.
. "$srcdir/tests/lib/defs.sh"
M=1048576
R=$tmp/r.json

# limit 8M: site1 1M, site2 2M, site1 1M, site3 4M (peak 8M), free the 4M,
# site3 5M (denied with 4M live), site2 1M.  Live at exit: site2 3M in 2,
# site1 2M in 2.
guard "--limit 8M --report $R" app_rt_shared site 1 1M site 2 2M site 1 1M \
  site 3 4M free 3 site 3 5M site 2 1M
is "$rc/$(val 6 rc)" 0/2 "the scripted run: one denial"
validate "$R"
is "$(q $R 'r["summary"]')" \
  "{'live_allocations': 4, 'live_bytes': $((5 * M)), 'host_live_bytes': 0, 'untracked_frees': 0, 'denials': 1, 'events': {'warn': 0, 'wait': 0, 'soft_limit': 0}}" \
  "summary"
is "$(q $R '[(l["api"], l["count"], l["bytes"]) for l in r["leaks"]]')" \
  "[('cudaMalloc', 2, $((3 * M))), ('cudaMalloc', 2, $((2 * M)))]" \
  "leaks grouped by stack, largest first"
is "$(q $R 'fn(r["leaks"][0]["stack"])[:3]')" \
  "['cudaMalloc', None, 'cmgtest_alloc_leaf']" \
  "the innermost frames: the runtime, then the program (no frame of ours)"
is "$(q $R '"cmgtest_site_2" in fn(r["leaks"][0]["stack"])')" True \
  "the largest leak comes from cmgtest_site_2"
is "$(q $R '"cmgtest_site_1" in fn(r["leaks"][1]["stack"])')" True \
  "the next from cmgtest_site_1"
is "$(q $R '[a["bytes"] for a in r["leaks"][0]["allocations"]]')" \
  "[$((2 * M)), $M]" "each leaked allocation listed, in order"
is "$(q $R '[a["seq"] for l in r["leaks"] for a in l["allocations"]]')" \
  "[2, 5, 1, 3]" "sequence numbers (granted allocations only)"
is "$(q $R 'all(a["thread"] == r["process"]["pid"] for l in r["leaks"] for a in l["allocations"])')" \
  True "the allocating thread"
is "$(q $R 'any(4 * 2**20 == a["bytes"] for l in r["leaks"] for a in l["allocations"])')" \
  False "the freed allocation does not appear"
is "$(q $R '[(p["device"], p["bytes"]) for p in r["peaks"]]')" "[(0, $((8 * M)))]" \
  "the peak"
is "$(q $R '[(b["bytes"], b["count"], "cmgtest_site_3" in fn(b["stack"])) for b in r["peaks"][0]["by_stack"]]')" \
  "[($((4 * M)), 1, True), ($((2 * M)), 2, False), ($((2 * M)), 1, False)]" \
  "live at the peak, by stack"
is "$(q $R '[(d["api"], d["requested_bytes"], d["live_bytes"], d["limit_bytes"], "cmgtest_site_3" in fn(d["stack"])) for d in r["denials"]]')" \
  "[('cudaMalloc', $((5 * M)), $((4 * M)), $((8 * M)), True)]" \
  "the denial: API, size, live, limit, and where it came from"
is "$(q $R 'sorted((b["bytes"], b["count"]) for b in r["denials"][0]["by_stack"])')" \
  "[($((2 * M)), 1), ($((2 * M)), 2)]" "live at the first denial, by stack"
is "$(q $R '[(d["allocations"], d["frees"], d["denied"], d["peak_bytes"], d["live_bytes"], d["limit_bytes"]) for d in r["devices"]]')" \
  "[(5, 1, 1, $((8 * M)), $((5 * M)), $((8 * M)))]" "device counters"
is "$(q $R 'r["devices"][0]["uuid"].startswith("GPU-") and r["devices"][0]["name"] != ""')" \
  True "device name and UUID"
is "$(q $R '(r["process"]["reason"], r["process"]["argv"][1:3], r["options"]["string"])')" \
  "('exit', ['site', '1'], 'limit=8M,report=$R')" "process and options"
is "$(q $R 'all(m["build_id"] for m in r["modules"] if "libc.so" in m["path"] or "app_rt_shared" in m["path"])')" \
  True "modules carry their build-ids"
is "$(count "cumemguard: report $R: 5.0 MiB in 4 allocations live" "$tmp/err")" 1 \
  "one summary line names the file and the live bytes"

# Every path labels its allocations with the API the program called.
for pair in app_driver:cuMemAlloc_v2 app_dlsym:cuMemAlloc_v2 \
  app_getproc:cuMemAlloc_v2 app_rt_static:cuMemAlloc_v2 \
  app_rt_shared:cudaMalloc; do
  app=${pair%%:*} api=${pair#*:}
  rm -f "$R"
  guard "--report $R" $app site 1 1M site 2 2M async_ptsz 1M
  validate "$R"
  is "$(q $R '[(l["api"], l["bytes"], "cmgtest_site_2" in fn(l["stack"])) for l in r["leaks"]][:2]')" \
    "[('$api', $((2 * M)), True), ('$api', $M, False)]" "$app: leaks labeled $api, from their sites"
done
guard "--report $R" app_getproc async_ptsz 3M
is "$(q $R 'r["leaks"][0]["api"]')" cuMemAllocAsync_ptsz "per-thread async labeled"

# Stack depth: the default 32 with truncation, a smaller one, none.
guard "--report $R" app_driver deep 50 1M
is "$(q $R '(len(r["stacks"][0]["frames"]), r["stacks"][0]["truncated"])')" "(32, True)" \
  "a deep stack is cut at 32 frames and marked truncated"
guard "--report $R --stack-depth 8" app_driver deep 50 1M
is "$(q $R '(len(r["stacks"][0]["frames"]), r["stacks"][0]["truncated"])')" "(8, True)" \
  "stack_depth=8"
guard "--report $R --stack-depth 64" app_driver site 1 1M
is "$(q $R 'r["stacks"][0]["truncated"]')" False "a shallow stack is whole"
guard "--report $R --stack-depth 0" app_driver site 1 1M
validate "$R"
is "$(q $R '(r["leaks"][0]["stack"], r["stacks"])')" "(None, [])" "stack_depth=0: no stacks"

# Freed memory never appears; a report is still written.
rm -f "$R"
guard "--report $R" app_driver site 1 1M free 0
validate "$R"
is "$(q $R '(r["leaks"], r["summary"]["live_bytes"])')" "([], 0)" "everything freed: no leaks"
is "$(count "report $R: no device memory live" "$tmp/err")" 1 "the summary says so"

# No report from a process that never used device memory.
rm -f "$R"
guard "--report $R" app_driver info total 0
tap "$([ ! -e "$R" ]; echo $?)" "no report without device memory use"
is "$(wc -c <"$tmp/err")" 0 "and no line"

# On request, with reason "request", and to the configured path.
guard "--report $R" app_driver site 1 1M dump "$tmp/req.json" free 0
validate "$tmp/req.json"
is "$(q $tmp/req.json '(r["process"]["reason"], r["summary"]["live_allocations"])')" \
  "('request', 1)" "cmg_dump writes a report of that moment"

# The pattern's escapes.
guard "--report $tmp/p.%p.%h.%t.%%.json" app_driver site 1 1M
f=$(ls "$tmp"/p.*.json)
pid=$(q "$f" 'r["process"]["pid"]')
host=$(q "$f" 'r["process"]["hostname"].replace("/", "_")')
case "$f" in
  "$tmp/p.$pid.$host."[0-9]*".%.json") st=0 ;;
  *) st=1 ;;
esac
tap $st "report=p.%p.%h.%t.%%.json names the file by pid, host and time ($f)"

# leak_exitcode: the status when memory is still live at exit.
guard "--report $R --leak-exitcode 23" app_driver site 1 1M
is "$rc" 23 "a leak makes the exit status 23"
guard "--report $R --leak-exitcode 23" app_driver site 1 1M exit 5
is "$rc" 23 "even over the program's own status"
guard "--report $R --leak-exitcode 23" app_driver site 1 1M free 0 exit 5
is "$rc" 5 "no leak: the program's own status"
is "$(tail -n 1 "$tmp/out")" "free i=0 rc=0" "stdout is flushed before the exit"

# A path that is not a regular file (a pipe here; /dev/null in practice) is
# written to, never renamed over: that would replace the device itself.
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/from-fifo" &
reader=$!
guard "--report $tmp/fifo" app_driver site 1 1M
wait $reader
tap "$([ -p "$tmp/fifo" ]; echo $?)" "a pipe as the report path stays a pipe"
validate "$tmp/from-fifo"

# A report that cannot be written: one line, the status unchanged.
guard "--report /nonexistent/dir/r.json" app_driver site 1 1M exit 7
is "$rc" 7 "an unwritable report path leaves the exit status alone"
is "$(count "cumemguard: cannot write report /nonexistent/dir/r.json: No such file or directory" "$tmp/err")" 1 \
  "one line says why"
is "$(noise)" 1 "and nothing else"

done_testing
