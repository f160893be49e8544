#!/bin/sh
# Python names that are not plain UTF-8, under Debian's python3 and each
# pyenv CPython 3.11, 3.12 and 3.13 present (those absent are skipped with
# a line): a file whose name is not UTF-8, a qualified name holding a lone
# surrogate and one holding a NUL, and an argument that is not UTF-8, come
# out as valid UTF-8, each byte that is not written \xHH
# (docs/report-format.md); the report validates and the reader takes it.
# Past the 32768 distinct sites the library names, a frame is left out as a
# cut, its stack marked truncated, and python.sites_dropped counts it.
# Under each version too: functions of one shape made and freed in turn,
# whose code objects reuse each other's addresses, each name their own
# allocation; an allocation in a sub-interpreter names the sub-interpreter's
# functions (where sub-interpreters load ctypes); and a class call that the
# interpreter specializes leaves no frame of its own in the stack.
. "$srcdir/tests/lib/defs.sh"
PY=$srcdir/tests/integration/pynames.py
READER=$top_builddir/cumemguard-report

# strict REPORT: whether REPORT is UTF-8 through and through, and JSON.
strict() {
  "$PYTHON3" -c 'import json, sys
json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "strict"))' "$1" \
    >"$tmp/strict" 2>&1
  st=$?
  tap $st "$2"
  [ $st -eq 0 ] || sed 's/^/#   /' "$tmp/strict"
}

# check REPORT: one line per failed expectation, nothing when right.
check() {
  "$PYTHON3" - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
stacks = {s["id"]: s for s in r["stacks"]}
leaks = {l["bytes"] >> 20: l for l in r["leaks"]}
def py(mib):
    s = stacks[leaks[mib]["stack"]] if mib in leaks else {"frames": []}
    return [(r["frames"][f]["function"], r["frames"][f]["file"])
            for f in s["frames"] if r["frames"][f].get("lang")]
if not any(fn == "in_file" and f.endswith("/mod\\xed\\xb3\\xbf.py")
           for fn, f in py(1)):
    print("a file name not UTF-8: %s" % py(1))
if "bad\\xed\\xb3\\xbf" not in [fn for fn, f in py(2)]:
    print("a lone surrogate: %s" % py(2))
if "a\\x00b" not in [fn for fn, f in py(3)]:
    print("a NUL: %s" % py(3))
if r["process"]["argv"][-1] != "arg\\xff":
    print("argv: %s" % r["process"]["argv"])
if r["python"].get("sites_dropped") != 0:
    print("python: %s" % r["python"])
PY
}

run_version() {
  name=$1 python=$2
  R=$tmp/$name.json
  mkdir "$tmp/$name"
  hguard "--report $R" "$python" "$PY" names "$tmp/$name" "$(printf 'arg\377')"
  is "$rc" 0 "$name: the script runs"
  strict "$R" "$name: the report is strict UTF-8"
  validate "$R"
  check "$R" >"$tmp/check" 2>&1
  is "$(cat "$tmp/check")" "" \
    "$name: names, file names and arguments escaped byte by byte"
  "$READER" "$R" >"$tmp/out" 2>"$tmp/err"
  is "$?" 0 "$name: cumemguard-report reads it"
  is "$(grep -c -F -e 'bad\xed\xb3\xbf' -e 'a\x00b' "$tmp/out")" 2 \
    "$name: and shows the names as written"
  run_reuse "$name" "$python"
  run_sub "$name" "$python"
  run_init "$name" "$python"
}

# pyframes REPORT EXPR: EXPR over each leak's allocation sizes and Python
# frames (function, file, line), innermost first, as `leaks`.
pyframes() {
  "$PYTHON3" - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
stacks = {s["id"]: s for s in r["stacks"]}
def py(sid):
    return [(r["frames"][f]["function"], r["frames"][f]["file"],
             r["frames"][f].get("line"))
            for f in stacks[sid]["frames"] if r["frames"][f].get("lang")]
leaks = [([a["bytes"] for a in l["allocations"]], py(l["stack"]))
         for l in r["leaks"]]
print(eval(sys.argv[2]))
PY
}

run_reuse() {
  R=$tmp/$1-reuse.json
  hguard "--report $R" "$2" "$PY" reuse 200
  is "$rc" 0 "$1: functions made and freed in turn run"
  is "$(pyframes "$R" 'sorted(set(("f%03d" % (b // 4096 - 1), f[0][0])
    for bs, f in leaks for b in bs if f[0][0] != "f%03d" % (b // 4096 - 1)))[:5]')" \
    "[]" "$1: each allocation names the function that made it"
  is "$(pyframes "$R" 'sum(len(bs) for bs, f in leaks)')" 200 \
    "$1: all 200 allocations are reported"
}

run_sub() {
  R=$tmp/$1-sub.json
  hguard "--report $R" "$2" "$PY" sub
  if [ "$rc" -eq 77 ]; then
    echo "# skip $1: no sub-interpreters that load ctypes"
    return
  fi
  is "$rc" 0 "$1: a sub-interpreter allocates"
  is "$(pyframes "$R" '[[n for n, _, _ in f[:3]] for bs, f in leaks]')" \
    "[['alloc', 'sub_leaf', 'sub_mid']]" \
    "$1: its allocation names the sub-interpreter's frames"
}

run_init() {
  R=$tmp/$1-init.json
  hguard "--report $R" "$2" "$PY" init 100
  is "$rc" 0 "$1: 100 class calls allocate"
  is "$(pyframes "$R" '[(len(bs), [n for n, _, _ in f[:3]]) for bs, f in leaks]')" \
    "[(100, ['alloc', 'Derived.__init__', 'init'])]" \
    "$1: one leak group, the call's frames only"
  is "$(pyframes "$R" '[x for bs, f in leaks for x in f if x[1] == "__init__"]')" \
    "[]" "$1: no frame of the interpreter's own"
}

each_python run_version

ANY=
for p in /usr/bin/python3.11 "$PYENV/3.11.7/bin/python3" \
  "$PYENV/3.12.1/bin/python3" "$PYENV/3.13.0/bin/python3"; do
  if [ -z "$ANY" ] && [ -x "$p" ]; then ANY=$p; fi
done
if [ -n "$ANY" ]; then
  # 33000 allocations from as many lines, then a leak from a new site.
  R=$tmp/many.json
  hguard "--report $R" "$ANY" "$PY" many 33000
  is "$rc" 0 "33000 sites: the script runs"
  validate "$R"
  is "$(q "$R" 'r["python"]["sites_dropped"] > 0')" True \
    "past 32768 sites, frames left out are counted"
  is "$(q "$R" '[(s["truncated"], [c["lang"] for c in s.get("cuts", [])]) for s in stacks.values() if s["id"] == r["leaks"][0]["stack"]]')" \
    "[(True, ['python'])]" "the leak's stack is truncated, a Python cut in it"
  "$READER" "$R" >"$tmp/out" 2>"$tmp/err"
  is "$?" 0 "cumemguard-report reads it"
else
  echo "# skip 33000 sites: no CPython 3.11-3.13"
fi

done_testing
