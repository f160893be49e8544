#!/bin/sh
# pprof: a report's live memory as a gzipped pprof profile.  go tool pprof
# (Debian's golang-go) reads it and lists exactly the leaked sites, each
# with its bytes, and the report's total, in bytes and in allocations;
# --at peak and --at denial profile what was live then; the profile names
# each module's build-id.  Bad input is one line and status 2.
. "$srcdir/tests/reader/defs.sh"

if ! command -v go >/dev/null 2>&1; then
  echo "1..0 # SKIP go is not installed (golang-go)"
  exit 0
fi
# go keeps a build cache under HOME even to run a tool: a fresh one here.
HOME=$tmp/home GOCACHE=$tmp/home/cache GOFLAGS=-mod=mod GOTOOLCHAIN=local
export HOME GOCACHE GOFLAGS GOTOOLCHAIN
mkdir -p "$HOME"

CUMEMGUARD_OPTIONS=limit=3M,stack_depth=24
export CUMEMGUARD_OPTIONS
guard "" app_rt_shared site 1 1M site 2 1M site 1 512K alloc 256K free 3 \
  site 3 2M
mv "$(report)" "$tmp/a.json"
validate "$tmp/a.json"

# top FILE [OPTIONS]: go tool pprof -top in bytes, every node, in $tmp/top
# (-unit=B also suffixes counts with B).
top() {
  f=$1
  shift
  go tool pprof -top -unit=B -nodecount=1000 "$@" "$f" >"$tmp/top" 2>&1
}
# sites: "NAME BYTES" for each cmgtest_site_ node of $tmp/top, sorted.
sites() {
  awk '$NF ~ /^cmgtest_site_/ { v = $4; sub(/B$/, "", v); print $NF, v }' \
    "$tmp/top" | sort
}
# want_sites FILE EXPR: the same from the report, EXPR giving
# (stack, bytes) pairs.
want_sites() {
  q "$1" "'\\n'.join(sorted('%s %d' % (n, sum(b for s, b in $2 if n in fn(s))) for n in {f for s, b in $2 for f in fn(s) if f and f.startswith('cmgtest_site_')}))"
}

tool pprof -o "$tmp/heap.pb.gz" "$tmp/a.json"
is "$rc" 0 "pprof exits 0"
is "$(od -An -tx1 -N2 "$tmp/heap.pb.gz" | tr -d ' ')" 1f8b "the profile is gzipped"
top "$tmp/heap.pb.gz"
tap $? "go tool pprof reads it"
total=$(q "$tmp/a.json" 'r["summary"]["live_bytes"]')
is "$(sed -n 's/.*Total samples = \([0-9]*\)B.*/\1/p' "$tmp/top")" "$total" \
  "the total is the report's live bytes ($total)"
sites >"$tmp/got"
want_sites "$tmp/a.json" '[(l["stack"], l["bytes"]) for l in r["leaks"]]' \
  >"$tmp/want"
is "$(cat "$tmp/got")" "$(cat "$tmp/want")" "exactly the leaked sites, with their bytes"
top "$tmp/heap.pb.gz" -sample_index=inuse_objects
is "$(sed -n 's/.*Total samples = \([0-9]*\)B.*/\1/p' "$tmp/top")" \
  "$(q "$tmp/a.json" 'r["summary"]["live_allocations"]')" "and the allocations"
go tool pprof -raw "$tmp/heap.pb.gz" >"$tmp/raw" 2>&1
build_id=$(q "$tmp/a.json" '[m["build_id"] for m in r["modules"] if m["path"].endswith("app_rt_shared")][0]')
grep -q "$build_id" "$tmp/raw"
tap $? "the program's mapping has its build-id"

tool pprof --at peak -o "$tmp/peak.pb.gz" "$tmp/a.json"
top "$tmp/peak.pb.gz"
is "$(sed -n 's/.*Total samples = \([0-9]*\)B.*/\1/p' "$tmp/top")" \
  "$(q "$tmp/a.json" 'sum(p["bytes"] for p in r["peaks"])')" "--at peak: the peak's bytes"
sites >"$tmp/got"
want_sites "$tmp/a.json" '[(b["stack"], b["bytes"]) for p in r["peaks"] for b in p["by_stack"]]' \
  >"$tmp/want"
is "$(cat "$tmp/got")" "$(cat "$tmp/want")" "--at peak: the sites live at the peak"
tool pprof --at denial -o "$tmp/denial.pb.gz" "$tmp/a.json"
top "$tmp/denial.pb.gz"
is "$(sed -n 's/.*Total samples = \([0-9]*\)B.*/\1/p' "$tmp/top")" \
  "$(q "$tmp/a.json" 'r["denials"][0]["live_bytes"]')" "--at denial: what was live at the denial"

# What CUDA graph memory pools hold and what contexts took is device
# memory live at exit, as the report counts it.
for kind in graph context; do
  tool pprof -o "$tmp/$kind.pb.gz" "$TOOLDIR/data/$kind.json"
  top "$tmp/$kind.pb.gz"
  is "$(sed -n 's/.*Total samples = \([0-9]*\)B.*/\1/p' "$tmp/top")" \
    "$(q "$TOOLDIR/data/$kind.json" 'r["summary"]["live_bytes"]')" \
    "$kind: the total is the report's live bytes, its $kind groups included"
done

# Bad input.
guard "" app_rt_shared site 1 1M
mv "$(report)" "$tmp/nodenial.json"
tool pprof --at denial -o "$tmp/x.pb.gz" "$tmp/nodenial.json"
one_line_error "no denial in this report" "--at denial without a denial is one line"
[ ! -e "$tmp/x.pb.gz" ]
tap $? "and no profile is created"
tool pprof --at noon "$tmp/a.json"
one_line_error "bad --at 'noon': expected exit, peak or denial" "a bad --at is one line"
tool pprof "$tmp/a.json" "$tmp/a.json"
one_line_error "pprof takes one report; got 2" "two reports are one line"
tool pprof --weight peak "$tmp/a.json"
one_line_error "does not apply to pprof" "an option of another command is one line"
printf '{"format": "cumemguard-report", "version": 1}' >"$tmp/cut.json"
tool pprof "$tmp/cut.json"
one_line_error "cut.json" "a report missing its members is one line"
tool pprof -o /nonexistent/dir/x.pb.gz "$tmp/a.json"
one_line_error "cannot create" "an output that cannot be created is one line"
done_testing
