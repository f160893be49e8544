#!/bin/sh
# Deaths in the middle of allocations: members of a group that allocate
# and free as fast as they can, on two threads each, four at a time, are
# killed together at a random moment, by SIGKILL, by SIGTERM with its
# report, and by SIGTERM's default action (signal_report=0, nothing of
# ours runs).  After each round a new member sees exactly the cap less what
# the one live member holds: what the dead had in flight went back with
# them, none of it stays in the group and none is charged to the next
# member (HAMi-core's and our earlier counting lost one allocation's size
# in about one kill in ten).
. "$srcdir/tests/hardening/defs.sh"
G=mid$$
SHM=/dev/shm/cumemguard.$(id -u)
trap 'rm -rf "$tmp"; rm -f "$SHM.$G"*' EXIT
ROUNDS=${CMG_MIDALLOC_ROUNDS:-30}
[ -z "$SLOW" ] || ROUNDS=3
VICTIMS=4

: >"$tmp/live.out"
"$LAUNCHER" --group "$G" --group-limit 1GiB --report "$tmp/live.json" -- \
  "$SIM/app_driver" alloc 100M await "$tmp/live.go" >"$tmp/live.out" 2>&1 &
live=$!
until_line "$tmp/live.out" '^alloc i=0 .*rc=0'

# round SIGNAL OPTIONS: VICTIMS members churning 256 MiB and 64 MiB pieces
# on two threads each, all killed with SIGNAL after 20 to 80 ms; then the
# free memory a new member sees, in $tmp/free.
round() {
  sig=$1 opts=$2
  pids=
  for v in $(seq $VICTIMS); do
    CUMEMGUARD_OPTIONS=$opts "$LAUNCHER" --group "$G" --group-limit 1GiB \
      --report "$tmp/v.%p.json" -- "$SIM/app_driver" threads 2 100000000 \
      $([ $((v % 2)) = 0 ] && echo 256M || echo 64M) >/dev/null 2>&1 &
    pids="$pids $!"
  done
  sleep "0.0$(awk -v s="$$$1$v$(date +%N)" 'BEGIN { srand(s); printf "%d", 2 + rand() * 6 }')"
  # shellcheck disable=SC2086
  kill -$sig $pids
  for p in $pids; do wait "$p" 2>/dev/null; done
  guard "--group $G --group-limit 1GiB" app_driver info
  echo "$(at info free)" >"$tmp/free"
}

want=$((924 * M))
for how in KILL TERM TERM-quiet; do
  bad= n=0
  for r in $(seq $ROUNDS); do
    case $how in
      KILL) round KILL "" ;;
      TERM) round TERM "" ;;
      TERM-quiet) round TERM signal_report=0 ;;
    esac
    n=$((n + VICTIMS))
    [ "$(cat "$tmp/free")" = "$want" ] || bad="$bad $r:$(cat "$tmp/free")"
  done
  is "${bad:-none}" none \
    "$n victims of SIG$how in $ROUNDS rounds: the next member always sees the cap less the live member's 100 MiB"
done
"$LAUNCHER" status "$G" --json >"$tmp/out"
is "$("$PYTHON3" -c 'import json, sys; g = json.load(open(sys.argv[1]))["groups"][0]; print(g["members"], g["devices"][0]["used"])' "$tmp/out")" \
  "1 $((100 * M))" "status: one member left, holding 100 MiB, and nothing more"
: >"$tmp/live.go"
wait $live

done_testing
