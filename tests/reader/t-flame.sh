#!/bin/sh
# folded and flame: folded lines are "root;...;leaf BYTES", sorted, and add
# up to the report's live bytes (weight live), to its peak compositions
# (peak) and to its first-denial compositions (denial).  The SVG is
# well-formed XML (xmllint --noout) and self-contained, and has one
# rectangle of class "site" per leak site: the box where a folded line
# ends, which for weight live is the API the program called.
. "$srcdir/tests/reader/defs.sh"
D=$TOOLDIR/data

# sum FILE: the sum of the last column of folded lines.
sum() {
  awk '{ s += $NF } END { printf "%.0f\n", s }' "$1"
}

# sites SVG: the number of rectangles of class "site"; attr SVG CLASS: the
# sum of their data-bytes.
sites() {
  grep -o '<rect class="site"' "$1" | wc -l | tr -d ' '
}
site_bytes() {
  "$PYTHON3" - "$1" <<'PY'
import re, sys
print(sum(int(b) for b in re.findall(r'<rect class="site" data-bytes="(\d+)"', open(sys.argv[1]).read())))
PY
}

# The fixed report.
tool_in "$TOOLDIR" folded data/job-a.json
is "$rc" 0 "folded"
golden folded-job-a.txt "its text"
cp "$tmp/out" "$tmp/f"
is "$(sum "$tmp/f")" "$(js "$D/job-a.json" 'd["summary"]["live_bytes"]')" \
  "weight live adds up to the report's live bytes"
is "$(grep -cvE '^[^; ][^;]*(;[^;]+)* [0-9]+$' "$tmp/f")" 0 "every line is frames;...;frames BYTES"
LC_ALL=C sort -c "$tmp/f" 2>/dev/null
tap $? "the lines are sorted"
tool folded "$D/graph.json"
is "$(sum "$tmp/out")/$(grep -c ';cudaGraphLaunch [0-9]*$\|;cuGraphUpload [0-9]*$' "$tmp/out")" \
  "$(js "$D/graph.json" 'd["summary"]["live_bytes"]')/2" \
  "graph memory is device memory: its sites are lines, and they add up"
tool folded "$D/context.json"
is "$(sum "$tmp/out")/$(grep -c ';cuDevicePrimaryCtxRetain [0-9]*$\|;cuCtxCreate_v4 [0-9]*$' "$tmp/out")" \
  "$(js "$D/context.json" 'd["summary"]["live_bytes"]')/2" \
  "so is what contexts took: their sites are lines, and they add up"
tool folded --weight peak "$D/job-a.json"
is "$(sum "$tmp/out")" "$(js "$D/job-a.json" 'sum(b["bytes"] for p in d["peaks"] for b in p["by_stack"])')" \
  "weight peak adds up to the peak compositions"
tool folded --weight denial "$D/job-a.json"
is "$(sum "$tmp/out")" "$(js "$D/job-a.json" 'sum(b["bytes"] for x in d["denials"] for b in x.get("by_stack", []))')" \
  "weight denial adds up to the first denials' compositions"
tool folded --all-frames "$D/job-a.json"
is "$(grep -c '^device 0;_start;__libc_start_main;libc.so.6+0x2724a;main;' "$tmp/out")" 2 \
  "--all-frames keeps the start-up frames, outermost first"
is "$(grep -c ';cudaMalloc;libcudart.so.12+0x4a2f1;cudaMalloc ' "$tmp/out")" 4 \
  "and the CUDA runtime's frames above the program's"

tool flame "$D/job-a.json" -o "$tmp/a.svg"
is "$rc/$(wc -c <"$tmp/out" | tr -d ' ')" 0/0 "flame -o writes the SVG and nothing else"
xml "$tmp/a.svg" "the SVG is well-formed XML"
is "$(sites "$tmp/a.svg")" "$(grep -c . "$tmp/f")" "one site rectangle per folded line"
is "$(sites "$tmp/a.svg")" "$(js "$D/job-a.json" 'len([l for l in d["leaks"] if l["kind"] == "device"])')" \
  "and that is one per leak site of device memory"
is "$(site_bytes "$tmp/a.svg")" "$(js "$D/job-a.json" 'd["summary"]["live_bytes"]')" \
  "the site rectangles add up to the live bytes"
is "$(grep -c 'class="root" data-bytes="4581232640"' "$tmp/a.svg")" 1 "the root is all of it"
is "$(grep -ciE '<script|href=|xlink|@import|url\(' "$tmp/a.svg")" 0 \
  "no script, link or outside resource"
is "$(grep -c '<rect class="frame"' "$tmp/a.svg")" \
  "$("$PYTHON3" -c '
import sys
paths = set()
for line in open(sys.argv[1]):
    frames = line.rsplit(" ", 1)[0].split(";")
    for i in range(1, len(frames)):
        paths.add(tuple(frames[:i]))
print(len(paths))' "$tmp/f")" "one frame rectangle per distinct frame path"

tool flame --weight peak --title 'Peak <of> "job" & co' "$D/job-a.json" -o "$tmp/p.svg"
xml "$tmp/p.svg" "weight peak, a title with markup characters: well-formed"
is "$(grep -c 'Peak &lt;of&gt; &quot;job&quot; &amp; co' "$tmp/p.svg")" 1 "the title is escaped"
tool flame "$D/job-a.json" >"$tmp/stdout.svg"
cmp -s "$tmp/out" "$tmp/a.svg"
tap $? "without -o the SVG goes to standard output"

# A simulated run: one site rectangle per leak site.
R=$tmp/r.json
guard "--report $R" app_rt_shared site 1 1M site 2 2M site 1 1M site 3 3M \
  deep 5 1M free 3
validate "$R"
tool folded "$R"
cp "$tmp/out" "$tmp/f"
is "$(sum "$tmp/f")" "$(q "$R" 'r["summary"]["live_bytes"]')" \
  "a simulated run: folded adds up to the live bytes"
is "$(grep -c ';cmgtest_site_1 (app\.c:[0-9]*);cmgtest_alloc_leaf (app\.c:[0-9]*);.*cudaMalloc 2097152$' "$tmp/f")" 1 \
  "cmgtest_site_1's line: outermost first, the API last, 2M"
tool flame "$R" -o "$tmp/r.svg"
xml "$tmp/r.svg" "its SVG is well-formed"
is "$(sites "$tmp/r.svg")" "$(q "$R" 'len(r["leaks"])')" "one site rectangle per leak site"
is "$(site_bytes "$tmp/r.svg")" "$(q "$R" 'r["summary"]["live_bytes"]')" "adding up to the live bytes"

# Two devices: each line starts with its device; one device, even device 1,
# needs no such frame.
export CMG_SIM_DEVICES=1G,1G
guard "--report $R" app_rt_shared site 1 1M device 1 site 2 2M
tool folded "$R"
is "$(cut -d';' -f1 "$tmp/out" | tr '\n' ,)" "device 0,device 1," \
  "two devices: a device frame at the root of each line"
guard "--report $R" app_rt_shared device 1 site 2 2M
tool folded "$R"
is "$(grep -c '^device' "$tmp/out")/$(grep -c . "$tmp/out")" 0/1 "one device: none"
unset CMG_SIM_DEVICES

# Nothing live: no lines, an SVG that says so.
guard "--report $R" app_rt_shared site 1 1M free 0
tool folded "$R"
is "$rc/$(wc -c <"$tmp/out" | tr -d ' ')" 0/0 "nothing live: no folded lines"
tool flame "$R" -o "$tmp/e.svg"
xml "$tmp/e.svg" "and a well-formed SVG"
is "$(sites "$tmp/e.svg")/$(grep -c 'nothing to draw' "$tmp/e.svg")" 0/1 "with no site, saying so"

# Errors.
tool flame "$D/job-a.json" -o /nonexistent/dir/a.svg
one_line_error "/nonexistent/dir/a.svg: cannot create" "an SVG that cannot be created: one line, status 2"
tool folded --weight heap "$D/job-a.json"
one_line_error "bad --weight 'heap'" "a bad --weight: one line, status 2"
tool folded --json "$D/job-a.json"
one_line_error "does not apply to folded" "--json does not apply to folded"

done_testing
