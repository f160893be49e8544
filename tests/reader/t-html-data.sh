#!/bin/sh
# html: the data the page embeds, read back without a browser
# (tests/html/t-html.sh opens the pages in one).  Groups, frames and lines
# written once and named by index read back as --json and diff --json
# write them; the timeline, dumps and denials are the report's; no string
# of a report can end the script element that holds the data; a bad
# report or command line gives one line and no page.  check-tool-asan runs
# this file with the tool built with AddressSanitizer and UBSan.
. "$srcdir/tests/reader/defs.sh"
DATA=$TOOLDIR/data

# back HTML JSON: the page's data, with every group's frames and lines
# put back in place as --json writes them (frames marked hidden outside
# the shown range), into JSON.
back() {
  "$PYTHON3" - "$1" "$2" <<'PY'
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
m = re.findall(r'<script id="cmg-data" type="application/json">(.*?)</script>', html, re.S)
assert len(m) == 1, "one data element"
assert "<" not in m[0] and ">" not in m[0], "no raw < or > in the data"
d = json.loads(m[0])
def put(o):
    if isinstance(o, dict):
        if "frames" in o and isinstance(o["frames"], list) and "shown" in o:
            lo, hi = o.pop("shown")
            o["frames"] = [dict(d["frames"][i], hidden=not (lo <= k < hi))
                           for k, i in enumerate(o["frames"])]
            o["lines"] = [d["strings"][i] for i in o["lines"]]
        for v in o.values():
            put(v)
    elif isinstance(o, list):
        for v in o:
            put(v)
for k in ("summary", "base", "diff"):
    put(d[k])
json.dump(d, open(sys.argv[2], "w"))
PY
}

# strip JSON: the document without what --json leaves out (title, line,
# lines).
strip() {
  "$PYTHON3" - "$1" <<'PY'
import json, sys
def drop(o):
    if isinstance(o, dict):
        o.pop("title", None)
        o.pop("line", None)
        o.pop("lines", None)
        for v in o.values():
            drop(v)
    elif isinstance(o, list):
        for v in o:
            drop(v)
    return o
print(json.dumps(drop(json.load(open(sys.argv[1]))), sort_keys=True))
PY
}

CUMEMGUARD_OPTIONS=limit=3M,soft_limit=2M
export CUMEMGUARD_OPTIONS
guard "" app_rt_shared site 1 1M sleep 10 site 2 1M sleep 10 alloc 512K \
  sleep 5 free 2 site 3 2M sleep 5 site 3 4M sleep 5 alloc 256K
unset CUMEMGUARD_OPTIONS
mv "$(report)" "$tmp/a.json"

tool html -o "$tmp/a.html" "$tmp/a.json"
is "$rc/$(wc -c <"$tmp/err" | tr -d ' ')" 0/0 "html: exit 0, nothing said"
back "$tmp/a.html" "$tmp/a.back.json"
tool_json "$tmp/a.sum.json" --json --top 0 "$tmp/a.json"
strip "$tmp/a.back.json" >"$tmp/a.stripped"
is "$(js "$tmp/a.stripped" 'json.dumps(d["summary"], sort_keys=True)')" \
  "$(strip "$tmp/a.sum.json" | "$PYTHON3" -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["summaries"][0], sort_keys=True))')" \
  "without them, it is exactly --json --top 0"
tool --top 0 "$tmp/a.json"
"$PYTHON3" - "$tmp/a.back.json" "$tmp/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
text = [l.strip() for l in open(sys.argv[2])]
for g in d["summary"]["leaks"]:
    for l in g["lines"]:
        assert l in text, l
    assert g["title"] is None or any(g["title"] in t for t in text), g["title"]
PY
tap $? "every group's title and lines are the text summary's"
is "$(js "$tmp/a.back.json" 'd["mode"], d["base"], d["diff"], len(d["reports"])')" \
  "('run', None, None, 1)" "one report: mode run, no base, no diff"
is "$(js "$tmp/a.back.json" '[len(t["points"]) > 1 for t in d["reports"][0]["timeline"]]')" \
  "[True]" "the device's memory over time"
is "$(js "$tmp/a.back.json" '(len(d["reports"][0]["denials"]), [x["reason"] for x in d["reports"][0]["dumps"]][-1])')" \
  "$(q "$tmp/a.json" '(len(r["denials"]), r["timeline"]["dumps"][-1]["reason"])')" \
  "the report's denials and dumps"
is "$(js "$tmp/a.back.json" '[(t["limit_bytes"], t["soft_limit_bytes"]) for t in d["reports"][0]["timeline"]]')" \
  "[($((3 * M)), $((2 * M)))]" "the limit and the soft limit"
is "$(js "$tmp/a.back.json" 'len(d["frames"]) == len({json.dumps(f, sort_keys=True) for f in d["frames"]})')" \
  True "each frame is written once"

# The page and the text summary agree: the groups of a peak that read the
# same are one row, with the line the terminal prints; the chart gives the
# instant of the peak, as the peak's moment does, not the start of the
# timeline's interval that holds it.
T=$DATA/gpu/torch-gpt2-compile.json
tool html -o "$tmp/g.html" "$T"
back "$tmp/g.html" "$tmp/g.back.json"
tool --top 0 "$T"
sed -n '/^Live at the peak/,/^$/p' "$tmp/out" | sed -n 's/^    [0-9.]* [KMG]*i*B in [0-9]* allocations*\(, [0-9]* stacks\)*: //p' >"$tmp/g.peak"
"$PYTHON3" - "$tmp/g.back.json" "$tmp/g.peak" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
text = [l.rstrip("\n") for l in open(sys.argv[2])]
lines = [g["line"] for g in d["summary"]["peaks"][0]["by_stack"]]
assert len(lines) > len(set(lines)), "some of the peak's stacks read the same"
assert sorted(set(lines)) == sorted(text), (sorted(set(lines)), sorted(text))
PY
tap $? "a peak's groups that read the same: one line each, the text summary's"
is "$(js "$tmp/g.back.json" '[t["peak_time"] for t in d["reports"][0]["timeline"]] == [p["time"] for p in d["summary"]["peaks"]]')/$(q "$T" 'r["timeline"]["devices"][0]["peak_time"] != r["peaks"][0]["time"]')" \
  True/True "the chart's peak is at the peak's own time, not its interval's start"

# A device's own soft limit, in percent of its memory, before the process's.
CMG_SIM_DEVICES=16G,8G CUMEMGUARD_OPTIONS=soft_limit=700M,soft_limit.1=50% \
  guard "--report $tmp/s.json" app_rt_shared alloc 1M device 1 alloc 1M
tool html -o "$tmp/s.html" "$tmp/s.json"
back "$tmp/s.html" "$tmp/s.back.json"
is "$rc/$(js "$tmp/s.back.json" '[(t["device"], t["soft_limit_bytes"]) for t in d["reports"][0]["timeline"]]')" \
  "0/[(0, $((700 * M))), (1, $((4096 * M)))]" "each device's soft limit, its own first"

# A GPU's soft limit, named by its UUID, before its ordinal's: with the
# simulated GPUs seen the other way round, ordinal 0 is the second GPU.
U1=GPU-c36d6751-5e1a-4d0c-9a77-73696d677001
CUDA_VISIBLE_DEVICES=1,0 CMG_SIM_DEVICES=16G,8G \
  CUMEMGUARD_OPTIONS="soft_limit=700M,soft_limit.1=50%,soft_limit.$U1=1G" \
  guard "--report $tmp/u.json" app_rt_shared alloc 1M device 1 alloc 1M
tool html -o "$tmp/u.html" "$tmp/u.json"
back "$tmp/u.html" "$tmp/u.back.json"
is "$rc/$(js "$tmp/u.back.json" '[(t["device"], t["soft_limit_bytes"]) for t in d["reports"][0]["timeline"]]')" \
  "0/[(0, $((1024 * M))), (1, $((8192 * M)))]" "a GPU's soft limit by its UUID, before its ordinal's"

# BASE NEW, and several merged.
tool html -o "$tmp/d.html" "$DATA/gpu/torch-release-before.json" \
  "$DATA/gpu/torch-release-after.json"
is "$rc" 0 "html BASE NEW: exit 0"
back "$tmp/d.html" "$tmp/d.back.json"
tool_json "$tmp/d.json" diff --json --top 0 "$DATA/gpu/torch-release-before.json" \
  "$DATA/gpu/torch-release-after.json"
is "$(strip "$tmp/d.back.json" | "$PYTHON3" -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["diff"], sort_keys=True))' | md5sum)" \
  "$(strip "$tmp/d.json" | md5sum)" "the diff is diff --json --top 0"
is "$(js "$tmp/d.back.json" 'd["mode"], d["base"]["sources"][0]["file"].endswith("before.json"), d["summary"]["sources"][0]["file"].endswith("after.json")')" \
  "('diff', True, True)" "the page shows NEW, with BASE beside it"
tool html -o "$tmp/m.html" --merge "$DATA/job-a.json" "$DATA/job-b.json"
back "$tmp/m.html" "$tmp/m.back.json"
is "$rc/$(js "$tmp/m.back.json" 'd["mode"], len(d["summary"]["sources"]), len(d["reports"])')" \
  "0/('merge', 2, 2)" "--merge: one view of both reports"

# No string of a report ends the element or reads as markup.
"$PYTHON3" - "$tmp/a.json" "$tmp/x.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for f in r["frames"]:
    if f.get("function") == "cmgtest_site_1":
        f["function"] = '</script><script>alert(1)</script><!-- & \u2028'
json.dump(r, open(sys.argv[2], "w"))
PY
tool html --no-symbolize -o "$tmp/x.html" "$tmp/x.json"
is "$rc/$(grep -c 'alert(1)</script>' "$tmp/x.html")" 0/0 "markup in a name is escaped"
back "$tmp/x.html" "$tmp/x.back.json"
is "$(js "$tmp/x.back.json" 'any("</script><script>alert(1)</script><!-- & \u2028" in (f.get("function") or "") for f in d["frames"])')" \
  True "and reads back as it was"

# Bad input: one line, no page.
printf '{"format": "cumemguard-report", "version": 1' >"$tmp/cut.json"
tool html -o "$tmp/cut.html" "$tmp/cut.json"
one_line_error "cut.json" "a cut report: one line, status 2"
[ ! -e "$tmp/cut.html" ]
tap $? "a cut report: no page"
tool html -o "$tmp/three.html" "$tmp/a.json" "$tmp/a.json" "$tmp/a.json"
one_line_error "html takes one report, or BASE and NEW, or several with --merge; got 3" \
  "three reports without --merge: one line, status 2"
tool html --top 3 -o "$tmp/t.html" "$tmp/a.json"
one_line_error "option '--top' does not apply to html" "--top: one line, status 2"
tool merge --merge "$tmp/a.json"
one_line_error "option '--merge' does not apply to merge" "--merge is html's alone"

done_testing
