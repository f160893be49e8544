#!/bin/sh
# fork() from a process whose other threads are inside the wrappers: each
# child must be able to use the driver and the interposer (no lock left
# held by a thread that did not survive the fork), count only its own
# memory, and write its own report at exit.  The storm forks hundreds of
# times while four threads allocate and free; once more while a fifth
# thread writes reports with cmg_dump(), so that forks land inside a report;
# once more with a driver that refuses every call in a child.
. "$srcdir/tests/hardening/defs.sh"

N=${CMG_HARD_FORKS:-200} T=4
[ -z "$SLOW" ] || N=5 T=2
APP_HARD_DUMP_DIR=$tmp/dumps
export APP_HARD_DUMP_DIR
mkdir "$APP_HARD_DUMP_DIR"

# reports: "CHILDREN OTHERS" where CHILDREN counts the reports with one
# 2 MiB allocation live (a child's) and OTHERS the rest (the parent's, with
# one 4 KiB allocation live per churning thread).
reports() {
  "$PYTHON3" - "$tmp" <<'PY'
import glob, json, sys
kids = others = 0
for f in glob.glob(sys.argv[1] + "/report.*.json"):
    s = json.load(open(f))["summary"]
    if (s["live_allocations"], s["live_bytes"]) == (1, 2 << 20):
        kids += 1
    else:
        others += 1
print(kids, others)
PY
}

hguard "--limit 1GiB" "$HARD/app_hard" forkstorm $T "$N"
is "$rc" 0 "forkstorm: the program ends normally"
is "$(sed -n 's/^forkstorm //p' "$tmp/out")" "forks=$N ok=$N hung=0 failed=0" \
  "forkstorm: $N children forked among $T allocating threads allocate and exit"
is "$(reports)" "$N 1" "forkstorm: every child wrote its own report of its own memory"
validate "$(ls "$tmp"/report.*.json | head -n 1)"

rm -f "$tmp"/report.*.json
# A child forked in the middle of a report inherits the blocks the
# reporting thread had allocated, with no thread left to free them:
# valgrind would call them lost in every such child.  Here it only looks
# for memory errors.
saved_prefix=${CMG_TEST_PREFIX:-}
case "$saved_prefix" in
  *valgrind*) CMG_TEST_PREFIX="$saved_prefix --leak-check=no" ;;
esac
hguard "--limit 1GiB" "$HARD/app_hard" forkstorm $T "$N" dump
CMG_TEST_PREFIX=$saved_prefix
# The dumping thread's own lines, one per report, say nothing here.
grep -v "^cumemguard: report $APP_HARD_DUMP_DIR/" "$tmp/err" >"$tmp/err.kept"
mv "$tmp/err.kept" "$tmp/err"
is "$rc" 0 "forkstorm while reports are written: the program ends normally"
is "$(sed -n 's/^forkstorm //p' "$tmp/out")" "forks=$N ok=$N hung=0 failed=0" \
  "forkstorm while reports are written: no child hangs on the report lock"
is "$(reports)" "$N 1" "forkstorm while reports are written: every child wrote its report"
for f in "$tmp"/report.*.json; do validate "$f"; break; done
validate "$(ls "$APP_HARD_DUMP_DIR"/dump.*.json | head -n 1)"
is "$(ls "$APP_HARD_DUMP_DIR" | grep -c '\.tmp\.')" 0 \
  "no temporary report file is left behind"

# A driver that is unusable in a child (CMG_SIM_FORK_POISON: every call
# returns 3): the child sees 3 and exits; it used no memory, so it writes
# no report.
rm -f "$tmp"/report.*.json
CMG_SIM_FORK_POISON=1
export CMG_SIM_FORK_POISON
hguard "--limit 1GiB" "$HARD/app_hard" forkstorm 2 "$((N / 4 + 1))"
unset CMG_SIM_FORK_POISON
is "$(sed -n 's/^forkstorm //p' "$tmp/out")" \
  "forks=$((N / 4 + 1)) ok=0 hung=0 failed=$((N / 4 + 1))" \
  "a poisoned driver in the children: each sees its error and exits"
is "$(reports)" "0 1" "a poisoned driver in the children: only the parent's report"

done_testing
