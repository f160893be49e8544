#!/bin/sh
# The cumemguard launcher: its flags, its exit statuses, and the environment
# it hands to the program.  The program is /bin/sh printing what it got, so
# no CUDA is needed.  Cases that exec the program need a library ld.so can
# preload: the built libcumemguard.so, else a tiny empty one compiled here,
# else they are skipped.  Quiet unless VERBOSE is set.

top_builddir=$(cd "${top_builddir:-.}" && pwd)
L=$top_builddir/cumemguard

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t-launcher.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

n=0
failed=0

say() {
  if [ -n "$VERBOSE" ]; then
    printf '# %s\n' "$@"
  fi
}

# report DESCRIPTION: ok if the last check ($?) passed.
report() {
  status=$?
  n=$((n + 1))
  if [ "$status" -eq 0 ]; then
    printf 'ok %d - %s\n' "$n" "$1"
  else
    failed=$((failed + 1))
    printf 'not ok %d - %s\n' "$n" "$1"
    printf '#   exit status %s\n' "$rc"
    sed 's/^/#   stdout: /' "$tmp/out"
    sed 's/^/#   stderr: /' "$tmp/err"
  fi
}

skip() {
  n=$((n + 1))
  printf 'ok %d # SKIP %s\n' "$n" "$1"
}

# launch [VAR=VALUE...] "$L" ARGS...: runs the launcher through env(1), so
# the assignments reach it and nothing else (a shell may keep assignments
# made in front of a function), with stdout and stderr in $tmp/out and
# $tmp/err and the exit status in $rc.
launch() {
  say "$*"
  rm -f "$tmp/ran"
  env "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  say "exit $rc"
}

lines() {
  wc -l <"$1" | tr -d ' '
}

echo 1..24

if [ ! -x "$L" ]; then
  echo "Bail out! $L was not built"
  exit 1
fi

# The library the exec cases preload.  Unset CUMEMGUARD_OPTIONS so the
# caller's environment cannot change the results.
unset CUMEMGUARD_OPTIONS CUMEMGUARD_LIBRARY
lib=$top_builddir/.libs/libcumemguard.so
if [ ! -f "$lib" ]; then
  lib=$tmp/libempty.so
  echo 'int cmg_test_empty;' >"$tmp/empty.c"
  ${CC:-cc} -shared -fPIC -o "$lib" "$tmp/empty.c" 2>/dev/null || lib=
fi
say "library: ${lib:-none}"

# ---- what needs no library -------------------------------------------------

launch "$L" --version
[ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = "cumemguard 0.1.0" ] &&
  [ ! -s "$tmp/err" ]
report "--version prints the version and exits 0"

launch "$L" --help
[ "$rc" -eq 0 ] && grep -q '^usage: cumemguard .*--limit SIZE' "$tmp/out" &&
  [ ! -s "$tmp/err" ]
report "--help prints the usage to stdout and exits 0"

launch "$L" --limit 4XB touch "$tmp/ran"
[ "$rc" -eq 2 ]
report "a bad size exits 2"

[ "$(lines "$tmp/err")" = 1 ] && grep -q "^cumemguard: .*'limit=4XB'" \
  "$tmp/err"
report "a bad size gives one line naming the value"

[ ! -e "$tmp/ran" ]
report "a bad size does not start the program"

launch CUMEMGUARD_OPTIONS=limit=1G,limt=2G "$L" touch "$tmp/ran"
[ "$rc" -eq 2 ] && [ ! -e "$tmp/ran" ] &&
  grep -q "^cumemguard: unknown option 'limt=2G'" "$tmp/err"
report "a bad CUMEMGUARD_OPTIONS exits 2 without running the program"

launch "$L" --bogus touch "$tmp/ran"
[ "$rc" -eq 2 ] && [ ! -e "$tmp/ran" ] && [ "$(lines "$tmp/err")" = 1 ] &&
  grep -q -e "--bogus" "$tmp/err"
report "an unknown flag exits 2 with one line naming it"

launch "$L" --limit
[ "$rc" -eq 2 ] && grep -q -e "--limit" "$tmp/err"
report "--limit without a value exits 2"

launch "$L" --limit 1G
[ "$rc" -eq 2 ] && grep -q '^usage: cumemguard' "$tmp/err" &&
  [ ! -s "$tmp/out" ]
report "a missing PROGRAM exits 2 with the usage on stderr"

launch "$L" --limit 1G,limit.1=2G touch "$tmp/ran"
[ "$rc" -eq 2 ] && [ ! -e "$tmp/ran" ]
report "a flag value cannot smuggle in a second item"

launch CUMEMGUARD_LIBRARY="$tmp/missing.so" "$L" --limit 1G touch "$tmp/ran"
[ "$rc" -eq 2 ] && [ ! -e "$tmp/ran" ] && [ "$(lines "$tmp/err")" = 1 ] &&
  grep -q "missing.so" "$tmp/err"
report "a missing CUMEMGUARD_LIBRARY exits 2 without running the program"

launch CUMEMGUARD_LIBRARY="$tmp" "$L" --limit 1G touch "$tmp/ran"
[ "$rc" -eq 2 ] && [ ! -e "$tmp/ran" ]
report "a CUMEMGUARD_LIBRARY that is a directory exits 2"

# ---- what runs the program -------------------------------------------------

if [ -z "$lib" ]; then
  i=0
  while [ "$i" -lt 12 ]; do
    skip "no library to preload"
    i=$((i + 1))
  done
  [ "$failed" -eq 0 ]
  exit
fi

export CUMEMGUARD_LIBRARY="$lib"
# shellcheck disable=SC2016 # expanded by the program, not here
show='printf "%s|%s\n" "$LD_PRELOAD" "$CUMEMGUARD_OPTIONS"'

launch "$L" sh -c 'exit 7'
[ "$rc" -eq 7 ]
report "the program's exit status comes back"

launch "$L" --limit 1G touch "$tmp/ran"
[ "$rc" -eq 0 ] && [ -e "$tmp/ran" ]
report "a good limit runs the program"

launch LD_PRELOAD= "$L" --limit 2GiB sh -c "$show"
[ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = "$lib|limit=2GiB" ]
report "LD_PRELOAD and CUMEMGUARD_OPTIONS are set"

# ld.so warns about the entry it cannot find; only stdout is compared.
launch LD_PRELOAD="$tmp/other.so" "$L" --limit=512MiB sh -c "$show"
[ "$rc" -eq 0 ] &&
  [ "$(cat "$tmp/out")" = "$lib:$tmp/other.so|limit=512MiB" ]
report "--limit=SIZE works and LD_PRELOAD keeps the existing entry"

launch LD_PRELOAD="$lib $tmp/other.so" "$L" sh -c "$show"
[ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = "$lib $tmp/other.so|" ]
report "LD_PRELOAD is left alone when the library is already first"

launch CUMEMGUARD_OPTIONS=',limit.1=2GiB,,limit=1G,' LD_PRELOAD= \
  "$L" sh -c "$show"
[ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = "$lib|limit.1=2GiB,limit=1G" ]
report "CUMEMGUARD_OPTIONS from the environment is passed on, tidied"

launch CUMEMGUARD_OPTIONS='limit=1G,limit.1=2GiB' LD_PRELOAD= \
  "$L" --limit 4GiB sh -c "$show"
[ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = "$lib|limit.1=2GiB,limit=4GiB" ]
report "a flag replaces the environment's value of its key"

launch CUMEMGUARD_OPTIONS='limit=1XB' LD_PRELOAD= \
  "$L" --limit 3G --limit 4G sh -c "$show"
[ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = "$lib|limit=4G" ]
report "the last flag wins, and it replaces a bad environment value"

launch LD_PRELOAD= "$L" -- sh -c 'printf "%s\n" "$@"' sh --limit -- x
[ "$rc" -eq 0 ] && [ "$(tr '\n' ' ' <"$tmp/out")" = "--limit -- x " ]
report "options stop at --, and the program's own arguments are kept"

launch "$L" "$tmp/no-such-program"
[ "$rc" -eq 127 ] && [ "$(lines "$tmp/err")" = 1 ] &&
  grep -q "^cumemguard: cannot run '$tmp/no-such-program': " "$tmp/err"
report "a program that does not exist exits 127"

launch "$L" no-such-program-for-cumemguard
[ "$rc" -eq 127 ]
report "a program not on PATH exits 127"

echo 'exit 0' >"$tmp/noexec"
chmod 644 "$tmp/noexec"
launch "$L" "$tmp/noexec"
[ "$rc" -eq 126 ] && grep -q "cannot run" "$tmp/err"
report "a program that cannot be executed exits 126"

[ "$failed" -eq 0 ]
