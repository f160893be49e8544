#!/bin/sh
# The Python frames a capture recalls from the thread's last walk are the
# frames a walk would give: under Debian's python3 and each pyenv CPython
# 3.11, 3.12 and 3.13 present (those absent are skipped with a line),
# pymemo.py allocates from stacks whose inner part changes while the outer
# part stays, from an outer frame calling from two lines in turn, from a
# generator's frame, from threads started one after another, from one
# instruction reaching a function through a ctypes callback and through a
# Python function in turn, from the same instruction calling cudaMalloc
# itself and a Python function that does, and from functions of one name
# and shape made and freed in turn at one place in the stack, whose code
# objects take the address of the one before (the script counts how
# often), and prints Python's own view of every allocation's stack.  Each
# allocation's Python frames in the report (qualified name, file, line,
# innermost first) must equal it, frame by frame.
. "$srcdir/tests/lib/defs.sh"
PY=$srcdir/tests/integration/pymemo.py

# compare REPORT EXPECTED: one line per allocation whose frames differ, and
# a last line counting the allocations compared.
compare() {
  "$PYTHON3" - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
want = [json.loads(line) for line in open(sys.argv[2])][:-1]
stacks = {s["id"]: s for s in r["stacks"]}
by_size = {}
for leak in r["leaks"]:
    frames = [r["frames"][f] for f in stacks[leak["stack"]]["frames"]]
    py = [[f["function"], f["file"], f["line"]]
          for f in frames if f.get("lang") == "python"]
    for a in leak["allocations"]:
        by_size[a["bytes"]] = py
bad = 0
for size, here in want:
    got = by_size.get(size)
    if got != here:
        bad += 1
        if bad <= 5:
            print("%d bytes: %s, want %s" % (size, got, here))
print("%d compared" % len(want))
PY
}

run_version() {
  name=$1 python=$2
  R=$tmp/$name.json
  hguard "--report $R" "$python" "$PY" 60
  is "$rc" 0 "$name: the script runs"
  cp "$tmp/out" "$tmp/$name.want"
  n=$(($(wc -l <"$tmp/$name.want") - 1))
  compare "$R" "$tmp/$name.want" >"$tmp/check" 2>&1
  is "$(cat "$tmp/check")" "$n compared" \
    "$name: each of $n allocations has Python's own frames"
  [ "$n" -gt 250 ]
  tap $? "$name: more than 250 allocations compared ($n)"
  reused=$(tail -n 1 "$tmp/$name.want")
  case "$reused" in
    '["reused", '[1-9]*) st=0 ;;
    *) st=1 ;;
  esac
  tap $st "$name: code objects made at the address of the one before ($reused)"
}

each_python run_version

done_testing
