#!/bin/sh
# plot: a report's memory over time as an SVG chart.  The SVG is
# well-formed XML (xmllint --noout) whatever the report's strings hold,
# has a panel per device with its limit, its peak and a mark per denial,
# and axes in readable units.  Bad input is one line and status 2.
. "$srcdir/tests/reader/defs.sh"

CUMEMGUARD_OPTIONS=limit=3M
export CUMEMGUARD_OPTIONS
guard "" app_rt_shared site 1 1M sleep 10 site 2 1M sleep 10 alloc 512K \
  sleep 5 free 2 site 3 2M sleep 5 site 3 4M sleep 5 alloc 256K
mv "$(report)" "$tmp/a.json"
validate "$tmp/a.json"
tool plot -o "$tmp/a.svg" "$tmp/a.json"
is "$rc" 0 "plot exits 0"
xml "$tmp/a.svg" "the SVG is well-formed XML"
is "$(grep -c '<g class="device"' "$tmp/a.svg")" \
  "$(q "$tmp/a.json" 'len(r["timeline"]["devices"])')" "a panel per device"
is "$(grep -c '<circle class="peak"' "$tmp/a.svg")" \
  "$(q "$tmp/a.json" 'len(r["timeline"]["devices"])')" "its peak marked"
grep -q '>peak 2.5 MiB at ' "$tmp/a.svg"
tap $? "and labelled in binary units"
is "$(grep -c '<line class="limit"' "$tmp/a.svg")" 1 "the limit of the device that has one"
is "$(grep -c '<g class="denial">' "$tmp/a.svg")" \
  "$(q "$tmp/a.json" 'len(r["denials"])')" "a mark per denial"
grep -q '>1.0 MiB</text>' "$tmp/a.svg" && grep -q '>0 s</text>' "$tmp/a.svg"
tap $? "axes in bytes and seconds"

# Every text escaped: a file name and a command line full of markup.
"$PYTHON3" - "$tmp/a.json" "$tmp/x&<y>.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["process"]["argv"] = ["</text><script>&amp;\"'"]
json.dump(r, open(sys.argv[2], "w"))
r["denials"][0]["api"] = "<&>"
json.dump(r, open(sys.argv[2] + ".2", "w"))
PY
tool plot -o "$tmp/x.svg" "$tmp/x&<y>.json"
xml "$tmp/x.svg" "a file name and a command of markup stay escaped"
tool plot -o "$tmp/x2.svg" "$tmp/x&<y>.json.2"
xml "$tmp/x2.svg" "and an API name of markup"

# Bad input.
"$PYTHON3" - "$tmp/a.json" "$tmp/old.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
del r["timeline"]
json.dump(r, open(sys.argv[2], "w"))
r = json.load(open(sys.argv[1]))
r["timeline"]["devices"][0]["points"][0][2] = r["timeline"]["devices"][0]["points"][0][1] + 1
json.dump(r, open(sys.argv[2] + ".bad", "w"))
PY
tool plot -o "$tmp/old.svg" "$tmp/old.json"
one_line_error 'no "timeline" in this report' "a report without a timeline is one line"
[ ! -e "$tmp/old.svg" ]
tap $? "and no SVG is created"
tool plot "$tmp/old.json.bad"
one_line_error "expected min <= live <= max" "a point whose least passes its value is one line"
tool plot "$tmp/a.json" "$tmp/a.json"
one_line_error "plot takes one report; got 2" "two reports are one line"
tool plot --json "$tmp/a.json"
one_line_error "does not apply to plot" "an option of another command is one line"
tool plot "$tmp/missing.json"
one_line_error "missing.json" "a missing file is one line"
done_testing
