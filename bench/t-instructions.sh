#!/bin/sh
# scripts/bench-instructions, make bench-compare's count of instructions
# per pair: the library against itself must count the same to within a few
# instructions (the counts are what valgrind saw, not times); a pair with
# stacks on must count more than with stacks off, and both more than
# nothing; a library that is not there gets one line and status 2; the
# runs leave no report in the directory they were started from; and with
# Debian's python3.11, the framework-shaped pair counts the same to within
# a few instructions too, and more than the C program's pair.
: "${top_builddir:=.}" "${srcdir:=.}"
lib="$top_builddir/.libs/libcumemguard.so"
# From a directory of its own, absolute paths: the library's reports at
# exit go to the script's temporary directory, never to where it was
# started (check 5).
here=$(mktemp -d "${TMPDIR:-/tmp}/cmgir-cwd.XXXXXX") || exit 99
trap 'rm -rf "$here"' EXIT
lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
top_builddir=$(cd "$top_builddir" && pwd)
srcdir=$(cd "$srcdir" && pwd)
run() {
  (cd "$here" && "$srcdir/scripts/bench-instructions" "$1" "$2" \
    "$top_builddir/tests/sim/.libs" "$top_builddir/bench/cmgpairs" \
    "$top_builddir/bench/cmgbench" \
    "$top_builddir/bench/.libs/libcmgbchain.so")
}
echo "1..6"
fw=
if ! command -v valgrind >/dev/null 2>&1; then
  for i in 1 2 3; do echo "ok $i # SKIP no valgrind here"; done
else
  out=$(run "$lib" "$lib" 2>&1)
  st=$?
  echo "$out" | sed 's/^/# /'
  off=$(echo "$out" | awk '$1 == "stack_depth=0" { print $3, $4 }')
  on=$(echo "$out" | awk '$1 == "default" { print $3, $4 }')
  fw=$(echo "$out" | awk '$1 == "framework" { print $3, $4 }')
  if [ $st -eq 0 ] && [ -n "$off" ] && [ -n "$on" ]; then
    echo "ok 1 - two rows of counts"
  else
    echo "not ok 1 - two rows of counts (status $st)"
  fi
  set -- $off $on
  if [ $# -eq 4 ] && [ "${1#+}" -gt 0 ] && [ "${3#+}" -gt "${1#+}" ]; then
    echo "ok 2 - stacks off adds instructions ($1), the default options more ($3)"
  else
    echo "not ok 2 - stacks off adds instructions, the default options more ($*)"
  fi
  if [ $# -eq 4 ] && [ "${2#[+-]}" -le 8 ] && [ "${4#[+-]}" -le 8 ]; then
    echo "ok 3 - the same library twice: new-base $2 and $4, within 8"
  else
    echo "not ok 3 - the same library twice: new-base within 8 ($*)"
  fi
fi
err=$(run "$lib" "$top_builddir/no-such-lib.so" 2>&1 >/dev/null)
st=$?
if [ $st -eq 2 ] && [ "$err" = "bench-instructions: bad library '$top_builddir/no-such-lib.so': expected a built libcumemguard.so" ]; then
  echo "ok 4 - a library that is not there: status 2, one line naming it"
else
  echo "not ok 4 - a library that is not there: status 2, one line naming it (status $st: $err)"
fi

if ! command -v valgrind >/dev/null 2>&1; then
  echo "ok 5 # SKIP no valgrind here"
elif [ -z "$(ls -A "$here")" ]; then
  echo "ok 5 - nothing left where it was started"
else
  echo "not ok 5 - nothing left where it was started: $(ls -A "$here" | head -3)"
fi

if ! command -v valgrind >/dev/null 2>&1; then
  echo "ok 6 # SKIP no valgrind here"
elif [ ! -x /usr/bin/python3.11 ]; then
  echo "ok 6 # SKIP no /usr/bin/python3.11 here"
else
  set -- $fw ${on:-}
  if [ $# -eq 4 ] && [ "${1#+}" -gt "${3#+}" ] && [ "${2#[+-]}" -le 8 ]; then
    echo "ok 6 - the framework-shaped pair: $1, more than the C pair's $3; the same library twice: new-base $2"
  else
    echo "not ok 6 - the framework-shaped pair: more than the C pair, the same library twice within 8 ($*)"
  fi
fi
