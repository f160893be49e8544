#!/bin/sh
# Shared memory that runs out or is cut from under us.  A /dev/shm with no
# room for a segment (Docker's 64 MiB one, filled by a DataLoader's
# workers): every program still runs, as without us; a process in no group
# runs capped without its slot in the registry, and says so once; a
# process in a group fails closed with one line naming /dev/shm and the
# space needed; nothing half-made is left there.  A segment truncated by
# another process while members have it mapped: no member dies of SIGBUS,
# whether it allocates at once, has a SIGBUS handler of its own, asks for
# no signal reports, or writes its report from the dump thread as SIGTERM
# kills it; and the program's own bus errors still reach its handler.
. "$srcdir/tests/hardening/defs.sh"
G=shm$$
UID_=$(id -u)
SHM=/dev/shm/cumemguard.$UID_
trap 'rm -rf "$tmp"; rm -f "$SHM.$G"*' EXIT

# in_shm SIZE COMMAND...: COMMAND in a private mount namespace whose
# /dev/shm is an empty tmpfs of SIZE; $tmp/ls lists what it held after.
in_shm() {
  size=$1
  shift
  $NS sh -c '
    size=$1 ls=$2
    shift 2
    mount -t tmpfs -o "size=$size" tmpfs /dev/shm || exit 99
    "$@"
    rc=$?
    ls -A /dev/shm >"$ls"
    exit $rc' sh "$size" "$tmp/ls" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
}

# A segment's size, from one a member makes here.
: >"$tmp/size.out"
"$LAUNCHER" --group "$G-size" --group-limit 1GiB --report "$tmp/size.json" -- \
  "$SIM/app_driver" alloc 1M await "$tmp/size.go" >"$tmp/size.out" 2>&1 &
until_line "$tmp/size.out" '^alloc '
SEG_BYTES=$(stat -c %s "$SHM.$G-size")
: >"$tmp/size.go"
wait
need="it needs $(awk -v b="$SEG_BYTES" 'BEGIN { printf "%.1f MiB", b / 1048576 }'), and 1.0 MiB is free"
if [ -n "$NS" ]; then
  in_shm 1M env LD_PRELOAD="$CUMEMGUARD_LIBRARY" /bin/echo hello
  is "$rc/$(cat "$tmp/out")/$(wc -c <"$tmp/err")/$(cat "$tmp/ls")" 0/hello/0/ \
    "a 1 MiB /dev/shm: a program that uses no GPU runs as without us, silently"

  in_shm 1M "$LAUNCHER" --limit 1GiB --report "$tmp/r.%p.json" -- \
    "$SIM/app_driver" alloc 10M alloc 2G \
    info
  is "$rc/$(at alloc rc 1)/$(at alloc rc 2)/$(at info total)" \
    0/0/2/$((1024 * M)) "no group: the process runs capped as usual"
  is "$(count "cumemguard: /dev/shm has no room for $SHM.@solo: $need; this process runs capped as usual, but \`cumemguard status\` does not list it" "$tmp/err")/$(grep -vc '^cumemguard: \(report\|denied\) ' "$tmp/err")" \
    1/1 "and says once that status will not list it"
  is "$(cat "$tmp/ls")" "" "and leaves nothing in /dev/shm"

  in_shm 1M "$LAUNCHER" --group "$G" --group-limit 1GiB --report \
    "$tmp/r.%p.json" -- "$SIM/app_driver" \
    alloc 10M alloc 1M
  is "$rc/$(at alloc rc 1)/$(at alloc rc 2)" 0/2/2 \
    "a group: the process runs and fails closed"
  is "$(count "group=$G: /dev/shm has no room for $SHM.$G: $need; no device allocation will succeed" "$tmp/err")/$(grep -c 'group=' "$tmp/err")" \
    1/1 "with one line naming /dev/shm and the space it needs"
  is "$(cat "$tmp/ls")" "" "and leaves no segment behind"

  # A segment that was only sized (holes where its pages go), as a library
  # that did not give it its memory left it: the joiner's first write to
  # it would raise SIGBUS.
  in_shm 1M sh -c "truncate -s $SEG_BYTES '$SHM.$G' && chmod 600 '$SHM.$G' &&
    exec '$LAUNCHER' --group '$G' --group-limit 1GiB --report '$tmp/r.%p.json' \
    -- '$SIM/app_driver' \
    alloc 10M"
  is "$rc/$(at alloc rc)/$(count "group=$G: /dev/shm has no room for $SHM.$G: $need" "$tmp/err")" \
    0/2/1 "a segment with holes in a full /dev/shm: no SIGBUS, it fails closed"
else
  skip_n 11 "$NS_WHY"
fi

# ---- segments cut from under their members ------------------------------

# member NAME "OPTIONS" SCRIPT...: a member of group $G-NAME in the
# background that holds 100 MiB, then runs SCRIPT once $tmp/NAME.go exists.
member() {
  name=$1 opts=$2
  shift 2
  : >"$tmp/$name.out"
  # shellcheck disable=SC2086
  "$LAUNCHER" --group "$G-$name" --group-limit 1GiB $opts \
    --report "$tmp/$name.%p.json" -- "$SIM/app_driver" alloc 100M "$@" \
    >"$tmp/$name.out" 2>"$tmp/$name.err" &
  echo $! >"$tmp/$name.pid"
  until_line "$tmp/$name.out" '^alloc i=0 .*rc=0'
}

# cut NAME HOW: truncates NAME's segment to nothing or to half.
cut() {
  case $2 in
    empty) truncate -s 0 "$SHM.$G-$1" ;;
    half) truncate -s $(($(stat -c %s "$SHM.$G-$1") / 2)) "$SHM.$G-$1" ;;
  esac
}

# finish NAME: waits for NAME's member; its status in $st, its output in
# $tmp/out and $tmp/err.
finish() {
  wait "$(cat "$tmp/$1.pid")"
  st=$?
  cp "$tmp/$1.out" "$tmp/out"
  cp "$tmp/$1.err" "$tmp/err"
}
truncated="$SHM.$G-X was truncated while in use; no device allocation will succeed"

# The program has a SIGBUS handler of its own and allocates right after.
member own "" handle BUS await "$tmp/own.go" alloc 10M info
cut own empty
: >"$tmp/own.go"
finish own
is "$st/$(at alloc rc 2)/$(grep -c '^handled' "$tmp/out")" 0/2/0 \
  "a SIGBUS handler of the program's: the member fails closed, the handler is not called"
is "$(count "group=$G-own: $(echo "$truncated" | sed "s/X/own/")" "$tmp/err")" 1 \
  "with one line"

# No signal reports asked for: no handler of ours for deaths, still no SIGBUS.
CUMEMGUARD_OPTIONS=signal_report=0
export CUMEMGUARD_OPTIONS
member quiet "" await "$tmp/quiet.go" alloc 10M
unset CUMEMGUARD_OPTIONS
cut quiet empty
: >"$tmp/quiet.go"
finish quiet
is "$st/$(at alloc rc 2)" 0/2 "signal_report=0: the member fails closed, no SIGBUS"

# Cut to half, then SIGTERM: the dump thread reads every slot for the report.
member term "" await "$tmp/term.go" sleep 60000
cut term half
: >"$tmp/term.go"
until_line "$tmp/term.out" '^await'
kill -TERM "$(cat "$tmp/term.pid")"
finish term
is "$st/$(q "$tmp"/term.*.json 'r["process"]["end"]["name"]')" 143/SIGTERM \
  "cut to half, then SIGTERM: killed by SIGTERM, its report written"

# The program's own bus errors: its handler, or the default action and a
# report, exactly as without us.
member bus "" handle BUS crash bus
finish bus
is "$st/$(grep -c '^handled' "$tmp/out")" 3/1 \
  "the program's own SIGBUS reaches its handler"
# A library built with AddressSanitizer (check-sanitize) brings ASan's own
# handler for crashes, which is then the program's.
if ldd "$CUMEMGUARD_LIBRARY" 2>/dev/null | grep -q libasan; then
  skip_n 1 "ASan's runtime handles SIGBUS"
else
  member dfl "" crash bus
  finish dfl
  is "$st/$(q "$tmp"/dfl.*.json 'r["process"]["end"]["name"]')" 135/SIGBUS \
    "and without one it dies of SIGBUS, with its report"
fi

done_testing
