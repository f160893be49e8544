# Sourced by every tests/reader/t-*.sh after tests/lib/defs.sh (which
# gives guard, q, validate, tap, is and the temporary directory): runs
# cumemguard-report and compares its output with tests/reader/golden/.
# CMG_TOOL names another build of the tool (check-tool-asan sets it);
# CMG_REGOLD=1 rewrites the golden files from what the tool prints now.
. "$srcdir/tests/lib/defs.sh"

TOOL=${CMG_TOOL:-$top_builddir/cumemguard-report}
TOOLDIR=$srcdir/tests/reader
GOLDEN=$TOOLDIR/golden
M=1048576

# tool ARGS...: stdout in $tmp/out, stderr in $tmp/err, status in $rc.
tool() {
  # shellcheck disable=SC2086
  ${CMG_TEST_PREFIX:-} "$TOOL" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
}

# tool_json FILE ARGS...: the same, with stdout in FILE instead (so that a
# failing test does not print a whole JSON document).
tool_json() {
  out=$1
  shift
  ${CMG_TEST_PREFIX:-} "$TOOL" "$@" >"$out" 2>"$tmp/err"
  rc=$?
  : >"$tmp/out"
}

# tool_in DIR ARGS...: the same, run from DIR (for stable paths in output).
tool_in() {
  dir=$1
  shift
  (cd "$dir" && ${CMG_TEST_PREFIX:-} "$TOOL" "$@") >"$tmp/out" 2>"$tmp/err"
  rc=$?
}

# golden NAME DESCRIPTION: $tmp/out against golden/NAME.
golden() {
  if [ -n "${CMG_REGOLD:-}" ]; then cp "$tmp/out" "$GOLDEN/$1"; fi
  diff -u "$GOLDEN/$1" "$tmp/out" >"$tmp/diff" 2>&1
  st=$?
  tap_n=$((tap_n + 1))
  if [ $st -eq 0 ]; then
    echo "ok $tap_n - $2"
  else
    tap_failed=$((tap_failed + 1))
    echo "not ok $tap_n - $2"
    sed 's/^/#   /' "$tmp/diff"
  fi
}

# js FILE EXPR: a Python expression over the JSON document d in FILE.
js() {
  "$PYTHON3" -S - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))
PY
}

# normalize: the summary of a run of tests/sim with what varies from run to
# run and compiler to compiler taken out: pids, times, paths, the host,
# offsets, and the frames that are not the test program's cmgtest_ ones.
normalize() {
  "$PYTHON3" "$TOOLDIR/normalize.py" "$tmp" "$SIM"
}

# one_line_error PATTERN DESCRIPTION: status 2, nothing on stdout and one
# line on stderr that starts with "cumemguard-report: " and holds PATTERN.
one_line_error() {
  st=0
  [ "$rc" -eq 2 ] || st=1
  [ ! -s "$tmp/out" ] || st=1
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || st=1
  case "$(cat "$tmp/err")" in
    "cumemguard-report: "*) ;;
    *) st=1 ;;
  esac
  grep -qF -- "$1" "$tmp/err" || st=1
  tap $st "$2"
  [ $st -eq 0 ] || echo "#   rc=$rc"
}

# xml FILE DESCRIPTION: a TAP line for xmllint --noout.
xml() {
  if ! command -v xmllint >/dev/null 2>&1; then
    tap_n=$((tap_n + 1))
    echo "ok $tap_n - # SKIP xmllint is not installed (libxml2-utils)"
    return
  fi
  xmllint --noout "$1" >"$tmp/xml" 2>&1
  st=$?
  tap $st "$2"
  [ $st -eq 0 ] || sed 's/^/#   /' "$tmp/xml" | head -n 5
}

# measure LIMIT ARGS...: the tool, as tool() runs it, killed after LIMIT
# seconds (rc 124 then); sets $cpu, the user and system seconds it took,
# and $rss, its largest resident size in MiB.  CPU time rather than the
# wall clock, so that other work on the machine does not count.
measure() {
  limit=$1
  shift
  # shellcheck disable=SC2046,SC2086
  set -- $("$PYTHON3" - "$tmp" "$limit" ${CMG_TEST_PREFIX:-} "$TOOL" \
    "$@" <<'PY'
import resource, subprocess, sys
tmp, limit, argv = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
with open(tmp + "/out", "wb") as out, open(tmp + "/err", "wb") as err:
    p = subprocess.Popen(argv, stdout=out, stderr=err)
    try:
        rc = p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        rc = 124
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(rc, "%.2f" % (r.ru_utime + r.ru_stime), r.ru_maxrss // 1024)
PY
)
  rc=$1 cpu=$2 rss=$3
}
