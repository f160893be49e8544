#!/bin/sh
# exit() while other threads are inside the wrappers: allocating and
# freeing, writing reports with cmg_dump(), or parked by on_exceed=wait.
# Each run must end with the program's own exit status (no crash, no
# hang), one line on stderr naming the report (or saying why there is
# none), and a valid report.
. "$srcdir/tests/hardening/defs.sh"

R=${CMG_HARD_RUNS:-20}
[ -z "$SLOW" ] || R=1
APP_HARD_DUMP_DIR=$tmp/dumps
export APP_HARD_DUMP_DIR
mkdir "$APP_HARD_DUMP_DIR"

# race "DESCRIPTION" "LAUNCHER OPTIONS" ALLOWED ARGS...: R runs; one TAP
# line each for the exit statuses, the stderr lines (other than those
# matching the regular expression ALLOWED) and the reports.
race() {
  what=$1 opts=$2 allowed=$3
  shift 3
  statuses= bad_err=0 missing=0
  i=0
  while [ "$i" -lt "$R" ]; do
    rm -f "$tmp"/report.*.json
    hguard "$opts" "$HARD/app_hard" exitrace "$@"
    statuses="$statuses $rc"
    # One line: the report's, or one saying why none was written.
    grep -v -- "$allowed" "$tmp/err" >"$tmp/err.rest"
    if [ "$(grep -c '^cumemguard: \(report\|cannot write report\) ' "$tmp/err.rest")" -ne 1 ] ||
       [ "$(grep -vc '^cumemguard: \(report\|cannot write report\) ' "$tmp/err.rest")" -ne 0 ]; then
      bad_err=$((bad_err + 1))
      sed 's/^/#   err: /' "$tmp/err.rest"
    fi
    r=$(report)
    if [ -z "$r" ] && ! grep -q '^cumemguard: cannot write report' "$tmp/err"; then
      missing=$((missing + 1))
    fi
    i=$((i + 1))
  done
  want=$(i=0; while [ "$i" -lt "$R" ]; do printf ' %s' "$3"; i=$((i + 1)); done)
  is "$statuses" "$want" "$what: $R runs end with the program's status"
  is "$bad_err" 0 "$what: one line on stderr, the report's"
  is "$missing" 0 "$what: a report each time"
  if [ -n "$r" ]; then validate "$r"; else tap 1 "$what: the last report"; fi
}

NONE='^$'
T=4 T2=8
[ -z "$SLOW" ] || T=2 T2=2
race "exit while $T threads allocate" "--limit 1GiB" "$NONE" $T 30 7
race "exit while $T2 threads allocate under a tight limit" "--limit 64K" \
  '^cumemguard: denied ' $T2 30 9
race "exit while another thread writes reports" "--limit 1GiB" \
  "^cumemguard: report $APP_HARD_DUMP_DIR/dump\\." $T 30 7 dump
CUMEMGUARD_OPTIONS=on_exceed=wait,wait_timeout=60s
export CUMEMGUARD_OPTIONS
race "exit while threads wait for room (on_exceed=wait)" "--limit 20K" \
  "$NONE" 4 30 3
unset CUMEMGUARD_OPTIONS

done_testing
