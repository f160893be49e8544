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
  --chain "$top_builddir/bench/.libs/libcmgbchain.so" \
  --smoke --json "$out/results.json" >"$out/log" 2>&1
st=$?
if [ $st -eq 0 ]; then echo "ok 1 - the harness ran in smoke mode"; else
  echo "not ok 1 - the harness ran in smoke mode (status $st)"
  sed 's/^/#   /' "$out/log" | tail -n 20
fi
"$PYTHON3" - "$out/results.json" <<'PY'
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

# make bench-compare's run: two libraries (here the same one twice), every
# per-pair row with both figures; a bad base is one line that names it.
lib=$top_builddir/.libs/libcumemguard.so
"$top_builddir/bench/cmgbench" --lib "$lib" --base "$lib" \
  --sim "$top_builddir/tests/sim/.libs" --smoke >"$out/cmp" 2>"$out/cmp.err"
st=$?
rows=$(grep -Ec '^  (direct|dlsym|getproc|runtime) +(0|16|32|64) +[-+][0-9.]+ +[-+][0-9.]+ +[-+][0-9.]+ ' "$out/cmp")
if [ $st -eq 0 ] && [ "$rows" -eq 16 ]; then
  echo "ok 4 - --base: 16 per-pair rows, base and new, in one run"
else
  echo "not ok 4 - --base: 16 per-pair rows, base and new, in one run (status $st, $rows rows)"
  sed 's/^/#   /' "$out/cmp" "$out/cmp.err" | tail -n 30
fi
# Its framework-shaped rows: both builds at the default options, at
# python_frames=0 and their difference, each with the new-base range; or,
# without Debian's python3.11, the line saying the section is left out.
fw=$(grep -Ec '^  (default|python_frames=0|Python frames) +[-+][0-9]+ \( *[-+][0-9]+\) +[-+][0-9]+ \( *[-+][0-9]+\) +[-+][0-9]+  [-+][0-9]+ \.\. [-+][0-9]+' "$out/cmp")
if [ -x /usr/bin/python3.11 ]; then want=3; else
  want=0
  grep -q '^Framework-shaped pair, both builds: left out,' "$out/cmp" || want=-1
fi
if [ $st -eq 0 ] && [ "$fw" -eq "$want" ]; then
  echo "ok 5 - --base: the framework-shaped pair's three rows for both builds"
else
  echo "not ok 5 - --base: the framework-shaped pair's three rows for both builds ($fw rows, $want wanted)"
  sed 's/^/#   /' "$out/cmp" | tail -n 12
fi
cp "$out/cmp" "$out/cmp.fw"
"$top_builddir/bench/cmgbench" --lib "$lib" --base "$out/nonexistent.so" \
  --smoke >"$out/cmp" 2>"$out/cmp.err"
st=$?
if [ $st -eq 2 ] && [ "$(cat "$out/cmp.err")" = "cmgbench: bad --base '$out/nonexistent.so': expected a built libcumemguard.so" ]; then
  echo "ok 6 - a base library that is not there: status 2, one line naming it"
else
  echo "not ok 6 - a base library that is not there: status 2, one line naming it (status $st)"
  sed 's/^/#   /' "$out/cmp.err"
fi
"$srcdir/scripts/bench-compare" no-such-commit-here "$srcdir" "$top_builddir" \
  >"$out/cmp" 2>"$out/cmp.err"
st=$?
if [ $st -eq 2 ] && [ "$(cat "$out/cmp.err")" = "bench-compare: bad BASE 'no-such-commit-here': expected a commit of $srcdir (a branch, a tag or a hash)" ]; then
  echo "ok 7 - make bench-compare with a BASE that is no commit: status 2, one line naming it"
else
  echo "not ok 7 - make bench-compare with a BASE that is no commit: status 2, one line naming it (status $st)"
  sed 's/^/#   /' "$out/cmp.err"
fi
# The framework-shaped, deep-stack and VMM rows: their sections and
# target lines printed, their members in results.json (with null figures
# where an interpreter is absent, never left out).
labels='Framework-shaped pair:|framework-shaped pair at the default options: added'
labels="$labels|Deep C stacks:|at stack_depth=8, 254 frames' added / 32 frames'"
labels="$labels|(254 frames: the floor, following the frame-pointer chain"
labels="$labels|VMM and stream-ordered pools:|vmm (2 MiB page)|pool driver|pool runtime"
missing=
old_ifs=$IFS; IFS='|'
for l in $labels; do
  grep -qF "$l" "$out/log" || missing="$missing [$l]"
done
IFS=$old_ifs
if [ -z "$missing" ]; then echo "ok 8 - the new rows and target lines are printed"
else echo "not ok 8 - the new rows and target lines are printed (missing:$missing)"; fi
"$PYTHON3" - "$out/results.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception:
    r = {}
want = {"framework": ["state", "native_frames", "rows", "profile",
                      "target_added_ns"],
        "deep_stacks": ["ratio", "floor_ratio", "target_ratio_at_most",
                        "rows"],
        "vmm_pool": ["vmm_page_bytes", "pool_bytes", "rows"]}
missing = [s + "." + k for s, keys in want.items() for k in keys
           if k not in r.get(s, {})]
fw = r.get("framework", {})
if fw.get("state") == "ok":
    missing += ["framework.rows." + c for c in ("bare", "default", "off", "d8",
                                                "d32", "d128", "nopy")
                if c not in [x.get("config") for x in fw.get("rows", [])]]
    missing += ["framework.rows[%d].%s" % (i, k)
                for i, row in enumerate(fw.get("rows", []))
                for k in ("ns", "ns_min") if row.get(k) is None]
rows = r.get("deep_stacks", {}).get("rows", [])
missing += ["deep_stacks.rows[%d].%s" % (i, k) for i, row in enumerate(rows)
            for k in ("added", "floor_walk_ns") if row.get(k) is None]
if len(rows) != 6:
    missing.append("deep_stacks: 6 rows, not %d" % len(rows))
rows = r.get("vmm_pool", {}).get("rows", [])
missing += ["vmm_pool.rows[%d].added_percent" % i for i, row in enumerate(rows)
            if row.get("added_percent") is None]
if sorted((x.get("path"), x.get("stack_depth")) for x in rows) != sorted(
        (p, d) for p in ("vmm", "pool_driver", "pool_runtime") for d in (0, 32)):
    missing.append("vmm_pool: a row per path at stack_depth 0 and 32")
print(("ok" if not missing else "not ok") +
      " 9 - results.json has the new rows' members" +
      ("" if not missing else " (missing: %s)" % missing))
PY
# Each framework row counts the alternations (3 in smoke mode) in which the
# new build was faster, with a sign test's p: 0.250 when it won all or none
# of three, 1.000 otherwise.
if [ -x /usr/bin/python3.11 ]; then
  bad=$(sed -n 's/^  \(default\|python_frames=0\|Python frames\) .*  faster in \([0-9]*\) of \([0-9]*\), p \([0-9.]*\)$/\2 \3 \4/p' "$out/cmp.fw" |
    awk '{ want = ($1 == 0 || $1 == 3) ? "0.250" : "1.000"
           n++; if ($2 != 3 || $3 != want) print }
         END { if (n != 3) print n " rows" }')
  if [ -z "$bad" ]; then
    echo "ok 10 - --base: each framework row, new faster in K of 3, p of a sign test"
  else
    echo "not ok 10 - --base: each framework row, new faster in K of 3, p of a sign test ($bad)"
    sed 's/^/#   /' "$out/cmp.fw" | tail -n 12
  fi
else
  echo "ok 10 - --base: each framework row, new faster in K of 3, p of a sign test # SKIP no /usr/bin/python3.11"
fi
echo 1..10
