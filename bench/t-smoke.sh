#!/bin/sh
# make check runs the benchmark harness in its smoke mode (tiny counts): it
# must run every configuration through the interposer and write every
# figure.  A missed performance target never fails this; a broken harness
# (a child that does not finish, a figure missing, the interposer not in
# the path, its counters disagreeing with the calls made) does.
: "${top_builddir:=.}" "${srcdir:=.}"
out=$(mktemp -d "${TMPDIR:-/tmp}/cmgbench.XXXXXX") || exit 99
trap 'rm -rf "$out"' EXIT
"$top_builddir/bench/cmgbench" --lib "$top_builddir/.libs/libcumemguard.so" \
  --sim "$top_builddir/tests/sim/.libs" \
  --tool "$top_builddir/cumemguard-report" \
  --page-load "$srcdir/bench/page-load.js" \
  --smoke --json "$out/results.json" >"$out/log" 2>&1
st=$?
if [ $st -eq 0 ]; then echo "ok 1 - the harness ran in smoke mode"; else
  echo "not ok 1 - the harness ran in smoke mode (status $st)"
  sed 's/^/#   /' "$out/log" | tail -n 20
fi
/usr/bin/python3 - "$out/results.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("not ok 2 - results.json is JSON (%s)" % e)
    sys.exit(0)
print("ok 2 - results.json is JSON")
missing = [k for k in ("calls", "least_added", "threads", "scale", "memory", "report", "repeats",
                       "targets", "python") if not r.get(k)]
# The page's figures may be n/a (a machine without a browser), but are
# never left out.
missing += ["report." + k for k in ("html_bytes", "html_write_s", "html_state",
                                    "html_ready_ms", "html_ready_state")
            if k not in r.get("report", {})]
print(("ok" if r.get("complete") is True and not missing else "not ok") +
      " 3 - complete, with every section's figures" +
      ("" if not missing else " (missing: %s)" % missing))
PY
echo 1..3
