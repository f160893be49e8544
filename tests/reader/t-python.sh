#!/bin/sh
# Python frames in everything the reader shows: the numbered frames and the
# short stacks of the summary (Python frames only there), --json, leak
# groups split per Python site, folded stacks, the flame graph (Python
# frames in their own colour), diff, pprof, and suppressions naming a
# Python function or file; the report's one line when frames are off.
. "$srcdir/tests/reader/defs.sh"
# Absolute, so that the frames name the file as $FILE below, whatever
# $srcdir is (relative under make distcheck).
PY=$(cd "$srcdir/tests/integration" && pwd)/pyframes.py
PYTHON=/usr/bin/python3.11
if [ ! -x "$PYTHON" ]; then
  echo "1..0 # SKIP $PYTHON is not installed"
  exit 0
fi
A=$tmp/a.json
OFF=$tmp/off.json
hguard "--report $A" "$PYTHON" "$PY"
validate "$A"
hguard "--report $OFF --no-python-frames" "$PYTHON" "$PY"
site() { grep -n "# site $1\$" "$PY" | cut -d: -f1; }
FILE=$PY

tool summary "$A"
is "$(grep -c "^Leaked" "$tmp/out")" 4 "one leak group per Python site"
is "$(grep -cF "    #7 Model.build ($FILE:$(site Model.build))" "$tmp/out")" 1 \
  "a numbered frame names the method, its file and line"
is "$(grep -c "^    13.0 MiB in 4 allocations, 4 stacks: alloc (pyframes.py:$(site alloc)) > " "$tmp/out")" 1 \
  "the peak's line names the user's frame first, the four stacks that read the same as one"
tool summary "$OFF"
is "$(grep -c "^  Python 3\.11\.[0-9]*: Python frames are off (python_frames=0)\$" "$tmp/out")" 1 \
  "the summary says why a Python program's stacks have no Python frames"

tool_json "$tmp/s.json" summary --json "$A"
is "$(js "$tmp/s.json" '[(f["function"], f["line"]) for f in d["summaries"][0]["leaks"][0]["frames"] if f.get("lang") == "python"][:2]')" \
  "[('alloc', $(site alloc)), ('in_thread', $(site in_thread))]" \
  "--json: Python frames with lang, function and line"
is "$(js "$tmp/s.json" 'd["summaries"][0]["python_note"]')" None \
  "--json: no note when frames are there"

tool folded "$A"
is "$(grep -c ";main (pyframes.py:$(site main));Model.build (pyframes.py:$(site Model.build));alloc (pyframes.py:$(site alloc));" "$tmp/out")" 1 \
  "folded stacks: Python frames, root first"

tool flame -o "$tmp/f.svg" "$A"
is "$(grep -c '<title>Model.build (pyframes.py:[0-9]*): .*fill="rgb([0-9]*,[0-9]*,235)"' "$tmp/f.svg")" 1 \
  "the flame graph draws Python frames in blue"
is "$(grep -c '<title>PyEval_EvalCode: .*fill="rgb(0,' "$tmp/f.svg")" 1 \
  "and native frames in the program palette"

tool diff "$OFF" "$A"
is "$(grep -c "^Grew by .* from:" "$tmp/out")" 4 \
  "diff against native stacks: each Python site is a group of its own"
is "$(grep -cF "in_thread ($FILE:$(site in_thread))" "$tmp/out")" 1 \
  "and names its frames"

left() {
  printf '%s\n' "$@" >"$tmp/supp"
  tool_json "$tmp/s.json" --json --suppressions "$tmp/supp" "$A"
  js "$tmp/s.json" 'd["summaries"][0]["leaked_bytes"] >> 20'
}
is "$(left 'leak:Model.build')" 10 "a suppression names a Python method"
is "$(left 'leak:^outer$')" 9 "or a Python function, anchored"
is "$(left 'leak:pyframes.py')" 0 "or a Python file by base name"
is "$(left "leak:^$FILE\$")" 0 "or by path"
is "$(left 'leak:threading.py')" 8 "a standard-library file"

tool pprof -o "$tmp/p.pb.gz" "$A"
is "$rc" 0 "pprof writes a profile with Python frames"
is "$(gzip -dc "$tmp/p.pb.gz" | grep -c pyframes.py)" 1 \
  "naming their file"

done_testing
