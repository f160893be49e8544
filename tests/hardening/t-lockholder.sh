#!/bin/sh
# A process stopped (SIGSTOP, a debugger) while it holds a group segment's
# lock, which joining and leaving take, delays the processes that join
# meanwhile and never disables them: each allocation a joiner makes while
# the lock stays held fails alone, after the lock's 2 s bound, with one
# line, and the next one tries again; its memory views show the group's
# cap with nothing free, never the card; once the holder resumes, or dies,
# the joiner is a member like any other.  Members already in the group take
# no lock to allocate, and are not held up at all.
. "$srcdir/tests/hardening/defs.sh"
G=lock$$
SHM=/dev/shm/cumemguard.$(id -u)
trap 'rm -rf "$tmp"; rm -f "$SHM.$G"*' EXIT

for ends in dies resumes; do
  rm -f "$tmp"/*.go
  : >"$tmp/a.out"
  "$LAUNCHER" --group "$G-$ends" --group-limit 1GiB --report "$tmp/a.%p.json" \
    -- "$SIM/app_driver" alloc 100M await "$tmp/a.go" alloc 10M await \
    "$tmp/a2.go" >"$tmp/a.out" 2>"$tmp/a.err" &
  apid=$!
  until_line "$tmp/a.out" '^alloc i=0 .*rc=0'
  # The holder: flock(1) and its sleep, stopped with the lock taken.
  flock "$SHM.$G-$ends" sleep 30 &
  hpid=$!
  until_ok sh -c "flock -n '$SHM.$G-$ends' true; [ \$? -ne 0 ]"
  kill -STOP $hpid
  pkill -STOP -P $hpid

  : >"$tmp/b.out"
  "$LAUNCHER" --group "$G-$ends" --group-limit 1GiB --report "$tmp/b.%p.json" \
    -- "$SIM/app_driver" info alloc 10M info await "$tmp/b.go" alloc 10M \
    info >"$tmp/b.out" 2>"$tmp/b.err" &
  bpid=$!
  : >"$tmp/a.go"
  until_line "$tmp/a.out" '^alloc i=1 '
  until_line "$tmp/b.out" '^info .*' && until_line "$tmp/b.out" '^alloc i=0 '
  cp "$tmp/a.out" "$tmp/out"
  is "$(at alloc rc 2)" 0 \
    "$ends: a member already in the group allocates while the lock is held"
  if [ $ends = dies ]; then
    pkill -KILL -P $hpid
    kill -KILL $hpid
  else
    pkill -CONT -P $hpid
    kill -CONT $hpid
    pkill -TERM -P $hpid
  fi
  wait $hpid 2>/dev/null
  : >"$tmp/b.go"
  wait $bpid
  bst=$?
  : >"$tmp/a2.go"
  wait $apid
  cp "$tmp/b.out" "$tmp/out"
  cp "$tmp/b.err" "$tmp/err"
  is "$bst/$(at info free 1)/$(at info total 1)" 0/0/$((1024 * M)) \
    "$ends: a joiner kept out by the lock sees the group's cap, nothing free"
  is "$(at alloc rc 1)/$(count "group '$G-$ends' is not joined yet: cannot lock $SHM.$G-$ends: another process held it for 2 s (a member stopped while joining?); the next allocation tries again" "$tmp/err")" \
    2/1 "$ends: its allocation meanwhile fails alone, with one line"
  is "$(at info free 2)/$(at info total 2)" 0/$((1024 * M)) \
    "$ends: and its view stays the cap"
  is "$(at alloc rc 2)/$(at info free 3)/$(at info total 3)" \
    0/$(((1024 - 120) * M))/$((1024 * M)) \
    "$ends: once the holder is gone it joins: the cap less what both hold"
  is "$(grep -vc '^cumemguard: \(report\|denied\) ' "$tmp/err")" 0 \
    "$ends: and nothing else is said"
done

done_testing
