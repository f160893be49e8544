#!/bin/sh
# Every report the library writes is one its reader reads: random scripts
# over every kind of memory the library counts, limits, groups, dumps
# (tests/integration/reportprop.py), each report checked against the
# schema and by every reader command.  CMG_PROPERTY_SEED and
# CMG_PROPERTY_CASES choose the runs (a failing case prints its seed).
# Then the case the schema and the reader once disagreed on: page-locked
# host memory freed during the run is named by no device, as everywhere.
. "$srcdir/tests/lib/defs.sh"
trap 'rm -rf "$tmp"; rm -f /dev/shm/cumemguard.$(id -u).prop$$-*' EXIT

READER=$top_builddir/cumemguard-report
VALIDATE=$srcdir/scripts/validate-report
SCHEMA=$srcdir/docs/report-schema.json
export LAUNCHER SIM READER VALIDATE SCHEMA

if ! "$PYTHON3" -c 'import jsonschema' 2>/dev/null; then
  echo "1..0 # SKIP python3-jsonschema is not installed (scripts/install-deps.sh)"
  exit 0
fi

"$PYTHON3" "$srcdir/tests/integration/reportprop.py" "$tmp/prop" \
  "${CMG_PROPERTY_CASES:-40}" "${CMG_PROPERTY_SEED:-20261125}" >"$tmp/tap"
st=$?
# Renumbered into this script's own TAP stream.
while IFS= read -r line; do
  case $line in
    "ok "*) tap 0 "${line#ok * - }" ;;
    "not ok "*) tap 1 "${line#not ok * - }" ;;
    "#"*) echo "$line" ;;
  esac
done <"$tmp/tap"
is "$st" "$([ "$tap_failed" -eq 0 ] && echo 0 || echo 1)" \
  "the property run's status agrees with its lines"

# Host memory freed during the run, the largest freed allocation.
guard "--report $tmp/host.json" app_driver host 8M host_free 0 alloc 1M
is "$rc" 0 "a program that frees page-locked host memory runs"
is "$("$PYTHON3" -c 'import json,sys; r=json.load(open(sys.argv[1])); print([(f["api"], f["device"]) for f in r["timeline"]["freed"]])' "$tmp/host.json")" \
  "[('cuMemAllocHost_v2', None)]" "freed host memory is named by no device (null)"
"$PYTHON3" "$VALIDATE" "$SCHEMA" "$tmp/host.json" >"$tmp/out" 2>"$tmp/err"
is "$?" 0 "that report is valid"
"$READER" timeline -o "$tmp/host.trace" "$tmp/host.json" >"$tmp/out" 2>"$tmp/err"
is "$?" 0 "and the reader draws its freed host allocation"
is "$(grep -c '"device":"host"' "$tmp/host.trace")" 1 \
  "the trace names it host memory"

done_testing
