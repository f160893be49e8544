#!/bin/sh
# The page's cost grows with the report, not with the square of its
# frames: frames and lines are written once each through a hash of the
# whole text, which stays spread where every frame's text starts alike.
# A report of 4000 stacks of 32 frames no two stacks share (18 MB) gives
# its page in 10 s of CPU time at most, and a Python program's report
# (2732 stacks, 33084 frames) in 2 s; each page holds every frame once.
# The reports are made by make-large.py.  A build under a sanitizer or
# valgrind (CMG_TOOL, CMG_TEST_PREFIX) is too slow to time, and skips.
. "$srcdir/tests/reader/defs.sh"
if [ -n "${CMG_TOOL:-}${CMG_TEST_PREFIX:-}" ]; then
  echo "1..0 # SKIP timed, and this build of the tool is slowed down"
  exit 0
fi
LARGE="$PYTHON3 $TOOLDIR/make-large.py"

# frames HTML: how many frames the page's data holds (0 without a page).
frames() {
  "$PYTHON3" - "$1" <<'PY'
import json, os, re, sys
if not os.path.exists(sys.argv[1]):
    sys.exit(print(0))
html = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script id="cmg-data" type="application/json">(.*?)</script>', html, re.S)
print(len(json.loads(m.group(1))["frames"]))
PY
}

$LARGE distinct "$tmp/d.json" 4000 32
measure 60 html -o "$tmp/d.html" "$tmp/d.json"
echo "# 4000 stacks of 32 distinct frames, $(wc -c <"$tmp/d.json") bytes: page in $cpu s"
is "$rc/$(awk -v t="$cpu" 'BEGIN { print (t <= 10) }')" 0/1 \
  "the page of 4000 stacks of 32 distinct frames: in 10 s at most"
is "$(frames "$tmp/d.html")" 128000 "each of its 128000 frames written once"

$LARGE python "$tmp/p.json" 2732
measure 30 html -o "$tmp/p.html" "$tmp/p.json"
echo "# a Python program's 2732 stacks, $(wc -c <"$tmp/p.json") bytes: page in $cpu s"
is "$rc/$(awk -v t="$cpu" 'BEGIN { print (t <= 2) }')" 0/1 \
  "the page of a Python program's report: in 2 s at most"
is "$(frames "$tmp/p.html")" 33084 "each of its 33084 frames written once"

done_testing
