#!/bin/sh
# make check-valgrind: the integration, hardening and report-tool tests with
# every program they start through CMG_TEST_PREFIX run by valgrind's
# memcheck (followed through the launcher's exec and every fork): the
# preload library, the simulated driver, the test programs and
# cumemguard-report; then the unit tests and the core's stress test (as
# LOG_COMPILER).  Any memcheck error or definitely lost block fails the run,
# whether or not the test looked at the exit status: each process logs to
# _valgrind/vg.PID.log and every log must stay empty.  (The launcher's own
# log is replaced when it execs the program, under the same pid; the
# launcher is checked by check-sanitize's ASan build instead.)
#
# tests/valgrind.supp holds the suppressions: only for code that is not
# ours.  Called by make; TESTS_TO_RUN and VALGRIND_SUPP in the environment.
#
# VALGRIND_SKIP (shell patterns) leaves tests out.  By default the group
# tests (t-group*.sh): with --trace-children valgrind re-executes its own
# launcher for every exec, and that native launcher inherits LD_PRELOAD, so
# the interposer starts (and joins the group, or says why it cannot) once
# more under the same pid before the program does; those tests count
# exactly that, and time members against each other in seconds.
set -u
: "${top_builddir:?run through make check-valgrind}" "${TESTS_TO_RUN:?}"
: "${PROGRAM_TESTS=}"
V=$top_builddir/_valgrind
if ! command -v valgrind >/dev/null 2>&1; then
  echo "check-valgrind: valgrind is not installed (Debian: apt-get install valgrind)" >&2
  exit 1
fi
rm -rf "$V"
mkdir -p "$V"
# --fair-sched: valgrind runs one thread at a time, and its default lock
# lets the thread that gives it up take it straight back, so one of two
# threads racing for a cap can run all its pairs before the other starts
# (t-threads.sh would see no contention at all).
prefix="valgrind -q --trace-children=yes --fair-sched=try --error-exitcode=9 --leak-check=full"
prefix="$prefix --errors-for-leak-kinds=definite --show-leak-kinds=definite"
prefix="$prefix --suppressions=$VALGRIND_SUPP --log-file=$V/vg.%p.log"

tests=
for t in $TESTS_TO_RUN; do
  keep=1
  for pat in ${VALGRIND_SKIP-*/t-group*.sh}; do
    # shellcheck disable=SC2254
    case $t in $pat) keep= ;; esac
  done
  if [ -n "$keep" ]; then tests="$tests $t"; else echo "check-valgrind: leaving out $t"; fi
done

cd "$top_builddir" || exit 1
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "${MAKE:-make}" -j"${VG_JOBS:-2}" \
  check TESTS="$tests" CMG_TEST_PREFIX="$prefix"
rc=$?
if [ -n "$PROGRAM_TESTS" ]; then
  env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL STRESS_ITERS=3000 \
    "${MAKE:-make}" -j"${VG_JOBS:-2}" check TESTS="$PROGRAM_TESTS" \
    LOG_COMPILER="$prefix" || rc=1
fi

bad=0
for f in "$V"/vg.*.log; do
  [ -s "$f" ] || continue
  bad=$((bad + 1))
  if [ "$bad" -le 5 ]; then
    echo "check-valgrind: $f:" >&2
    head -n 40 "$f" >&2
  fi
done
logs=$(ls "$V" | wc -l)
echo "check-valgrind: $logs processes under memcheck, $bad with errors"
[ "$rc" -eq 0 ] && [ "$bad" -eq 0 ]
