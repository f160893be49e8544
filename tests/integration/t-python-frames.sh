#!/bin/sh
# Python frames in the stacks of a Python program calling the simulated
# runtime through ctypes, under Debian's python3 and each pyenv CPython
# 3.11, 3.12 and 3.13 present (those absent are skipped with a line): every
# leak group names the Python function and the exact file:line of each
# call, spliced where the eval loop's native frames were; freed sites are
# not leaks; python_frames=0 turns them off; a thread whose frames change
# while others allocate never crashes; 3.10 degrades to native stacks with
# one line in the report saying why; a native stack cut at stack_depth
# keeps the Python frames of the eval frames on either side of the cut;
# the same Python frames over two native paths in turn give two stacks.
. "$srcdir/tests/lib/defs.sh"
PY=$srcdir/tests/integration/pyframes.py
CHURN=$srcdir/tests/integration/pychurn.py

# check REPORT SCRIPT: prints one line per failed expectation, nothing when
# the report is right.  Each allocating line of SCRIPT ends "# site NAME".
check() {
  "$PYTHON3" - "$1" "$2" <<'PY'
import json, os, re, sys
r = json.load(open(sys.argv[1]))
script = os.path.abspath(sys.argv[2])
site = {}
for n, text in enumerate(open(script), 1):
    m = re.search(r"# site (\S+)$", text)
    if m:
        site[m.group(1)] = n
stacks = {s["id"]: s for s in r["stacks"]}
def frames(l):
    return [r["frames"][f] for f in stacks[l["stack"]]["frames"]]
def py(l):
    return [(f["function"], os.path.abspath(f["file"]), f["line"])
            for f in frames(l) if f.get("lang") == "python"]
def want(*names):
    return [("alloc", script, site["alloc"])] + \
        [(n.split("=")[0], script, site[n.split("=")[-1]]) for n in names]
expect = {
    1: want("leak_one", "main", "<module>=module"),
    3: want("Model.build", "main", "<module>=module"),
    4: want("inner", "outer", "main", "<module>=module"),
    5: want("in_thread"),
}
leaks = {l["bytes"] >> 20: l for l in r["leaks"]}
if sorted(leaks) != sorted(expect):
    print("leaks of %s MiB, want %s" % (sorted(leaks), sorted(expect)))
for mib, w in expect.items():
    if mib not in leaks:
        continue
    got = py(leaks[mib])
    if got[:len(w)] != w:
        print("%d MiB: %s, want %s" % (mib, got, w))
    f = frames(leaks[mib])
    kinds = "".join("p" if x.get("lang") else "n" for x in f)
    if not re.fullmatch(r"n+p+(n*p+)*n+", kinds):
        print("%d MiB: Python frames not spliced inside the native stack: %s"
              % (mib, kinds))
    if any(x["function"] == "_PyEval_EvalFrameDefault" for x in f):
        print("%d MiB: an eval-loop frame was left in" % mib)
if 5 in leaks and [g[0] for g in py(leaks[5])][2:3] != ["Thread.run"]:
    print("the thread's stack goes on %s" % py(leaks[5])[2:])
p = r.get("python") or {}
if not p.get("frames") or p.get("note") is not None:
    print("python: %s" % p)
PY
}

run_version() {
  name=$1 python=$2
  R=$tmp/$name.json
  hguard "--report $R" "$python" "$PY"
  is "$rc" 0 "$name: the script runs"
  validate "$R"
  check "$R" "$PY" >"$tmp/check" 2>&1
  is "$(cat "$tmp/check")" "" \
    "$name: each leak names its Python functions, file and lines"
  is "$(q "$R" 'r["options"]["python_frames"]')" True \
    "$name: python_frames is on by default"

  R=$tmp/$name-off.json
  hguard "--report $R --no-python-frames" "$python" "$PY"
  is "$(q "$R" '(len(r["leaks"]) < 4, any(f.get("lang") for f in r["frames"]))')" \
    "(True, False)" \
    "$name: --no-python-frames leaves native stacks, which merge sites"
  is "$(q "$R" 'r["python"]["note"]')" \
    "Python $(q "$tmp/$name.json" 'r["python"]["version"]'): Python frames are off (python_frames=0)" \
    "$name: and the report says so"

  R=$tmp/$name-churn.json
  hguard "--report $R" "$python" "$CHURN" 1500
  is "$rc" 0 "$name: threads changing their frames while others allocate"
  is "$(q "$R" 'any(f.get("lang") and f["function"] == "allocate" for f in r["frames"])')" \
    True "$name: their stacks name the allocating function"
}

each_python run_version

# The rest needs one supported interpreter, whichever is installed.
ANY=
for p in /usr/bin/python3.11 "$PYENV/3.11.7/bin/python3" \
  "$PYENV/3.12.1/bin/python3" "$PYENV/3.13.0/bin/python3"; do
  if [ -z "$ANY" ] && [ -x "$p" ]; then ANY=$p; fi
done
if [ -n "$ANY" ]; then
  # Deeper than the 128 Python frames a capture reads: cut, and said so.
  R=$tmp/deep.json
  hguard "--report $R" "$ANY" "$PY" deep
  is "$(q "$R" '[(s["truncated"], sum(1 for f in s["frames"] if r["frames"][f].get("lang"))) for s in r["stacks"]]')" \
    "[(True, 128)]" "200 Python frames deep: 128 kept, the stack marked truncated"

  # A native stack deeper than stack_depth, whose kept outermost quarter
  # holds eval-loop frames: those frames' Python frames go there, the rest
  # after the cut, each in order.
  R=$tmp/via-c.json
  hguard "--report $R --stack-depth 128" "$ANY" "$PY" via-c
  is "$(q "$R" '[(s["truncated"], [r["frames"][f]["function"] for f in s["frames"] if r["frames"][f].get("lang")] == ["alloc"] + ["via_c"] * 31 + ["<module>"], sum(r["frames"][f]["function"] == "_PyEval_EvalFrameDefault" for f in s["frames"]), r["frames"][s["frames"][-1]].get("lang")) for s in r["stacks"]]')" \
    "[(True, True, 0, None)]" \
    "a native stack cut at stack_depth: every eval frame, kept or cut, has its Python frames in order"

  # Two native paths of one depth, taken in turn from the same Python
  # instruction: the Python frames are the same and one return address
  # tells the native stacks apart, so each path has its stack.
  R=$tmp/two-paths.json
  hguard "--report $R" "$ANY" "$PY" two-paths \
    "$top_builddir/tests/integration/.libs/libcmgtpaths.so"
  is "$(q "$R" 'sorted((sorted({a["bytes"] for a in l["allocations"]}), [r["frames"][f]["function"] for f in stacks[l["stack"]]["frames"] if (r["frames"][f].get("function") or "").startswith("cmgt_path")]) for l in r["leaks"])')" \
    "[([1048576], ['cmgt_path_a']), ([2097152], ['cmgt_path_b'])]" \
    "the same Python frames over two native paths in turn: a stack each"

  R=$tmp/sd0.json
  hguard "--report $R --stack-depth 0" "$ANY" "$PY"
  is "$(q "$R" 'r["python"]["note"]')" \
    "Python $(q "$R" 'r["python"]["version"]'): Python frames are off (stack_depth=0)" \
    "stack_depth=0: no stacks, and the note says why"

  # python_frames=0 in the options, as the launcher's flag sets it.
  R=$tmp/opt.json
  CUMEMGUARD_OPTIONS=python_frames=0 hguard "--report $R" "$ANY" "$PY"
  is "$(q "$R" '(r["options"]["python_frames"], r["python"]["frames"])')" \
    "(False, False)" "python_frames=0 turns Python frames off"
else
  echo "# skip deep stacks, stack_depth=0, python_frames=0: no CPython 3.11-3.13"
fi

if [ -x "$PYENV/3.10.13/bin/python3" ]; then
  R=$tmp/310.json
  hguard "--report $R" "$PYENV/3.10.13/bin/python3" "$PY"
  is "$rc" 0 "3.10: the script runs"
  validate "$R"
  is "$(q "$R" '(r["python"], any(f.get("lang") for f in r["frames"]))')" \
    "({'version': '3.10', 'frames': False, 'note': 'Python 3.10: Python frames need CPython 3.11, 3.12 or 3.13', 'sites_dropped': 0}, False)" \
    "3.10: native stacks, and one line saying why"
else
  echo "# skip 3.10: $PYENV/3.10.13/bin/python3 is not installed"
fi

# A program without Python: no "python" in its report.
R=$tmp/c.json
guard "--report $R" app_rt_shared site 1 1M
is "$(q "$R" '"python" in r')" False "no Python, no python key"

done_testing
