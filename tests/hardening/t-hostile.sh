#!/bin/sh
# Programs that do what programs do to a library under them: fork while a
# signal kills one side, take a deadly signal in the middle of an
# allocation, close every descriptor and open their own files in their
# place, toggle a signal's action back and forth while it arrives, and
# share a group whose segment someone empties, zeroes, truncates or edits
# while a member holds memory.  Each keeps its cap, writes its own report
# (or says in one line why it cannot), never waits long, never touches the
# program's files, and never leaves a temporary file but on SIGKILL.
. "$srcdir/tests/hardening/defs.sh"
G=host$$
SHM=/dev/shm/cumemguard.$(id -u)
trap 'rm -rf "$tmp"; rm -f "$SHM.$G"*' EXIT
export CMG_SIM_DEVICES=16G
APP=$SIM/app_rt_shared
LIB=$CUMEMGUARD_LIBRARY
RUNS=${SLOW:+3}
: "${RUNS:=5}"

now_ms() {
  date +%s%3N
}

# pid_of N: the pid the N-th "pid" line of $tmp/out gives.
pid_of() {
  grep '^pid ' "$tmp/out" | sed -n "${1}p" | tr ' ' '\n' | sed -n 's/^pid=//p'
}

# run_is RUN GOT WANT: counts a run that went wrong in $bad, saying how.
run_is() {
  [ "$2" = "$3" ] || { bad=$((bad + 1)); echo "# run $1: got $2, want $3"; }
}

# reason FILE: the report's reason, its end's signal name and its pid.
reason() {
  q "$1" '(r["process"]["reason"], (r["process"]["end"] or {}).get("name"), r["process"]["pid"])'
}

# ---- fork --------------------------------------------------------------------

# A child killed by SIGTERM while its parent goes on: each writes its own
# report, and the parent stays in the group, so that the cap holds.
bad=0
for i in $(seq "$RUNS"); do
  rm -f "$tmp"/f.*
  "$LAUNCHER" --group "$G-fork$i" --group-limit 1GiB --report "$tmp/f.%p.json" \
    -- "$APP" pid alloc 100M fork pid alloc 1M kill TERM endfork \
    alloc 400M alloc 400M alloc 400M >"$tmp/out" 2>"$tmp/err"
  parent=$(pid_of 1)
  child=$(pid_of 2)
  rcs=$(grep '^alloc' "$tmp/out" | tail -n 3 | sed 's/.* rc=\([0-9]*\).*/\1/' | tr '\n' /)
  run_is "$i" "$rcs$(reason "$tmp/f.$parent.json")/$(reason "$tmp/f.$child.json")" \
    "0/0/2/('exit', None, $parent)/('killed', 'SIGTERM', $child)"
done
is "$bad" 0 "a child killed by SIGTERM: the parent keeps the cap, each writes its own report ($RUNS runs)"

two_allocations() {
  [ "$(grep -c '^alloc' "$tmp/out")" -ge 2 ]
}

# The parent killed by SIGTERM while a child that used the library runs:
# the parent's report is its own, written at once; the child's is its own.
bad=0
for i in $(seq "$RUNS"); do
  rm -f "$tmp"/f.*
  : >"$tmp/out" # here: the job's own redirection may come after the wait
  # The child goes on once its parent is dead and waited for.
  "$LAUNCHER" --report "$tmp/f.%p.json" -- "$APP" pid alloc 1M fork pid \
    alloc 1M await "$tmp/f.go" endfork >"$tmp/out" 2>"$tmp/err" &
  lpid=$!
  until_ok two_allocations
  parent=$(pid_of 1)
  child=$(pid_of 2)
  t0=$(now_ms)
  [ -n "$parent" ] && kill -TERM "$parent"
  until_ok test ! -d "/proc/$parent/task"
  t1=$(now_ms)
  wait $lpid
  : >"$tmp/f.go"
  until_ok test -e "$tmp/f.$child.json"
  run_is "$i" "$(reason "$tmp/f.$parent.json")/$(reason "$tmp/f.$child.json")/$((t1 - t0)) ms" \
    "('killed', 'SIGTERM', $parent)/('exit', None, $child)/$((t1 - t0 < 2000 ? t1 - t0 : 2000)) ms"
done
is "$bad" 0 "the parent killed while its child runs: each report by its own process, no wait ($RUNS runs)"

# ---- a deadly signal in the middle of an allocation ------------------------

# kill_during OPTIONS SIGNALS TARGET RUNS SCRIPT...: runs SCRIPT under
# OPTIONS, RUNS times, and 0.2 s into its allocations sends SIGNALS (a
# count) of SIGTERM to the process (TARGET "process") or to each of its
# threads ("threads");
# counts the runs that did not die by SIGTERM with a report within 2 s of
# the signal, or left a temporary file.
kill_during() {
  opts=$1 count=$2 target=$3 runs=$4
  shift 4
  bad=0
  for i in $(seq "$runs"); do
    rm -f "$tmp"/k.*
    CUMEMGUARD_OPTIONS="report=$tmp/k.%p.json$opts" LD_PRELOAD=$LIB \
      "$APP" "$@" >/dev/null 2>"$tmp/k.err" &
    pid=$!
    # In the middle of its allocations: its handler is set up at the first.
    until_caught $pid 15
    sleep 0.2
    t0=$(now_ms)
    if [ "$target" = threads ]; then
      "$PYTHON3" - "$pid" "$count" <<'PY'
import ctypes, os, signal, sys
pid, count = int(sys.argv[1]), int(sys.argv[2])
libc = ctypes.CDLL(None, use_errno=True)
for _ in range(count):
    try:
        tids = [int(t) for t in os.listdir("/proc/%d/task" % pid)]
    except OSError:
        break
    for t in tids:
        libc.syscall(234, pid, t, signal.SIGTERM)  # tgkill
PY
    else
      j=0
      while [ "$j" -lt "$count" ] && kill -TERM "$pid" 2>/dev/null; do
        j=$((j + 1))
      done
    fi
    wait $pid
    st=$?
    t1=$(now_ms)
    f=$tmp/k.$pid.json
    # (grep: a report of 10^5 allocations is slow to parse 30 times)
    if [ "$st" != 143 ] || [ ! -s "$f" ] ||
       ! grep -q '"name":[[:space:]]*"SIGTERM"' "$f" ||
       [ $((t1 - t0)) -ge 2000 ] || ls "$tmp"/k.*.tmp.* >/dev/null 2>&1; then
      bad=$((bad + 1))
      echo "# run $i: status $st, $((t1 - t0)) ms, $(ls "$tmp" | grep '^k\.' | tr '\n' ' ')$(cat "$tmp/k.err")"
    fi
  done
}

kill_during "" 1 process 30 many 3000000 4K
is "$bad" 0 "SIGTERM during allocations and frees: a report every time, no stall (30 runs)"
kill_during "" 1000 process "$RUNS" many 3000000 4K
is "$bad" 0 "a burst of 1000 SIGTERMs: the same ($RUNS runs)"
kill_during "" 1 threads "$RUNS" threads 16 3000000 4K
is "$bad" 0 "SIGTERM to each of 16 allocating threads: the same ($RUNS runs)"
kill_during ",group=$G-sig,group_limit=8G" 1 process "$RUNS" many 3000000 4K
is "$bad" 0 "in a group: the same ($RUNS runs)"

# A report that cannot be written: a path that blocks whoever opens it (a
# FIFO nobody reads).  The process dies after at most 2 s without progress,
# with one line, and leaves nothing behind.
mkfifo "$tmp/fifo.json"
: >"$tmp/out"
CUMEMGUARD_OPTIONS="report=$tmp/fifo.json" LD_PRELOAD=$LIB "$APP" alloc 1M \
  sleep 30000 >"$tmp/out" 2>"$tmp/err" &
pid=$!
until_line "$tmp/out" 'rc=0'
until_caught "$pid" 15
t0=$(now_ms)
kill -TERM $pid
wait $pid
st=$?
t1=$(now_ms)
is "$st/$((t1 - t0 < 5000))" "143/1" "a report that cannot be written: the signal kills within seconds"
is "$(count 'cumemguard: no report: SIGTERM killed the process before its report was written (it made no progress for 2 s)' "$tmp/err")/$(wc -l <"$tmp/err")" 1/1 \
  "with one line saying so"

# ---- descriptors -----------------------------------------------------------

# A program that closes every descriptor and opens its own files: nothing
# of ours writes, reads, locks or closes them (the dump thread needs no
# descriptor, libunwind's pipe is checked, the segment's is told apart).
for how in "dump" "death"; do
  rm -rf "$tmp/fds" "$tmp"/c.*
  mkdir "$tmp/fds"
  "$LAUNCHER" --group "$G-fds" --group-limit 1GiB --dump-signal USR1 \
    --report "$tmp/c.%p.json" -- "$APP" alloc 1M closefds "$tmp/fds" \
    deep 40 1M kill USR1 sleep 300 fdcheck kill TERM >"$tmp/out" 2>"$tmp/err"
  st=$?
  same=0
  for i in 0 1 2 3 4 5 6 7; do
    [ "$(cat "$tmp/fds/fd.$i")" = "$tmp/fds/fd.$i" ] && same=$((same + 1))
  done
  is "$st/$same/$(grep -c '^fdcheck open=8$' "$tmp/out")" 143/8/1 \
    "$how: a program that closed its descriptors: its eight files unchanged and open"
  f=$(ls "$tmp"/c.*.json | head -n 1)
  is "$(q "$f" '(r["process"]["reason"], r["summary"]["live_bytes"])')" \
    "('killed', 2097152)" "$how: its reports are written all the same"
done

# In dwarf mode libunwind checks memory through its pipe, once per page of
# each thread's stack: a new thread's first allocation after the program
# closed its descriptors and opened files where the pipe was would have
# libunwind read, write and close them.  Its check fails instead, libunwind
# is left alone from then on, and one line says so.
rm -rf "$tmp/fds" "$tmp"/d.*
mkdir "$tmp/fds"
CUMEMGUARD_OPTIONS="stack_mode=dwarf,report=$tmp/d.%p.json" LD_PRELOAD=$LIB \
  "$APP" alloc 1M closefds "$tmp/fds" thread t1 deep 40 1M endthread \
  deep 40 1M fdcheck >"$tmp/out" 2>"$tmp/err"
st=$?
same=0
for i in 0 1 2 3 4 5 6 7; do
  [ "$(cat "$tmp/fds/fd.$i")" = "$tmp/fds/fd.$i" ] && same=$((same + 1))
done
is "$st/$same/$(grep -c '^fdcheck open=8$' "$tmp/out")" 0/8/1 \
  "dwarf mode, a new thread after the descriptors closed: the eight files unchanged and open"
is "$(count "cumemguard: the program opened files where libunwind's pipe was; stacks end from here at the first frame only libunwind could step" "$tmp/err")" 1 \
  "with one line saying libunwind is left alone"
is "$(q "$tmp"/d.*.json 'r["summary"]["live_allocations"]')" 3 "and a report of its three allocations"

# That check costs a capture no system call: libunwind checks a page once
# per thread, and the check is made only then.  2000 pairs in dwarf mode
# made two fstat each when the pipe was checked before every capture.
if command -v strace >/dev/null 2>&1; then
  strace -f -qq -o "$tmp/strace" -e trace=fstat,newfstatat,statx \
    -E LD_PRELOAD="$LIB" -E CUMEMGUARD_OPTIONS="stack_mode=dwarf,report=$tmp/s.%p.json" \
    "$APP" threads 1 2000 1M >"$tmp/out" 2>&1
  n=$(wc -l <"$tmp/strace")
  is "$(grep -c '^threads ok=2000 failed=0$' "$tmp/out")/$([ "$n" -le 200 ] && echo few)" 1/few \
    "dwarf mode: 2000 pairs make $n fstat calls in all, at most 200"
else
  tap 1 "strace is installed (scripts/install-deps.sh installs it)"
fi

# ---- signal actions ----------------------------------------------------------

# A program that ignores SIGTERM and puts the default back, over and over,
# while SIGTERMs arrive: whenever one kills it, its report is written.
bad=0 died=0
for i in $(seq $((RUNS * 2))); do
  rm -f "$tmp"/t.*
  CUMEMGUARD_OPTIONS="report=$tmp/t.%p.json" LD_PRELOAD=$LIB "$APP" alloc 1M \
    toggle TERM 1000000 >/dev/null 2>&1 &
  pid=$!
  sleep 0.2
  j=0
  while [ $j -lt 1000 ] && kill -TERM $pid 2>/dev/null; do j=$((j + 1)); done
  wait $pid
  if [ $? = 143 ]; then
    died=$((died + 1))
    [ "$(q "$tmp/t.$pid.json" 'r["process"]["end"]["name"]' 2>/dev/null)" = SIGTERM ] ||
      bad=$((bad + 1))
  fi
done
is "$bad" 0 "toggling SIGTERM's action while it arrives: each of the $died deaths has its report"

# ---- a tampered group segment with a live member ---------------------------

# tamper HOW FILE: empties, zeroes, halves or edits the segment's header.
tamper() {
  case $1 in
    empty) truncate -s 0 "$2" ;;
    zero) "$PYTHON3" -c 'import os, sys; f = open(sys.argv[1], "r+b"); f.write(bytes(os.path.getsize(sys.argv[1])))' "$2" ;;
    half) truncate -s $(($(stat -c %s "$2") / 2)) "$2" ;;
    header) "$PYTHON3" -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(328); f.write((10 << 40).to_bytes(8, "little"))' "$2" ;;
  esac
}
# The four at once, each in a group of its own: each holder waits for its
# segment to be tampered with and a new member turned away, then 1.5 s
# (past its next once-a-second check of the segment) before it allocates:
# an edited header and a segment cut to half past the member's own pages
# fault nothing it reads on that path, so only the check sees them.  A
# member that reads a page cut off sooner fails closed there and then,
# never of SIGBUS (t-shm.sh allocates at once).
HOWS="empty zero half header"
for how in $HOWS; do
  : >"$tmp/h.$how.out"
  "$LAUNCHER" --group "$G-$how" --group-limit 1GiB --report "$tmp/h.%p.json" \
    -- "$APP" alloc 100M await "$tmp/h.$how.go" sleep 1500 alloc 10M free 0 \
    sleep 60000 >"$tmp/h.$how.out" 2>"$tmp/h.$how.err" &
  echo $! >"$tmp/h.$how.pid"
done
for how in $HOWS; do
  until_line "$tmp/h.$how.out" 'rc=0'
  tamper $how "$SHM.$G-$how"
  guard "--group $G-$how --group-limit 1GiB" app_rt_shared alloc 1000M
  why="was emptied, truncated or overwritten while members of the group hold it"
  [ $how != header ] || why="is corrupt (bad header)"
  is "$(val 1 rc)/$(count "group=$G-$how: $SHM.$G-$how $why" "$tmp/err")" \
    2/1 "$how while a member holds memory: a new member fails closed, with one line"
  : >"$tmp/h.$how.go"
done
# The holders, alive all along, then allocate, free and are stopped.
for how in $HOWS; do
  until_line "$tmp/h.$how.out" '^free '
  hpid=$(cat "$tmp/h.$how.pid")
  kill -TERM "$hpid"
  wait "$hpid"
  st=$?
  is "$st/$(grep -c 'rc=2' "$tmp/h.$how.out")/$(grep -c "group=$G-$how: .*; no device allocation will succeed" "$tmp/h.$how.err")" \
    143/1/1 "$how: the member holding memory fails closed with one line, no SIGBUS"
  rm -f "$SHM.$G-$how"
done

# ---- snapshots and leftovers -------------------------------------------------

# Snapshots say where they go once, with their first; a snapshot that
# cannot be written (its relative path's directory deleted) is said once.
# (The two run side by side: each waits for its snapshots.)
mkdir "$tmp/gone"
: >"$tmp/g.out"
(cd "$tmp/gone" && CUMEMGUARD_OPTIONS=snapshot=1s exec "$LAUNCHER" --report \
  "s.%p.json" -- "$APP" alloc 1M sleep 3600 >"$tmp/g.out" 2>"$tmp/g.err") &
spid=$!
until_line "$tmp/g.out" 'rc=0'
rm -rf "$tmp/gone"
CUMEMGUARD_OPTIONS=snapshot=1s "$LAUNCHER" --report "$tmp/s.%p.json" -- \
  "$APP" alloc 1M sleep 2600 >"$tmp/out" 2>"$tmp/err"
is "$(grep -c '^cumemguard: snapshot .*/s\.[0-9]*\.json: 1\.0 MiB in 1 allocation live (rewritten every 1 s, without a line)$' "$tmp/err")/$(wc -l <"$tmp/err")" \
  1/2 "snapshots: one line with the first, then the final report's"
wait $spid
is "$(grep -c '^cumemguard: cannot write snapshot .*(later snapshots that fail are not said)$' "$tmp/g.err")/$(grep -c '^cumemguard: cannot write' "$tmp/g.err")" \
  1/2 "a deleted directory: one line for the snapshots, one for the final report"

# The temporary files of writers that died are removed by the next report
# written in their folder; a live writer's are kept, whichever namespace
# its pid is in (it holds a lock on its file).
dead=$(sh -c 'echo $$')
live=$$
mkdir "$tmp/left"
for f in "r.1.json.tmp.$dead.0" "r.2.json.tmp.$live.3" "r.3.json.tmp.$dead.1" \
  "r.4.json.tmp.x.1" "notes.tmp.$dead"; do
  echo partial >"$tmp/left/$f"
done
"$PYTHON3" -c '
import fcntl, sys, time
f = open(sys.argv[1], "rb")
fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(30)' "$tmp/left/r.3.json.tmp.$dead.1" "$tmp/locked" &
lockpid=$!
until_exists "$tmp/locked"
guard "--report $tmp/left/r.%p.json" app_rt_shared alloc 1M
kill $lockpid
wait $lockpid 2>/dev/null
is "$(ls "$tmp/left" | grep -v '^r\.[0-9]*\.json$' | tr '\n' ' ')" \
  "notes.tmp.$dead r.2.json.tmp.$live.3 r.3.json.tmp.$dead.1 r.4.json.tmp.x.1 " \
  "a dead writer's temporary file is removed; a live one's, a locked one and other files stay"

done_testing
