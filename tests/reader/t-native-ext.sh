#!/bin/sh
# A Python program's own native extension (myext.so, outside any
# site-packages), called through twelve frames of an installed package
# (dist-packages/pkg): every one-line view of its group leads with the
# extension's function, the user's innermost code, and never with the
# package's frames: the leak group in the summary, the peak's line, the
# diff's group, the page's row, and the denial's marks in plot and
# timeline.
. "$srcdir/tests/reader/defs.sh"

# mk FILE BYTES: a report of one allocation of BYTES from that stack.
mk() {
  "$PYTHON3" - "$1" "$2" <<'PY'
import json, sys
out, size = sys.argv[1], int(sys.argv[2])
pkg = "/usr/lib/python3/dist-packages/pkg/__init__.py"
frames = [{"address": "0x7f0000001234", "module": 0, "offset": "0x1234",
           "function": "myext_alloc", "function_offset": 16}]
for k in range(12):
    frames.append({"address": "0x%x" % (0x8000000000000001 + k),
                   "module": None, "offset": None, "function": "dispatch",
                   "function_offset": None, "lang": "python", "file": pkg,
                   "line": 5 if k == 0 else 4})
frames.append({"address": "0x800000000000000f", "module": None,
               "offset": None, "function": "main", "function_offset": None,
               "lang": "python", "file": "/home/user/proj/train.py",
               "line": 9})
stack = {"id": 1, "truncated": False, "frames": list(range(len(frames)))}
leaks = [{"stack": 1, "api": "cudaMalloc", "kind": "device", "device": 0,
          "count": 1, "bytes": size,
          "allocations": [{"address": "0x7f0001000000", "bytes": size,
                           "thread": 7, "seq": 1, "time": 0.001}]}]
r = {
  "format": "cumemguard-report", "version": 1,
  "tool": {"name": "cumemguard", "version": "0.1.0"},
  "process": {"pid": 7, "ppid": 1, "exe": "/usr/bin/python3",
              "argv": ["python3", "train.py"], "hostname": "node1",
              "start_time": 1700000000.0, "end_time": 1700000001.0,
              "reason": "exit"},
  "options": {"string": "", "limit": None, "limits": {},
              "report": "r.json", "stack_depth": 64, "dump_signal": None,
              "leak_exitcode": None, "failed_closed": False,
              "on_exceed": "fail", "wait_timeout": 30, "soft_limit": None,
              "soft_limits": {}, "max_alloc": None, "host_limit": None},
  "devices": [{"ordinal": 0, "name": "GPU", "uuid": "GPU-1",
               "physical_bytes": 1 << 34, "limit_bytes": None,
               "live_bytes": size, "peak_bytes": size, "allocations": 1,
               "frees": 0, "released": 0, "denied": 0}],
  "summary": {"live_allocations": 1, "live_bytes": size,
              "untracked_frees": 0, "denials": 1, "host_live_bytes": 0,
              "events": {"warn": 0, "wait": 0, "soft_limit": 0}},
  "leaks": leaks,
  "peaks": [{"device": 0, "bytes": size, "time": 0.5,
             "by_stack": [{"stack": 1, "bytes": size, "count": 1}]}],
  "denials": [{"time": 0.6, "api": "cudaMalloc", "device": 0,
               "requested_bytes": 1 << 40, "live_bytes": size,
               "limit_bytes": None, "stack": 1}],
  "timeline": {"devices": [{"device": 0, "resolution": 0.001,
                            "peak_bytes": size, "peak_time": 0.4,
                            "points": [[0.0, 0, 0, 0],
                                       [0.4, size, 0, size],
                                       [0.9, size, size, size]]}],
               "dumps": [{"time": 1.0, "reason": "exit"}],
               "dumps_total": 1, "freed": []},
  "stacks": [stack], "frames": frames,
  "modules": [{"path": "/home/user/proj/myext.so",
               "build_id": "00112233445566778899aabbccddeeff00112233",
               "base": "0x7f0000000000"}],
  "host": {"limit_bytes": None, "live_bytes": 0, "peak_bytes": 0,
           "allocations": 0, "frees": 0, "denied": 0},
  "released": [], "events": [],
}
json.dump(r, open(out, "w"), indent=1)
PY
}
mk "$tmp/a.json" $((5 * M))
mk "$tmp/b.json" $((2 * M))

# The first name of a line: its leading frame's function.
lead() {
  sed 's/^ *\(#0 \)\{0,1\}//; s/[+ ].*//'
}
LEAD=myext_alloc

tool "$tmp/a.json"
is "$rc" 0 "summary: exit 0"
sed -n '/^Leaked/,/^$/p' "$tmp/out" >"$tmp/group"
is "$(sed -n 2p "$tmp/group" | lead)" "$LEAD" \
  "the leak group leads with the extension's function"
is "$(grep -c '^ *5\.0 MiB in 1 allocation: ' "$tmp/out")" 1 "a peak line"
is "$(sed -n 's/^ *5\.0 MiB in 1 allocation: //p' "$tmp/out" | lead)" \
  "$LEAD" "the peak's line leads with it too, not with the package's frames"
is "$(grep -c '^ *5\.0 MiB in 1 allocation: dispatch' "$tmp/out")" 0 \
  "no line leads with dispatch"

tool diff "$tmp/b.json" "$tmp/a.json"
is "$rc" 0 "diff: exit 0"
is "$(sed -n '/^Grew by/{n;p;}' "$tmp/out" | lead)" \
  "$LEAD" "the diff's group leads with it"

tool html -o "$tmp/a.html" "$tmp/a.json"
is "$rc" 0 "html: exit 0"
"$PYTHON3" - "$tmp/a.html" >"$tmp/rows" <<'PY'
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
m = re.findall(r'<script id="cmg-data" type="application/json">(.*?)</script>', html, re.S)
d = json.loads(m[0])
s = d["summary"]
for g in s["leaks"] + [g for p in s["peaks"] for g in p["by_stack"]]:
    print(g.get("line"))
PY
is "$(lead <"$tmp/rows" | sort | uniq -c | sed 's/^ *//')" "2 $LEAD" \
  "the page's rows, at the end and at the peak, lead with it"

tool plot -o "$tmp/a.svg" "$tmp/a.json"
is "$rc/$(sed -n 's/.*<g class="denial"><title>.*, from \([^<]*\)<.*/\1/p' "$tmp/a.svg" | lead)" \
  "0/$LEAD" "plot: the denial's mark names it first"
tool timeline -o "$tmp/t.json" "$tmp/a.json"
is "$rc/$(js "$tmp/t.json" '" ".join(e["args"]["stack"] for e in d["traceEvents"] if e["name"].startswith("denied "))' | lead)" \
  "0/$LEAD" "timeline: the denial names it first"

done_testing
