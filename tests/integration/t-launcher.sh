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

# The LD_PRELOAD cases of every user of cmg__preload_add, @D@ made $d.
d=$tmp/d
sed -e '/^#/d' -e '/^$/d' -e "s#@D@#$d#g" \
  "${srcdir:-.}/tests/preload-cases.txt" >"$tmp/cases" || exit 99
ncases=$(lines "$tmp/cases")

echo "1..$((48 + ncases))"

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

for f in '--report PATTERN' '--stack-depth N' '--stack-mode MODE' \
  '--dump-signal NAME' '--leak-exitcode N'; do
  grep -q -e "^  $f  " "$tmp/out" && grep -q -e "\[$f\]" "$tmp/out"
  report "--help describes $f"
done

# The default library's path is the configured libdir, whatever its length.
[ -z "$(awk 'length > 80 && !/^ +\/.*\/libcumemguard\.so$/' "$tmp/out")" ]
report "--help fits in 80 columns"

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

# bad values of the report flags: one line quoting the item, exit 2, and
# the program never runs
bad_flag() {
  want=$1
  shift
  launch "$L" "$@" touch "$tmp/ran"
  [ "$rc" -eq 2 ] && [ ! -e "$tmp/ran" ] && [ "$(lines "$tmp/err")" = 1 ] &&
    grep -q -F -e "cumemguard: $want" "$tmp/err"
  report "$* exits 2 without running the program"
}

bad_flag "bad value 'stack_depth=300': expected a number of frames from 0 \
to 256" --stack-depth 300
bad_flag "bad value 'stack_depth=-1': " --stack-depth=-1
bad_flag "bad value 'report=%x.json': expected a file name pattern; %p, \
%h, %t and %% are the only escapes" --report '%x.json'
bad_flag "bad value 'report=': " --report ''
bad_flag "bad value 'report=r.%': " --report=r.%
bad_flag "bad value 'dump_signal=KILL': expected one of USR1, USR2, HUP, \
WINCH, URG, PWR" --dump-signal KILL
bad_flag "bad value 'dump_signal=SIGTERM': " --dump-signal=SIGTERM
bad_flag "bad value 'dump_signal=10': " --dump-signal 10
bad_flag "bad value 'leak_exitcode=0': expected an exit status from 1 to \
255" --leak-exitcode 0
bad_flag "bad value 'leak_exitcode=256': " --leak-exitcode=256
bad_flag "bad value 'a.json,limit=1G' for --report" --report a.json,limit=1G

launch CUMEMGUARD_OPTIONS=report=a.json,report=b.json "$L" touch "$tmp/ran"
[ "$rc" -eq 2 ] && [ ! -e "$tmp/ran" ] &&
  grep -q "^cumemguard: duplicate option 'report=b.json'" "$tmp/err"
report "a duplicate key in CUMEMGUARD_OPTIONS exits 2"

launch "$L" --leak-exitcode
[ "$rc" -eq 2 ] && grep -q -e "--leak-exitcode" "$tmp/err"
report "--leak-exitcode without a value exits 2"

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
  while [ "$i" -lt $((14 + ncases)) ]; do
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

# Runs $show under the launcher with LD_PRELOAD=$1 (and launcher options
# $4...), and reports $3 if it exits 0 having seen "$2".
preload_case() {
  pre=$1 want=$2 what=$3
  shift 3
  launch LD_PRELOAD="$pre" "$L" "$@" sh -c "$show"
  [ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = "$want" ]
  report "$what"
}

preload_case "" "$lib|limit=2GiB" \
  "LD_PRELOAD and CUMEMGUARD_OPTIONS are set" --limit 2GiB

# ld.so warns about the entry it cannot find; only stdout is compared.
preload_case "$tmp/other.so" "$lib:$tmp/other.so|limit=512MiB" \
  "--limit=SIZE works and LD_PRELOAD keeps the existing entry" \
  --limit=512MiB

# Every case of the table, the library copied to its LIB: LD_PRELOAD as
# the program sees it, or the line refusing the library and no program.
# The launcher gets OLD too, so ld.so's warnings are left out of stderr.
while IFS='|' read -r old l want what; do
  [ -e "$l" ] || { mkdir -p "${l%/*}" && cp "$lib" "$l"; } || exit 99
  if [ "$old" = "(unset)" ]; then
    launch -u LD_PRELOAD CUMEMGUARD_LIBRARY="$l" "$L" sh -c "$show"
  else
    launch LD_PRELOAD="$old" CUMEMGUARD_LIBRARY="$l" "$L" sh -c "$show"
  fi
  case $want in
    "error: "*)
      [ "$rc" -eq 2 ] && [ ! -s "$tmp/out" ] &&
        [ "$(grep -v '^ERROR: ld.so: ' "$tmp/err")" = \
          "cumemguard: ${want#error: }" ] ;;
    *) [ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = "$want|" ] ;;
  esac
  report "LD_PRELOAD: $what"
done <"$tmp/cases"

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

launch LD_PRELOAD= "$L" --report 'r.%p.%h.%t.%%.json' --stack-depth 8 \
  --dump-signal USR2 --leak-exitcode 23 sh -c "$show"
[ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = \
  "$lib|report=r.%p.%h.%t.%%.json,stack_depth=8,dump_signal=USR2,\
leak_exitcode=23" ]
report "the report flags become report, stack_depth, dump_signal and \
leak_exitcode"

launch LD_PRELOAD= "$L" --leak-exitcode=1 --dump-signal=sigusr1 \
  --stack-depth=0 --report=/tmp/x.json --limit=1G sh -c "$show"
[ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = \
  "$lib|limit=1G,report=/tmp/x.json,stack_depth=0,dump_signal=sigusr1,\
leak_exitcode=1" ]
report "--flag=VALUE works for the report flags, in the table's order"

launch CUMEMGUARD_OPTIONS='stack_depth=4,report=a.json,dump_signal=HUP' \
  LD_PRELOAD= "$L" --stack-depth 64 --dump-signal WINCH sh -c "$show"
[ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = \
  "$lib|report=a.json,stack_depth=64,dump_signal=WINCH" ]
report "a report flag replaces the environment's value of its key"

launch CUMEMGUARD_OPTIONS='stack_depth=999' LD_PRELOAD= \
  "$L" --stack-depth 1 --stack-depth 2 sh -c "$show"
[ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = "$lib|stack_depth=2" ]
report "the last --stack-depth wins over a bad environment value"

launch "$L" --leak-exitcode 23 sh -c 'exit 7'
[ "$rc" -eq 7 ]
report "--leak-exitcode leaves the program's own exit status alone"

launch "$L" --leak-exitcode 23 true
[ "$rc" -eq 0 ]
report "--leak-exitcode with nothing allocated: status 0"

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
